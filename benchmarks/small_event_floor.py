"""What a desynchronised message costs, and the floor under it: SimPy's events and numba's calls.

Run:  python benchmarks/small_event_floor.py            (P = 64, 128)
      python benchmarks/small_event_floor.py --P 256 --no-numba

On desynchronised traffic every message is three instants of the small-event path
(its compute gap ends, its latency ends, its last byte arrives), each one SimPy
timeout and one settle step. This script measures, in one process and in CPU time
(``time.process_time``):

* netsim's warm replay of the desynchronised ring (``desync.py``'s ``desync-ring``):
  CPU per message and per settle step;
* SimPy alone in the engine's pattern: a ``simpy.Timeout`` with one callback that
  creates the next timeout, with as many timeouts pending as the ring has ranks
  (so the heap has the replay's depth), per event; times three, per message;
* the fixed cost of calling a compiled (numba) function from Python with 1, 12 and 30
  array arguments (what a per-settle compiled step would pay on every call, before
  doing any work), unless ``--no-numba``.

The SimPy row is the floor of any engine that keeps SimPy as its event loop and one
timeout per instant; the numba rows the floor of one compiled call per settle step.
"""

import argparse
import os
import random
import sys
import time

import simpy

HERE = os.path.dirname(os.path.abspath(__file__))


def simpy_per_event(pending, events=200_000, seed=0):
    """CPU seconds per SimPy timeout (created, scheduled, stepped, its callback run)."""
    env = simpy.Environment()
    rnd = random.Random(seed)
    delays = [rnd.uniform(1e-6, 1e-3) for _ in range(4096)]
    left = [events]

    def fire(event):
        left[0] -= 1
        if left[0] > 0:
            simpy.Timeout(env, delays[left[0] % 4096], None).callbacks.append(fire)

    for i in range(pending):
        simpy.Timeout(env, delays[i % 4096], None).callbacks.append(fire)
    c0 = time.process_time()
    env.run()
    return (time.process_time() - c0) / (events + pending - 1)


def numba_call(arrays, calls=100_000):
    """CPU seconds of one call of a compiled function taking ``arrays`` float64 arrays."""
    import numba
    import numpy as np

    names = ", ".join(f"a{i}" for i in range(arrays))
    scope = {}
    exec(f"def f({names}, x):\n    a0[0] += x\n    return a0[0]\n", scope)  # noqa: S102
    f = numba.njit(scope["f"])
    args = [np.zeros(100) for _ in range(arrays)]
    f(*args, 1.0)  # compile
    c0 = time.process_time()
    for _ in range(calls):
        f(*args, 1.0)
    return (time.process_time() - c0) / calls


def netsim_ring(P):
    """(CPU seconds per message, settle steps per message) of the warm desynchronised ring."""
    sys.path.insert(0, HERE)
    from desync import case
    from netsim import simulate

    trace, G = case("desync-ring", P)
    simulate(trace, G)
    best = None
    for _ in range(3):
        c0 = time.process_time()
        r = simulate(trace, G)
        cpu = time.process_time() - c0
        best = cpu if best is None else min(best, cpu)
    n = trace.num_messages
    return best / n, r.stats["settles"] / n


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--P", type=int, action="append", help="ring sizes (default 64, 128)")
    ap.add_argument("--no-numba", action="store_true", help="skip the compiled-call rows")
    args = ap.parse_args(argv)
    from machine import describe

    print(describe())
    print(f"{'what':<58}{'us':>8}")
    for P in args.P or [64, 128]:
        per_msg, settles = netsim_ring(P)
        print(f"{f'netsim desync ring P = {P}, per message (min of 3)':<58}{1e6 * per_msg:>8.2f}")
        print(f"{f'  per settle step ({settles:.2f} per message)':<58}"
              f"{1e6 * per_msg / settles:>8.2f}")
        event = simpy_per_event(2 * P)
        print(f"{f'SimPy timeout + callback, {2 * P} pending, per event':<58}{1e6 * event:>8.2f}")
        print(f"{f'  x {settles:.2f} events, per message':<58}{1e6 * event * settles:>8.2f}")
    if not args.no_numba:
        for n in (1, 12, 30):
            print(f"{f'numba call with {n} array arguments':<58}{1e6 * numba_call(n):>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
