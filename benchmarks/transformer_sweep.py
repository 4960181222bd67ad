"""What ``netsim scale transformer --sweep --simulate`` spends on each layout, and by which path.

The sweep (:func:`studies.scaling.transformer.sweep`) replays every layout it keeps with
:func:`studies.scaling.transformer.point`; each replay takes the first exact reduction that
holds (:func:`studies.scaling.transformer.replay_point`: replicas simulated once, else the
shards of each tensor-parallel group once, else every rank). This runs the same points one by
one, with one :class:`netsim.comm.priced.NcclPrices` shared as the sweep shares it, and prints
for each layout its path (replicas and shards simulated), its CPU seconds
(``time.process_time``), the peak resident memory reached during it (Linux's VmHWM, reset
before each layout), the simulated and the closed-form time.

Usage::

    python benchmarks/transformer_sweep.py                       # gpt3-175b on 1,024 H100s
    python benchmarks/transformer_sweep.py --memory 80e9         # the layouts that fit 80 GB
    python benchmarks/transformer_sweep.py --only 4,16           # one layout (TP, PP)

Run on demand, never in CI; results are in benchmarks/README.md.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.transformer_phases import _peak_bytes, _peak_reset  # noqa: E402
from netsim.comm.priced import NcclPrices  # noqa: E402
from studies.registry import topology_factory  # noqa: E402
from studies.scaling.transformer import (FullReplayRefused, default_efficiency,  # noqa: E402
                                         point, sweep_layouts)
from workloads.transformer.flops import get_config  # noqa: E402
from workloads.transformer.layout import layout  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", default="gpt3-175b")
    p.add_argument("-P", type=int, default=1024)
    p.add_argument("--topology", default="gpu_cluster:machine=dgx_h100")
    p.add_argument("--global-batch", type=int, default=512, help="as netsim scale transformer")
    p.add_argument("--memory", type=float, help="bytes per GPU: the layouts needing more are "
                                                "left out, as the sweep's --memory")
    p.add_argument("--only", help="TP,PP of one layout")
    a = p.parse_args(argv)
    c = get_config(a.config, global_batch=a.global_batch)
    G = topology_factory(a.topology)(a.P)
    e, prices = default_efficiency(), NcclPrices(G)
    only = tuple(int(x) for x in a.only.split(",")) if a.only else None
    print(f"{a.config} on {a.P} GPUs of {a.topology}, B = {a.global_batch}")
    print(f"{'tp':>3} {'pp':>3} {'dp':>4} {'replicas':>9} {'shards':>7} {'CPU s':>7} "
          f"{'peak GB':>8} {'simulated':>10} {'closed':>8} {'memory GB':>9}")
    total = 0.0
    for tp, pp, dp in sweep_layouts(c, a.P):
        if only and (tp, pp) != only:
            continue
        L = layout(tp, pp, dp)
        _peak_reset()
        t0 = time.process_time()
        try:
            r = point(c, L, G, e, prices=prices,
                      simulate=lambda rec: a.memory is None or rec["memory"] <= a.memory)
        except FullReplayRefused as exc:
            r = {"tp": tp, "pp": pp, "dp": dp, "simulated": None, "time": float("nan"),
                 "memory": float("nan"), "refused": str(exc)}
        cpu = time.process_time() - t0
        total += cpu
        sim = r.get("simulated")
        print(f"{tp:>3} {pp:>3} {dp:>4} {r.get('replicas_simulated', '-')!s:>9} "
              f"{r.get('shards_simulated', '-')!s:>7} {cpu:7.1f} {_peak_bytes() / 1e9:8.2f} "
              f"{'-' if sim is None else f'{sim:.4f}':>10} {r['time']:8.4f} "
              f"{r['memory'] / 1e9:9.1f}" + (f"  refused: {r['refused']}" if "refused" in r
                                             else ""), flush=True)
    print(f"CPU in all {total:.1f} s")


if __name__ == "__main__":
    main()
