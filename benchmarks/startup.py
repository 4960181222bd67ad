"""The fixed cost of a netsim process: import, first replay, CLI, kernel compilation.

Run:  python benchmarks/startup.py               (median of 5 fresh processes per row)
      python benchmarks/startup.py --repeat 9 --compile
      python benchmarks/startup.py --threshold   (measures the batch path's move to numba)

Every row runs in fresh interpreters (``sys.executable``) and reports the median of
``--repeat`` of them: the wall seconds of the step inside the process (``time.perf_counter``
around it), and for whole processes the wall seconds from start to exit seen by the parent
and their CPU seconds (user + system, ``RUSAGE_CHILDREN``), which a loaded machine inflates
less than wall time.
"fresh" is the first call of a process, "warm" the same call again in it. ``--compile`` adds
the first batch-path replay with an empty numba cache (``NUMBA_CACHE_DIR`` pointed at a new
directory), in wall and CPU seconds: what the first run after installing pays once to compile
``netsim.engine.kernels``.

``--threshold`` measures what ``batch="auto"`` weighs (:meth:`netsim.engine.flows.FlowTable.kernels`):
numba's load in a fresh process (importing ``netsim.engine.kernels`` and a first call of
each kernel a replay uses, CPU seconds), and the numpy loops' extra CPU over the compiled
ones on two replays, one of many small solves (a synchronous ring, 256 flows a solve) and
one of few large ones (a jittered all-gather on a star, thousands of flows a solve), each
the median of ``--repeat`` warm replays per loop in one process. From the two it fits the
extra cost per solve and per flow solved, and prints the constants they imply beside
``BATCH_INSTANT_WORK`` (the extra per solve, in flows) and ``COMPILE_WORK`` (the load, in
flows) of :mod:`netsim.engine.flows`.
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

import numpy as np

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
elif sys.argv[1] == "ring":  # a synchronous ring of 16: the batch path
    trace = ring_allreduce(16, 1e6)
else:  # a synchronous ring of 128, 100 MB on a 10 GbE star: the batch path (issue 47's case)
    G = nx.Graph()
    G.add_edges_from(((f"h{i}", "s") for i in range(128)), bandwidth=1.25e9, latency=1e-6)
    trace = ring_allreduce(128, 100e6)
simulate = netsim.simulate
if len(sys.argv) > 2:  # the batch path's loops named: the engine's replay, as simulate runs it
    from netsim.engine.replay import replay

    def simulate(trace, G):
        net = netsim.Network(G)
        return replay(trace, net, net.placement(trace.ranks), trace.compute_seconds(),
                      batch=sys.argv[2])
t1, c1 = time.perf_counter(), time.process_time()
first = simulate(trace, G)
t2, c2 = time.perf_counter(), time.process_time()
warm = simulate(trace, G)
t3, c3 = time.perf_counter(), time.process_time()
assert warm.makespan == first.makespan
print(json.dumps({"imports and trace": t1 - t0, "fresh": t2 - t1, "warm": t3 - t2,
                  "fresh cpu": c2 - c1, "warm cpu": c3 - c2,
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


_LOAD = r"""
import json, time
import numpy as np
import netsim
c0 = time.process_time()
from netsim.engine import kernels as k
i, f = np.zeros(0, np.int64), np.zeros(1)
k.release(np.array([0]), np.array([0, 1, 1]), np.array([1]), np.array([0, 1]))
head, nxt, prv = np.full(3, -1), np.zeros(2, np.int64), np.zeros(2, np.int64)
links = np.array([[0], [1]])
k.index_build(np.ones(2, bool), links, 2, head, nxt, prv)
k.index_add(np.array([0]), links, 2, head, nxt, prv)
k.index_remove(np.array([0]), links, 2, head, nxt, prv)
k.component(head, nxt, links, np.zeros(3, bool), np.zeros(2, bool), np.array([1]), i, 2)
k.fill_bounded(links, np.ones(3), 2, 1.0, np.empty(0))
z = np.zeros(3)
k.apply_rates(np.array([1]), f, np.array([1]), 0.0, z[:2].copy(), z[:2].copy(), z[:2].copy(),
              z[:2].copy(), links, np.ones(3), z.copy(), z.copy(), z.copy(), z.copy(), z.copy(),
              np.zeros(3, np.int64), np.zeros(3, np.int64), 0.99, 2, False)
print(json.dumps({"load": time.process_time() - c0}))
"""

_EXTRA = r"""
import json, statistics, sys, time
import numpy as np
import networkx as nx
import netsim
from netsim.comm.collectives import ring_allreduce
from netsim.engine import flows
from netsim.engine.replay import replay

def star(P):
    G = nx.Graph()
    G.add_edges_from(((f"h{i}", "s") for i in range(P)), bandwidth=1.25e9, latency=1e-6)
    return G

def allgather(P, seed=0):  # every rank computes U(0, 1 ms), then sends 1 MB to every other
    rng = np.random.default_rng(seed)
    b = netsim.TraceBuilder(P)
    for r in range(P):
        c = b.compute(r, seconds=float(rng.uniform(0, 1e-3)))
        for d in range(P):
            if d != r:
                b.message(r, d, 1e6, deps=[c])
    return b.build()

cases = {"ring": (ring_allreduce(256, 100e6), star(256)), "allgather": (allgather(96), star(96))}
trace, G = cases[sys.argv[1]]
net = netsim.Network(G)
args = (trace, net, net.placement(trace.ranks), trace.compute_seconds())
solves = flows_solved = 0
rerate = flows.FlowTable._rerate_batch
def counted(self, comp, changed):
    global solves, flows_solved
    solves += 1
    flows_solved += len(comp)
    return rerate(self, comp, changed)
flows.FlowTable._rerate_batch = counted
replay(*args, batch="compiled")
cpu = {"numpy": [], "compiled": []}
for _ in range(int(sys.argv[2])):
    for batch in cpu:
        solves = flows_solved = 0
        c0 = time.process_time()
        replay(*args, batch=batch)
        cpu[batch].append(time.process_time() - c0)
print(json.dumps({"solves": solves, "flows": flows_solved,
                  **{b: statistics.median(v) for b, v in cpu.items()}}))
"""


def threshold(n):
    """Measure numba's load and the numpy loops' extra cost; print the constants they imply."""
    sys.path.insert(0, ROOT)  # this tree's engine, as the children's PYTHONPATH has it
    from netsim.engine import flows

    load = statistics.median(child(["-c", _LOAD])[0]["load"] for _ in range(n))
    fits = {case: child(["-c", _EXTRA], case, str(n))[0] for case in ("ring", "allgather")}
    print(f"numba's load in a fresh process (import, first call of each kernel): {load:.3f} s CPU")
    print(f"{'case':<12}{'solves':>8}{'flows':>12}{'numpy s':>10}{'compiled s':>12}"
          f"{'extra us/solve':>16}")
    for case, r in fits.items():
        print(f"{case:<12}{r['solves']:>8}{r['flows']:>12,}{r['numpy']:>10.3f}"
              f"{r['compiled']:>12.3f}{(r['numpy'] - r['compiled']) / r['solves'] * 1e6:>16.1f}")
    # extra = per_solve * solves + per_flow * flows, one equation per case
    a = np.array([[r["solves"], r["flows"]] for r in fits.values()], float)
    b = np.array([r["numpy"] - r["compiled"] for r in fits.values()])
    per_solve, per_flow = np.linalg.solve(a, b)
    print(f"numpy's extra CPU: {per_solve * 1e6:.1f} us per solve, {per_flow * 1e9:.1f} ns per "
          f"flow solved")
    if per_flow > 0:
        print(f"implied BATCH_INSTANT_WORK = {per_solve / per_flow:,.0f} "
              f"(netsim.engine.flows: {flows.BATCH_INSTANT_WORK:,}); implied COMPILE_WORK = "
              f"{load / per_flow:,.0f} (netsim.engine.flows: {flows.COMPILE_WORK:,})")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="fresh processes per row (median)")
    ap.add_argument("--compile", action="store_true",
                    help="also time the kernels' compilation with an empty numba cache")
    ap.add_argument("--threshold", action="store_true",
                    help="only measure what batch='auto' weighs: numba's load, numpy's extra cost")
    args = ap.parse_args(argv)
    n = args.repeat
    print(describe())
    if args.threshold:
        return threshold(n)
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
    for probe, label in ((("message",), "simulate one message (small-event path)"),
                          (("ring",), "simulate a ring allreduce, P = 16 (batch path)"),
                          (("ring128",), "ring allreduce, P = 128, 100 MB (batch path)"),
                          (("ring128", "compiled"), "the same, batch='compiled' (numba at once)")):
        try:
            r = median_of(n, ["-c", _REPLAY], *probe)
        except subprocess.CalledProcessError:  # an engine from before batch=
            continue
        rows.append((f"{label}; kernels loaded: {r['kernels']}", f"{r['fresh']:.3f}",
                     f"{r['warm']:.4f}", f"{r['process']:.3f}", f"{r['cpu']:.3f}"))
        if probe[0] == "ring128":
            rows.append(("  its replays in CPU seconds (fresh, warm)", f"{r['fresh cpu']:.3f}",
                         f"{r['warm cpu']:.4f}", "", ""))
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
