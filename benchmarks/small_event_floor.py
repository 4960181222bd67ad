"""What a desynchronised message costs, and the floors under it: plain Python, SimPy, numba, C++.

Run:  python benchmarks/small_event_floor.py            (P = 64, 128)
      python benchmarks/small_event_floor.py --P 256 --no-numba --no-simgrid
      python benchmarks/small_event_floor.py --aot      (also an ahead-of-time compiled kernel)

On desynchronised traffic every message is three instants of netsim's small-event path
(its compute gap ends, its latency ends, its last byte arrives), each one SimPy
timeout and one settle step. This script measures, on one machine in one run, in CPU
time (``time.process_time``; ``resource`` for the children's):

* netsim's warm replay of the desynchronised ring (``desync.py``'s ``desync-ring``):
  CPU per message and per settle step;
* the least a plain-Python fluid loop can spend on the same messages: only the
  irreducible work of a desynchronised ring message (:func:`floor_loop`): two
  instants, its start after the gap and latency and its completion, each one heap
  push and pop; one rate update of the one link it shares (a count and a load); one
  dependency release (a wait count per successor, the next message's start pushed
  when it reaches 0). With ``heapq`` as the event queue, and with SimPy's (one
  ``simpy.Timeout`` and callback per instant). Both must give netsim's makespan to the
  last bit, which shows they do the replay's work and no less;
* SimPy alone in the engine's pattern: a ``simpy.Timeout`` with one callback that
  creates the next timeout, with as many timeouts pending as the ring has ranks
  (so the heap has the replay's depth), per event; times three, per message;
* the fixed cost of calling a compiled (numba) function from Python with 1, 12 and 30
  array arguments (what a per-settle compiled step would pay on every call, before
  doing any work), unless ``--no-numba``;
* in a fresh process (the cache already filled): ``import numba``, the module numba's
  registries import for BLAS (``scipy.linalg.cython_blas``), the rest of numba's
  registries, and the load of every batch-path kernel from numba's cache, each in CPU
  seconds: what a compiled small-event path would add to the first call of a process;
* with ``--aot``, one kernel, ``netsim.engine.kernels.release`` itself, compiled ahead of time with
  ``numba.pycc`` into an extension module, and its import and first call in a fresh
  process (needs a C compiler; ``numba.pycc`` is pending deprecation in numba);
* SimGrid's C++ core (S4U, ``simgrid_desync.cpp``, as ``desync.py`` builds and runs it)
  on the same case: CPU per message, unless ``--no-simgrid`` or SimGrid is missing.

The SimPy row is the floor of any engine that keeps SimPy as its event loop and one
timeout per instant; the numba rows the floor of one compiled call per settle step.
"""

import argparse
import heapq
import json
import os
import random
import subprocess
import sys
import tempfile
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


def ring_lists(P):
    """The desynchronised ring of ``desync.py`` as plain lists for :func:`floor_loop`.

    Returns a dict: per op ``dur`` (a gap's seconds), ``size`` (a message's bytes),
    ``link`` (the sender's uplink, the link a message shares), ``lat`` (its path
    latency), ``succ`` (successor lists) and ``wait`` (dependency counts); per link
    ``cap``; ``first`` (the gaps that wait for nothing); and netsim's trace and graph.
    """
    sys.path.insert(0, HERE)
    from desync import case
    from netsim.trace.core import successors

    trace, G = case("desync-ring", P)
    hosts = [n for n, d in G.nodes(data=True) if d.get("kind") == "host"][:P]

    def edge(u, v):
        e = G.edges[u, v]
        return e["bandwidth"] * e.get("efficiency", 1.0), e["latency"]

    up = [edge(h, next(iter(G[h]))) for h in hosts]  # host -> its switch
    ptr, idx = (a.tolist() for a in successors(trace))
    msg = trace.is_message.tolist()
    peer, rank = trace.peer.tolist(), trace.rank.tolist()
    lat, link = [0.0] * trace.num_ops, [0] * trace.num_ops
    cap = []
    for r in range(P):
        # A star route: up from the sender, down to the receiver; the bottleneck of two
        # equal directions is either, so one link's share gives the flow's rate.
        cap.append(min(up[r][0], up[(r + 1) % P][0]))
    for op in range(trace.num_ops):
        if msg[op]:
            link[op] = rank[op]
            lat[op] = up[rank[op]][1] + up[peer[op]][1]
    wait = (trace.dep_ptr[1:] - trace.dep_ptr[:-1]).tolist()
    return {"dur": trace.duration.tolist(), "size": trace.size.tolist(), "link": link,
            "lat": lat, "cap": cap, "succ": [idx[ptr[i]:ptr[i + 1]] for i in range(len(msg))],
            "wait": wait, "first": [op for op in range(len(msg)) if not msg[op] and not wait[op]],
            "trace": trace, "graph": G}


def floor_loop(ring, queue="heapq"):
    """Replay the desynchronised ring doing only a message's irreducible work; its makespan.

    Per message: two instants (its start, once its gap and latency are over; its
    completion), each one push and one pop of the event queue; at its start one rate
    update of the one link it shares (the flow count and load, the rate its share);
    at its completion the link given back and one dependency release (each successor
    gap's wait count, and when it reaches 0 that gap's message start pushed at
    ``(now + gap) + latency``, the order in which netsim adds them). A gap is no
    instant of its own: nothing shares a rank's compute. ``queue`` is ``"heapq"`` (a
    heap of (time, sequence, kind, op)) or ``"simpy"`` (one ``simpy.Timeout`` and
    callback per instant, the exact time in its value as netsim keeps it).
    """
    dur, size, link, lat, cap = ring["dur"], ring["size"], ring["link"], ring["lat"], ring["cap"]
    succ, wait = ring["succ"], list(ring["wait"])
    count, load = [0] * len(cap), [0.0] * len(cap)
    rate_of = {}
    last = 0.0
    if queue == "heapq":
        heap, seq = [], 0
        for g in ring["first"]:
            m = succ[g][0]
            heap.append(((0.0 + dur[g]) + lat[m], seq, 0, m))
            seq += 1
        heapq.heapify(heap)
        pop, push = heapq.heappop, heapq.heappush
        while heap:
            t, _, kind, m = pop(heap)
            k = link[m]
            if kind == 0:  # latency over: the flow starts at its share of the link
                c = count[k] = count[k] + 1
                r = rate_of[m] = cap[k] / c
                load[k] += r
                push(heap, (t + size[m] / r, seq, 1, m))
                seq += 1
                continue
            count[k] -= 1  # last byte arrived: give the link back, release successors
            load[k] -= rate_of.pop(m)
            last = t
            for g in succ[m]:
                w = wait[g] = wait[g] - 1
                if w == 0:
                    nm = succ[g][0]
                    push(heap, ((t + dur[g]) + lat[nm], seq, 0, nm))
                    seq += 1
        return last
    env = simpy.Environment()
    Timeout = simpy.Timeout
    end_t = [0.0]

    def started(event):
        t, m = event.value
        k = link[m]
        c = count[k] = count[k] + 1
        r = rate_of[m] = cap[k] / c
        load[k] += r
        done = t + size[m] / r
        Timeout(env, done - env.now, (done, m)).callbacks.append(ended)

    def ended(event):
        t, m = event.value
        k = link[m]
        count[k] -= 1
        load[k] -= rate_of.pop(m)
        end_t[0] = t
        for g in succ[m]:
            w = wait[g] = wait[g] - 1
            if w == 0:
                nm = succ[g][0]
                s = (t + dur[g]) + lat[nm]
                Timeout(env, s - env.now, (s, nm)).callbacks.append(started)

    for g in ring["first"]:
        m = succ[g][0]
        s = (0.0 + dur[g]) + lat[m]
        Timeout(env, s, (s, m)).callbacks.append(started)
    env.run()
    return end_t[0]


def floor_per_message(ring, queue, repeat=3):
    """(least CPU seconds per message of :func:`floor_loop` over ``repeat`` runs, its makespan)."""
    n = ring["trace"].num_messages
    best = span = None
    for _ in range(repeat):
        c0 = time.process_time()
        span = floor_loop(ring, queue)
        cpu = time.process_time() - c0
        best = cpu if best is None else min(best, cpu)
    return best / n, span


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
    """(CPU seconds per message, settle steps per message, makespan) of the warm desync ring."""
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
    return best / n, r.stats["settles"] / n, r.makespan


# In a fresh process whose numba cache already holds the kernels: what loading them costs.
_LOAD = r"""
import json, sys, time
T = time.process_time
import numpy, networkx, simpy, netsim
c = T(); import numba; a = T() - c
c = T(); import scipy.linalg.cython_blas; b = T() - c
c = T()
from numba.core.registry import cpu_target
cpu_target.target_context.refresh(); cpu_target.typing_context.refresh()
r = T() - c
import netsim.engine.kernels as K
from numba import types as t
A = lambda dt, nd=1: t.Array(dt, nd, "C")
i1, f1, b1, i2, i4 = A(t.int64), A(t.float64), A(t.boolean), A(t.int64, 2), A(t.int32)
sigs = {"fill_bounded": (i2, f1, t.int64, t.float64, f1),
        "index_build": (b1, i2, t.int64, i1, i1, i1), "index_add": (i1, i2, t.int64, i1, i1, i1),
        "index_remove": (i1, i2, t.int64, i1, i1, i1),
        "component": (i1, i1, i2, b1, b1, i1, i1, t.int64),
        "apply_rates": (i1, f1, i1, t.float64, f1, f1, f1, f1, i2, f1, f1, f1, f1, f1, f1, i1, i1,
                        t.float64, t.int64, t.boolean),
        "release": (i1, i1, i4, i4)}
c = T()
for name, sig in sigs.items():
    getattr(K, name).compile(sig)
k = T() - c
print(json.dumps({"import numba": a, "scipy.linalg.cython_blas (numba's BLAS check)": b,
                  "numba's other registries": r, "the 7 batch-path kernels from the cache": k}))
"""

_WARM_CACHE = r"""
import netsim
from netsim.comm.collectives import ring_allreduce
from topologies import star
netsim.simulate(ring_allreduce(16, 1e6), star(16))
"""

# netsim.engine.kernels.release (with the merge sort it calls) compiled ahead of time by numba.pycc.
_AOT_BUILD = r"""
import sys, warnings
warnings.simplefilter("ignore")
from numba.pycc import CC
from netsim.engine.kernels import release
cc = CC("netsim_aot_release")
cc.output_dir = sys.argv[1]
cc.export("release", "i8[:](i8[:], i8[:], i4[:], i4[:])")(release.py_func)
cc.compile()
"""

_AOT_LOAD = r"""
import json, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
c = time.process_time()
import netsim_aot_release
a = time.process_time() - c
c = time.process_time()
r = netsim_aot_release.release(np.array([0, 1]), np.array([0, 1, 3, 3, 3]),
                               np.array([2, 2, 3], np.int32), np.array([0, 0, 2, 2], np.int32))
b = time.process_time() - c
assert r.tolist() == [2] and "numba" not in sys.modules
print(json.dumps({"import of the compiled module (numba not imported)": a, "its first call": b}))
"""


def fresh(code, *args):
    """The JSON a fresh interpreter running ``code`` prints last (this tree on its path)."""
    root = os.path.dirname(HERE)
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                         check=True, env=env, cwd=root)
    lines = out.stdout.strip().splitlines()
    return json.loads(lines[-1]) if lines else {}


def simgrid_cpp(P, workdir):
    """CPU seconds per message of SimGrid's C++ core on the desynchronised ring (None if absent)."""
    sys.path.insert(0, HERE)
    from desync import build_s4u, desync_trace, have_simgrid, run_simgrid

    if not have_simgrid():
        return None
    exe = build_s4u(workdir)
    if exe is None:
        return None
    runs = [run_simgrid("desync-ring", P, workdir, exe) for _ in range(3)]
    n = desync_trace(P).num_messages
    return min(r["cpu"] for r in runs) / n, runs[0]["makespan"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--P", type=int, action="append", help="ring sizes (default 64, 128)")
    ap.add_argument("--no-numba", action="store_true", help="skip the compiled-call rows")
    ap.add_argument("--no-simgrid", action="store_true", help="skip SimGrid's C++ core")
    ap.add_argument("--aot", action="store_true",
                    help="also compile one kernel ahead of time (numba.pycc) and time its load")
    args = ap.parse_args(argv)
    from machine import describe

    def row(what, us):
        print(f"{what:<66}{us:>9.2f}", flush=True)

    print(describe())
    print(f"{'what (CPU time)':<66}{'us':>9}")
    workdir = tempfile.mkdtemp(prefix="netsim-floor-")
    for P in args.P or [64, 128]:
        per_msg, settles, span = netsim_ring(P)
        row(f"netsim desync ring P = {P}, per message (min of 3)", 1e6 * per_msg)
        row(f"  per settle step ({settles:.2f} per message)", 1e6 * per_msg / settles)
        ring = ring_lists(P)
        for queue in ("heapq", "simpy"):
            floor, fspan = floor_per_message(ring, queue)
            if fspan != span:
                raise SystemExit(f"floor loop ({queue}) makespan {fspan!r} != netsim's {span!r}")
            row(f"  least plain-Python loop, {queue}, per message (same makespan)", 1e6 * floor)
        event = simpy_per_event(2 * P)
        row(f"SimPy timeout + callback, {2 * P} pending, per event", 1e6 * event)
        row(f"  x {settles:.2f} events, per message", 1e6 * event * settles)
        if not args.no_simgrid:
            cpp = simgrid_cpp(P, workdir)
            if cpp is None:
                print("SimGrid's C++ core not available (libsimgrid-dev, python3-simgrid)")
            else:
                rel = abs(cpp[1] - span) / span
                row(f"SimGrid C++ core (S4U), per message (min of 3; makespan rel diff "
                    f"{rel:.0e})", 1e6 * cpp[0])
    if not args.no_numba:
        for n in (1, 12, 30):
            row(f"numba call with {n} array arguments", 1e6 * numba_call(n))
        fresh(_WARM_CACHE)
        parts = fresh(_LOAD)
        print(f"{'a fresh process, cache filled (CPU)':<66}{'s':>9}")
        for what, cpu in parts.items():
            print(f"  {what:<64}{cpu:>9.3f}")
        print(f"  {'total':<64}{sum(parts.values()):>9.3f}")
    if args.aot:
        root = os.path.dirname(HERE)
        subprocess.run([sys.executable, "-c", _AOT_BUILD, workdir], check=True,
                       capture_output=True, cwd=root,
                       env={**os.environ, "PYTHONPATH": root + os.pathsep
                            + os.environ.get("PYTHONPATH", "")})
        print(f"{'kernels.release compiled ahead of time (numba.pycc), fresh process':<66}"
              f"{'s':>9}")
        for what, cpu in fresh(_AOT_LOAD, workdir).items():
            print(f"  {what:<64}{cpu:>9.5f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
