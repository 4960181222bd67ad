"""A real PyTorch DDP run (gloo, CPU) recorded under the profiler and imported; needs torch."""

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="recording a PyTorch run needs torch "
                                           "(pip install 'netsim[torch]')")

import netsim  # noqa: E402
from netsim.comm.library import mpich_wire  # noqa: E402
from netsim.trace.reproject import reproject  # noqa: E402
from workloads.torch_recorder import parameter_bytes, record  # noqa: E402

HIDDEN = (32,)


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    d = tmp_path_factory.mktemp("rec")
    return record(workers=2, steps=2, hidden=HIDDEN, warmup=2, directory=d), d


def test_the_ranks_wrote_their_profiles(recording):
    _, d = recording
    assert sorted(os.listdir(d)) == ["rank0.json", "rank1.json"]


def test_each_step_allreduces_the_models_gradient_once(recording):
    trace, _ = recording
    # Independently of the recorder: the parameters of the same torch layers.
    model = torch.nn.Sequential(torch.nn.Linear(64, HIDDEN[0]), torch.nn.ReLU(),
                                torch.nn.Linear(HIDDEN[0], 10))
    grad = sum(p.numel() * p.element_size() for p in model.parameters())
    assert parameter_bytes(HIDDEN) == grad
    assert trace.metadata["collectives"] == [{"kind": "allreduce", "bytes": float(grad),
                                              "group": [0, 1]}] * 2
    assert trace.ranks == 2 and trace.num_iterations == 2
    assert len(trace.metadata["measured_step_times"]) == 2
    assert trace.metadata["recorder"]["torch"] == torch.__version__


def test_replay_and_projection_to_64_ranks(recording):
    trace, _ = recording
    n = float(parameter_bytes(HIDDEN))
    big = reproject(trace, 64)
    # 2 steps of an allreduce op; MPICH's ring moves 2 (P - 1) n each.
    assert mpich_wire(big).total_bytes == pytest.approx(2 * 2 * 63 * n)

    def star(P, B):
        G = netsim.nx.Graph()
        for r in range(P):
            G.add_edge(r, "sw", bandwidth=B, latency=5e-6)
            G.nodes[r]["kind"] = "host"
        return G

    # DDP launches the bucket's allreduce from the backward's last operator: the recorded
    # timeline decides how much of it that operator's remainder hides, but a slower network
    # can cost at most the closed forms' difference per step, and never less than nothing.
    ring = lambda P, B: 2 * (P - 1) * (2 * 5e-6 + n / P / B)  # noqa: E731
    for P, t in ((2, trace), (64, big)):
        a = netsim.simulate(t, star(P, 1.25e9)).makespan
        b = netsim.simulate(t, star(P, 0.125e9)).makespan
        assert 0 <= b - a <= 2 * (ring(P, 0.125e9) - ring(P, 1.25e9)) * (1 + 1e-9)
    assert np.all(np.isfinite(netsim.simulate(big, star(64, 1.25e9)).iteration_times))
