"""The public names keep working through the package faces, whatever folder defines them.

The names the README, the tutorial and the how-to guides use are imported the way a user
writes them, and each must be the object its defining module holds (a face re-exports, it
never wraps or copies).
"""

import importlib

import pytest

# (how a user reaches it, the module that defines it, its name there)
NAMES = [
    ("netsim.simulate", "netsim.result", "simulate"),
    ("netsim.Result", "netsim.result", "Result"),
    ("netsim.TraceBuilder", "netsim.trace.core", "TraceBuilder"),
    ("netsim.Trace", "netsim.trace.core", "Trace"),
    ("netsim.Network", "netsim.network.compiled", "Network"),
    ("netsim.load_trace", "netsim.formats.tracefile", "load_trace"),
    ("netsim.save_trace", "netsim.formats.tracefile", "save_trace"),
    ("netsim.concat", "netsim.trace.ops", "concat"),
    ("netsim.load_kineto", "netsim.formats.kineto.load", "load_kineto"),
    ("netsim.load_chakra", "netsim.formats.chakra", "load_chakra"),
    ("netsim.save_chakra", "netsim.formats.chakra", "save_chakra"),
    ("netsim.nccl.simulate", "netsim.nccl", "simulate"),
    ("netsim.nccl.ALGORITHMS", "netsim.comm.nccl.model", "ALGORITHMS"),
    ("netsim.nccl.tuning", "netsim.comm.nccl", "tuning"),
    ("netsim.trace.TraceBuilder", "netsim.trace.core", "TraceBuilder"),
    ("netsim.trace.repeat", "netsim.trace.ops", "repeat"),
    ("netsim.formats.kineto.load_kineto", "netsim.formats.kineto.load", "load_kineto"),
    ("netsim.comm.collectives.ring_allreduce", "netsim.comm.collectives.allreduce",
     "ring_allreduce"),
    ("netsim.costmodel.ring_allreduce", "netsim.costmodel.allreduce", "ring_allreduce"),
    ("topologies.star", "topologies.clusters", "star"),
    ("topologies.gpu_cluster", "topologies.gpu_clusters", "gpu_cluster"),
    ("workloads.record", "workloads.registry", "record"),
    ("workloads.PARADIGMS", "workloads.registry", "PARADIGMS"),
    ("workloads.transformer.schedule", "workloads.transformer.iteration", "schedule"),
    ("workloads.transformer.get_config", "workloads.transformer.flops", "get_config"),
    ("studies.cli.main", "studies.cli.parser", "main"),
]


def reach(dotted):
    """The object at ``dotted`` as a user reaches it: import the longest module prefix, then
    take attributes."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for name in parts[i:]:
            obj = getattr(obj, name)
        return obj
    raise ModuleNotFoundError(dotted)


@pytest.mark.parametrize("public, module, name", NAMES, ids=[n[0] for n in NAMES])
def test_a_public_name_is_the_defining_modules_object(public, module, name):
    assert reach(public) is getattr(importlib.import_module(module), name)


def test_a_name_that_is_not_there_says_so():
    with pytest.raises(AttributeError, match="no attribute 'bogus'"):
        reach("studies.cli.bogus")
