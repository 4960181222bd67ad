"""``netsim scale transformer --compute gemm``: the study times each block from its GEMMs' shapes on
the topology's GPU model, so a narrow tensor-parallel slice costs more GPU-seconds than the same
FLOPs unsplit, which the FLOPs rule cannot show."""

import json

import pytest
from conftest import one_line_error

from studies.cli.parser import main
from studies.scaling.transformer import point
from topologies import gpu_cluster
from workloads.transformer.flops import get_config
from workloads.transformer.layout import layout

TOPO = "gpu_cluster:machine=dgx_a100"


def test_tp8_of_gpt3_1_3b_computes_longer_than_tp1_under_gemm_only():
    # P = 8: TP 8 (one replica) or DP 8 (whole model per GPU): the same FLOPs per GPU
    c, G = get_config("gpt3-1.3b", global_batch=64), gpu_cluster("dgx_a100", 1)
    flops = {tp: point(c, layout(tp, 1, 8 // tp), G, 0.5) for tp in (1, 8)}
    gemm = {tp: point(c, layout(tp, 1, 8 // tp), G, 0.5, compute="gemm") for tp in (1, 8)}
    assert flops[8]["compute"] == pytest.approx(flops[1]["compute"], rel=1e-12)
    assert gemm[8]["compute"] > 1.5 * gemm[1]["compute"]
    assert gemm[1]["compute_rule"] == "gemm" and "compute_rule" not in flops[1]


def test_the_cli_reports_the_gemm_rule(capsys):
    assert main(["scale", "transformer", "--config", "gpt3-1.3b", "--tp", "8", "-P", "8",
                 "--global-batch", "64", "--topology", TOPO, "--compute", "gemm",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["compute"] == "gemm" and out["efficiency"] is None
    assert out["records"][0]["compute_rule"] == "gemm"
    assert main(["scale", "transformer", "--config", "gpt3-1.3b", "--tp", "8", "-P", "8",
                 "--global-batch", "64", "--topology", TOPO, "--compute", "gemm"]) == 0
    assert "compute from GEMM shapes" in capsys.readouterr().out


@pytest.mark.parametrize("argv,needle", [
    (["--compute", "roofline"], "invalid choice: 'roofline'"),
    (["--compute", "gemm", "--topology", "dgx1"], "GEMM benchmark 'V100'"),
])
def test_bad_compute_is_one_line(capsys, argv, needle):
    topo = [] if "--topology" in argv else ["--topology", TOPO]
    one_line_error(capsys, ["scale", "transformer", "--config", "gpt3-1.3b", "-P", "8",
                            "--global-batch", "64"] + topo + argv, needle)
