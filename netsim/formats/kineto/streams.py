"""Where each kernel of an imported profile ran: its device, CUDA stream and name, kept per op.

A PyTorch profile names, for every GPU kernel, memcpy and memset, the device
(``args.device``, else the event's ``pid``), the CUDA stream (``args.stream``)
and the kernel's name. The importer (:func:`netsim.formats.kineto.load.load_kineto`) turns
them into ops, and a collective or message into one op shared by its members,
so these facts cannot live in a per-op column: they are kept in the trace's
``metadata["profile_kernels"]``, one row per (op, rank) that ran as a kernel::

    {"ops": <the trace's op count when stored>, "check": <CRC-32 of its kind and rank
     columns>, "names": [kernel name, ...], "rows": [[op, rank, device, stream, name index], ...]}

:func:`netsim.formats.kineto.timeline.write_kineto` reads it back
(:func:`kernel_places`) and writes each replayed kernel on the device and
stream it ran on, under its own name. Ops without a row are the host gaps the
import kept (compute ops tagged ``idle``: the GPU was idle then, so they are
no kernel), and every op of a CPU-only profile (its "streams" are threads: a
timeline of it keeps netsim's own streams). A transformation that makes new ops
(:func:`netsim.trace.reproject.reproject`, a Chakra export read back) drops the table; one
that keeps the ops (:mod:`netsim.trace.whatif`, :mod:`netsim.trace.perturb`) keeps it valid; any
other that kept it is caught by the op count and checksum.
"""

import zlib

import numpy as np

from netsim.errors import NetsimError

__all__ = ["place_of", "kernel_table", "kernel_places"]


def _int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def place_of(op):
    """``(device, stream, name)`` of one imported GPU op, or None for a CPU op.

    Parameters
    ----------
    op : dict
        An op as the importer reads it: ``cat`` (``kernel``, ``memcpy``,
        ``memset`` or ``cpu``), ``stream``, ``name`` and ``device`` (-1 when
        the profile names none: the rank's own device).

    Returns
    -------
    tuple or None

    Examples
    --------
    >>> place_of({"cat": "kernel", "device": 3, "stream": 7, "name": "gemm"})
    (3, 7, 'gemm')
    >>> place_of({"cat": "cpu", "stream": "thread 1/2", "name": "aten::mm"}) is None
    True
    """
    if op.get("cat") == "cpu" or not _int(op.get("stream")):
        return None
    device = op.get("device")
    return (device if _int(device) else -1, op["stream"], str(op.get("name")))


def _check(trace):
    return zlib.crc32(np.ascontiguousarray(trace.kind, np.uint8).tobytes()
                      + np.ascontiguousarray(trace.rank, "<i4").tobytes())


def kernel_table(programs, ids, trace):
    """The ``profile_kernels`` metadata of assembled per-rank programs.

    Parameters
    ----------
    programs : list of list of dict
        Per rank, its records (:func:`netsim.trace.programs.assemble`); a record that
        ran as a kernel has ``"where": (device, stream, name)`` with integer
        device and stream.
    ids : list of list of int
        ``ids[r][i]``: the trace op of rank r's record i (``assemble(...,
        return_ids=True)``).
    trace : Trace
        The trace they were assembled into.

    Returns
    -------
    dict or None
        As the module docstring says; None when no record has a ``where``.

    Examples
    --------
    >>> progs = [[{"op": "compute", "where": (0, 7, "gemm")}, {"op": "compute", "tag": "idle"}]]
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(1); _ = b.compute(0, seconds=1.0); _ = b.compute(0, seconds=1.0)
    >>> t = kernel_table(progs, [[0, 1]], b.build())
    >>> t["ops"], t["names"], t["rows"]
    (2, ['gemm'], [[0, 0, 0, 7, 0]])
    """
    names, rows = {}, []
    for r, prog in enumerate(programs):
        for i, rec in enumerate(prog):
            where = rec.get("where")
            if where is None:
                continue
            device, stream, name = where
            rows.append([int(ids[r][i]), r, int(device), int(stream),
                         names.setdefault(str(name), len(names))])
    if not rows:
        return None
    return {"ops": int(trace.num_ops), "check": _check(trace), "names": list(names),
            "rows": rows}


def kernel_places(trace):
    """(op, rank) -> (device, stream, kernel name) of an imported profile, else None.

    Parameters
    ----------
    trace : Trace
        A trace whose metadata may hold ``profile_kernels`` (:func:`kernel_table`).

    Returns
    -------
    dict or None
        None when the trace holds no such table.

    Raises
    ------
    NetsimError
        When the table was stored for another set of ops (a transformation that
        changed the ops kept it), or names an op or rank outside the trace.

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> t = TraceBuilder(1).build().with_metadata(profile_kernels=None)
    >>> kernel_places(t) is None
    True
    >>> b = TraceBuilder(1); _ = b.compute(0, seconds=1.0)
    >>> table = kernel_table([[{"op": "compute", "where": (3, 7, "gemm")}]], [[0]], b.build())
    >>> kernel_places(b.build().with_metadata(profile_kernels=table))
    {(0, 0): (3, 7, 'gemm')}
    """
    table = trace.metadata.get("profile_kernels")
    if not table:
        return None
    if table.get("ops") != trace.num_ops or table.get("check") != _check(trace):
        raise NetsimError(f"the trace's profile_kernels metadata was stored for other ops "
                          f"({table.get('ops')} ops; the trace has {trace.num_ops}): a "
                          "transformation changed the ops and kept it")
    out, names = {}, table["names"]
    for op, rank, device, stream, k in table["rows"]:
        if not (0 <= op < trace.num_ops and 0 <= rank < trace.ranks and 0 <= k < len(names)):
            raise NetsimError(f"profile_kernels row {[op, rank, device, stream, k]} is outside "
                              f"the trace ({trace.num_ops} ops, {trace.ranks} ranks)")
        out[(int(op), int(rank))] = (int(device), int(stream), str(names[k]))
    return out
