"""Communication kernels of older PyTorch profiles: what they move, read from the launching operator.

Profiles written before PyTorch's profiler copied the collective's arguments
onto the GPU kernel (``Collective name``, ``In msg nelems``, ``dtype``, ...) still
hold them on the CPU side. The CUDA (or HIP) runtime call that launched the
kernel shares the kernel's ``correlation`` id (``ac2g`` flow events link the two
as well), and it runs inside the operators that issued it on the same thread,
innermost last::

    c10d::allreduce_            Input type ['TensorList', ...] (no sizes)
      record_param_comms        newer: 'Collective name', 'In msg nelems', 'dtype', groups
        nccl:all_reduce         Input Dims [[366336]], Input type ['float']
          cudaLaunchKernel      correlation 869830  ->  ncclKernel_SendRecv_...

What is taken from where (first that applies):

1. an enclosing operator with ``Collective name`` (``record_param_comms`` of
   PyTorch 2.1 and later): its own arguments, read exactly like a kernel's;
2. the innermost ``nccl:<op>`` (or ``rccl:<op>``) operator: the operation from
   its name, the bytes from its ``Input Dims`` times the element size of its
   ``Input type`` (recorded with ``record_shapes=True``). ProcessGroupNCCL
   records the op's input tensors there: the whole buffer of an allreduce,
   broadcast, reduce, reduce-scatter and all-to-all, one rank's share of an
   allgather (so an allgather's total is that times the group size; the HTA
   test profile below shows ``c10d::_allgather_base_`` with output
   ``[65536, 64]`` around ``nccl:_all_gather_base`` with ``[8192, 64]`` over 8
   ranks);
3. the outermost ``c10d::<op>_`` operator with sizes, by the same rule.

The group comes from the operator's ``Process Group Ranks`` when recorded,
else from ``distributedInfo.pg_config`` when the profile lists one group, else
it is the whole world (``distributedInfo.world_size``); the importer counts the
calls whose group was assumed. Several kernels launched by one operator (NCCL's
grouped SendRecv of an ``all_to_all``) are one call: all-to-all splits are
taken as even (per-peer splits are not in these profiles), also counted.
"""

import json
from bisect import bisect_right

import numpy as np

from netsim.errors import TraceError

__all__ = ["operator_index", "launcher", "from_operator", "CPU_DTYPE_BYTES"]

#: Bytes per element of the C++ type names ``record_shapes`` writes ("Input type").
CPU_DTYPE_BYTES = {
    "float": 4, "double": 8, "c10::Half": 2, "c10::BFloat16": 2, "int": 4, "long int": 8,
    "long": 8, "short int": 2, "signed char": 1, "unsigned char": 1, "bool": 1,
    "c10::complex<float>": 8, "c10::complex<double>": 16,
}


def _is_comm_operator(name):
    return name.startswith(("nccl:", "rccl:", "c10d::")) or name == "record_param_comms"


def operator_index(cpu_events):
    """Communication operators of a profile, per thread, sorted by start.

    Parameters
    ----------
    cpu_events : iterable of (int, dict)
        (event index, event) of the profile's ``cpu_op`` and ``user_annotation``
        events (``nccl:<op>`` is a ``user_annotation``).

    Returns
    -------
    dict
        ``(pid, tid) -> (starts, [(start, end, index, event), ...])``, only the
        operators named ``nccl:*``, ``rccl:*``, ``c10d::*`` or
        ``record_param_comms``.

    Examples
    --------
    >>> ev = {"ph": "X", "cat": "cpu_op", "name": "nccl:all_reduce", "ts": 5, "dur": 10,
    ...       "pid": 1, "tid": 2}
    >>> operator_index([(0, ev), (1, dict(ev, name="aten::mm"))])[(1, 2)][0]
    [5.0]
    """
    by_thread = {}
    for idx, ev in cpu_events:
        name = ev.get("name")
        ts, dur = ev.get("ts"), ev.get("dur")
        if not (isinstance(name, str) and _is_comm_operator(name)
                and isinstance(ts, (int, float)) and isinstance(dur, (int, float))):
            continue
        by_thread.setdefault((ev.get("pid"), ev.get("tid")), []).append(
            (float(ts), float(ts) + float(dur), idx, ev))
    out = {}
    for key, ops in by_thread.items():
        ops.sort(key=lambda o: (o[0], -o[1]))
        out[key] = ([o[0] for o in ops], ops)
    return out


def launcher(index, pid, tid, ts):
    """The communication operators enclosing a launch at ``ts`` on one thread, outermost first.

    Parameters
    ----------
    index : dict
        From :func:`operator_index`.
    pid, tid : int or str
        The thread of the runtime call (``cudaLaunchKernel``).
    ts : float
        Its start, microseconds.

    Returns
    -------
    list of (start, end, index, event)

    Examples
    --------
    >>> ev = lambda name, ts, dur: {"name": name, "ts": ts, "dur": dur, "pid": 1, "tid": 1}
    >>> ix = operator_index([(0, ev("c10d::allreduce_", 0, 20)), (1, ev("nccl:all_reduce", 2, 9)),
    ...                      (2, ev("nccl:all_reduce", 30, 5))])
    >>> [o[3]["name"] for o in launcher(ix, 1, 1, 4.0)]
    ['c10d::allreduce_', 'nccl:all_reduce']
    """
    starts, ops = index.get((pid, tid), ([], []))
    k = bisect_right(starts, ts)
    return [o for o in ops[:k] if o[1] >= ts]


def _nbytes(ev, where):
    """Bytes of an operator's sized inputs (its ``Input Dims`` x ``Input type``)."""
    a = ev.get("args") or {}
    dims, types = a.get("Input Dims"), a.get("Input type")
    if not isinstance(dims, list) or not isinstance(types, list):
        raise TraceError(f"{where}: its launching operator {ev.get('name')!r} has no 'Input Dims' "
                         "and 'Input type' (profile with record_shapes=True)")
    total, sized = 0, False
    for d, t in zip(dims, types):
        if not isinstance(d, list) or not d or t in ("", "Scalar", "TensorList", None):
            continue
        if t not in CPU_DTYPE_BYTES:
            raise TraceError(f"{where}: operator {ev.get('name')!r} has unknown dtype {t!r} "
                             f"(known: {', '.join(CPU_DTYPE_BYTES)})")
        if not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in d):
            raise TraceError(f"{where}: operator {ev.get('name')!r} has unreadable "
                             f"'Input Dims' {dims!r}")
        total += int(np.prod(d, dtype=np.int64)) * CPU_DTYPE_BYTES[t]
        sized = True
        if ev.get("name", "").startswith("c10d::"):
            break                  # c10d ops list (output, input) or one tensor first
    return total if sized else None


def _c10d_group_size(outer, kind):
    """The group size a ``c10d`` allgather or reduce-scatter shows: its big over its small tensor.

    ``c10d::_allgather_base_`` and ``c10d::_reduce_scatter_base_`` list (output,
    input); one is the other times the group size. None when not shown.
    """
    if kind not in ("allgather", "reduce_scatter"):
        return None
    for ev in outer:
        dims = (ev.get("args") or {}).get("Input Dims") or []
        sized = [int(np.prod(d, dtype=np.int64)) for d in dims[:2]
                 if isinstance(d, list) and d and all(isinstance(x, int) for x in d)]
        if len(sized) == 2 and min(sized) > 0 and max(sized) % min(sized) == 0:
            return max(sized) // min(sized)
    return None


def group_ranks(args, where):
    """The ranks of an event's ``Process Group Ranks`` argument; None when it has none.

    The profiler writes the list as JSON text (``"[0, 1, 2, 3]"``); anything else in it
    (text that is not JSON, a list holding other than integers) is refused rather than
    read as if the argument were absent.

    Examples
    --------
    >>> group_ranks({"Process Group Ranks": "[0, 1]"}, "e"), group_ranks({}, "e")
    ([0, 1], None)
    >>> group_ranks({"Process Group Ranks": "[0, x"}, "rank0.json: event #3")
    Traceback (most recent call last):
    ...
    netsim.errors.TraceError: rank0.json: event #3: unreadable 'Process Group Ranks' '[0, x'
    """
    text = args.get("Process Group Ranks")
    if text is None:
        return None
    try:
        ranks = json.loads(text)
    except (TypeError, ValueError):
        ranks = None
    if not isinstance(ranks, list) or not all(isinstance(g, int) and not isinstance(g, bool)
                                              for g in ranks):
        raise TraceError(f"{where}: unreadable 'Process Group Ranks' {text!r}")
    return ranks


def _group(ev, info, world, where):
    """(ranks, pg name, assumed) of a call: the operator's group, the profile's one, or the world."""
    a = ev.get("args") or {}
    ranks = group_ranks(a, where)
    if ranks:
        return ranks, str(a.get("Process Group Name", "default")), False
    pgs = info.get("pg_config") or []
    if len(pgs) == 1 and isinstance(pgs[0], dict) and \
            sorted(pgs[0].get("ranks") or []) == list(range(world)):
        return list(pgs[0]["ranks"]), str(pgs[0].get("pg_name", "0")), False
    return list(range(world)), "0", True


def from_operator(chain, kinds, where, rank, world, info, read_args):
    """(kind, nbytes, group, pg name, peer, notes) of a kernel from its launching operators.

    Parameters
    ----------
    chain : list of (start, end, index, event)
        From :func:`launcher`, outermost first; not empty.
    kinds : dict
        Collective names (lower case, no leading/trailing ``_``) -> netsim kinds.
    where : str
        The kernel, for messages ("path: event #i 'name'").
    rank, world : int
        This file's rank and the world size.
    info : dict
        The profile's ``distributedInfo``.
    read_args : callable
        ``read_args(event)`` reads an operator carrying ``Collective name`` (and
        the other kernel arguments) as the importer reads a kernel.

    Returns
    -------
    tuple
        ``(kind, nbytes, group, pg, peer, notes)``; ``notes`` names what was
        assumed: ``"group"`` (the world), ``"even"`` (an all-to-all's splits).

    Raises
    ------
    TraceError
        For an operator without sizes (naming ``record_shapes=True``), an
        unsupported operation or an unknown dtype.

    Examples
    --------
    >>> op = {"name": "nccl:all_reduce", "args": {"Input Dims": [[1000]], "Input type": ["float"]}}
    >>> from_operator([(0, 9, 3, op)], {"all_reduce": "allreduce"}, "k", 0, 2, {}, None)
    ('allreduce', 4000.0, [0, 1], '0', None, ('group',))
    """
    for _, _, _, ev in chain:
        if "Collective name" in (ev.get("args") or {}):
            return (*read_args(ev), ())
    inner = [ev for _, _, _, ev in chain if ev["name"].startswith(("nccl:", "rccl:"))]
    outer = [ev for _, _, _, ev in chain if ev["name"].startswith("c10d::")]
    last_err = None
    for ev in inner[::-1] + outer:
        raw = ev["name"].split(":")[-1].strip("_").lower()
        kind = kinds.get(raw)
        if kind is None:
            continue
        try:
            n = _nbytes(ev, where)
        except TraceError as exc:
            last_err = exc
            continue
        if n is None:
            last_err = TraceError(f"{where}: its launching operator {ev['name']!r} records no "
                                  "tensor sizes (TensorList inputs, or a profile without "
                                  "record_shapes=True)")
            continue
        if kind in ("send", "recv"):
            raise TraceError(f"{where}: point-to-point {ev['name']!r} without 'Collective name' "
                             "arguments names no peer; not supported")
        group, pg, assumed = _group(ev, info, world, where)
        if rank not in group:
            raise TraceError(f"{where}: process group {group} does not hold this file's "
                             f"rank {rank}")
        ratio = _c10d_group_size(outer, kind)
        if ratio is not None and ratio != len(group):
            raise TraceError(f"{where}: its operator {outer[0]['name']!r} gathers over "
                             f"{ratio} ranks, but the profile names no such process group "
                             f"({'assumed' if assumed else 'found'} {len(group)} ranks)")
        if kind == "allgather" and ev["name"].startswith(("nccl:", "rccl:")):
            n *= len(group)        # ProcessGroupNCCL records one rank's input there
        notes = ("group",) * assumed + ("even",) * (kind == "alltoall")
        return kind, float(n), group, pg, None, notes
    names = [ev["name"] for _, _, _, ev in chain]
    if last_err is not None and len(inner + outer) == 1:
        raise last_err
    if inner or outer:
        raise TraceError(f"{where}: its launching operators {names} record no tensor sizes "
                         "(TensorList inputs, or a profile without record_shapes=True)")
    raise TraceError(f"{where}: launched by {names}, which name no collective and record no "
                     "sizes (nccl:<op> with record_shapes=True)")
