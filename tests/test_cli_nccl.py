"""`netsim collective --library nccl`: one size, size sweeps, the PNG, and bad input.

Expected values come from an independent call of netsim.nccl.simulate on the same
graph, nccl-tests' bus-bandwidth factors (doc/PERFORMANCE.md) and algbw = size / time.
"""

import json
import pathlib

import pytest

from netsim import nccl
from studies.reports import nccl as nccl_report
from studies.cli.parser import build_parser, main
from studies.registry import parse_topology


def run_json(capsys, argv):
    """The records of ``--json`` (nccl-tests' JSON: tests/test_nccl_tests_output.py) in SI
    units: bytes, time (s), algbw and busbw (bytes/s), and NCCL's plan."""
    assert main(argv) == 0
    out = []
    for r in json.loads(capsys.readouterr().out)["results"]:
        p = r["out_of_place"]
        out.append({"bytes": r["size"], "time": p["time"] * 1e-6, "algbw": p["alg_bw"] * 1e9,
                    "busbw": p["bus_bw"] * 1e9, **r["netsim"]})
    return out


def test_one_size_on_two_dgx_h100_is_the_library_call(capsys):
    recs = run_json(capsys, ["collective", "allreduce", "--library", "nccl", "--topology",
                             "dgx_h100:nodes=2", "-n", "1GiB", "--json"])
    assert len(recs) == 1
    rec = recs[0]
    G = parse_topology("dgx_h100:nodes=2")
    r = nccl.simulate(G, "allreduce", 2**30)
    assert rec["time"] == pytest.approx(r.makespan)
    assert (rec["ranks"], rec["nodes"]) == (16, 2)
    assert rec["algbw"] == pytest.approx(2**30 / rec["time"])
    assert rec["busbw"] == pytest.approx(rec["algbw"] * 2 * 15 / 16)  # allreduce: 2(n-1)/n
    assert (rec["algorithm"], rec["protocol"], rec["channels"]) == (
        r.plan.algorithm, r.plan.protocol, r.plan.channels)


@pytest.mark.parametrize("op, factor", [("allgather", 7 / 8), ("reduce_scatter", 7 / 8),
                                        ("broadcast", 1.0), ("alltoall", 7 / 8)])
def test_bus_factor_of_each_op(capsys, op, factor):
    rec = run_json(capsys, ["collective", op, "--library", "nccl", "--topology", "dgx_a100",
                            "-n", "64MiB", "--json"])[0]
    assert rec["busbw"] == pytest.approx(rec["algbw"] * factor)


def test_sizes_sweep_table_and_forced_plan(capsys):
    assert main(["collective", "allreduce", "--library", "nccl", "--topology", "dgx1",
                 "--sizes", "8B..1KiB", "--algorithm", "ring", "--protocol", "LL",
                 "--channels", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    # netsim's own note follows nccl-tests' footer
    end = out.index("# Collective test concluded: all_reduce_perf")
    assert out[end + 1].startswith("# allreduce on dgx1(")
    rows = [line.split() for line in out if not line.startswith("#")]
    assert [int(r[0]) for r in rows] == [8, 16, 32, 64, 128, 256, 512, 1024]
    plan = out[out.index(next(x for x in out if "algorithm" in x)) + 1:]
    assert {tuple(line.split()[2:5]) for line in plan} == {("ring", "LL", "2")}
    recs = run_json(capsys, ["collective", "allreduce", "--library", "nccl", "--topology", "dgx1",
                             "--sizes", "8B..1KiB", "--factor", "4", "--json"])
    assert [r["bytes"] for r in recs] == [8, 32, 128, 512]


def test_png_has_the_published_points_of_the_machine(capsys, tmp_path):
    path = tmp_path / "busbw.png"
    assert main(["collective", "allreduce", "--library", "nccl", "--topology", "dgx_h100",
                 "--sizes", "1MiB..4GiB", "--png", str(path)]) == 0
    captured = capsys.readouterr()
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The four single-node H100 allreduce rows of the main file: 128 MiB, 512 MiB, 1 and 4 GiB.
    assert "4 measured points" in captured.err
    assert "465.25" in captured.out and "473.60" in captured.out


def test_measured_rows_match_machine_nodes_and_ranks():
    dgx1 = parse_topology("dgx1")
    rows = nccl_report.measured_rows(dgx1, "allreduce", [f"gpu{i}" for i in range(8)])
    assert [int(r["bytes"]) for r in rows] == [8, 65536, 1048576, 16777216, 134217728]
    assert nccl_report.measured_rows(dgx1, "allreduce", ["gpu0", "gpu1"]) == []
    ranks = [f"gpu{i}" for i in range(16)]
    # Two H100 machines: the NIC technology picks the rows (RoCE at OCI, EFA on AWS p5).
    roce = parse_topology("gpu_cluster:machine=dgx_h100,nodes=2,nic=RoCE-400G")
    assert {r["machine"] for r in nccl_report.measured_rows(roce, "allreduce", ranks)} == {
        "h100_roce"}
    p5 = parse_topology("gpu_cluster:machine=p5,nodes=2")
    assert {r["machine"] for r in nccl_report.measured_rows(p5, "allreduce", ranks)} == {
        "h100_efa"}
    # Two p4d machines: the seven rows of the aws-samples 2x p4de run (out-of-place times as
    # posted), sorted by size.
    p4d = parse_topology("gpu_cluster:machine=p4d,nodes=2")
    rows = nccl_report.measured_rows(p4d, "allreduce", ranks)
    assert [r["time_us"] for r in rows] == ["164.3", "165.0", "227.4", "309.4", "1191.8",
                                            "3912.9", "26217"]
    # Rows their sources report as problems are never drawn: the 2-node NDR H100 rows of
    # nccl-tests#290 and the 3-node p4dn row of nccl#527 are in the reported file only; two
    # DGX H100 draw the counted rows of nccl-tests#309 (two HGX H100 over NDR) alone.
    two = parse_topology("dgx_h100:nodes=2")
    drawn = nccl_report.measured_rows(two, "allreduce", ranks)
    assert {r["source_url"] for r in drawn} == {"https://github.com/NVIDIA/nccl-tests/issues/309"}
    assert len(drawn) == 8
    p4d3 = parse_topology("gpu_cluster:machine=p4d,nodes=3")
    assert nccl_report.measured_rows(p4d3, "allreduce", [f"gpu{i}" for i in range(24)]) == []
    reported = nccl_report.measurements("nccl_measurements_reported.csv")
    assert nccl_report.measured_rows(p4d3, "allreduce", [f"gpu{i}" for i in range(24)],
                                     rows=reported)[0]["time_us"] == "64782"


def test_measurements_are_package_data():
    here = pathlib.Path(__file__).parent.parent / "studies" / "data"
    for name in ("nccl_measurements.csv", "nccl_measurements_holdout.csv",
                 "nccl_measurements_ops.csv", "nccl_measurements_ops_holdout.csv",
                 "nccl_measurements_reported.csv"):
        lines = (here / name).read_text().splitlines()
        assert len(nccl_report.measurements(name)) == len(lines) - 1
    assert (here / "nccl_measurements.md").exists()
    pyproject = (here.parent.parent / "pyproject.toml").read_text()
    assert 'studies = ["data/*.csv", "data/*.md"]' in pyproject


def test_default_library_is_still_mpich(capsys):
    assert main(["collective", "ring", "-P", "4", "-n", "1MB", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert "closed_form" in rec and rec["P"] == 4


def test_help_explains_the_model_and_its_sources():
    from netsim.comm.nccl.tuning import NCCL_VERSION
    sub = build_parser()._subparsers._group_actions[0].choices
    text = " ".join(sub["collective"].format_help().split())
    for needle in ("--library", "tuning.cc", NCCL_VERSION, "PERFORMANCE.md", "2(n-1)/n",
                   "nccl_measurements.csv", "dgx_h100:nodes=2"):
        assert needle in text, needle


def test_readme_names_the_release_the_model_follows():
    from pathlib import Path
    from netsim.comm.nccl.tuning import NCCL_VERSION
    readme = Path(__file__).resolve().parents[1] / "README.md"
    assert f"NCCL {NCCL_VERSION}" in readme.read_text()


@pytest.mark.parametrize("argv, message", [
    (["allreduce", "--library", "nccl", "--topology", "dgx1", "-n", "1MB", "--algorithm", "nvls"],
     "nvls needs an NVSwitch"),
    (["allreduce", "--library", "openmpi", "-n", "1MB"], "unknown library 'openmpi'"),
    (["allreduce", "--library", "nccl", "--topology", "star:n=4", "-n", "1MB"], "no gpu nodes"),
    (["allreduce", "--library", "nccl", "-n", "1MB", "--sizes", "8B..1KB"], "one of -n"),
    (["allreduce", "--library", "nccl", "-n", "0"], ">= 1 byte"),
    (["allreduce", "--library", "nccl", "--sizes", "1KB..8B"], "above the last"),
    (["allreduce", "--library", "nccl", "--sizes", "8B..1KB", "--factor", "1"], "--factor"),
    (["allreduce", "--library", "nccl", "-n", "1MB", "--channels", "0"], "--channels"),
    (["bcast", "--library", "nccl", "-n", "1MB"], "unknown NCCL operation 'bcast'"),
    (["ring", "-P", "4", "-n", "1MB", "--png", "x.png"], "--png needs --library nccl"),
    (["ring", "-n", "1MB"], "required: --workers/-P"),
    (["allreduce", "--library", "nccl", "-n", "1MB", "--segments", "3"], "--segments is an option"),
    (["allreduce", "--library", "nccl", "--topology", "dgx_h100:nodes=1", "-n", "1MB", "-P", "9"],
     "only 8 GPUs"),
    (["allreduce", "--library", "nccl", "-n", "1MB", "--topology", "dgx_h100:nodes=2",
      "--algorithm", "tree", "-P", "8"], "tree runs across machines"),
    (["allreduce", "--library", "nccl", "-n", "1MB", "--topology", "dgx_h100:nodes=2",
      "--algorithm", "collnet_chain"], "collnet_chain needs network switches with sharp=True"),
])
def test_bad_input_is_one_line_and_status_2(capsys, argv, message):
    assert main(["collective", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("netsim: error: ") and message in err


def test_other_op_rows_are_shown_unless_reported():
    rows = nccl_report.measurements("nccl_measurements_ops.csv")
    assert rows and all(r["op"] != "allreduce" for r in rows)
    held = {(r["machine"], r["bytes"]) for r in nccl_report.measurements(
        "nccl_measurements_ops_holdout.csv")}
    assert held and not held & {(r["machine"], r["bytes"]) for r in rows}
    G = parse_topology("dgx_h100")
    shown = nccl_report.measured_rows(G, "alltoall", ["gpu0", "gpu1", "gpu2", "gpu3"])
    assert [r["time_us"] for r in shown] == ["1174.14"]
    a100 = parse_topology("dgx_a100")
    shown = nccl_report.measured_rows(a100, "sendrecv", [f"gpu{i}" for i in range(8)])
    assert [r["time_us"] for r in shown] == ["1211.2", "1423.3", "5503.4"]
    # The H20 alltoall rows (nccl-tests#314) are reported as a problem by their source: with
    # the ops rows, they cover a second machine kind, and they are not drawn.
    reported = [r for r in nccl_report.measurements("nccl_measurements_reported.csv")
                if r["op"] != "allreduce"]
    assert {r["machine"] for r in rows + reported} >= {"a100_nvswitch", "h100_nvswitch",
                                                      "h20_nvswitch"}
    assert {r["op"] for r in rows + reported} == {"sendrecv", "alltoall", "allgather"}
    assert {r["origin"] for r in reported} == {"nccl_measurements_ops.csv",
                                               "nccl_measurements_ops_holdout.csv"}
