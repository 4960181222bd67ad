"""The published-measurement files of studies/data and how their rows are drawn."""

import csv
import pathlib

import pytest

from studies import nccl_report
from studies import nccl_validation as v

DATA = pathlib.Path(__file__).resolve().parent.parent / "studies" / "data"


def rows_of(name):
    with open(DATA / name, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("name", nccl_report.SHOWN_FILES)
def test_every_shown_row_is_drawn_on_its_own_machine(name):
    # measured_rows matches a graph to rows by GPU model and NIC technology: each row of a
    # shown file must be found on the graph its machine key builds.
    for r in rows_of(name):
        G = v.machine(r["machine"], int(r["nodes"]))
        ranks = [n for n, kind in G.nodes(data="kind") if kind == "gpu"][:int(r["gpus"])]
        assert r in nccl_report.measured_rows(G, r["op"], ranks), r["machine"]


@pytest.mark.parametrize("name", ["nccl_measurements.csv", "nccl_measurements_holdout.csv",
                                  "nccl_measurements_ops.csv",
                                  "nccl_measurements_ops_holdout.csv"])
def test_every_row_says_how_its_gpus_were_launched(name):
    rows = rows_of(name)
    assert rows and all(r["launch"] in {"proc", "thread", "unknown"} for r in rows)
    # One process driving all 8 GPUs (-g 8): the 2019 DGX-1 run and the RTX 4090 box.
    assert all(r["launch"] == "thread" for r in rows if r["machine"] in ("dgx1_v100",
                                                                        "pcie_4090"))
