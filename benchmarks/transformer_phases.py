"""Where a transformer iteration's simulation spends its CPU and its memory, phase by phase.

``netsim scale transformer --simulate`` builds the topology, builds the iteration's trace
(:func:`workloads.transformer.iteration.schedule`), expands every collective op into flows with
the communication library (:func:`netsim.comm.library.expand`, NCCL's plans on GPUs) and replays
the flows (:func:`netsim.result.replay_expansion`). This prints, for each phase, its CPU
seconds (``time.process_time``), the peak resident memory reached during it (Linux's VmHWM,
reset before each phase through ``/proc/self/clear_refs``), and the sizes that drive it: ops
in the trace, ops and flows after expansion, collective calls.

Usage::

    python benchmarks/transformer_phases.py                     # gpt3-1.3b, TP 8 PP 2, P = 16
    python benchmarks/transformer_phases.py --config gpt3-13b --tp 8 --pp 4 -P 64
    python benchmarks/transformer_phases.py --config gpt3-175b --tp 8 --pp 16 -P 1024  # ~12 GB

Run on demand, never in CI; results are in benchmarks/README.md.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from netsim.comm.alone import overlapping  # noqa: E402
from netsim.comm.library import expand  # noqa: E402
from netsim.comm.priced import NcclPrices  # noqa: E402
from netsim.network.automorphism import odometers  # noqa: E402
from netsim.network.symmetry import SymmetryError  # noqa: E402
from netsim.result import replay_expansion  # noqa: E402
from netsim.trace.core import COLLECTIVE  # noqa: E402
from netsim.trace.perturb import perturb  # noqa: E402
from studies.registry import topology_factory  # noqa: E402
from studies.scaling.transformer import (default_efficiency, gpus_of, peak_of,  # noqa: E402
                                         replicas_of)
from workloads.transformer.flops import get_config  # noqa: E402
from workloads.transformer.iteration import schedule, shard_shift, shift  # noqa: E402
from workloads.transformer.layout import layout  # noqa: E402


def _peak_reset():
    """Reset the kernel's peak resident size of this process (Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def _peak_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def phase(name, rows, fn):
    """Run ``fn()``, append ``(name, CPU s, peak bytes)`` to ``rows``; return its value."""
    _peak_reset()
    t0 = time.process_time()
    value = fn()
    rows.append((name, time.process_time() - t0, _peak_bytes()))
    print(f"  {name:<10} {rows[-1][1]:8.2f} s CPU  peak {rows[-1][2] / 1e9:6.2f} GB",
          flush=True)
    return value


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", default="gpt3-1.3b")
    p.add_argument("--tp", type=int, default=8)
    p.add_argument("--pp", type=int, default=2)
    p.add_argument("-P", type=int, default=16)
    p.add_argument("--topology", default="gpu_cluster:machine=dgx_h100")
    p.add_argument("--global-batch", type=int, default=512, help="as netsim scale transformer")
    p.add_argument("--micro-batch", type=int, default=1, help="as netsim scale transformer")
    p.add_argument("--first-stage-layers", type=int, help="as netsim scale transformer")
    p.add_argument("--last-stage-layers", type=int, help="as netsim scale transformer")
    p.add_argument("--full", action="store_true",
                   help="every replica, every NCCL call expanded (default: the replicas of "
                        "whole machines once, netsim.network.symmetry; calls alone on their "
                        "links as one op each, netsim.comm.alone)")
    p.add_argument("--all-replicas", action="store_true",
                   help="simulate every data-parallel replica (the full replay a straggler needs), "
                        "NCCL calls alone on their links still replayed once")
    p.add_argument("--straggler", metavar="RANK:FACTOR",
                   help="one slow rank (netsim.trace.perturb's spec, e.g. 0:1.2x): breaks the "
                        "replicas' symmetry, so every replica is simulated")
    p.add_argument("--shards", action="store_true",
                   help="simulate shard 0 of every tensor-parallel group and every replica "
                        "(netsim.network.symmetry's shift of shards, the first cycle of "
                        "netsim.network.automorphism.odometers that is a symmetry): what "
                        "netsim scale transformer --simulate does where NCCL's trees break "
                        "the replicas' symmetry")
    p.add_argument("--fused", action="store_true",
                   help="each stage's compute and tensor-parallel calls between pipeline "
                        "messages as one op per shard (workloads.transformer.fused), the "
                        "calls priced alone by the planner the expansion then uses: what "
                        "netsim scale transformer --simulate does where the calls run alone")
    a = p.parse_args(argv)
    c = get_config(a.config, global_batch=a.global_batch, micro_batch=a.micro_batch)
    rows = []
    print(f"{a.config}, TP {a.tp}, PP {a.pp}, P = {a.P} on {a.topology}")
    G = phase("topology", rows, lambda: topology_factory(a.topology)(a.P))
    rate = default_efficiency() * peak_of(G, c.precision)
    L = layout(a.tp, a.pp, None, world=a.P)
    k = L.dp if a.full or a.all_replicas or a.straggler or a.shards else replicas_of(L, G)
    sigma = shift(L.tp, L.pp, L.dp, k) if k < L.dp else None
    print(f"replicas simulated: {k} of {L.dp}; shards: {1 if a.shards else L.tp} of {L.tp}; "
          f"NCCL calls alone on their links {'expanded' if a.full else 'replayed once'}")
    uneven = {k: v for k, v in (("first_stage_layers", a.first_stage_layers),
                                ("last_stage_layers", a.last_stage_layers)) if v is not None}
    shards = {"shards": 1} if a.shards else {}
    prices, place = NcclPrices(G), gpus_of(G)[:a.P]
    if a.fused:
        shards["tp_seconds"] = lambda op, ranks, n: prices.seconds([place[x] for x in ranks],
                                                                   op, n)
    t = phase("trace", rows, lambda: perturb(schedule(c, L.tp, L.pp, L.dp, device_flops=rate,
                                                      replicas=k, **uneven, **shards),
                                             straggler=a.straggler))

    def by_shards():
        for order in odometers(L.tp):
            try:
                return expand(t, G, place, "auto", collapse=not a.full,
                              symmetry=shard_shift(L.tp, L.pp, L.dp, order), planner=prices)
            except SymmetryError as exc:
                print(f"  shift of shards {order}: {exc}")
        raise SystemExit("no shift of shards is a symmetry here")

    x = phase("expand", rows, by_shards if a.shards else
              lambda: expand(t, G, place, "auto", collapse=not a.full,
                             symmetry=sigma, planner=prices))
    r = phase("replay", rows, lambda: replay_expansion(t, x))
    if x.alone is not None and overlapping(r.expanded_ops["start"], r.expanded_ops["end"], x):
        print("calls of a class kept as one op overlapped: netsim.simulate would replay again")
    calls = int((t.kind == COLLECTIVE).sum())
    print(f"trace ops {len(t):,} (collective calls {calls:,}); after expansion {len(x.trace):,} "
          f"ops; makespan {r.makespan:.4f} s; CPU in all {sum(c for _, c, _ in rows):.1f} s")


if __name__ == "__main__":
    main()
