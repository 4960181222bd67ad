"""`netsim collective --library nccl --sizes ...` as nccl-tests' whole log, read as its readers do.

The layout is typed from nccl-tests 2.19.6 (github.com/NVIDIA/nccl-tests, commit a0b82b2):
``writeDeviceReport`` of ``src/util.cu`` prints ``# nccl-tests version``, ``# Collective test
starting: <program>``, ``# nThread %d nGpus %d minBytes %ld maxBytes %ld step: %ld(%s) warmup
iters: %d iters: %d agg iters: %d validation: %d graph: %d unalign: %d``, ``#``, ``# Using
devices`` and one ``#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s`` line
per rank; ``writeResultFooter`` prints ``# %-20s : %d %s`` (out of bounds), ``# %-20s : %g %s``
(average bus bandwidth), ``#`` and ``# Collective test concluded: %s``. Sizes are rounded by
``setupArgs`` (``src/common.cu``): ``count = size / 4`` floats, and for allgather and
reduce_scatter (``src/all_gather.cu``, ``src/reduce_scatter.cu``) each rank's share
``(count / nranks) & ~(16 / 4 - 1)``, the printed size being that share x nranks x 4 bytes.

The third-party reader is SuperBench's nccl-bw benchmark (github.com/microsoft/superbenchmark,
commit 2c88db9, ``superbench/benchmarks/micro_benchmarks/cuda_nccl_bw_performance.py``,
``_process_raw_result``), whose rules :func:`superbench_rows` restates.
"""

import json
import re

import pytest

from studies.cli.parser import main

RANK = re.compile(r"#  Rank +(\d+) Group +(\d+) Pid +(\d+) on +(\S+) device +(\d+) "
                  r"\[([0-9a-f]{4}):([0-9a-f]{2}):([0-9a-f]{2})\] (.+)$")


def superbench_rows(text):
    """SuperBench's rules: the table's header is the *last* line containing 'out-of-place' and
    its end the last containing 'Out of bounds values'; between them, the first line holding
    'time' and 'busbw' names the columns (after its leading '#', split on spaces; out-of-place
    columns found by their first index, counted from the end); a row is a line whose first
    field starts with a digit, size 0 skipped; no row is a failure."""
    content = text.splitlines()
    start = end = -1
    for index, line in enumerate(content):
        if "out-of-place" in line:
            start = index
        if "Out of bounds values" in line:
            end = index
    assert start != -1 and end != -1
    content = content[start + 1:end]
    cols = next(line for line in content if "time" in line and "busbw" in line)
    cols = re.sub(r" +", " ", cols[1:].strip(" ")).split(" ")
    size_i = cols.index("size")
    busbw_i, time_i = cols.index("busbw") - len(cols), cols.index("time") - len(cols)
    rows = []
    for line in content:
        f = re.sub(r" +", " ", line.strip(" ")).split(" ")
        if not f or not re.match(r"\d+", f[0]) or int(f[size_i]) == 0:
            continue
        rows.append((int(f[size_i]), float(f[time_i]), float(f[busbw_i])))
    assert rows
    return rows


def _out(capsys, argv):
    assert main(argv) == 0
    return capsys.readouterr().out


def test_header_devices_and_footer_are_nccl_tests_lines(capsys):
    out = _out(capsys, ["collective", "allreduce", "--library", "nccl", "--topology", "dgx1",
                        "--sizes", "8B..1KiB"])
    lines = out.splitlines()
    assert re.fullmatch(r"# nccl-tests version 2\.19\.6 nccl-headers=\d+ nccl-library=\d+",
                        lines[0])
    assert lines[1:5] == [
        "# Collective test starting: all_reduce_perf",
        "# nThread 1 nGpus 1 minBytes 8 maxBytes 1024 step: 2(factor) warmup iters: 0 iters: 1 "
        "agg iters: 1 validation: 0 graph: 0 unalign: 0", "#", "# Using devices"]
    ranks = [RANK.match(line) for line in lines[5:13]]     # dgx1: 8 GPUs, one line each
    assert all(ranks) and [int(m.group(1)) for m in ranks] == list(range(8))
    for line, m in zip(lines[5:13], ranks):
        g = m.groups()
        assert "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s" % (
            int(g[0]), int(g[1]), int(g[2]), g[3], int(g[4]), int(g[5], 16), int(g[6], 16),
            int(g[7], 16), g[8]) == line
    assert lines[13] == "#" and "out-of-place" in lines[14]     # writeResultHeader's "#"
    end = lines.index("# Collective test concluded: all_reduce_perf")
    assert lines[end - 3] == "# Out of bounds values : 0 OK"
    assert re.fullmatch(r"# Avg bus bandwidth    : \S+ ", lines[end - 2])
    assert lines[end - 1] == "#"
    # after the footer only comments, none naming a placement or the out-of-bounds count
    assert all(x.startswith("#") and "out-of-place" not in x and "Out of bounds" not in x
               for x in lines[end + 1:])


def test_superbench_reads_every_row(capsys):
    out = _out(capsys, ["collective", "allreduce", "--library", "nccl", "--topology", "dgx1",
                        "--sizes", "8B..1KiB"])
    rows = superbench_rows(out)
    table = [line.split() for line in out.splitlines() if line[:1] not in ("#", "")]
    assert [r[0] for r in rows] == [8 * 2 ** k for k in range(8)]
    assert [(r[1], r[2]) for r in rows] == [(float(f[5]), float(f[7])) for f in table]


@pytest.mark.parametrize("op", ["allgather", "reduce_scatter"])
def test_small_sizes_are_rounded_as_nccl_tests_rounds_them(capsys, op):
    # 8 ranks (dgx_h100). 1000 B: 250 floats, 31 per rank, down to 28 (a multiple of 4):
    # 28 x 8 x 4 = 896 B. 3000 B: 750 floats, 93 per rank, 92: 2944 B. 64 B: 16 floats,
    # 2 per rank, 0: a size of 0 bytes, which netsim does not simulate.
    out = _out(capsys, ["collective", op, "--library", "nccl", "--topology", "dgx_h100",
                        "--sizes", "64B,1000B,3000B"])
    table = [line.split() for line in out.splitlines() if line[:1] not in ("#", "")]
    assert [(int(f[0]), int(f[1])) for f in table] == [(896, 28), (2944, 92)]
    assert [r[0] for r in superbench_rows(out)] == [896, 2944]


def test_json_has_step_factor_and_the_devices(capsys):
    doc = json.loads(_out(capsys, ["collective", "allreduce", "--library", "nccl", "--topology",
                                   "dgx1", "--sizes", "1KiB..1MiB", "--factor", "4", "--json"]))
    config = doc["config"]
    # src/util.cu: step_factor when -f > 1, else step_bytes
    assert config["step_factor"] == 4 and "step_bytes" not in config
    assert (config["minimum_bytes"], config["maximum_bytes"]) == (1024, 2 ** 20)
    assert [d["rank"] for d in config["devices"]] == list(range(8))
    assert set(config["devices"][0]) == {"rank", "group", "pid", "hostname", "device",
                                         "device_hex", "device_info"}
