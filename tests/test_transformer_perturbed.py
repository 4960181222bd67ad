"""A straggler or jitter in ``netsim scale transformer --simulate``: every replica replayed."""

import pytest

import studies.scaling.transformer as st
from conftest import one_line_error
from netsim import simulate
from netsim.trace.perturb import perturb
from topologies import gpu_cluster
from workloads.transformer.flops import get_config
from workloads.transformer.iteration import schedule
from workloads.transformer.layout import layout


def test_a_straggler_replays_every_replica_as_the_perturbed_trace_does():
    c = get_config("gpt3-1.3b", global_batch=16)
    G = gpu_cluster("dgx_h100", 2)
    L, rate = layout(8, 1, 2), 1e14
    plain, k, _, _ = st.replay_point(c, L, G, rate)
    slow, k_slow, _, _ = st.replay_point(c, L, G, rate, perturbation={"straggler": "0:1.5x",
                                                                    "seed": 0})
    assert (k, k_slow) == (1, L.dp)   # symmetric without it, every replica with it
    # the independent path: the whole trace perturbed and replayed by netsim.simulate
    whole = perturb(schedule(c, 8, 1, 2, device_flops=rate), straggler="0:1.5x")
    direct = simulate(whole, G, placement=st.gpus_of(G)[:16])
    assert slow.makespan == pytest.approx(direct.makespan, rel=1e-12)
    assert slow.makespan > plain.makespan


@pytest.mark.parametrize("argv, needle", [
    (["scale", "transformer", "-P", "16", "--straggler", "0:2x"],
     "--straggler applies with --simulate (it perturbs the replay"),
    (["scale", "transformer", "-P", "16", "--jitter", "lognormal:0.1"],
     "--jitter applies with --simulate"),
    (["scale", "transformer", "-P", "16", "--simulate", "--seed", "3"],
     "--seed applies with --jitter or a p=P:Kx --straggler"),
])
def test_perturbation_options_need_the_replay(capsys, argv, needle):
    one_line_error(capsys, argv, needle)
