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
``_process_raw_result``), whose rules :func:`superbench_rows` restates; with
``NETSIM_SUPERBENCH_NCCL`` naming that file (from a checkout of SuperBench; MIT licence, not
kept here), SuperBench's own method reads netsim's output too.
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


# A real log, as posted in github.com/NVIDIA/nccl-tests/issues/287 (2025-03-14, an RTX 5090,
# alltoall_perf of an nccl-tests release before 2.19: no version line yet); the lines netsim
# must match are quoted, not stored.
POSTED = """\
# nThread 1 nGpus 1 minBytes 33554432 maxBytes 33554432 step: 1048576(bytes) warmup iters: 5 \
iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid 2181762 on   GENOA-01 device  0 [0x01] NVIDIA GeForce RTX 5090
#
#                                                              out-of-place                  \
     in-place          
#       size         count      type   redop    root     time   algbw   busbw #wrong     time \
  algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us) \
 (GB/s)  (GB/s)       
    33554432       8388608     float    none      -1    19.56  1715.44    0.00      0     0.78 \
 43046.10    0.00    N/A
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 0 
#
"""


def _ends(line, fields):
    """Column where each of the first ``fields`` blank-separated fields ends."""
    return [m.end() for m in re.finditer(r"\S+", line)][:fields]


def test_the_layout_lines_match_a_posted_log_line_by_line(capsys):
    """Lines nccl-tests has printed the same way since before 2.19 match a posted log
    byte for byte: the out-of-place banner, the five leading columns of a row (size, count,
    type, redop, root right-aligned at 12, 12, 8, 6, 6 with two spaces between), the
    out-of-bounds line and the bus-bandwidth line with its trailing blank. What 2.19.6
    changed (src/util.cu at a0b82b2) differs, and only that: the version, 'Collective test
    starting' and 'concluded' lines and 'unalign' are new, and the column names are
    separated by two blanks ('%6s  %6s'), where the posted release had one before '#wrong'."""
    out = _out(capsys, ["collective", "alltoall", "--library", "nccl", "--topology",
                        "dgx_h100", "--sizes", "32MiB"])
    ours, theirs = out.splitlines(), POSTED.splitlines()
    banner = [x for x in theirs if "out-of-place" in x]
    assert banner and banner[0] in ours
    names = [x for x in theirs if "busbw" in x][0]
    assert [x for x in ours if "busbw" in x][0].split() == names.split()
    units = [x for x in theirs if "(elements)" in x][0]
    assert [x for x in ours if "(elements)" in x][0].split() == units.split()
    row = [x for x in theirs if x[:1] not in ("#", "")][0]
    mine = [x for x in ours if x[:1] not in ("#", "")][0]
    assert _ends(mine, 5) == _ends(row, 5) and len(mine.split()) == len(row.split())
    for footer in ("# Out of bounds values : 0 OK", "#"):
        assert footer in theirs and footer in ours
    avg = [x for x in ours if x.startswith("# Avg bus bandwidth    : ")]
    assert len(avg) == 1 and avg[0].endswith(" ")
    assert theirs[theirs.index("# Out of bounds values : 0 OK") + 1] == "# Avg bus bandwidth    : 0 "
    # SuperBench's rules read both the same way: one row of the same size
    assert [r[0] for r in superbench_rows(POSTED)] == [r[0] for r in superbench_rows(out)] \
        == [33554432]


def _superbench_parser(path):
    """SuperBench's own ``CudaNcclBwBenchmark._process_raw_result``, run unchanged: its module
    executed from ``path`` with stand-ins for the package's framework (logger, registry and
    base class), which the parsing method does not use beyond adding results."""
    import sys
    import types

    class Base:
        pass

    class Registry:
        @staticmethod
        def register_benchmark(*args, **kwargs):
            return None

    stubs = {
        "superbench": {}, "superbench.common": {},
        "superbench.common.utils": {"logger": types.SimpleNamespace(error=lambda *a: None)},
        "superbench.benchmarks": {"BenchmarkRegistry": Registry, "ReturnCode": object,
                                  "Platform": types.SimpleNamespace(CUDA="CUDA", ROCM="ROCM")},
        "superbench.benchmarks.micro_benchmarks": {"MicroBenchmarkWithInvoke": Base},
    }
    saved = {name: sys.modules.get(name) for name in stubs}
    try:
        for name, attrs in stubs.items():
            sys.modules[name] = types.SimpleNamespace(**attrs)
        module = types.ModuleType("superbench_nccl_bw")
        with open(path) as f:
            exec(compile(f.read(), path, "exec"), module.__dict__)
    finally:
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old
    return module.CudaNcclBwBenchmark._process_raw_result


@pytest.mark.skipif(not __import__("os").environ.get("NETSIM_SUPERBENCH_NCCL"),
                    reason="set NETSIM_SUPERBENCH_NCCL to SuperBench's "
                           "cuda_nccl_bw_performance.py (github.com/microsoft/superbenchmark)")
@pytest.mark.parametrize("in_place", [False, True])
def test_superbenchs_own_parser_reads_every_row(capsys, in_place):
    import os
    import types

    parse = _superbench_parser(os.environ["NETSIM_SUPERBENCH_NCCL"])
    out = _out(capsys, ["collective", "allreduce", "--library", "nccl", "--topology", "dgx1",
                        "--sizes", "8B..1KiB"])
    results = {}
    bench = types.SimpleNamespace(
        _args=types.SimpleNamespace(operation="allreduce", in_place=in_place,
                                    log_raw_data=False),
        _result=types.SimpleNamespace(add_raw_data=lambda *a: None,
                                      add_result=lambda k, v: results.__setitem__(k, v)),
        _curr_run_index=0, _name="nccl-bw")
    assert parse(bench, 0, out) is True
    table = [line.split() for line in out.splitlines() if line[:1] not in ("#", "")]
    col = 9 if in_place else 5   # time, algbw, busbw of the in-place or out-of-place half
    assert {k: v for k, v in results.items()} == {
        f"allreduce_{f[0]}_{name}": float(f[col + i])
        for f in table for i, name in enumerate(("time", "algbw", "busbw"))}
