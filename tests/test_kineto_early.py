"""Early torch.profiler files (PyTorch 1.8, January 2021): other category names, same import.

The file is the public sample profile of PyTorch's TensorBoard plugin (see
tests/data/kineto/README.md). Expected values are counted from the JSON here,
with the early names written out independently of netsim.formats.kineto.older.
"""

import gzip
import json
import os

import numpy as np
import pytest

import netsim
from netsim.formats.kineto.load import load_kineto
from netsim.formats.kineto.older import modern

PATH = os.path.join(os.path.dirname(__file__), "data", "kineto", "tb_resnet50_worker0.pt.trace.json.gz")
GPU = {"Kernel": "kernel", "Memcpy": "memcpy", "Memset": "memset"}


@pytest.fixture(scope="module")
def events():
    return json.load(gzip.open(PATH))["traceEvents"]


@pytest.fixture(scope="module")
def trace():
    return load_kineto(PATH)


def test_the_file_uses_the_early_names(events):
    cats = {e.get("cat") for e in events}
    assert {"Operator", "Runtime", "Kernel", "Memcpy", "Memset", "async"} <= cats
    assert not cats & {"cpu_op", "kernel", "gpu_memcpy", "cuda_runtime", "ac2g"}


def test_profiler_steps_in_operator_events_mark_the_iterations(events, trace):
    steps = sorted((e["ts"], e["dur"]) for e in events
                   if e.get("cat") == "Operator" and str(e.get("name")).startswith("ProfilerStep#"))
    assert len(steps) == 6
    assert trace.metadata["steps"] == [5, 6, 7, 8, 9, 10]
    assert trace.metadata["measured_step_times"] == pytest.approx([d / 1e6 for _, d in steps],
                                                                  rel=1e-12)


def test_every_kernel_copy_and_memset_is_a_compute_op_of_its_duration(events, trace):
    # Before the early names were read, the 12 copies and 439 memsets were dropped unseen.
    tags = np.array(trace.tags + [""])[trace.tag]
    for early, tag in GPU.items():
        measured = sorted(round(e["dur"] / 1e6, 12) for e in events if e.get("cat") == early)
        got = sorted(np.round(trace.duration[(trace.kind == netsim.COMPUTE) & (tags == tag)], 12))
        assert got == measured, early


def test_a_compute_only_profile_replays_its_steps_on_one_gpu(events, trace):
    # One rank, one stream, no communication: the replay is the recorded kernels and the host
    # gaps between them in a chain, so its makespan is the sum of their durations.
    assert {e["args"]["stream"] for e in events if e.get("cat") in GPU} == {7}
    G = netsim.nx.Graph()
    G.add_node("gpu0", kind="gpu")
    result = netsim.simulate(trace, G)
    assert len(result.iteration_times) == 6
    comp = trace.kind == netsim.COMPUTE
    assert result.makespan == pytest.approx(float(trace.duration[comp].sum()), rel=1e-9)


def test_modern_names_pass_unchanged_and_early_ones_are_renamed():
    e = {"ph": "X", "cat": "cuda_runtime", "args": {"correlation": 1}}
    assert modern(e) is e
    old = {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "args": {"correlation": 1}}
    assert modern(old)["cat"] == "cuda_runtime" and old["cat"] == "Runtime"   # a copy
    assert modern({"cat": "async", "name": "other"})["cat"] == "async"
