"""Public entry points check each argument's kind before using it: a wrong one is a netsim
error naming the argument, never a TypeError, AttributeError or numpy's "truth value of an
array is ambiguous" from inside (netsim.simulate, the engine's replay, netsim.nccl.simulate,
the transformer's point, study and sweep, a paradigm's study)."""

import numpy as np
import pytest

from netsim import NetsimError, TraceBuilder, simulate
from netsim.engine.replay import replay
from netsim.network.compiled import Network
from netsim.nccl import simulate as nccl_simulate
from studies.scaling import paradigm, transformer
from topologies import dgx_h100, gpu_cluster, star
from workloads.transformer.flops import get_config
from workloads.transformer.layout import layout


def trace():
    b = TraceBuilder(2)
    b.message(0, 1, 1e6)
    return b.build()


G = star(2)
NET = Network(G)
NODES = NET.placement(2)
C = get_config("gpt3-1.3b", global_batch=16)
ARRAY = np.array([1, 2])

CASES = [
    (lambda: simulate(trace(), G, placement=5),
     "placement must be a sequence or dict of the ranks' nodes, got int 5"),
    (lambda: simulate(trace(), G, placement="host0"),
     "placement must be a sequence or dict of the ranks' nodes, got str 'host0'"),
    (lambda: simulate(trace(), G, symmetry="x"),
     "symmetry (a permutation of the ranks) must be a sequence of 2 integers, got str 'x'"),
    (lambda: simulate(trace(), G, symmetry=[0.5, 1]),
     "symmetry (a permutation of the ranks) must be a sequence of 2 integers, got list [0.5, 1]"),
    (lambda: simulate(trace(), G, link_series="yes"),
     "link_series must be True or False, got str 'yes'"),
    (lambda: simulate(trace(), G, collapse=1), "collapse must be True or False, got int 1"),
    (lambda: simulate(trace(), G, sharing=ARRAY),
     "unknown sharing array([1, 2]); known: maxmin, priority"),
    (lambda: simulate(trace(), G, ecmp=ARRAY),
     "unknown ecmp array([1, 2]): use None (paths by channel) or 'hash'"),
    (lambda: replay(None, NET, NODES, np.zeros(1)),
     "trace must be a netsim Trace (TraceBuilder(...).build(), load_trace(path)), got NoneType None"),
    (lambda: replay(trace(), G, NODES, np.zeros(1)),
     "net must be a netsim.network.compiled.Network (Network(G)), got Graph"),
    (lambda: replay(trace(), NET, 0, np.zeros(1)),
     "nodes (the node of each rank) must be a sequence of 2 integers, got int 0"),
    (lambda: replay(trace(), NET, NODES, None),
     "seconds (each op's duration) must be a sequence of 1 real numbers, got NoneType None"),
    (lambda: replay(trace(), NET, NODES, np.zeros(1), progress=5),
     "progress must be callable as progress(ops_done), got int 5"),
    (lambda: replay(trace(), NET, NODES, np.zeros(1), link_series=ARRAY),
     "link_series must be True or False, got ndarray array([1, 2])"),
    (lambda: nccl_simulate(dgx_h100(), ARRAY, 1e6), "unknown op array([1, 2]); known: "),
    (lambda: transformer.point("gpt3-13b", layout(8, 1, 1), dgx_h100(), 0.5),
     "c must be a transformer Config (workloads.transformer.flops.get_config('gpt3-13b')), "
     "got str 'gpt3-13b'"),
    (lambda: transformer.point(C, None, dgx_h100(), 0.5),
     "L must be a Layout (workloads.transformer.layout.layout(tp, pp, dp)), got NoneType None"),
    (lambda: transformer.point(C, layout(8, 1, 1), "dgx_h100", 0.5),
     "G must be a networkx graph (a topologies builder's), got str 'dgx_h100'"),
    (lambda: transformer.point(C, layout(8, 1, 1), dgx_h100(), None),
     "efficiency must be a number in (0, 1], got None"),
    (lambda: transformer.point(C, layout(8, 1, 1), dgx_h100(), 57.2),
     "efficiency must be a number in (0, 1], got 57.2"),
    (lambda: transformer.sweep(C, "16", gpu_cluster("dgx_h100", 2)),
     "P must be an integer >= 1, got '16'"),
    (lambda: transformer.study(C, 8, 1, [16], 5),
     "make_topology must be callable as make_topology(P) (a builder), got int 5"),
    (lambda: transformer.study(C, 8, 1, 16, lambda P: gpu_cluster("dgx_h100", P // 8)),
     "workers must be a sequence of worker counts ([2, 4, 8]), got int 16"),
    (lambda: paradigm.study("allreduce", 4, star), "workers must be a sequence of worker counts"),
    (lambda: paradigm.study("allreduce", [2, 4], star, dataset=ARRAY),
     "unknown dataset array([1, 2]); known datasets: "),
    (lambda: paradigm.study("allreduce", [2, 4], star, iterations=2.5),
     "iterations must be an integer >= 1, got 2.5"),
]


@pytest.mark.parametrize("call, message", CASES)
def test_a_wrong_argument_is_named_first(call, message):
    with pytest.raises(NetsimError) as exc:
        call()
    assert str(exc.value).startswith(message)


def test_a_window_too_long_to_record_is_priced_first():
    # 10^30 iterations at the cheapest epoch measured, 1.8 ms: 1.8e27 s, refused before any
    # recording (the study recorded the window first and ran on)
    with pytest.raises(NetsimError, match=r"^--iterations 10{30} would take at least 1.8e\+27 s"):
        paradigm.study("allreduce", [2, 4], star, iterations=10**30, dataset="iris")


def test_good_arguments_still_pass():
    # 1 MB at 1.25 GB/s over two 10GbE links of the star: 0.8 ms plus the two links' latency
    r = simulate(trace(), G, placement=["host1", "host0"], symmetry=None, link_series=True)
    assert r.makespan == pytest.approx(1e6 / 1.25e9 + 2 * G.edges["host0", "switch"]["latency"])
