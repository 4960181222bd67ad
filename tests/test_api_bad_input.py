"""The Python API's bad input: a netsim error that says what was wanted, never a stray one.

Each case once ended in an AttributeError or TypeError from deep inside (``'NoneType'
object has no attribute 'num_collectives'``, ``'int' object is not callable``) or was
accepted when the value could matter (a device FLOP/s of 0 that no op needed yet).
"""

import networkx as nx
import pytest

import netsim
from netsim import NetsimError, TraceBuilder, TraceError, simulate
from netsim.comm.nccl.hardware import NcclModelError
from topologies import dgx_h100


def one_message():
    b = TraceBuilder(2)
    b.message(0, 1, 1e6)
    return b.build()


G = nx.Graph()
G.add_edge("a", "b", bandwidth=1e9, latency=1e-6)


@pytest.mark.parametrize("call, error, words", [
    (lambda: simulate(None, G), TraceError, "trace must be a netsim Trace (TraceBuilder(...)"
                                            ".build(), load_trace(path)), got NoneType None"),
    (lambda: simulate("t.npz", G), TraceError, "got str 't.npz'"),
    (lambda: netsim.save_trace(None, "x.npz"), TraceError, "trace must be a netsim Trace"),
    (lambda: netsim.concat(one_message(), 5), TraceError, "second must be a netsim Trace"),
    (lambda: netsim.concat([], one_message()), TraceError, "first must be a netsim Trace"),
    (lambda: netsim.repeat("x", 2), TraceError, "trace must be a netsim Trace"),
    (lambda: simulate(one_message(), G, progress=5), NetsimError,
     "progress must be callable as progress(ops_done), got int 5"),
    (lambda: TraceBuilder(2).message(0, 1, 1, deps=5), TraceError,
     "deps must be a sequence of op ids (deps=[5]), got int 5"),
    (lambda: TraceBuilder(2).compute(0, seconds=1, deps="0"), TraceError,
     "deps must be a sequence of op ids"),
    (lambda: netsim.nccl.simulate(dgx_h100(), "allreduce", 1, ranks=8), NcclModelError,
     "ranks must be a sequence of gpu nodes"),
])
def test_wrong_kind_of_argument_is_named(call, error, words):
    with pytest.raises(error) as exc:
        call()
    assert words in str(exc.value)


@pytest.mark.parametrize("flops", [0, -1.0, float("nan"), float("inf"), "x", True])
def test_device_flops_is_checked_when_given_even_if_no_op_needs_it(flops):
    # The trace has no op in FLOPs: the bad rate was accepted and ignored before.
    with pytest.raises(TraceError, match="device_flops"):
        simulate(one_message(), G, device_flops=flops)


def test_good_calls_still_work():
    # 1 MB at 1 GB/s after 1 us of latency: 1.001 ms; a list of op ids as deps.
    assert simulate(one_message(), G, device_flops=1e12, progress=lambda done: None).makespan \
        == pytest.approx(1.001e-3, rel=1e-12)
    b = TraceBuilder(2)
    first = b.message(0, 1, 1e6)
    b.message(1, 0, 1e6, deps=[first])
    assert simulate(b.build(), G).makespan == pytest.approx(2 * 1.001e-3, rel=1e-12)


def test_a_refused_op_leaves_the_builder_as_it_was():
    # The check runs before any column grows: the ops added before and after still line up.
    b = TraceBuilder(2)
    first = b.message(0, 1, 1e6)
    with pytest.raises(TraceError):
        b.message(1, 0, 1e6, deps=5)
    b.message(1, 0, 1e6, deps=[first])
    trace = b.build()
    assert trace.num_ops == 2 and trace.deps(1).tolist() == [0]


@pytest.mark.parametrize("call, words", [
    # each ended in a TypeError, ValueError or ZeroDivisionError from inside before
    (lambda: __import__("workloads").record([], epochs=1), "unknown paradigm []"),
    (lambda: __import__("workloads.transformer.flops", fromlist=["x"]).get_config([]),
     "unknown model []"),
    (lambda: __import__("workloads.transformer.flops", fromlist=["x"]).config(
        2, 64, 4, 16, 0, ffn_hidden=96, mlp=[], kv_heads=2), "unknown mlp []"),
    (lambda: _closed(0), "device_flops must be a finite number > 0, got 0"),
    (lambda: _closed(None), "device_flops must be a finite number > 0, got None"),
    (lambda: _closed("x"), "device_flops must be a finite number > 0, got 'x'"),
    (lambda: netsim.trace.perturb.jitter_factors(None, 3), "jitter must be 'lognormal:SIGMA'"),
    (lambda: netsim.trace.perturb.jitter_factors("lognormal:0.1", -1), "n must be an integer"),
])
def test_wrong_value_of_a_public_function_is_a_netsim_error(call, words):
    with pytest.raises(NetsimError) as exc:
        call()
    assert words in str(exc.value)


def _closed(device_flops):
    from workloads.transformer.closed import closed_form
    from workloads.transformer.flops import config

    return closed_form(config(4, 64, 4, 32, 0, global_batch=8), pp=4, device_flops=device_flops)
