"""Desynchronised traffic: the engine's cost per event, and SimGrid side by side.

Run:  python benchmarks/desync.py                 (P = 64, 128, 256, 1024; median of 3)
      python benchmarks/desync.py --P 64 --repeat 1

Patterns (100 MB on a 10 GbE star, 1 us links, fixed seeds):

* ``desync-ring``: ring allreduce (2 (P - 1) steps of ``nbytes / P`` per rank to its
  right neighbour) where each step waits for the chunk received in the previous step
  and then for a random compute gap U(0, 1 ms) drawn from the seed;
* ``chains``: every rank sends ``2 (P - 1)`` messages of ``nbytes / P`` to its right
  neighbour, each after the previous one and a random compute gap, with no
  dependency between ranks;
* ``sync-ring``: the synchronous ring allreduce (``netsim.comm.collectives.ring_allreduce``),
  in SimGrid the ``desync-ring`` program with every gap 0;
* ``ps-async`` and ``ps-async-straggler``: the asynchronous parameter server's
  trace (:func:`workloads.paradigms.ps_async.schedule`, P workers and one server, 100
  iterations, from the statistics of a 4-worker run recorded on digits), as
  scheduled and with worker 0 ten times slower (``netsim.trace.perturb``,
  ``straggler="0:10x"``).

Each case runs in a fresh process so that its peak RSS is its own. ``--transport tcp``
replays the cases with TCP's start-up (``netsim.simulate(..., transport="tcp")``) for the
cost of the TCP transport against the fluid one; ``--inexact`` replays with ``exact=False``
(:mod:`netsim.engine.tolerant`).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

from machine import describe


def desync_trace(P, nbytes=100e6, pattern="desync-ring", seed=0, gap=1e-3):
    """The trace of ``pattern`` for P ranks: a compute gap then a message, per step and rank.

    Op ``2 (s P + r)`` is rank r's gap before step s, op ``2 (s P + r) + 1`` its message.
    """
    from netsim.trace.core import COMPUTE, MESSAGE, Trace, deps_csr

    steps = 2 * (P - 1)
    rng = np.random.default_rng(seed)
    s, r = np.divmod(np.arange(steps * P), P)
    comp = 2 * (s * P + r)
    msg = comp + 1
    n = 2 * steps * P
    kind = np.empty(n, np.uint8)
    kind[comp], kind[msg] = COMPUTE, MESSAGE
    rank = np.empty(n, np.int32)
    rank[comp] = rank[msg] = r
    peer = np.full(n, -1, np.int32)
    peer[msg] = (r + 1) % P
    size = np.zeros(n)
    size[msg] = nbytes / P
    duration = np.zeros(n)
    duration[comp] = rng.uniform(0.0, gap, steps * P)
    iteration = np.repeat(s, 2).astype(np.int32)
    # A gap waits for the rank's previous message and, in the ring, for the one received.
    own = np.full(n, -1, np.int64)
    recv = np.full(n, -1, np.int64)
    later = s > 0
    own[comp[later]] = msg[later] - 2 * P
    if pattern == "desync-ring":
        recv[comp[later]] = 2 * ((s[later] - 1) * P + (r[later] - 1) % P) + 1
    elif pattern != "chains":
        raise ValueError(f"unknown pattern {pattern!r}")
    mine = np.full(n, -1, np.int64)
    mine[msg] = comp
    ptr, idx = deps_csr(own, recv, mine)
    return Trace(P, kind=kind, rank=rank, peer=peer, size=size, duration=duration,
                 iteration=iteration, dep_ptr=ptr, dep_idx=idx)


def jittered(trace, seed=0, lo=0.5, hi=1.5):
    """``trace`` with every compute op's duration and FLOPs scaled by U(lo, hi) from ``seed``."""
    from netsim.trace.core import Trace

    factor = np.random.default_rng(seed).uniform(lo, hi, trace.num_ops)
    factor[trace.is_message] = 1.0
    return Trace(trace.ranks, kind=trace.kind, rank=trace.rank, peer=trace.peer, size=trace.size,
                 duration=trace.duration * factor, flops=trace.flops * factor,
                 iteration=trace.iteration, tag=trace.tag, dep_ptr=trace.dep_ptr,
                 dep_idx=trace.dep_idx, tags=trace.tags, metadata=trace.metadata)


def case(kind, P, nbytes=100e6):
    """(trace, graph) of one benchmark case."""
    from netsim.comm import collectives
    from topologies import fat_tree, leaf_spine, star

    def ten_gbe_star():
        return star(P, bandwidth=1.25e9, latency=1e-6)

    if kind in ("desync-ring", "chains"):
        return desync_trace(P, nbytes, kind), ten_gbe_star()
    if kind == "sync-ring":
        return collectives.ring_allreduce(P, nbytes), ten_gbe_star()
    if kind == "ring-fat-tree":  # k = 16: 1,024 hosts
        return collectives.ring_allreduce(P, nbytes), fat_tree(16)
    if kind == "ring-leaf-spine":  # 32 leaves of 32 hosts, 16 spines
        return collectives.ring_allreduce(P, nbytes), leaf_spine(32, 16, 32)
    if kind in ("dgc", "dgc-jitter"):
        from studies.scaling.traces import record_at

        trace = record_at("dgc", P, iterations=3)
        return (jittered(trace) if kind == "dgc-jitter" else trace), ten_gbe_star()
    if kind in ("ps-async", "ps-async-straggler"):
        from netsim.trace.perturb import perturb
        from workloads.paradigms import ps_async

        stats = ps_async.measure(ps_async.run(workers=4, epochs=1, dataset="digits").trace)
        trace = ps_async.schedule(P, stats, iterations=100)
        if kind == "ps-async-straggler":
            trace = perturb(trace, straggler="0:10x")
        return trace, star(trace.ranks, bandwidth=1.25e9, latency=1e-6)
    raise ValueError(f"unknown case {kind!r}")


_CHILD = r"""
import json, resource, sys, time
w0, c0 = time.perf_counter(), time.process_time()
sys.path.insert(0, sys.argv[1])
from desync import case
from netsim import simulate
trace, G = case(sys.argv[2], int(sys.argv[3]))
transport, exact = sys.argv[5], sys.argv[6] == "exact"

w1, c1 = time.perf_counter(), time.process_time()
# The first replay of the process pays whatever it loads on first use (numba and the compiled
# kernels, netsim.engine.kernels, if the replay takes the batch path); a second one is warm.
r = simulate(trace, G, transport=transport, exact=exact)
w2, c2 = time.perf_counter(), time.process_time()
out = {"messages": trace.num_messages, "build": w1 - w0, "first_wall": w2 - w1,
       "first_cpu": c2 - c1, "makespan": r.makespan, "settles": r.stats["settles"]}
if sys.argv[4] == "warm":
    again = simulate(trace, G, transport=transport, exact=exact)
    assert again.makespan == r.makespan
    out.update(wall=time.perf_counter() - w2, cpu=time.process_time() - c2)
out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""

CASES = [("desync-ring", P) for P in (64, 128, 256, 1024)] + \
        [("chains", P) for P in (64, 128, 256, 1024)] + \
        [("sync-ring", P) for P in (128, 256, 1024, 4096)] + \
        [("ring-fat-tree", 1024), ("ring-leaf-spine", 1024), ("dgc", 128), ("dgc-jitter", 128)] + \
        [(k, P) for k in ("ps-async", "ps-async-straggler") for P in (64, 128, 256, 1024)]


def run_case(kind, P, warm=True, transport="fluid", exact=True):
    """Build and replay one case in a fresh process (twice if ``warm``); its measurements.

    ``process`` is the wall time of the whole process (interpreter start to exit) with one
    replay: the child is run a second time without the warm replay for it.
    """
    mode = "exact" if exact else "inexact"
    out = json.loads(_timed([sys.executable, "-c", _CHILD, HERE, kind, str(P),
                             "warm" if warm else "once", transport, mode])[0])
    if warm:
        out["process"] = _timed([sys.executable, "-c", _CHILD, HERE, kind, str(P), "once",
                                 transport, mode])[1]
    else:
        out.update(wall=out["first_wall"], cpu=out["first_cpu"])
    return out


def _timed(cmd):
    """(stdout, wall seconds) of running ``cmd`` to its end."""
    w0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return out.stdout, time.perf_counter() - w0


SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's python3-simgrid installs the bindings there
HERE = os.path.dirname(os.path.abspath(__file__))

# A SimGrid cluster without a backbone is a star: each host's split-duplex 10 GbE link (1 us),
# a message crossing its sender's up and its receiver's down direction, as netsim's
# star(P, bandwidth=1.25e9, latency=1e-6). (A backbone that never limits would still put
# every flow in one max-min component for SimGrid's solver: 4-8x its CPU time here.)
PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="world" routing="Full">
    <cluster id="star" prefix="h" suffix="" radical="0-{last}" speed="1Gf"
             bw="1.25e9Bps" lat="1us" sharing_policy="SPLITDUPLEX"/>
  </zone>
</platform>
"""


def have_simgrid():
    """Whether SimGrid's Python bindings import under the system Python."""
    try:
        return subprocess.run([SYSTEM_PYTHON, "-c", "import simgrid"], capture_output=True,
                              timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def build_s4u(workdir):
    """Compile simgrid_desync.cpp against libsimgrid-dev; the binary's path, or None."""
    exe = os.path.join(workdir, "simgrid_desync")
    try:
        subprocess.run(["g++", "-O2", "-std=c++17", os.path.join(HERE, "simgrid_desync.cpp"),
                        "-lsimgrid", "-o", exe], capture_output=True, check=True, timeout=600)
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired):
        return None
    return exe


def run_simgrid(kind, P, workdir, s4u=None):
    """The same case in SimGrid: Python API, or the compiled S4U binary ``s4u``.

    Returns the program's JSON: wall and CPU seconds, simulated makespan, and ``process``,
    the wall seconds of the whole program (start to exit, reading the gaps and platform).
    """
    # The synchronous ring is the desynchronised one with every gap 0 (the same messages and
    # dependencies as netsim.comm.collectives.ring_allreduce).
    pattern, gap = ("desync-ring", 0.0) if kind == "sync-ring" else (kind, 1e-3)
    trace = desync_trace(P, pattern=pattern, gap=gap)
    gaps = trace.duration[~trace.is_message]  # in (step, rank) order, as the programs read them
    gaps_file = os.path.join(workdir, f"gaps{P}-{kind}.txt")
    platform = os.path.join(workdir, f"star{P}.xml")
    with open(gaps_file, "w") as f:
        f.write("\n".join(repr(float(g)) for g in gaps))
    with open(platform, "w") as f:
        f.write(PLATFORM.format(last=P - 1))
    cmd = [s4u] if s4u else [SYSTEM_PYTHON, os.path.join(HERE, "simgrid_desync.py")]
    out, process = _timed(cmd + [pattern, str(P), gaps_file, platform])
    return {**json.loads(out.strip().splitlines()[-1]), "process": process}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", action="append", help="run only these kinds (repeatable)")
    ap.add_argument("--P", type=int, action="append", help="run only these P (repeatable)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per case; the median is shown")
    ap.add_argument("--max-messages", type=float, default=1e6,
                    help="cases with more messages run once (default 1e6)")
    ap.add_argument("--warm-max-p", type=int, default=256,
                    help="largest P replayed a second time in its process, and timed as a "
                         "whole process (default 256)")
    ap.add_argument("--no-simgrid", action="store_true", help="skip the SimGrid runs")
    ap.add_argument("--transport", choices=("fluid", "tcp"), default="fluid",
                    help="netsim's transport (default fluid; tcp adds TCP's slow start)")
    ap.add_argument("--simgrid-max-p", type=int, default=256,
                    help="largest P run in SimGrid (default 256)")
    ap.add_argument("--inexact", action="store_true",
                    help="replay with exact=False (netsim.engine.tolerant: large batches "
                         "re-solve only the flows whose rates change, within 1e-9)")
    args = ap.parse_args(argv)
    workdir = tempfile.mkdtemp(prefix="netsim-bench-")
    simgrid = have_simgrid() and not args.no_simgrid
    if args.no_simgrid:
        print("SimGrid comparison skipped (--no-simgrid).")
    elif not simgrid:
        print("SimGrid's Python bindings are not available (apt-get install python3-simgrid): "
              "no side-by-side comparison.")
    s4u = build_s4u(workdir) if simgrid else None
    if simgrid and not s4u:
        print("No S4U binary (needs g++ and libsimgrid-dev): no C++ comparison.")
    print(describe())
    print(f"{'case':<20}{'P':>6}{'messages':>11}{'runs':>5}{'build s':>8}{'first s':>8}"
          f"{'warm s':>8}{'cpu s':>8}{'us/msg':>7}{'proc s':>7}{'peak MB':>8}{'makespan s':>12}"
          f"{'SG py cpu':>10}{'x':>6}{'S4U cpu':>8}{'x':>6}{'S4U proc':>9}{'x':>6}{'rel diff':>9}")
    print("(first s / warm s = wall of the first replay of a fresh process / of a second one in "
          "it; cpu s and us/msg = the warm replay's CPU time (the first one's above "
          f"P = {args.warm_max_p}); proc s = wall of a whole process: interpreter, imports, "
          "build, one replay, exit)")
    print("(SG py = SimGrid's Python API, S4U = its C++ core, same case; x = their CPU time / "
          "netsim's warm CPU, and S4U's whole program / netsim's whole process: above 1, netsim "
          "is faster; rel diff = the largest relative difference of SimGrid's makespans from "
          "netsim's)")
    kinds = list(dict.fromkeys(args.case or [k for k, _ in CASES]))
    cases = ([(k, P) for k in kinds for P in args.P] if args.P
             else [(k, P) for k, P in CASES if k in kinds])
    for kind, P in cases:
        warm = P <= args.warm_max_p
        runs = [run_case(kind, P, warm, args.transport, not args.inexact)]
        while len(runs) < args.repeat and runs[0]["messages"] <= args.max_messages:
            runs.append(run_case(kind, P, warm, args.transport, not args.inexact))

        def med(key):
            return statistics.median(x[key] for x in runs)

        cpu = med("cpu")
        r = runs[0]
        process = f"{med('process'):>7.2f}" if warm else f"{'':>7}"
        line = (f"{kind:<20}{P:>6}{r['messages']:>11,}{len(runs):>5}{med('build'):>8.2f}"
                f"{med('first_wall'):>8.2f}{med('wall'):>8.2f}{cpu:>8.2f}"
                f"{1e6 * cpu / r['messages']:>7.1f}{process}"
                f"{max(x['rss_mb'] for x in runs):>8.0f}{r['makespan']:>12.6g}")
        if simgrid and kind in ("desync-ring", "chains", "sync-ring") and P <= args.simgrid_max_p:
            sg = [run_simgrid(kind, P, workdir) for _ in runs]
            sg_cpu = statistics.median(x["cpu"] for x in sg)
            line += f"{sg_cpu:>10.2f}{sg_cpu / cpu:>6.1f}"
            spans = [sg[0]["makespan"]]
            if s4u:
                cc = [run_simgrid(kind, P, workdir, s4u) for _ in runs]
                cc_cpu = statistics.median(x["cpu"] for x in cc)
                cc_proc = statistics.median(x["process"] for x in cc)
                line += f"{cc_cpu:>8.2f}{cc_cpu / cpu:>6.2f}{cc_proc:>9.2f}"
                line += f"{cc_proc / med('process'):>6.2f}" if warm else f"{'':>6}"
                spans.append(cc[0]["makespan"])
            diff = max(abs(m - r["makespan"]) / r["makespan"] for m in spans)
            line += f"{diff:>9.1e}"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
