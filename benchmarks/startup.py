"""The fixed cost of a netsim process: import, first replay, CLI, kernel compilation.

Run:  python benchmarks/startup.py               (median of 5 fresh processes per row)
      python benchmarks/startup.py --repeat 9 --compile

Every row runs in fresh interpreters (``sys.executable``) and reports the median of
``--repeat`` of them: the wall seconds of the step inside the process (``time.perf_counter``
around it), and for whole processes the wall seconds from start to exit seen by the parent
and their CPU seconds (user + system, ``RUSAGE_CHILDREN``), which a loaded machine inflates
less than wall time.
"fresh" is the first call of a process, "warm" the same call again in it. ``--compile`` adds
the first batch-path replay with an empty numba cache (``NUMBA_CACHE_DIR`` pointed at a new
directory), in wall and CPU seconds: what the first run after installing pays once to compile
``netsim.engine.kernels``.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from machine import describe

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# Each probe prints one JSON dict of step -> wall seconds.
_IMPORT = r"""
import json, time
t0, c0 = time.perf_counter(), time.process_time()
import netsim
t1, c1 = time.perf_counter(), time.process_time()
import networkx
t2 = time.perf_counter()
print(json.dumps({"import netsim": t1 - t0, "import netsim cpu": c1 - c0,
                  "import networkx after it": t2 - t1}))
"""

_REPLAY = r"""
import json, sys, time
t0 = time.perf_counter()
import networkx as nx
import netsim
from netsim.comm.collectives import ring_allreduce
G = nx.Graph()
G.add_nodes_from(f"h{i}" for i in range(16))
G.add_edges_from(((f"h{i}", "s") for i in range(16)), bandwidth=1.25e9, latency=1e-6)
if sys.argv[1] == "message":  # one message: the small-event path
    b = netsim.TraceBuilder(2); b.message(0, 1, 1e6); trace = b.build()
else:  # a synchronous ring of 16: the compiled batch path
    trace = ring_allreduce(16, 1e6)
t1, c1 = time.perf_counter(), time.process_time()
first = netsim.simulate(trace, G)
t2, c2 = time.perf_counter(), time.process_time()
warm = netsim.simulate(trace, G)
t3 = time.perf_counter()
assert warm.makespan == first.makespan
print(json.dumps({"imports and trace": t1 - t0, "fresh": t2 - t1, "warm": t3 - t2,
                  "fresh cpu": c2 - c1,
                  "kernels": "netsim.engine.kernels" in sys.modules}))
"""


def child(code, *args, env=None):
    """(the probe's JSON, wall seconds of its whole process, its CPU seconds: user + system)."""
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
           **(env or {})}
    c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    w0 = time.perf_counter()
    out = subprocess.run([sys.executable, *code, *args], capture_output=True, text=True,
                         check=True, env=env, cwd=ROOT)
    wall = time.perf_counter() - w0
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime
    lines = out.stdout.strip().splitlines()
    return (json.loads(lines[-1]) if code[0] == "-c" and lines else {}), wall, cpu


def median_of(n, code, *args, env=None):
    """Medians over ``n`` fresh processes: each probe key, "process" (whole wall) and "cpu"."""
    runs = [child(code, *args, env=env) for _ in range(n)]
    keys = [k for k, v in runs[0][0].items() if isinstance(v, float)]
    out = {k: statistics.median(r[0][k] for r in runs) for k in keys}
    out["process"] = statistics.median(r[1] for r in runs)
    out["cpu"] = statistics.median(r[2] for r in runs)
    out.update({k: v for k, v in runs[0][0].items() if not isinstance(v, float)})
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="fresh processes per row (median)")
    ap.add_argument("--compile", action="store_true",
                    help="also time the kernels' compilation with an empty numba cache")
    args = ap.parse_args(argv)
    n = args.repeat
    print(describe())
    print(f"median of {n} fresh processes per row; wall seconds")
    rows = []
    base = median_of(n, ["-c", "pass"])
    rows.append(("python -c pass (the interpreter alone)", "", "", f"{base['process']:.3f}",
                 f"{base['cpu']:.3f}"))
    imp = median_of(n, ["-c", _IMPORT])
    rows.append(("import netsim (then networkx: the process columns)", f"{imp['import netsim']:.3f}",
                 "", f"{imp['process']:.3f}",
                 f"{imp['cpu']:.3f}"))
    rows.append(("import netsim, CPU seconds", f"{imp['import netsim cpu']:.3f}", "", "", ""))
    rows.append(("import networkx after netsim", f"{imp['import networkx after it']:.3f}", "",
                 "", ""))
    for kind, label in (("message", "simulate one message (small-event path)"),
                        ("ring", "simulate a ring allreduce, P = 16 (batch path)")):
        r = median_of(n, ["-c", _REPLAY], kind)
        rows.append((f"{label}; kernels loaded: {r['kernels']}", f"{r['fresh']:.3f}",
                     f"{r['warm']:.4f}", f"{r['process']:.3f}", f"{r['cpu']:.3f}"))
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "two.json")
        subprocess.run([sys.executable, "-c", "import netsim, sys; b = netsim.TraceBuilder(2); "
                        "b.message(0, 1, 1e6); netsim.save_trace(b.build(), sys.argv[1])", trace],
                       check=True, env={**os.environ, "PYTHONPATH": ROOT})
        cli = median_of(n, ["-m", "studies.cli.parser", "replay", trace, "--topology", "star"])
        rows.append(("netsim replay of a two-rank trace (CLI)", "", "", f"{cli['process']:.3f}",
                     f"{cli['cpu']:.3f}"))
        if args.compile:
            comp = child(["-c", _REPLAY], "ring", env={"NUMBA_CACHE_DIR": tmp})[0]
            rows.append(("same ring, empty numba cache (compiles the kernels; 1 run)",
                         f"{comp['fresh']:.3f}", f"{comp['warm']:.4f}", "", ""))
            rows.append(("  its first replay in CPU seconds", f"{comp['fresh cpu']:.3f}", "", "",
                         ""))
    print(f"{'step':<70}{'fresh s':>9}{'warm s':>9}{'process s':>11}{'proc CPU s':>11}")
    for row in rows:
        print(f"{row[0]:<70}{row[1]:>9}{row[2]:>9}{row[3]:>11}{row[4]:>11}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
