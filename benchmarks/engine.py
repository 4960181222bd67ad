"""Engine speed at scale: wall time, messages per second and peak RSS per case.

Run:  python benchmarks/engine.py            (all cases, a few minutes)
      python benchmarks/engine.py --quick    (skip P = 1024)

Each case runs in a fresh Python process so that its peak RSS is its own. Wall time
covers generating the trace and simulating it (the "sim" column is the replay
alone). The anchor is an established flow-level simulator with the same max-min
model, run through its Python API on a 2-core machine (ring allreduce of 100 MB on a
10 GbE star): P=64 2.1 s, P=128 6.7 s, P=256 33.6 s.

The last line times analytic-only studies: closed forms evaluated over a grid of
(algorithm, P, n) points.
"""

import argparse
import json
import subprocess
import sys
import time

CASES = [
    ("ring allreduce, star", "ring", 16),
    ("ring allreduce, star", "ring", 64),
    ("ring allreduce, star", "ring", 128),
    ("ring allreduce, star", "ring", 256),
    ("ring allreduce, star", "ring", 1024),
    ("ps-sync (push/pull), two-tier", "ps", 1024),
    ("recursive doubling, star", "rd", 1024),
]
ANCHOR = {64: 2.1, 128: 6.7, 256: 33.6}

_CHILD = r"""
import json, resource, sys, time
from netsim import simulate
from netsim.comm import collectives
from topologies import star, two_tier
kind, P, nbytes = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
t0 = time.perf_counter()
if kind == "ring":
    trace, G = collectives.ring_allreduce(P, nbytes), star(P, bandwidth=1.25e9, latency=1e-6)
elif kind == "rd":
    trace, G = collectives.recursive_doubling_allreduce(P, nbytes), star(P, bandwidth=1.25e9, latency=1e-6)
else:
    trace = collectives.ps_push_pull(P, nbytes, servers=1)
    G = two_tier(P + 1, 32, bandwidth=1.25e9, uplink_bandwidth=5e9, latency=1e-6)
t1 = time.perf_counter()
r = simulate(trace, G)
t2 = time.perf_counter()
print(json.dumps({"messages": trace.num_messages, "wall": t2 - t0, "sim": t2 - t1,
                  "makespan": r.makespan,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run_case(kind, P, nbytes):
    out = subprocess.run([sys.executable, "-c", _CHILD, kind, str(P), str(nbytes)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def analytic_points_per_second(seconds=1.0):
    """Closed forms evaluated over (algorithm, P, n) points for about ``seconds``."""
    from netsim import costmodel

    forms = [costmodel.ring_allreduce, costmodel.recursive_doubling_allreduce,
             costmodel.rabenseifner_allreduce, costmodel.binomial_broadcast, costmodel.be_broadcast]
    points = [(f, P, n) for f in forms for P in range(2, 1025, 7) for n in (1e3, 1e6, 1e8)]
    done = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for f, P, n in points:
            f(P, n, alpha=2e-6, beta=8e-10)
        done += len(points)
    lp = 0
    t1 = time.perf_counter()
    while time.perf_counter() - t1 < seconds / 4:
        for P in range(2, 1025, 7):
            k = costmodel.optimal_segments(P, 64e6, 2e-6, 8e-10)
            costmodel.pipeline_broadcast(P, 64e6, k, alpha=2e-6, beta=8e-10)
        lp += len(range(2, 1025, 7))
    return (done + lp) / (time.perf_counter() - t0)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="skip the P = 1024 cases")
    ap.add_argument("--bytes", type=float, default=100e6, help="collective size (default 100 MB)")
    args = ap.parse_args(argv)
    print(f"{'case':<31}{'P':>6}{'messages':>11}{'wall s':>9}{'sim s':>8}{'msg/s':>11}"
          f"{'us/msg':>8}{'peak MB':>9}{'anchor s':>10}")
    for label, kind, P in CASES:
        if args.quick and P >= 1024:
            continue
        r = run_case(kind, P, args.bytes)
        anchor = ANCHOR.get(P) if kind == "ring" else None
        print(f"{label:<31}{P:>6}{r['messages']:>11,}{r['wall']:>9.2f}{r['sim']:>8.2f}"
              f"{r['messages'] / r['wall']:>11,.0f}{1e6 * r['wall'] / r['messages']:>8.2f}"
              f"{r['rss_mb']:>9.0f}{anchor if anchor else '':>10}", flush=True)
    print(f"analytic-only closed forms: {analytic_points_per_second():,.0f} (algorithm, P, n) points/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
