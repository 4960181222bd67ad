"""nccl-tests' output layout for ``netsim collective --library nccl``: its log and its JSON.

The log is nccl-tests' whole output: :func:`header` (version, run parameters, one line per
rank), :func:`table` (the results and :func:`footer`), each size rounded as nccl-tests rounds
it (:func:`rounded_bytes`).

nccl-tests (github.com/NVIDIA/nccl-tests, release 2.19.6, ``src/util.cu``) prints one line
per size: ``size count type redop root``, then ``time algbw busbw #wrong`` out-of-place and
again in-place, with fixed widths (``writeBenchmarkLinePreamble``: ``%12li  %12li  %8s  %6s
%6s``; ``writeBenchmarkLineBody``: ``  %7s  %6s  %6s  %6g``, or ``    N/A`` for ``#wrong``
when data are not checked, ``-c 0``), numbers through ``getFloatStr`` (2 decimals, fewer when
they do not fit), every other line a comment starting with ``#``, and a footer
``# Avg bus bandwidth    : %g`` (the mean busbw of every printed result, out-of-place and
in-place, ``src/common.cu``). Its ``-J`` JSON (``JSON_FILE_VERSION`` 3) holds ``config``
(with ``devices``), ``results`` (``size``, ``count``, ``type``, ``redop``, ``root``,
``out_of_place``/``in_place`` with ``time`` in us, ``alg_bw``, ``bus_bw`` in GB/s,
``nwrong``; with ``-I 1`` the ``*_per_iter`` statistics ``tools/analyze_perf_json.py`` reads),
``out_of_bounds`` and ``average_bus_bandwidth``.

netsim fills them as a run of ``-d float -o sum -r 0 -n 1 -w 0 -c 0 -I 1`` would: the
element type is nccl-tests' default ``float`` (4 bytes) and the root rank 0; a simulated call
has no in-place variant (the model moves the same bytes either way), so in-place repeats
out-of-place; no data is checked, so ``#wrong`` is ``N/A`` (``nwrong`` null). What nccl-tests
does not print (NCCL's plan, the published measurement) goes in a second table whose every
line is a comment, and in the JSON under each result's ``netsim`` key, which nccl-tests'
readers ignore.
"""

import json

from netsim.comm.nccl.tuning import NCCL_VERSION as TUNED_RELEASE

__all__ = ["ELEMENT", "NCCL_VERSION", "TESTS_VERSION", "PROGRAMS", "count", "rounded_bytes",
           "float_str", "header", "footer", "table", "to_json"]

TESTS_VERSION = "2.19.6"
"""The nccl-tests release whose layout is written (``NCCL_TESTS_VERSION``, ``src/common.h``)."""

#: nccl-tests' program of each op (its binaries, ``<op>_perf``), named in its header and footer.
PROGRAMS = {"allreduce": "all_reduce_perf", "allgather": "all_gather_perf",
            "reduce_scatter": "reduce_scatter_perf", "broadcast": "broadcast_perf",
            "reduce": "reduce_perf", "alltoall": "alltoall_perf", "sendrecv": "sendrecv_perf"}

ELEMENT = 4
"""Bytes of nccl-tests' default element type, ``float`` (``-d float``)."""

_REDOP = {"allreduce": "sum", "reduce": "sum", "reduce_scatter": "sum", "sendrecv": "sum"}
# nccl-tests' root argument of each op (src/<op>.cu: TimeTest(..., root)); -1: none.
_ROOT = {"broadcast": 0, "reduce": 0}
# Ops whose count column is one rank's share (src/<op>.cu GetCollByteCount: paramcount).
_PER_RANK = frozenset({"allgather", "reduce_scatter", "alltoall"})


def count(op, nbytes, ranks):
    """nccl-tests' ``count`` column: elements of ``float`` per call (per rank's share for
    allgather, reduce_scatter and alltoall).

    Parameters
    ----------
    op : str
    nbytes : int
        The size column (bytes, as nccl-tests counts them).
    ranks : int

    Returns
    -------
    int

    Examples
    --------
    >>> count("allreduce", 1024, 8), count("allgather", 1024, 8)
    (256, 32)
    """
    return nbytes // ELEMENT // (ranks if op in _PER_RANK else 1)


def rounded_bytes(op, nbytes, ranks):
    """The size nccl-tests runs and prints for a requested size (``-b``..``-e`` step).

    ``setupArgs`` (``src/common.cu`` of nccl-tests 2.19.6) takes ``count = size / wordSize``
    elements; allgather, reduce_scatter and alltoall (``src/all_gather.cu``,
    ``src/reduce_scatter.cu``, ``src/alltoall.cu``: ``GetCollByteCount``) give each rank
    ``(count / nranks) & ~(16 / eltSize - 1)`` elements, a multiple of 16 bytes, and the
    printed size (``max(sendBytes, expectedBytes)``) is that times ``nranks``; the other ops
    print ``count`` whole elements.

    Examples
    --------
    >>> rounded_bytes("allgather", 1000, 8), rounded_bytes("allgather", 64, 8)
    (896, 0)
    >>> rounded_bytes("allreduce", 1001, 8)
    1000
    """
    n = nbytes // ELEMENT
    if op in _PER_RANK:
        return ((n // ranks) & ~(16 // ELEMENT - 1)) * ranks * ELEMENT
    return n * ELEMENT


def header(op, devices, min_bytes, max_bytes, factor):
    """nccl-tests' lines before its table: version, run parameters, one line per rank.

    As ``writeDeviceReport`` (``src/util.cu`` of nccl-tests 2.19.6) prints them for a run of
    one process per GPU (``-t 1 -g 1``) without ``-I``, with netsim's one simulated
    iteration: ``-w 0 -n 1 -c 0``. The library version is the NCCL release whose tuning
    netsim transcribes (:data:`NCCL_VERSION`).

    Parameters
    ----------
    op : str
    devices : list of (str, int, str)
        Per rank: host name, device index on the host, device name.
    min_bytes, max_bytes, factor : int
        ``-b``, ``-e`` and ``-f``.

    Examples
    --------
    >>> lines = header("allreduce", [("node0", 0, "NVIDIA H100")], 8, 1024, 2).splitlines()
    >>> lines[2]
    '# nThread 1 nGpus 1 minBytes 8 maxBytes 1024 step: 2(factor) warmup iters: 0 iters: 1 agg iters: 1 validation: 0 graph: 0 unalign: 0'
    >>> lines[5]
    '#  Rank  0 Group  0 Pid      0 on      node0 device  0 [0000:00:00] NVIDIA H100'
    """
    lines = ["# nccl-tests version %s nccl-headers=%d nccl-library=%d"
             % (TESTS_VERSION, NCCL_VERSION, NCCL_VERSION),
             "# Collective test starting: %s" % PROGRAMS[op],
             "# nThread %d nGpus %d minBytes %ld maxBytes %ld step: %ld(%s) warmup iters: %d "
             "iters: %d agg iters: %d validation: %d graph: %d unalign: %d"
             % (1, 1, min_bytes, max_bytes, factor, "factor", 0, 1, 1, 0, 0, 0),
             "#", "# Using devices"]
    # a simulated rank has no process id or PCI address: 0s in their places
    lines += ["#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s"
              % (r, 0, 0, host, dev, 0, 0, 0, name) for r, (host, dev, name) in enumerate(devices)]
    return "\n".join(lines)


def footer(op, records):
    """nccl-tests' lines after its table (``writeResultFooter``, ``src/util.cu`` 2.19.6).

    Examples
    --------
    >>> print(footer("allreduce", [{"busbw": 2.5e9}]))
    # Out of bounds values : 0 OK
    # Avg bus bandwidth    : 2.5 
    #
    # Collective test concluded: all_reduce_perf
    """
    return "\n".join(["# %-20s : %d %s" % ("Out of bounds values", 0, "OK"),
                      "# %-20s : %g %s" % ("Avg bus bandwidth", _average(records), ""), "#",
                      "# Collective test concluded: %s" % PROGRAMS[op]])


def float_str(value, width):
    """A number as nccl-tests' ``getFloatStr`` writes it in ``width`` characters.

    ``%*.2f``, else ``%*.1f``, else ``%*.0f``, else an exponent (``%*.1e`` from width 7,
    ``%*.0e`` below), the first that fits.

    Examples
    --------
    >>> float_str(15.1, 7), float_str(123456.7, 7), float_str(9876543.0, 6)
    ('  15.10', ' 123457', ' 1e+07')
    >>> float_str(123456789.0, 7)
    '1.2e+08'
    """
    for fmt in ("%*.2f", "%*.1f", "%*.0f"):
        text = fmt % (width, value)
        if len(text) <= width:
            return text
    return ("%*.1e" if width >= 7 else "%*.0e") % (width, value)


def _average(records):
    """nccl-tests' ``Avg bus bandwidth`` (GB/s): the mean busbw of every printed result,
    out-of-place and in-place (``src/common.cu``); they are equal here."""
    return sum(r["busbw"] for r in records) / len(records) / 1e9 if records else 0.0


def _body(r):
    return "  %7s  %6s  %6s    N/A" % (float_str(r["time"] * 1e6, 7),
                                       float_str(r["algbw"] / 1e9, 6),
                                       float_str(r["busbw"] / 1e9, 6))


def _line(op, r):
    pre = "%12li  %12li  %8s  %6s  %6s" % (r["bytes"], count(op, r["bytes"], r["ranks"]),
                                            "float", _REDOP.get(op, "none"),
                                            "%6i" % _ROOT.get(op, -1))
    return pre + _body(r) + _body(r)


def table(op, records, measured=(), note=None):
    """nccl-tests' result table and footer of :func:`studies.reports.nccl.sweep` records,
    then netsim's comments and NCCL's plan.

    The table is ``writeResultHeader`` of ``src/util.cu`` (nccl-tests 2.19.6) without ``-I``;
    the footer :func:`footer`. Every line after it is a comment that names neither placement
    nor the out-of-bounds count, so a reader that takes the last such line for the table's
    header or end (SuperBench's ``cuda_nccl_bw_performance.py``) finds nccl-tests' own.

    Parameters
    ----------
    op : str
    records : list of dict
    measured : list of dict, optional
        Rows of :func:`studies.reports.nccl.measured_rows`, shown in the plan table.
    note : str, optional
        A first comment after the footer (what was simulated).

    Returns
    -------
    str

    Examples
    --------
    >>> rec = [{"bytes": 8, "time": 2.5e-5, "algbw": 3.2e5, "busbw": 5.6e5, "ranks": 8,
    ...         "algorithm": "ring", "protocol": "LL", "channels": 2}]
    >>> out = table("allreduce", rec).splitlines()
    >>> out[4]
    '           8             2     float     sum      -1    25.00    0.00    0.00    N/A    25.00    0.00    0.00    N/A'
    >>> out[6]
    '# Avg bus bandwidth    : 0.00056 '
    """
    from studies.reports.nccl import format_sweep

    head = ("# %10s  %12s  %8s  %6s  %6s           out-of-place                       "
            "in-place          " % ("", "", "", "", ""))
    cols = "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s "
    lines = ["#", head,
             cols % ("size", "count", "type", "redop", "root", "time", "algbw", "busbw",
                     "#wrong", "time", "algbw", "busbw", "#wrong"),
             cols % ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)",
                     "(GB/s)", "(GB/s)", "")]
    lines += [_line(op, r) for r in records]
    lines += [footer(op, records)] + ([f"# {note}"] if note else []) + [
        "# netsim: simulated; the in-place columns repeat the first ones (the same bytes move),",
        "# no data checked (#wrong N/A, as -c 0), type float and root 0 (nccl-tests' defaults).",
        "# NCCL's plan:"]
    plan = format_sweep(records, measured).splitlines()   # a header "#  ...", rows "   ..."
    lines += plan[:1] + ["#" + row[1:] for row in plan[1:]]
    return "\n".join(lines)


def _version_code(release):
    """``NCCL_VERSION_CODE`` of a release such as ``"v2.30.7-1"``: X * 10000 + Y * 100 + Z
    (``NCCL_VERSION`` in NCCL's ``src/nccl.h.in``, from 2.9 on)."""
    x, y, z = (int(v) for v in release.lstrip("v").split("-")[0].split("."))
    return x * 10000 + y * 100 + z


NCCL_VERSION = _version_code(TUNED_RELEASE)
"""``NCCL_VERSION_CODE`` of the NCCL release whose tuning the model transcribes
(:data:`netsim.comm.nccl.tuning.NCCL_VERSION`), stored where nccl-tests stores the library's."""


def to_json(op, records, measured=(), args=(), factor=2, devices=(), limits=None):
    """nccl-tests' ``-J`` JSON (version 3) of :func:`studies.reports.nccl.sweep` records.

    Each placement carries the time (us), ``alg_bw`` and ``bus_bw`` (GB/s) and
    ``nwrong`` null; ``*_per_iter`` holds the one simulated iteration, so
    ``tools/analyze_perf_json.py`` lists every size; ``netsim`` holds NCCL's plan and the
    published busbw of the size (GB/s) when there is one.

    Parameters
    ----------
    op : str
    records : list of dict
    measured : list of dict, optional
    args : list of str, optional
        The command line, stored as nccl-tests stores its own.
    factor : int, optional
        The ratio of consecutive sizes (``step_factor``).
    devices : list of (str, int, str), optional
        Per rank, as :func:`header` takes them: ``config["devices"]`` as nccl-tests' JSON
        holds each ``#  Rank`` line (``jsonRankInfo``, ``src/util.cu``).
    limits : (int, int), optional
        ``-b`` and ``-e`` (``minimum_bytes``, ``maximum_bytes``); default the records' sizes.

    Returns
    -------
    str

    Examples
    --------
    >>> rec = [{"bytes": 8, "time": 2.5e-5, "algbw": 3.2e5, "busbw": 5.6e5, "ranks": 8,
    ...         "nodes": 1, "algorithm": "ring", "protocol": "LL", "channels": 2}]
    >>> d = json.loads(to_json("allreduce", rec))
    >>> d["results"][0]["out_of_place"], d["average_bus_bandwidth"]["bandwidth"]
    ({'time': 25.0, 'alg_bw': 0.00032, 'bus_bw': 0.00056, 'nwrong': None}, 0.00056)
    """
    by_size = {int(m["bytes"]): float(m["busbw_GBps"]) for m in measured}
    results = []
    for r in records:
        place = {"time": r["time"] * 1e6, "alg_bw": r["algbw"] / 1e9, "bus_bw": r["busbw"] / 1e9,
                 "nwrong": None}
        t = r["time"] * 1e6
        per_iter = {"skipped_iterations": 0, "min_us": t, "max_us": t, "avg_us": t,
                    "p50_us": t, "p95_us": t, "p99_us": t, "stdev_us": 0.0, "cv_pct": 0.0,
                    "times_us": [t]}
        results.append({
            "size": r["bytes"], "count": count(op, r["bytes"], r["ranks"]), "type": "float",
            "redop": _REDOP.get(op, "none"), "root": "%6i" % _ROOT.get(op, -1),
            "out_of_place": place, "out_of_place_per_iter": per_iter,
            "in_place": dict(place), "in_place_per_iter": dict(per_iter),
            "actual_iterations": 1, "experiment_name": "",
            "netsim": {k: r[k] for k in ("algorithm", "protocol", "channels", "ranks", "nodes")
                       if k in r} | {"measured_busbw": by_size.get(r["bytes"])}})
    sizes = [r["bytes"] for r in records]
    lo, hi = limits or (min(sizes, default=0), max(sizes, default=0))
    ranks = [{"rank": r, "group": 0, "pid": 0, "hostname": host, "device": dev,
              "device_hex": "0000:00:00", "device_info": name}
             for r, (host, dev, name) in enumerate(devices)]
    doc = {"version": 3, "args": list(args), "env": [], "nccl_version": NCCL_VERSION,
           "config": {"nthreads": 1, "ngpus": 1, "minimum_bytes": lo,
                      "maximum_bytes": hi, "step_factor": factor,
                      "warmup_iters": 0,
                      "iterations": 1, "aggregated_iterations": 1, "validation": 0,
                      "graph": 0, "blocking_collectives": False, "per_iter_timing": True,
                      "per_iter_skip": 0, "parallel_init": False, "devices": ranks},
           "results": results,
           "out_of_bounds": {"count": 0, "okay": True},
           "average_bus_bandwidth": {"bandwidth": _average(records), "okay": "unchecked"}}
    return json.dumps(doc)
