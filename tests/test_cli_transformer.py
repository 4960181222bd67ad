"""``netsim scale transformer``: the closed form per P, the layout sweep, the replay, bad input."""

import json

import pytest
from conftest import one_line_error

from studies.cli.parser import main
from studies.scaling.transformer import peak_of
from topologies import dgx_h100
from workloads.transformer.closed import closed_form
from workloads.transformer.flops import get_config, iteration_flops

TOPO = "gpu_cluster:machine=dgx_h100"


def test_scale_reports_time_mfu_and_the_terms_that_add_up(capsys, tmp_path):
    assert main(["scale", "transformer", "--config", "gpt3-13b", "--tp", "8", "--pp", "4",
                 "--topology", TOPO, "-P", "64..256", "--efficiency", "0.5", "--json",
                 "--png", str(tmp_path / "s.png")]) == 0
    out = json.loads(capsys.readouterr().out)
    rs = out["records"]
    assert [r["P"] for r in rs] == [64, 128, 256] and [r["dp"] for r in rs] == [2, 4, 8]
    c = get_config("gpt3-13b", global_batch=512)
    for r in rs:
        assert r["time"] == pytest.approx(r["compute"] + r["bubble"] + r["tp_comm"]
                                          + r["pp_comm"] + r["dp_comm"], rel=1e-12)
        # bubble (p - 1)/m of a light stage's compute, m = B / dp micro-batches of one
        # sequence: the last stage's logit layer makes it the slowest, and the others' one
        # micro-batch each fills the pipeline (the uniform formula, without the vocabulary)
        light = closed_form(c._replace(vocab=0), 8, 4, r["dp"], device_flops=0.5 * 989.5e12)
        assert r["bubble"] == pytest.approx(light["compute"] * 3 / (512 // r["dp"]), rel=1e-9)
        assert r["bubble"] < r["compute"] * 3 / (512 // r["dp"])
        # MFU: the model's FLOPs without recomputation over time x P x the H100's peak
        assert r["mfu"] == pytest.approx(
            iteration_flops(c, "none") / (r["time"] * r["P"] * peak_of(dgx_h100())), rel=1e-12)
        # compute alone at half the peak: Eq. 3's FLOPs (with recomputation) over P GPUs,
        # less the last stage's logit layer that the slowest stage carries for all
        assert r["compute"] >= iteration_flops(c) / r["P"] / (0.5 * 989.5e12) * 0.99


def test_sweep_ranks_layouts_fastest_first(capsys, tmp_path):
    assert main(["scale", "transformer", "--config", "gpt3-1.3b", "--topology", TOPO,
                 "-P", "16", "--sweep", "--efficiency", "0.5", "--json",
                 "--png", str(tmp_path / "s.png")]) == 0
    rs = json.loads(capsys.readouterr().out)["records"]
    times = [r["time"] for r in rs]
    assert times == sorted(times) and all(r["tp"] * r["pp"] * r["dp"] == 16 for r in rs)


def test_simulated_replay_sits_beside_the_closed_form(capsys, tmp_path):
    assert main(["scale", "transformer", "--config",
                 "gpt3-1.3b:layers=4,hidden=256,heads=8,seq=128,vocab=0", "--tp", "2",
                 "--pp", "2", "--global-batch", "8", "--topology", TOPO, "-P", "8",
                 "--simulate", "--efficiency", "0.5", "--png", str(tmp_path / "s.png")]) == 0
    out = capsys.readouterr().out
    assert "simulated" in out and "saturated link" in out


@pytest.mark.parametrize("argv,needle", [
    (["--config", "gpt9"], "unknown model 'gpt9'"),
    (["--tp", "3", "-P", "48"], "40 heads do not split over tp 3"),
    (["--pp", "3", "-P", "48", "--tp", "2"], "40 layers do not split over 3"),
    (["--tp", "0"], "tp"),
    (["--efficiency", "1.5"], "--efficiency"),
    (["--pipeline", "zb"], "pipeline schedule"),
    (["--pipeline", "interleaved", "--chunks", "1", "--pp", "4"], "chunks >= 2"),
    (["--config", "gpt3-13b:layers"], "key=value"),
    (["-P", "48", "--pp", "4"], "48 ranks do not divide into tp 8 x pp 4"),
    (["--zero", "4"], "unknown ZeRO stage 4"),
    (["--zero", "3", "--pp", "4"], "ZeRO-3/FSDP needs pp 1"),
    (["--fsdp", "--zero", "1"], "FSDP is ZeRO-3's sharding"),
    (["--zero", "1", "--pp", "8"], "ZeRO-1 shards over data-parallel replicas; dp is 1"),
])
def test_bad_input_is_one_line(capsys, argv, needle):
    base = ["-P", "64"] if "-P" not in argv else []  # an option given twice is refused
    one_line_error(capsys, ["scale", "transformer", "--topology", TOPO] + base + argv, needle)


def test_interleaving_shrinks_the_bubble_by_its_chunks(capsys, tmp_path):
    runs = {}
    for extra in ([], ["--pipeline", "interleaved", "--chunks", "2"]):
        assert main(["scale", "transformer", "--config", "gpt3-13b", "--tp", "8", "--pp", "4",
                     "--topology", TOPO, "-P", "64", "--efficiency", "0.5", "--json",
                     "--png", str(tmp_path / "s.png")] + extra) == 0
        runs[len(extra)] = json.loads(capsys.readouterr().out)["records"][0]
    plain, inter = runs[0], runs[4]
    # (p - 1)/m against (p - 1)/(v m) of the same compute (Narayanan et al. SC'21, 2.2.2)
    assert inter["compute"] == pytest.approx(plain["compute"], rel=1e-12)
    assert inter["bubble"] == pytest.approx(plain["bubble"] / 2, rel=1e-12)


def test_png_is_a_readable_picture(tmp_path, capsys):
    from test_pngs import _check_png

    path = tmp_path / "t.png"
    assert main(["scale", "transformer", "--config", "gpt3-13b", "--tp", "8", "--pp", "4",
                 "--topology", TOPO, "-P", "64..256", "--png", str(path), "-q"]) == 0
    _check_png(path)
    capsys.readouterr()


def test_fsdp_keeps_the_time_terms_adding_up_and_shards_the_memory(capsys):
    runs = {}
    for extra in ([], ["--fsdp"], ["--zero", "1"]):
        assert main(["scale", "transformer", "--config", "gpt3-1.3b", "--tp", "1",
                     "--topology", TOPO, "-P", "16", "--efficiency", "0.5", "--json",
                     "--global-batch", "64"] + extra) == 0
        runs[tuple(extra)] = json.loads(capsys.readouterr().out)["records"][0]
    for r in runs.values():
        assert r["time"] == pytest.approx(r["compute"] + r["tp_comm"] + r["dp_comm"], rel=1e-12)
    # ZeRO Figure 1: model states of 16 bytes per parameter, 16/d under full sharding (d = 16);
    # one stage, one shard: every parameter of Narayanan's Eq. 2 on every GPU
    from workloads.transformer.flops import parameters
    saved = runs[()]["memory"] - runs[("--fsdp",)]["memory"]
    assert saved == pytest.approx(16 * (1 - 1 / 16) * parameters(get_config("gpt3-1.3b")),
                                  rel=1e-12)
    assert runs[("--zero", "1")]["dp_comm"] > 0 and runs[("--fsdp",)]["dp_comm"] > 0


def test_device_sets_the_gpu_whose_peak_the_study_uses(capsys):
    args = ["scale", "transformer", "--config", "gpt3-1.3b", "--tp", "8", "--topology", TOPO,
            "-P", "8", "--global-batch", "16", "--efficiency", "0.5", "--json"]
    assert main(args) == 0
    h100 = json.loads(capsys.readouterr().out)["records"][0]
    assert main(args + ["--device", "a100"]) == 0
    a100 = json.loads(capsys.readouterr().out)["records"][0]
    # the compute at half of the A100's dense FP16 peak (312 TFLOP/s, NVIDIA's datasheet)
    # instead of the H100's (989.5); the links stay the DGX H100's
    assert a100["compute"] == pytest.approx(h100["compute"] * 989.5 / 312, rel=1e-12)
    assert a100["tp_comm"] == h100["tp_comm"]
    c = get_config("gpt3-1.3b", global_batch=16)
    assert a100["mfu"] == pytest.approx(iteration_flops(c, "none") / (a100["time"] * 8 * 312e12),
                                        rel=1e-12)


@pytest.mark.parametrize("device,needle", [("TPU", "unknown device 'TPU'; known devices: V100"),
                                           ("A100:tf32", "give a GPU name alone")])
def test_unknown_device_is_refused_in_one_line(capsys, device, needle):
    one_line_error(capsys, ["scale", "transformer", "--config", "gpt3-1.3b", "--topology", TOPO,
                            "-P", "8", "--device", device], needle)
