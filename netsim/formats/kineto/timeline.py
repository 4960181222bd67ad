"""A simulated run in the PyTorch profiler's trace layout, one file per rank, for HTA.

:func:`write_kineto` writes what ``torch.profiler`` (Kineto's Chrome-trace JSON) writes for
one rank of a distributed job, so tools made for real profiles read a simulated run:
HolisticTraceAnalysis (HTA, github.com/facebookresearch/HolisticTraceAnalysis) loads a
directory of such files, one per rank, and computes per rank its temporal breakdown (idle,
compute, non-compute time over the span of the rank's GPU kernels) and its
communication/computation overlap.

Layout of ``<prefix><rank>.json``
---------------------------------
* ``distributedInfo``: ``backend`` ``nccl``, ``rank``, ``world_size`` (HTA reads the rank
  from it); ``schemaVersion`` 1.
* **GPU kernels** (``cat`` ``kernel``, ``pid`` the rank's device, ``tid`` and
  ``args.stream`` its stream, ``args.correlation``): each compute op of the rank, named
  ``compute`` or ``compute <tag>``, on compute streams (7, 8, ...); each message the rank
  sends or receives (``ncclDevKernel_SendRecv``) and its part of each collective
  (``ncclDevKernel_<Op>``, e.g. ``ncclDevKernel_AllReduce``, with ``Collective name``,
  ``In msg nelems``, ``dtype`` ``Byte`` and ``Group size`` as PyTorch records them) on
  communication streams (20, 21, ...). HTA and Kineto call a kernel communication when its
  name starts with ``nccl`` (HTA ``hta/common/types.py``: ``CommunicateKernelGroupingPattern``)
  and compute otherwise, as here. Kernels that overlap in time go to different streams
  (a stream runs one kernel at a time), the fewest streams possible. Times are those of
  :attr:`Result.ops` (a message from when it is ready to its last byte, a collective's part
  on the rank from when its dependencies on the rank are done to its end: the intervals
  :attr:`Result.ranks` counts), in microseconds with nanosecond decimals.
* **An imported profile** (its ``profile_kernels`` metadata, :mod:`netsim.formats.kineto.streams`):
  each kernel, memcpy, memset and communication kernel keeps the name, device (``pid``)
  and CUDA stream it had in the profile; the host gaps the import kept are GPU idle time,
  written as no kernel.
* **Host side**: a ``cudaLaunchKernel`` (``cat`` ``cuda_runtime``) per kernel, at the
  kernel's start, with its correlation, and one ``ProfilerStep#K`` (``cat``
  ``user_annotation``) per iteration K, from the previous iteration's end to its own
  (:attr:`Result.iteration_end`), on the host thread.
* **Correlation ids** count up from one more than the number of events in the file. In
  Kineto they are CUPTI's, a counter of the process's CUDA calls since it started, so a
  profile's first id is above 1 (4,066 to 6,935,929 in the profiles under
  ``tests/data/kineto``); any distinct positive ids are the format. Starting above the
  event count keeps HTA 0.5.0 working under pandas 3: ``transform_correlation_to_index``
  (``hta/common/trace.py``) makes ``index_correlation`` with the dtype of the
  ``correlation`` column, which the parser has downcast to the smallest integer type
  holding the ids, then writes row numbers into it; pandas 3 refuses a value the dtype
  cannot hold, so ids 1..N of 64-127 kernels (int8) with more than 127 rows failed.
  Ids above the row count fit every row number.

So HTA's compute time of a rank is netsim's ``compute``, its non-compute time netsim's
``exposed_communication``, and its idle time netsim's ``idle`` less the time before the
rank's first op and after its last (HTA measures over the span of the rank's kernels,
netsim over the whole run). HTA drops the kernels launched in the last ``ProfilerStep``
unless ``include_last_profiler_step=True``.
"""

import json
import os
import types

import numpy as np

from netsim.errors import NetsimError
from netsim.formats.kineto.streams import kernel_places
from netsim.comm.library import fold
from netsim.formats.timeline import _lanes
from netsim.trace.core import COMPUTE, HOST_GAP

__all__ = ["kernels", "write_kineto"]

_COMPUTE_STREAM, _COMM_STREAM = 7, 20
_NCCL_NAME = {"allreduce": "AllReduce", "allgather": "AllGather",
              "reduce_scatter": "ReduceScatter", "broadcast": "Broadcast", "reduce": "Reduce",
              "alltoall": "SendRecv", "sendrecv": "SendRecv"}


def kernels(trace, result):
    """Every kernel of the run: per kernel its rank, start and end (s), kind and op.

    Parameters
    ----------
    trace : Trace
    result : Result
        Its :func:`~netsim.result.simulate` result.

    Returns
    -------
    dict of ndarray
        ``rank``, ``start``, ``end``, ``comm`` (True for communication), ``op`` (the op's
        row in the trace), ``device``, ``stream``, ``name`` (the kernel's); a message
        appears once for its sender and once for its receiver, a collective once per
        member. For an imported profile (its ``profile_kernels`` metadata,
        :mod:`netsim.formats.kineto.streams`) each kernel's device, stream and name are the
        profile's and host gaps are no kernel; otherwise the device is the rank and
        overlapping kernels go to different streams.

    Examples
    --------
    >>> import networkx as nx
    >>> from netsim import TraceBuilder, simulate
    >>> G = nx.Graph(); G.add_edge(0, 1, bandwidth=1e9, latency=1e-6)
    >>> b = TraceBuilder(2); c = b.compute(0, seconds=1e-3); _ = b.message(0, 1, 1e6, deps=[c])
    >>> k = kernels(b.build(), simulate(b.build(), G))
    >>> k["rank"].tolist(), k["comm"].tolist(), (k["end"] * 1e6).round().tolist()
    ([0, 0, 1], [False, True, True], [1000.0, 2001.0, 2001.0])
    """
    if len(result.ops["start"]) != trace.num_ops:
        raise NetsimError(f"the result has {len(result.ops['start'])} ops but the trace has "
                          f"{trace.num_ops}: simulate this trace first")
    start, end = result.ops["start"], result.ops["end"]
    comp = np.flatnonzero(trace.kind == 0)
    msg = np.flatnonzero(trace.is_message)
    rank = [trace.rank[comp], trace.rank[msg], trace.peer[msg]]
    beg, fin, op = [start[comp], start[msg], start[msg]], [end[comp], end[msg], end[msg]], \
        [comp, msg, msg]
    if result.expanded is not None:
        x = result.expanded
        _, _, _, (p_rank, p_start, p_end), _ = fold(
            types.SimpleNamespace(**result.expanded_ops), x)
        rank.append(p_rank)
        beg.append(p_start)
        fin.append(p_end)
        op.append(np.asarray(x.parts["op"]))
    rank = np.concatenate(rank).astype(np.int64)
    comm = np.arange(len(rank)) >= len(comp)
    out = {"rank": rank, "start": np.concatenate(beg), "end": np.concatenate(fin),
           "comm": comm, "op": np.concatenate(op).astype(np.int64)}
    places = kernel_places(trace)
    if places is None:
        ns = np.rint(np.column_stack([out["start"], out["end"]]) * 1e9).astype(np.int64)
        lane = _lanes(rank * 2 + comm, ns[:, 0], ns[:, 1])
        out["stream"] = np.where(comm, _COMM_STREAM, _COMPUTE_STREAM) + lane
        out["device"] = rank.copy()
        out["name"] = np.array([_name(trace, op, c) for op, c in
                                zip(out["op"].tolist(), comm.tolist())], dtype=object)
    else:
        out = _placed(trace, out, places)
    order = np.lexsort((out["op"], out["start"], out["rank"]))
    return {k: v[order] for k, v in out.items()}


def _placed(trace, out, places):
    """The kernels of an imported profile on the device and stream each ran on, by name.

    Host gaps (compute ops tagged ``idle``) are GPU idle time, not kernels: left out.
    """
    gap = (trace.kind == COMPUTE) & trace.tagged(HOST_GAP)
    keep, where = [], []
    for i, (op, r) in enumerate(zip(out["op"].tolist(), out["rank"].tolist())):
        place = places.get((op, r))
        if place is None:
            if gap[op]:
                continue
            raise NetsimError(f"op {op} on rank {r} has no kernel in the trace's "
                              "profile_kernels metadata")
        keep.append(i)
        where.append(place)
    out = {k: v[keep] for k, v in out.items()}
    out["device"] = np.array([r if d < 0 else d for (d, _, _), r in
                              zip(where, out["rank"].tolist())], np.int64)
    out["stream"] = np.array([s for _, s, _ in where], np.int64)
    out["name"] = np.array([n for _, _, n in where], dtype=object)
    return out


def _name(trace, op, comm):
    tag = trace.tags[trace.tag[op]] if trace.tag[op] >= 0 else ""
    if not comm:
        return "compute" + (f" {tag}" if tag else "")
    if trace.is_message[op]:
        return "ncclDevKernel_SendRecv"
    kind = str(trace.specs.row(int(trace.spec[op])).op)
    return "ncclDevKernel_" + _NCCL_NAME.get(kind, kind)


def _us(seconds):
    return round(float(seconds) * 1e6, 3)


def _events(trace, result, k, r):
    """The trace events of rank ``r``: metadata, steps, launches and kernels."""
    host, pid = 1000 + r, 1000 + r
    yield {"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
           "args": {"name": f"netsim rank {r} (host)"}}
    mine = np.flatnonzero(k["rank"] == r)
    for device in sorted(set(k["device"][mine].tolist()) or {r}):
        yield {"ph": "M", "name": "process_name", "pid": device, "tid": 0,
               "args": {"name": "GPU"}}
    before = 0.0
    devices = len(set(k["device"][mine].tolist()) or {r})
    first = 1 + devices + len(result.iteration_end) + 2 * len(mine)   # events in the file
    for step, t in enumerate(result.iteration_end.tolist()):
        yield {"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}",
               "pid": pid, "tid": host, "ts": _us(before), "dur": _us(t - before),
               "args": {}}
        before = t
    for n, i in enumerate(mine.tolist()):
        op, comm, s = int(k["op"][i]), bool(k["comm"][i]), int(k["stream"][i])
        corr = first + n + 1
        yield {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid,
               "tid": host, "ts": _us(k["start"][i]), "dur": 0.0,
               "args": {"correlation": corr}}
        args = {"device": int(k["device"][i]), "stream": s, "correlation": corr,
                "netsim_op": op}
        if comm and not trace.is_message[op]:
            spec = trace.specs.row(int(trace.spec[op]))
            args.update({"Collective name": str(spec.op), "dtype": "Byte",
                         "In msg nelems": int(trace.size[op]),
                         "Out msg nelems": int(trace.size[op]),
                         "Group size": len(spec.group)})
        elif comm:
            args.update({"Collective name": "send" if trace.rank[op] == r else "recv",
                         "dtype": "Byte", "In msg nelems": int(trace.size[op])})
        yield {"ph": "X", "cat": "kernel", "name": k["name"][i], "pid": int(k["device"][i]),
               "tid": s,
               "ts": _us(k["start"][i]), "dur": _us(k["end"][i] - k["start"][i]),
               "args": args}


def write_kineto(trace, result, directory, prefix="rank"):
    """Write a simulated run as PyTorch profiler traces: ``<directory>/<prefix><r>.json``.

    See the module docstring for the layout; HTA's ``TraceAnalysis(trace_dir=directory)``
    loads the directory.

    Parameters
    ----------
    trace : Trace
        The trace that was replayed.
    result : Result
        Its result.
    directory : str or path
        Created if missing.
    prefix : str
        File name prefix.

    Returns
    -------
    list of str
        The files written, in rank order.

    Raises
    ------
    NetsimError
        If the result is not of this trace or a file cannot be written.

    Examples
    --------
    >>> import json, os, tempfile
    >>> import networkx as nx
    >>> from netsim import TraceBuilder, simulate
    >>> G = nx.Graph(); G.add_edge(0, 1, bandwidth=1e9, latency=1e-6)
    >>> b = TraceBuilder(2); c = b.compute(0, seconds=1e-3); _ = b.message(0, 1, 1e6, deps=[c])
    >>> paths = write_kineto(b.build(), simulate(b.build(), G), tempfile.mkdtemp())
    >>> d = json.load(open(paths[1]))
    >>> d["distributedInfo"]["rank"], [e["name"] for e in d["traceEvents"] if e.get("cat") == "kernel"]
    (1, ['ncclDevKernel_SendRecv'])
    """
    k = kernels(trace, result)
    directory = os.fspath(directory)
    paths = []
    try:
        os.makedirs(directory, exist_ok=True)
        for r in range(trace.ranks):
            path = os.path.join(directory, f"{prefix}{r}.json")
            info = {"backend": "nccl", "rank": r, "world_size": trace.ranks}
            with open(path, "w") as f:
                # '"rank": r' with its space, on an early line: HTA finds a file's rank with
                # the regular expression '"rank":\\s+(\\d+)', line by line
                # (hta/common/trace_file.py).
                f.write('{"schemaVersion": 1,\n"distributedInfo": ' + json.dumps(info)
                        + ',\n"deviceProperties": [],\n"displayTimeUnit": "ms",\n'
                        + '"traceEvents": [\n')
                f.write(",\n".join(json.dumps(e) for e in _events(trace, result, k, r)))
                f.write("\n]}\n")
            paths.append(path)
    except OSError as exc:
        raise NetsimError(f"cannot write {directory}: {exc.strerror or exc}") from None
    return paths
