"""`netsim replay --device-from A100 --device-to H100`: an imported profile's kernels scaled by
the ratio of the devices' datasheet peaks, and the refusals around it.

Expected factors are the datasheets' numbers typed here: NVIDIA A100 datasheet (2021) FP32 19.5
TFLOPS, TF32 tensor 156 (dense); NVIDIA H100 datasheet (2023) SXM FP32 67 TFLOPS, TF32 tensor
989 with sparsity, 494.5 dense; FP16 tensor 312 and 989.5 dense.
"""

import json
import os

import pytest

from netsim.formats.kineto.load import load_kineto
from studies.cli.parser import main
from studies.validation.device_scale import device_scale, profile_precision

DATA = os.path.join(os.path.dirname(__file__), "data", "kineto")
A100 = os.path.join(DATA, "hta_a100_ddp_rank0.json.gz")
MI300X = os.path.join(DATA, "tracelens_mi300x_ddp_rank0.json.gz")


@pytest.fixture(scope="module")
def npz(tmp_path_factory):
    path = tmp_path_factory.mktemp("dev") / "a100.npz"
    assert main(["import", "kineto", A100, "--symmetric", "--steps", "5", "-o", str(path),
                 "--quiet"]) == 0
    return str(path)


def test_factor_is_the_datasheet_peak_ratio():
    md = {"dtypes": ["Float"], "device": "NVIDIA A100-PG509-200"}
    assert device_scale(md, "A100", "H100")[0] == pytest.approx(19.5 / 67, rel=1e-12)
    assert device_scale(md, "A100", "H100", "tf32")[0] == pytest.approx(156 / 494.5, rel=1e-12)
    assert device_scale({"dtypes": ["BFloat16"]}, "A100", "H100")[0] == \
        pytest.approx(312 / 989.5, rel=1e-12)


def test_precision_comes_from_the_profile_and_says_so():
    assert load_kineto(A100, symmetric=True, steps=[5]).metadata["dtypes"] == ["Float", "Long"]
    assert profile_precision({"dtypes": ["Float", "Long"]})[0] == "fp32"
    mi = load_kineto(MI300X, symmetric=True, steps=[17]).metadata
    assert profile_precision(mi) == ("fp16", "the profile's communication dtypes BFloat16, Long")
    p, note = profile_precision({"dtypes": []})
    assert p == "fp32" and note.startswith("assumed")


def test_replay_scales_every_kernel_by_the_ratio(npz, capsys):
    capsys.readouterr()
    assert main(["replay", npz, "--topology", "dgx_a100", "--compare", "--json", "--quiet"]) == 0
    base = json.loads(capsys.readouterr().out)
    assert main(["replay", npz, "--topology", "dgx_a100", "--compare", "--json", "--quiet",
                 "--device-from", "A100", "--device-to", "H100"]) == 0
    h100 = json.loads(capsys.readouterr().out)
    assert h100["device_scale"]["factor"] == pytest.approx(19.5 / 67, rel=1e-12)
    assert "fp32 from the profile's communication dtypes Float, Long" in \
        h100["device_scale"]["note"]
    b, h = base["compare"]["ranks"][0], h100["compare"]["ranks"][0]
    assert h["compute"] == pytest.approx(b["compute"] * 19.5 / 67, rel=1e-12)
    assert h["host_gaps"] == b["host_gaps"]                     # host time untouched
    assert h["measured"] == b["measured"]
    assert h["replayed"] < b["replayed"]


@pytest.mark.parametrize("extra, message", [
    (["--device-from", "A100", "--device-to", "TPU"], "unknown device 'TPU'"),
    (["--device-from", "A100"], "--device-from and --device-to go together"),
    (["--device-to", "H100"], "--device-from and --device-to go together"),
    (["--device-from", "A100", "--device-to", "H100", "--compute-scale", "0.5"],
     "and --compute-scale both scale the kernels"),
    (["--device-from", "H100", "--device-to", "A100"], "the profile was recorded on"),
    (["--precision", "fp16"], "--precision applies with --device-from and --device-to"),
    (["--device-from", "V100", "--device-to", "H100", "--precision", "tf32"],
     "V100 has no tf32 throughput"),
])
def test_bad_device_options_are_one_line_exit_2(npz, capsys, extra, message):
    capsys.readouterr()
    assert main(["replay", npz, "--topology", "dgx_a100", "--quiet"] + extra) == 2
    err = capsys.readouterr().err
    assert err.startswith("netsim: error: ") and message in err and err.count("\n") == 1
