"""Collective ops expanded at replay against the same trace expanded when it was built.

Run:  python benchmarks/collective_ops.py            (P = 64, 256; about two minutes)
      python benchmarks/collective_ops.py --large    (also P = 1024: about 20 minutes, the
                                                      uneven whole-float32 chunks of 100 MB
                                                      over 1024 ranks desynchronise the ring)

One training-shaped trace per case: every rank computes, then one ring allreduce of
100 MB, then an update, three iterations. "prebuilt" builds the allreduce with
``netsim.comm.collectives.ring_allreduce`` and joins it with ``concat``/``repeat`` (how the
paradigms built their traces before collective ops); "collective op" builds one
collective op per iteration and lets ``simulate(..., library="mpich")`` expand it.
Both replay on a 10 GbE star. Each case runs in a fresh process (its peak RSS is its
own), median of three runs; "build" is making the trace, "replay" is ``simulate``
(for collective ops, the expansion included). The makespans must be equal.
"""

import argparse
import json
import statistics
import subprocess
import sys

_CHILD = r"""
import json, resource, sys, time
import netsim
from netsim import TraceBuilder
from netsim.comm import collectives
from netsim.trace.ops import concat, repeat
from topologies import star

how, P, n = sys.argv[1], int(sys.argv[2]), 100e6
G = star(P, bandwidth=1.25e9, latency=1e-6)
t0 = time.process_time()
work, upd = TraceBuilder(P), TraceBuilder(P)
for r in range(P):
    work.compute(r, seconds=1e-3)
    upd.compute(r, seconds=1e-4)
if how == "prebuilt":
    coll = collectives.ring_allreduce(P, n, element=4)
else:
    b = TraceBuilder(P); b.collective("allreduce", range(P), n, element=4); coll = b.build()
trace = repeat(concat(concat(work.build(), coll), upd.build()), 3)
t1 = time.process_time()
r = netsim.simulate(trace, G, library="mpich")
t2 = time.process_time()
print(json.dumps({"build": t1 - t0, "replay": t2 - t1, "makespan": r.makespan,
                  "messages": r.stats["messages"],
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run_case(how, P):
    out = subprocess.run([sys.executable, "-c", _CHILD, how, str(P)], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout)


def main(argv=None):
    """Print the table (see the module docstring).

    Examples
    --------
    >>> callable(main)
    True
    """
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--large", action="store_true", help="also P = 1024 (about 20 minutes)")
    ap.add_argument("--runs", type=int, default=3, help="runs per case (median; default 3)")
    args = ap.parse_args(argv)
    print("| P | messages | trace | build CPU s | replay CPU s | total CPU s | peak RSS MB "
          "| makespan s |")
    print("|---|---|---|---|---|---|---|---|")
    for P in (64, 256, 1024) if args.large else (64, 256):
        spans = set()
        for how in ("prebuilt", "collective op"):
            runs = [run_case(how, P) for _ in range(args.runs)]
            med = {k: statistics.median(r[k] for r in runs) for k in ("build", "replay",
                                                                      "rss_mb")}
            spans.add(runs[0]["makespan"])
            print(f"| {P} | {runs[0]['messages']:,} | {how} | {med['build']:.3f} | "
                  f"{med['replay']:.3f} | {med['build'] + med['replay']:.3f} | "
                  f"{med['rss_mb']:.0f} | {runs[0]['makespan']:.9g} |", flush=True)
        if len(spans) != 1:
            print(f"MAKESPANS DIFFER at P = {P}: {sorted(spans)}")


if __name__ == "__main__":
    main()
