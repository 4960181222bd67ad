"""The validation on published runs where the layout matters: the docs table is the data files'
table, the stored predictions are what the model computes, and no row comes from a held-out
source."""

import pytest

from doc_pages import block
from studies.validation import transformer_layouts as v
from studies.validation.megatron import REFERENCE
from studies.validation.megatron import ROWS as TABLE1
from studies.validation.megatron import efficiency_from
from studies.validation.megatron import predict as table1
from studies.validation.transformer_layouts_report import (groups, judged, markdown, summary,
                                                           summary_text)

ROWS = v.load()
PREDS = v.cached()


def test_the_docs_table_is_made_from_the_data_and_the_stored_predictions():
    assert block("transformer.md", "layouts-table") == markdown(ROWS, PREDS)
    assert block("transformer.md", "layouts-summary") == summary_text(ROWS, PREDS)


def test_every_row_is_replayed_with_the_closed_form_beside_it():
    assert set(PREDS) == {r["id"] for r in ROWS}
    for r in ROWS:
        p = PREDS[r["id"]]
        assert p["method"] == "simulated" and p["predicted"] == p["simulated"]
        assert p["closed"] is not None


@pytest.mark.parametrize("row", ["mcore-1.7b", "mcore-70b", "tt-a100-llama2-13b-none"])
def test_a_row_predicted_end_to_end_equals_its_stored_prediction(row):
    # a GPT row in one stage, one of two stages (TP 8) and an FSDP row; if the model changed,
    # run: python -m studies.regenerate transformer-layouts
    r = next(r for r in ROWS if r["id"] == row)
    fresh = v.predict(r, {r["gpu"]: PREDS[row]["efficiency"]})
    for k in ("closed", "simulated", "predicted", "null", "efficiency"):
        assert (fresh[k] is None) == (PREDS[row][k] is None)
        if fresh[k] is not None:
            assert fresh[k] == pytest.approx(PREDS[row][k], rel=1e-9)


def test_measured_time_from_tokens_and_from_tflops_by_hand():
    tt = next(r for r in ROWS if r["id"] == "tt-a100-llama2-13b-none")
    assert v.measured_time(tt) == pytest.approx(128 * 4096 / (2162 * 64))
    mc = next(r for r in ROWS if r["id"] == "mcore-177b")
    s, h, layers, V, B = 4096, 12288, 96, 131072, 1152      # Narayanan's Eq. 3, no recompute
    flops = 72 * B * s * layers * h * h * (1 + s / (6 * h) + V / (12 * layers * h))
    assert v.measured_time(mc) == pytest.approx(flops / (2304 * 432.8e12), rel=1e-12)
    # the table prints 997.2 PFLOP/s aggregate for this row
    assert flops / v.measured_time(mc) == pytest.approx(997.2e15, rel=1e-3)


def test_the_set_spans_the_layouts_the_issue_asks_for():
    assert len(ROWS) >= 25 and {r["gpu"] for r in ROWS} == {"A100", "H100"}
    assert {r["tp"] for r in ROWS} >= {1, 2, 4, 8} and max(r["pp"] for r in ROWS) >= 16
    assert any(r["fsdp"] for r in ROWS) and any(r["zero"] for r in ROWS)
    assert all(r["tp"] * r["pp"] * r["dp"] == r["gpus"] for r in ROWS)
    assert groups(ROWS, PREDS)["mcore-h100-strong"]["rows"] == 7   # its 2304-GPU point calibrates


def test_no_row_comes_from_a_held_out_source():
    held_out = ("korthikanti", "2205.05198", "table 2", "llama 3 paper", "2407.21783", "mt-nlg",
                "bloom", "opt-175", "metaseq", "mpt", "llm-foundry", "dgxc")
    for r in ROWS:
        text = " ".join([r["source"], r["location"], r["url"], r["notes"]]).lower()
        assert not any(h in text for h in held_out), r["id"]


def test_each_gpu_has_one_efficiency_and_it_reproduces_its_calibration_run():
    etas = {}
    for r in ROWS:
        assert etas.setdefault(r["gpu"], PREDS[r["id"]]["efficiency"]) == PREDS[r["id"]]["efficiency"]
    # the A100's: Table 1's 145.6B row (148 TFLOP/s) under the GEMM rule, outside this set
    assert etas["A100"] == pytest.approx(efficiency_from(TABLE1[REFERENCE], rule="gemm"), rel=1e-9)
    assert table1(TABLE1[REFERENCE], etas["A100"], rule="gemm")[0] == pytest.approx(148, rel=1e-9)
    # the H100's: the closed form of its calibration row takes the row's measured time
    cal = next(r for r in ROWS if r["id"] == v.CALIBRATION["H100"])
    assert PREDS[cal["id"]]["closed"] == pytest.approx(v.measured_time(cal), rel=1e-9)


def test_the_calibration_row_is_shown_but_not_judged():
    assert [r["id"] for r in ROWS if r not in judged(ROWS)] == [v.CALIBRATION["H100"]]
    assert summary(ROWS, PREDS)["rows"] == len(ROWS) - 1
    assert groups(ROWS, PREDS)["mcore-h100-weak"]["rows"] == 8
    assert f"| {v.CALIBRATION['H100']} (calibration) |" in markdown(ROWS, PREDS)


def test_the_null_model_runs_every_row_at_its_gpus_calibration_share():
    cal = next(r for r in ROWS if r["id"] == v.CALIBRATION["H100"])
    assert v.null_time(cal) == pytest.approx(v.measured_time(cal), rel=1e-12)
    a100 = next(r for r in ROWS if r["gpu"] == "A100")
    assert v.null_share("A100") == pytest.approx(148 / 312, rel=1e-12)
    assert v.model_rate(a100, v.null_time(a100)) <= 148e12 + 1   # recomputation counted too


@pytest.mark.parametrize("row, gbps", [("fms-a100-llama2-70b", 400), ("fms-h100-llama2-70b", 800)])
def test_the_fms_rows_run_at_the_inter_node_bandwidth_their_readme_prints(row, gbps):
    # "A100 80G 128 GPUs with 400Gbps", "H100 96 GPUs with 800 Gbps": per machine, out of it
    r = next(r for r in ROWS if r["id"] == row)
    G = v.cluster(r)
    nics = [d for a, b, d in G.edges(data=True)
            if {G.nodes[a]["kind"], G.nodes[b]["kind"]} == {"nic", "switch"}]
    machines = r["gpus"] // 8
    assert sum(d["bandwidth"] * d.get("links", 1) for d in nics) == pytest.approx(
        machines * gbps * 1e9 / 8, rel=1e-12)
    assert sum(G.nodes[n]["kind"] == "gpu" for n in G) == r["gpus"]


def test_the_fms_rows_reduce_in_bf16_and_recompute_every_block():
    # fms_fsdp at 5e522b4: bfSixteen's reduce_dtype=bfloat16; "Full AC" checkpoints every block
    for r in ROWS:
        if r["framework"] == "fms-fsdp":
            o = v.options(r)
            assert o["grad_element"] == 2 and o["fsdp"] and o["recompute"] == "full"
            assert r["global_batch"] == 2 * r["gpus"] and r["micro_batch"] == 2
