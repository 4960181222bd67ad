"""What the layout validation's data can judge: each measurement's reading uncertainty, and how
far an unpublished setting moves the predictions; the docs table is made from the stored files."""

import pytest

from doc_pages import block
from studies.validation import transformer_layouts as v
from studies.validation import transformer_layouts_noise as noise

ROWS = {r["id"]: r for r in v.load()}
SENS = noise.cached()


def test_the_docs_table_is_made_from_the_data_and_the_stored_files():
    w = noise.within_reading(v.load(), v.cached())
    assert block("transformer.md", "layouts-noise") == noise.markdown(w, SENS)


@pytest.mark.parametrize("row, half_width", [
    ("mcore-177b-p96", 0.02),                 # "+-2% (figure reading)"
    ("mcore-1.7b", 0.05 / 408.8),             # 408.8 TFLOP/s printed to 0.1
    ("tt-h100-8b-fsdp8", 0.5 / 6667),         # 6667 tokens/s printed
    ("fms-a100-llama2-34b", 25 / 700),        # 700 tokens/s, a multiple of 50: rounded to 50
    ("fms-a100-llama2-70b", 5 / 370),         # 370: rounded to 10
])
def test_reading_uncertainty_by_hand(row, half_width):
    assert noise.reading_uncertainty(ROWS[row]) == pytest.approx(half_width, rel=1e-12)


def test_an_uncertainty_not_understood_is_refused():
    with pytest.raises(ValueError, match="unknown uncertainty 'about right'"):
        noise.reading_uncertainty(dict(ROWS["mcore-1.7b"], uncertainty="about right"))


def test_what_lies_beyond_the_reading_by_hand():
    w = {x["id"]: x for x in noise.within_reading(v.load(), v.cached())}
    assert set(w) == set(ROWS) - {v.CALIBRATION["H100"]}
    measured = 256 * 4096 / (700 * 128)   # fms 34B: 256 sequences of 4096 at 700 tokens/s each
    error = v.cached()["fms-a100-llama2-34b"]["predicted"] / measured - 1
    x = w["fms-a100-llama2-34b"]
    assert x["error"] == pytest.approx(error, rel=1e-12)
    assert x["beyond"] == pytest.approx(abs(error) - 25 / 700, rel=1e-12)


@pytest.mark.parametrize("name", sorted(noise.ALTERNATIVES))
def test_each_alternative_recalibrates_the_h100_on_its_calibration_run(name):
    # the stored efficiency under the alternative gives the calibration run its measured time
    cal = ROWS[v.CALIBRATION["H100"]]
    eta = SENS[name]["eta"][1]
    change = noise.ALTERNATIVES[name]
    assert noise.closed_time(cal, eta, change) == pytest.approx(v.measured_time(cal), rel=1e-9)


def test_a_stored_shift_is_recomputed_end_to_end():
    r, (eta0, eta1) = ROWS["mcore-32b"], SENS["micro-batch 2"]["eta"]
    x = next(x for x in SENS["micro-batch 2"]["rows"] if x["id"] == "mcore-32b")
    t = v.measured_time(r)
    assert noise.closed_time(r, eta0) / t - 1 == pytest.approx(x["assumed"], rel=1e-9)
    changed = noise.closed_time(r, eta1, noise.ALTERNATIVES["micro-batch 2"]) / t - 1
    assert changed == pytest.approx(x["alternative"], rel=1e-9)
    assert x["shift"] == pytest.approx(changed - x["assumed"], rel=1e-9)


def test_the_alternatives_touch_only_the_rows_they_concern():
    # A100 rows: their efficiency is Table 1's, and no alternative changes them
    for name, s in SENS.items():
        for x in s["rows"]:
            if ROWS[x["id"]]["gpu"] == "A100":
                assert x["shift"] == 0.0, (name, x["id"])
    # interleaving changes nothing on a row without pipeline stages, at one efficiency
    one = ROWS["mcore-16b"]
    assert noise.closed_time(one, 0.7, noise.ALTERNATIVES["interleaved"]) == noise.closed_time(
        one, 0.7)
    two = ROWS["mcore-70b"]
    assert noise.closed_time(two, 0.7, noise.ALTERNATIVES["interleaved"]) != noise.closed_time(
        two, 0.7)
