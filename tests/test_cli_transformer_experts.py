"""``netsim scale transformer --experts E --ep N``: the expert terms, the sweep over ep, bad input."""

import json

import pytest
from conftest import one_line_error

from studies.cli.parser import main
from studies.scaling.transformer import peak_of
from topologies import dgx_h100
from workloads.transformer.flops import get_config, iteration_flops
from workloads.transformer.moe import iteration_flops_delta, moe

TOPO = "gpu_cluster:machine=dgx_h100"
BASE = ["scale", "transformer", "--config", "gpt3-1.3b", "--topology", TOPO,
        "--efficiency", "0.5", "--json"]


def records(capsys, argv):
    assert main(BASE + argv) == 0
    return json.loads(capsys.readouterr().out)["records"]


def test_expert_parallel_terms_add_up_and_memory_falls_with_ep(capsys):
    # ep 1 holds all 8 experts' states on each GPU, more than an H100's 80 GiB: computed
    # past the memory check, to compare
    rs = {ep: records(capsys, ["--tp", "1", "-P", "16", "--experts", "8", "--ep", str(ep),
                               "--no-memory-check"])[0]
          for ep in (1, 2, 8)}
    c = get_config("gpt3-1.3b", global_batch=512)
    for ep, r in rs.items():
        assert r["ep"] == ep
        assert r["time"] == pytest.approx(r["compute"] + r["bubble"] + r["tp_comm"]
                                          + r["pp_comm"] + r["dp_comm"] + r["ep_comm"],
                                          rel=1e-12)
        # MFU counts the router and the two experts per token in the model's FLOPs
        model = iteration_flops(c, "none") + iteration_flops_delta(c, moe(8), "none")
        assert r["mfu"] == pytest.approx(model / (r["time"] * 16 * peak_of(dgx_h100())),
                                         rel=1e-12)
    assert rs[1]["ep_comm"] == 0 < rs[2]["ep_comm"]
    # 8 experts' states on one GPU, 4 or 1 under ep 2 and 8: 16 B x 24 layers x 7 (8h^2 + 5h)
    h = 2048
    assert rs[1]["memory"] - rs[8]["memory"] == pytest.approx(16 * 24 * 7 * (8 * h * h + 5 * h))
    assert rs[1]["memory"] > rs[2]["memory"] > rs[8]["memory"]


def test_sweep_runs_over_every_ep_dividing_dp_and_the_experts(capsys):
    rs = records(capsys, ["-P", "16", "--sweep", "--experts", "4", "--sequence-parallel"])
    eps = {}
    for r in rs:
        eps.setdefault((r["tp"], r["pp"], r["dp"]), set()).add(r["ep"])
    assert eps[(1, 1, 16)] == {1, 2, 4}
    assert eps[(8, 2, 1)] == {1}
    assert [r["time"] for r in rs] == sorted(r["time"] for r in rs)


def test_the_table_shows_ep_and_its_exposed_time(capsys):
    assert main(BASE[:-1] + ["--tp", "1", "-P", "16", "--experts", "8", "--ep", "4"]) == 0
    out = capsys.readouterr().out
    head = out.splitlines()[0].split()
    assert head[:5] == ["P", "tp", "pp", "dp", "ep"] and "EP" in head
    assert "8 experts, top-2, capacity factor 1" in out


@pytest.mark.parametrize("argv,needle", [
    (["--tp", "1", "--experts", "8", "--ep", "3"], "ep 3 does not divide dp 16"),
    (["--tp", "1", "--experts", "6", "--ep", "4"], "ep 4 does not divide the 6 experts"),
    (["--tp", "1", "--ep", "2"], "--ep 2 needs --experts"),
    (["--tp", "2", "--experts", "8"], "need sequence parallelism"),
    (["--sweep", "--experts", "8"], "--sweep with --experts needs --sequence-parallel"),
    (["--tp", "1", "--experts", "2", "--top-k", "3"], "top_k 3 is more than the 2 experts"),
    (["--tp", "1", "--experts", "0"], "--experts"),
    (["--tp", "1", "--experts", "4", "--capacity-factor", "0"], "capacity_factor"),
    (["--tp", "1", "--experts", "4", "--ep", "0"], "--ep"),
])
def test_bad_expert_options_are_one_line(capsys, argv, needle):
    one_line_error(capsys, BASE[:-1] + ["-P", "16"] + argv, needle)
