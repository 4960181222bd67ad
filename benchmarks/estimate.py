"""The up-front work estimate against the CPU the work then takes, command by command.

Every command that replays a trace grown with a rank count first prices its work
(studies.scaling.trace_size.check_ops: messages at their traffic shape's cost, route searches,
the topology's build) and refuses it above an hour. This runs each case of CASES in a
fresh process: imports and a small replay first (the once-per-process costs of
benchmarks/startup.py, not part of the estimate), then the command with its estimates
recorded (the sum over every check the command makes) and its CPU seconds
(time.process_time) measured around it. The last column is measured / estimated.

    python benchmarks/estimate.py            # every case
    python benchmarks/estimate.py --calibrate  # the unit costs studies.scaling.trace_size cites
    python benchmarks/estimate.py --case 3   # one case (what each child process runs)
"""

import argparse
import json
import subprocess
import sys
import time

CASES = [
    ["collective", "ring", "-P", "1024", "-n", "1MB"],
    ["collective", "ring", "-P", "256", "-n", "1MB", "--topology", "fat_tree:k=16"],
    ["collective", "rabenseifner", "-P", "4096", "-n", "1MB"],
    ["collective", "mst", "-P", "16384", "-n", "1MB"],
    ["collective", "be", "-P", "4096", "-n", "1MB"],
    ["collective", "alltoall", "-P", "600", "-n", "1MB"],
    ["collective", "ring_allgather", "-P", "1024", "-n", "1MB", "--topology", "two_tier:per_rack=32"],
    ["collective", "lp", "-P", "8", "-k", "20000", "-n", "64MB"],
    ["collective", "lp_allreduce", "-P", "64", "-k", "500", "-n", "64MB"],
    ["collective", "ps", "-P", "8192", "-n", "1MB", "--servers", "4"],
    ["collective", "ring", "-P", "512", "-n", "1MB", "--topology", "dgx_h100"],
    ["scale", "-a", "ring,mst", "-P", "128,256,512", "-n", "1MB"],
    ["scale", "ps-sync", "-P", "1024,4096"],
    ["scale", "allreduce", "-P", "64,128"],
    ["scale", "ps-async", "-P", "1024,2048"],
]


CALIBRATION = [  # (name, command, the unit it prices): each case dominated by its unit
    ("ring, star, P = 512", ["collective", "ring", "-P", "512", "-n", "1MB"], "message"),
    ("lp, star, P = 8, k = 10000", ["collective", "lp", "-P", "8", "-k", "10000", "-n", "64MB"],
     "small message"),
    ("alltoall, star, P = 300", ["collective", "alltoall", "-P", "300", "-n", "1MB"], "pair"),
    ("ps, star, P = 4096", ["collective", "ps", "-P", "4096", "-n", "1MB"], "dependency"),
    ("ring, P = 8, dgx_h100:nodes=4000",
     ["collective", "ring", "-P", "8", "-n", "1MB", "--topology", "dgx_h100:nodes=4000"],
     "node or edge built"),
]


def _terms(argv):
    """The counts the estimate prices for a collective command line (P, k, servers, topology)."""
    from studies.scaling import trace_size as ts

    alg, P = argv[1], int(argv[argv.index("-P") + 1])
    k = int(argv[argv.index("-k") + 1]) if "-k" in argv else 1
    topo = argv[argv.index("--topology") + 1] if "--topology" in argv else "star"
    out = ts.check_fits(alg, P, segments=k, topology=topo)
    return {"messages": ts.message_count(alg, P, k), "pairs": ts.pair_count(alg, P),
            "deps": ts.fan_in_dependencies(alg, P), "sources": P,
            "elements": out["topology"]["elements"]}


def calibrate():
    """Each calibration case's CPU, less the terms priced already, over its unit count."""
    from studies.scaling import trace_size as ts

    print("| case | CPU s | unit | count | CPU per unit |")
    print("|---|---|---|---|---|")
    for name, argv, unit in CALIBRATION:
        r = _child(argv)
        c = _terms(argv)
        rest = r["cpu"] - c["sources"] * c["elements"] * ts.ROUTE_SECONDS
        if unit == "message":
            count = c["messages"]
        elif unit == "small message":
            count = c["messages"]
        else:
            rest -= c["messages"] * ts.MESSAGE_SECONDS
            if unit == "pair":
                count = c["pairs"]
            else:
                rest -= c["pairs"] * ts.PAIR_SECONDS
                count = c["deps"] if unit == "dependency" else c["elements"]
        print(f"| {name} | {r['cpu']:.3g} | {unit} | {count:,} | {rest / count * 1e6:.3g} us |",
              flush=True)


def _child(argv):
    i = [tuple(a) for a in CASES + [c[1] for c in CALIBRATION]].index(tuple(argv))
    line = subprocess.run([sys.executable, __file__, "--case", str(i)], capture_output=True,
                          text=True).stderr.strip().splitlines()[-1]
    return json.loads(line)


def run_case(argv):
    """In this process: warm up, then run ``argv`` with its estimates recorded; a JSON line."""
    import studies.scaling.paradigm as ps
    import studies.scaling.trace_size as ts
    from studies.cli.parser import main

    main(["collective", "ring", "-P", "4", "-n", "1MB", "-q"])   # numba, imports
    main(["scale", "allreduce", "-P", "2,4", "-q"])
    estimates = []
    check = ts.check_ops

    def recorded(*args, **kwargs):
        out = check(*args, **kwargs)
        estimates.append(out.get("seconds", 0.0))
        return out

    ts.check_ops = ps.check_ops = recorded
    t = time.process_time()
    status = main(argv + ["-q"])
    cpu = time.process_time() - t
    print(json.dumps({"status": status, "cpu": cpu, "estimate": sum(estimates),
                      "checks": len(estimates)}), file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", type=int)
    ap.add_argument("--calibrate", action="store_true")
    args = ap.parse_args()
    if args.calibrate:
        return calibrate()
    if args.case is not None:
        import contextlib
        import io

        with contextlib.redirect_stdout(io.StringIO()):   # the command's report
            run_case((CASES + [c[1] for c in CALIBRATION])[args.case])
        return
    print("| command | estimate s | CPU s | CPU / estimate |")
    print("|---|---|---|---|")
    for argv in CASES:
        r = _child(argv)
        ratio = r["cpu"] / r["estimate"] if r["estimate"] else float("nan")
        print(f"| `netsim {' '.join(argv)}` | {r['estimate']:.3g} | {r['cpu']:.3g} | "
              f"{ratio:.2f} |", flush=True)


if __name__ == "__main__":
    main()
