"""`netsim collective --library nccl --sizes ...` read as nccl-tests output is read.

The layout below is typed from nccl-tests 2.19.6 `src/util.cu` (`writeResultHeader`,
`writeBenchmarkLinePreamble`, `writeBenchmarkLineBody`, `writeResultFooter`): a comment line
starts with `#`; a result line is `%12li  %12li  %8s  %6s  %6s` then `  %7s  %6s  %6s  %6s`
out-of-place and in-place (`#wrong` is `N/A` without data checks). The numbers are checked
against an independent call of netsim.nccl.simulate, algbw = size / time and nccl-tests' bus
factors (doc/PERFORMANCE.md). The JSON goes through nccl-tests' own analysis script
(tests/data/nccl_tests/README.md).
"""

import json
import os
import re
import subprocess
import sys

import pytest

from netsim import nccl
from studies.cli.parser import main
from studies.registry import parse_topology

SCRIPT = os.path.join(os.path.dirname(__file__), "data", "nccl_tests", "analyze_perf_json.py.txt")
# writeBenchmarkLineBody without data checks: "  %7s  %6s  %6s    N/A" (with them "  %6g").
ROW = "%12s  %12s  %8s  %6s  %6s" + "  %7s  %6s  %6s    %s" * 2


def parse(text):
    """Result rows and the average bus bandwidth, by nccl-tests' conventions: '#' lines are
    comments, a result is 13 whitespace-separated fields, the footer names the average."""
    rows, avg = [], None
    for line in text.splitlines():
        m = re.match(r"# Avg bus bandwidth\s*: (\S+)", line)
        if m:
            avg = float(m.group(1))
        if line.startswith("#") or not line.strip():
            continue
        f = line.split()
        assert len(f) == 13, line
        assert ROW % tuple(f) == line      # the fixed widths, field for field
        rows.append({"size": int(f[0]), "count": int(f[1]), "type": f[2], "redop": f[3],
                     "root": int(f[4]),
                     "oop": (float(f[5]), float(f[6]), float(f[7]), f[8]),
                     "ip": (float(f[9]), float(f[10]), float(f[11]), f[12]),
                     "tol": [_half_unit(x) for x in f[5:8]]})
    return rows, avg


def _half_unit(text):
    """Half a unit of the last printed digit (getFloatStr drops decimals to fit its width)."""
    return 0.5 * 10.0 ** -len(text.partition(".")[2]) + 1e-12


def _run(capsys, argv):
    assert main(argv) == 0
    return capsys.readouterr().out


def test_allreduce_table_parses_as_nccl_tests_output(capsys):
    out = _run(capsys, ["collective", "allreduce", "--library", "nccl", "--topology", "dgx1",
                        "--sizes", "8B..1GiB", "--factor", "8"])
    rows, avg = parse(out)
    sizes = [8 * 8 ** k for k in range(10) if 8 * 8 ** k <= 2 ** 30]
    assert [r["size"] for r in rows] == sizes
    G = parse_topology("dgx1")
    for r in rows:
        assert (r["count"], r["type"], r["redop"], r["root"]) == (r["size"] // 4, "float",
                                                                  "sum", -1)
        assert r["ip"] == r["oop"] and r["oop"][3] == "N/A"
        time_us, algbw, busbw, _ = r["oop"]
        t_tol, a_tol, b_tol = r["tol"]
        sim = nccl.simulate(G, "allreduce", r["size"])
        assert time_us == pytest.approx(sim.makespan * 1e6, abs=t_tol)
        # algbw (GB/s) = size / time; busbw = algbw x 2 (n - 1) / n, n = 8.
        assert algbw == pytest.approx(r["size"] / (sim.makespan * 1e9), abs=a_tol)
        assert busbw == pytest.approx(r["size"] / (sim.makespan * 1e9) * 14 / 8, abs=b_tol)
    # nccl-tests' average: every printed result, out-of-place and in-place (src/common.cu).
    mean = sum(r["oop"][2] + r["ip"][2] for r in rows) / (2 * len(rows))
    assert avg == pytest.approx(mean, abs=0.005 + 1e-5 * mean)
    assert "# Out of bounds values : 0 OK" in out
    # netsim's own columns: a second table, every line a comment.
    assert re.search(r"^#\s+size \(B\)\s+algorithm\s+protocol\s+channels", out, re.M)


@pytest.mark.parametrize("op, redop, root, per_rank", [
    ("broadcast", "none", 0, 1), ("reduce", "sum", 0, 1), ("allgather", "none", -1, 8),
    ("reduce_scatter", "sum", -1, 8), ("alltoall", "none", -1, 8)])
def test_each_ops_columns_are_nccl_tests(capsys, op, redop, root, per_rank):
    """redop and root as nccl-tests' src/<op>.cu pass them (root 0 by default, -r 0), count as
    its GetCollByteCount's paramcount: one rank's share for allgather, reduce_scatter and
    alltoall, of 4-byte floats (-d float)."""
    out = _run(capsys, ["collective", op, "--library", "nccl", "--topology", "dgx_a100",
                        "--sizes", "1MiB,64MiB"])
    rows, _ = parse(out)
    for r in rows:
        assert (r["redop"], r["root"], r["count"]) == (redop, root, r["size"] // 4 // per_rank)


def test_json_is_nccl_tests_json_and_its_script_reads_it(capsys, tmp_path):
    text = _run(capsys, ["collective", "allreduce", "--library", "nccl", "--topology",
                         "dgx_h100", "--sizes", "1MiB..1GiB", "--factor", "4", "--json"])
    data = json.loads(text)
    assert data["version"] == 3
    sizes = [2 ** 20 * 4 ** k for k in range(6)]
    assert [r["size"] for r in data["results"]] == sizes
    G = parse_topology("dgx_h100")
    for r in data["results"]:
        sim = nccl.simulate(G, "allreduce", r["size"])
        assert r["out_of_place"]["time"] == pytest.approx(sim.makespan * 1e6, rel=1e-12)
        assert r["out_of_place"]["alg_bw"] == pytest.approx(r["size"] / sim.makespan / 1e9)
        assert r["out_of_place"]["bus_bw"] == pytest.approx(r["out_of_place"]["alg_bw"] * 14 / 8)
        assert r["in_place"] == r["out_of_place"] and r["out_of_place"]["nwrong"] is None
        assert (r["count"], r["type"], r["redop"], r["root"]) == (r["size"] // 4, "float",
                                                                  "sum", "    -1")
        assert r["netsim"]["algorithm"] == sim.plan.algorithm
    bws = [r["out_of_place"]["bus_bw"] for r in data["results"]]
    assert data["average_bus_bandwidth"]["bandwidth"] == pytest.approx(sum(bws) / len(bws))
    path = tmp_path / "netsim.json"
    path.write_text(text)
    done = subprocess.run([sys.executable, SCRIPT, str(path), "--all"], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    assert "Results:    6" in done.stdout
    listed = re.findall(r"^\s+(\d+)\s+(\S+)\s+\S+\s+\S+\s+\S+\s+0\.0%", done.stdout, re.M)
    assert [int(s) for s, _ in listed] == sizes
    for (s, avg_us), r in zip(listed, data["results"]):
        assert float(avg_us) == pytest.approx(r["out_of_place"]["time"], abs=0.05)
