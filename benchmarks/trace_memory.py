"""A 10^6-message trace: build, save, load and replay, with peak memory and object counts.

Run:  python benchmarks/trace_memory.py [--messages 1000000]

The trace is P ranks doing rounds of nearest-neighbour shifts (rank r sends to
r + 1 mod P; each round waits for the rank's previous send and receive), replayed
on a 10 GbE star. It prints wall time and peak RSS per phase, and the number of
live Python objects after each phase, to show that no per-message object stays
alive.
"""

import argparse
import gc
import os
import resource
import sys
import tempfile
import time

import numpy as np

import netsim
from netsim.trace.core import MESSAGE, Trace
from topologies import star


def shift_rounds(P, rounds, nbytes):
    n = P * rounds
    rank = np.tile(np.arange(P, dtype=np.int32), rounds)
    peer = (rank + 1) % P
    op = np.arange(n, dtype=np.int64)
    prev_send = np.where(op >= P, op - P, -1)
    prev_recv = np.where(op >= P, op - P - 1 + np.where(rank == 0, P, 0), -1)
    ptr, idx = netsim.trace.core.deps_csr(prev_send, prev_recv)
    return Trace(P, np.full(n, MESSAGE, np.uint8), rank, peer, np.full(n, float(nbytes)),
                 dep_ptr=ptr, dep_idx=idx, metadata={"pattern": "shift rounds"})


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--ranks", type=int, default=1000)
    args = ap.parse_args(argv)
    rounds = max(1, args.messages // args.ranks)
    rows = []

    def phase(name, fn):
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        gc.collect()
        rows.append((name, time.perf_counter() - t0, peak_mb(), len(gc.get_objects())))
        return out

    base = len(gc.get_objects())
    trace = phase("build", lambda: shift_rounds(args.ranks, rounds, 1e6))
    path = os.path.join(tempfile.mkdtemp(), "big.npz")
    phase("save .npz", lambda: netsim.save_trace(trace, path))
    size = os.path.getsize(path)
    trace = phase("load .npz", lambda: netsim.load_trace(path))
    G = star(args.ranks)
    result = phase("replay", lambda: netsim.simulate(trace, G))
    print(f"{trace.num_messages:,} messages, {args.ranks} ranks; trace columns "
          f"{sum(getattr(trace, c).nbytes for c in ('kind', 'rank', 'peer', 'size', 'duration', 'flops', 'iteration', 'tag', 'dep_ptr', 'dep_idx')) / 1e6:.0f} MB, "
          f".npz file {size / 1e6:.1f} MB; python objects at start {base:,}")
    print(f"{'phase':<12}{'wall s':>9}{'peak RSS MB':>13}{'live objects':>14}")
    for name, wall, rss, objs in rows:
        print(f"{name:<12}{wall:>9.2f}{rss:>13.0f}{objs:>14,}")
    print(f"makespan {result.makespan:.6g} s; {result.stats['settles']} settle steps, "
          f"{result.stats['rate_solves']} rate solves; "
          f"{trace.num_messages / rows[-1][1]:,.0f} messages/s in replay")
    return 0


if __name__ == "__main__":
    sys.exit(main())
