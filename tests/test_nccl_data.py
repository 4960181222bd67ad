"""The published-measurement files of studies/data: what every row must hold, and the rule.

Every row of every file (counted, hold-out, ops and the rows reported by their sources as
problems) is a posted nccl-tests line: the quote holds the row's size, time, algbw and
busbw, algbw = size / time, and busbw = algbw x nccl-tests' bus factor of the op
(doc/PERFORMANCE.md), so the op label is the one the posted numbers were computed for.
The expected factors below are typed from nccl-tests' documentation, not taken from netsim.
"""

import csv
import pathlib
import re

import pytest

from studies.reports import nccl as nccl_report
from studies.validation import nccl as v

DATA = pathlib.Path(__file__).resolve().parent.parent / "studies" / "data"
FILES = [file for _, file in v.BLOCKS]
REPORTED = "nccl_measurements_reported.csv"
COLUMNS = ["machine", "gpus", "nodes", "interconnect", "op", "bytes", "time_us", "algbw_GBps",
           "busbw_GBps", "nccl_version", "nccl_algo", "launch", "source_url", "quote", "notes"]

BUS_FACTOR = {"allreduce": lambda n: 2 * (n - 1) / n, "allgather": lambda n: (n - 1) / n,
              "reduce_scatter": lambda n: (n - 1) / n, "alltoall": lambda n: (n - 1) / n,
              "broadcast": lambda n: 1.0, "reduce": lambda n: 1.0, "sendrecv": lambda n: 1.0}


def rows_of(name):
    with open(DATA / name, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_the_files_are_the_validation_blocks_and_have_their_columns():
    # The gloo benchmark rows and the transformer runs have their own columns
    # (tests/test_gloo_validation.py, tests/test_transformer_layouts_table.py).
    assert sorted(FILES) == sorted(p.name for p in DATA.glob("*.csv")
                                   if p.name != "gloo_measurements.csv"
                                   and not p.name.startswith("transformer_layouts"))
    for name in FILES:
        with open(DATA / name, newline="", encoding="utf-8") as f:
            header = next(csv.reader(f))
        assert header == COLUMNS + (["origin", "problem"] if name == REPORTED else []), name


@pytest.mark.parametrize("name", FILES)
def test_every_row_is_a_quoted_consistent_posted_line(name):
    rows = rows_of(name)
    assert rows
    for r in rows:
        assert r["source_url"].startswith("https://") and r["quote"], r
        assert r["launch"] in {"proc", "thread", "unknown"}, r
        assert r["machine"] in v.MACHINES and r["machine"] in nccl_report.MEASURED_MACHINES
        # The quoted line holds size, time, algbw and busbw as the row states them (the
        # older rows store 73.8 for a posted 73.80: compared as numbers).
        tokens = r["quote"].split()
        assert r["bytes"] in tokens, r["quote"]
        for col in ("time_us", "algbw_GBps", "busbw_GBps"):
            assert any(re.fullmatch(r"[0-9.]+", t) and float(t) == float(r[col])
                       for t in tokens), (col, r["quote"])
        algbw = int(r["bytes"]) / (float(r["time_us"]) * 1e3)
        assert algbw == pytest.approx(float(r["algbw_GBps"]), abs=0.006, rel=1e-3)
        factor = BUS_FACTOR[r["op"]](int(r["gpus"]))
        # nccl-tests computes both from the unrounded time: allow the printed rounding of
        # both (0.005 GB/s each, algbw's multiplied by the factor).
        assert float(r["busbw_GBps"]) == pytest.approx(float(r["algbw_GBps"]) * factor,
                                                       rel=1e-3, abs=0.005 * (1 + factor) + 1e-9)


def test_no_row_is_in_two_files():
    seen = {}
    for name in FILES:
        for r in rows_of(name):
            key = (r["source_url"], r["quote"])
            assert key not in seen, (name, seen.get(key), r["quote"])
            seen[key] = name


def test_reported_rows_carry_the_words_of_their_report_and_their_origin():
    rows = rows_of(REPORTED)
    others = {"nccl_measurements.csv", "nccl_measurements_holdout.csv",
              "nccl_measurements_ops.csv", "nccl_measurements_ops_holdout.csv"}
    for r in rows:
        assert r["origin"] in others, r
        # A quotation of the poster or the maintainer, in double quotes.
        assert re.search(r'"[^"]{20,}"', r["problem"]), r["problem"]
        assert r["source_url"].split("/issues/")[0].startswith("https://github.com/NVIDIA/")
    # The sources of the reported rows (nccl#527, nccl-tests#290 two nodes, nccl#1244
    # description, nccl-tests#314) and nothing of theirs left among the counted rows but the
    # ones the rule keeps: the one-instance p4dn row, the single-node #290 rows and the
    # NVLSTree comment's row of #1244. (Two-machine rows of other NVIDIA threads, whose
    # sources call them expected, are counted: nccl-tests#309 and #256, issue 44.)
    assert {(r["machine"], r["source_url"]) for r in rows} == {
        ("p4dn_efa", "https://github.com/NVIDIA/nccl/issues/527"),
        ("h100_ndr", "https://github.com/NVIDIA/nccl-tests/issues/290"),
        ("h20_ndr", "https://github.com/NVIDIA/nccl/issues/1244"),
        ("h20_nvswitch", "https://github.com/NVIDIA/nccl-tests/issues/314")}
    counted = [r for name in others for r in rows_of(name)]
    reported_sources = {r["source_url"] for r in rows}
    assert {r["machine"] for r in counted if int(r["nodes"]) > 1
            and r["source_url"] in reported_sources} == {"h20_ndr"}
    assert {r["source_url"] for r in counted if int(r["nodes"]) > 1 and "NVIDIA/" in
            r["source_url"]} == {"https://github.com/NVIDIA/nccl/issues/1244",
                                 "https://github.com/NVIDIA/nccl-tests/issues/309",
                                 "https://github.com/NVIDIA/nccl-tests/issues/256"}
    assert [r["nccl_algo"] for r in counted if r["machine"] == "h20_ndr"] == ["nvls_tree"]


def test_the_data_notes_state_the_row_counts_and_the_rule():
    text = (DATA / "nccl_measurements.md").read_text()
    for name in FILES:
        m = re.search(rf"\| `{re.escape(name)}` \| (\d+) \|", text)
        assert m and int(m.group(1)) == len(rows_of(name)), name
    for words in ("identifiable from the source itself", "models the algorithm the run used",
                  "does not present the number as a", "never by the model's error",
                  "Found, not used"):
        assert words in " ".join(text.split()), words


@pytest.mark.parametrize("name", nccl_report.SHOWN_FILES)
def test_every_shown_row_is_drawn_on_its_own_machine(name):
    # measured_rows matches a graph to rows by GPU model and NIC technology: each row of a
    # shown file must be found on the graph its machine key builds.
    for r in rows_of(name):
        G = v.machine(r["machine"], int(r["nodes"]))
        ranks = [n for n, kind in G.nodes(data="kind") if kind == "gpu"][:int(r["gpus"])]
        assert r in nccl_report.measured_rows(G, r["op"], ranks), r["machine"]


@pytest.mark.parametrize("name", FILES)
def test_every_row_says_how_its_gpus_were_launched(name):
    rows = rows_of(name)
    assert rows and all(r["launch"] in {"proc", "thread", "unknown"} for r in rows)
    # One process driving all 8 GPUs (-g 8): the 2019 DGX-1 run and the RTX 4090 box; every
    # run added with the inclusion rule shows one process per GPU (-g 1).
    assert all(r["launch"] == "thread" for r in rows if r["machine"] in ("dgx1_v100",
                                                                        "pcie_4090"))
    assert all(r["launch"] == "proc" for r in rows if r["machine"] in (
        "p4de_efa", "h100_efa", "h100_roce", "a100_hdr"))
