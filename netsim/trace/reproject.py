"""Project an imported data-parallel trace to another number of ranks.

A profile imported by :func:`netsim.formats.kineto.load.load_kineto` records one job at the
world size it ran with. In data parallelism every rank runs the same program
and every collective spans the whole world, so the same job at ``P'`` ranks is
that program on ``P'`` ranks with each collective over all of them:

* a collective op keeps its payload (a gradient bucket of ``n`` bytes is ``n``
  bytes at any ``P'``) and its kind, over the new world (the replay's library
  expands it, :mod:`netsim.comm.library`);
* per-rank compute keeps its measured durations (weak scaling: the batch per
  rank stays as recorded) unless ``batch_scale`` says the batch per rank
  changes; then every measured op (GPU kernel, memcpy, memset, CPU operator)
  scales linearly with it, and host gaps (``idle`` ops: launch latency, data
  loading, Python) stay as recorded;
* new rank ``q`` runs what recorded rank ``q mod P`` ran (with one rank file
  and ``symmetric=True`` every rank runs the same program anyway).

Any topology then replays the result (``netsim replay --topology ...``).

Jobs with model parallelism beside data parallelism project along the data
dimension when their rank grid is given, ``grid=(outer, inner)``: rank
``(o * D + d) * inner + i`` is position ``(o, i)`` of data replica ``d`` of
``D = P / (outer * inner)`` (pipeline stage ``o`` and tensor shard ``i`` in the
usual order, tensor shards adjacent). The job at ``P'`` ranks has
``D' = P' / (outer * inner)`` replicas; new replica ``d'`` runs recorded
replica ``d' mod D``'s program. An op inside one replica (a compute op, a
message between two of its ranks, a collective over some of its ranks: tensor
and pipeline groups) is copied into every new replica with its ranks and
group moved there; a collective over position ``(o, i)`` of every replica (a
data-parallel group) spans that position of all ``D'`` new replicas. The
default grid ``(1, 1)`` is pure data parallelism.

What the projection understands, and what it refuses
----------------------------------------------------
Only data parallelism as defined above, on its grid. It refuses, naming the
reason: a collective over a sub-group that is neither inside one replica nor
one position of every replica (expert parallelism, a hierarchical scheme:
which ranks would the new groups hold?), a point-to-point message between two
replicas (whom would a new rank send to?), a trace without
the import's list of collectives (``metadata["collectives"]``: netsim's own
recordings project with :func:`workloads.plan.projection.project` instead), a
recording at one rank (no collective to grow), a trace whose collective ops
are not the ones that list names, in order, and a compute op that waits for an
op of another rank (not a per-rank program).
"""

import numpy as np

from netsim import checks
from netsim.trace.collop import Specs
from netsim.trace.collop import spec as make_spec
from netsim.errors import TraceError
from netsim.trace.programs import FAMILIES, SCHEDULE_SPECS
from netsim.trace.core import COLLECTIVE, COMPUTE, HOST_GAP, Trace, ranges

__all__ = ["check_data_parallel", "reproject"]


def _refuse(reason):
    raise TraceError(f"cannot project this trace to another world size: {reason}")


def _grid(trace, grid):
    """``(outer, inner, D)`` of a trace's rank grid, checked."""
    outer, inner = (1, 1) if grid is None else grid
    outer = checks.check_int(outer, "grid outer", error=TraceError)
    inner = checks.check_int(inner, "grid inner", error=TraceError)
    if trace.ranks % (outer * inner):
        _refuse(f"its {trace.ranks} ranks are not a grid of {outer} x {inner} positions "
                "per data replica")
    return outer, inner, trace.ranks // (outer * inner)


def _replica(ranks, D, inner):
    return (np.asarray(ranks, np.int64) // inner) % D


def _moved(ranks, D, inner, new_D, shift):
    """Ranks moved from replica d (of D) to replica d + shift (of new_D)."""
    r = np.asarray(ranks, np.int64)
    outer_i, inner_i = r // (D * inner), r % inner
    return (outer_i * new_D + _replica(r, D, inner) + shift) * inner + inner_i


def _classify(trace, D, inner):
    """Per op: inside one replica (True) or over one position of every replica (False)."""
    rep = _replica(trace.rank, D, inner)
    within = np.ones(trace.num_ops, bool)
    msg = np.flatnonzero(trace.is_message)
    cross = rep[msg] != _replica(trace.peer[msg], D, inner)
    if cross.any():
        op = int(msg[np.argmax(cross)])
        _refuse(f"op {op} is a point-to-point message from rank {trace.rank[op]} to rank "
                f"{trace.peer[op]}, between two data replicas")
    for i in np.flatnonzero(trace.is_collective).tolist():
        g = trace.group(i).astype(np.int64)
        reps = _replica(g, D, inner)
        same = bool(np.all(reps == reps[0]))
        position = g - reps * inner
        every = sorted(reps.tolist()) == list(range(D)) and bool(np.all(position == position[0]))
        if every and not (same and len(g) > 1):
            within[i] = False
        elif not same:
            _refuse(f"collective op {i} ({trace.specs.row(int(trace.spec[i])).op} of "
                    f"{trace.size[i]} bytes) is over the sub-group {g.tolist()} of the "
                    f"{trace.ranks} ranks, neither inside one data replica nor one position "
                    f"of every replica")
    return within, rep


def check_data_parallel(trace, grid=None):
    """Refuse a trace that is not an imported data-parallel job (see the module docstring).

    Parameters
    ----------
    trace : Trace
    grid : (int, int), optional
        ``(outer, inner)`` positions per data replica (default ``(1, 1)``).

    Returns
    -------
    ndarray of bool
        Per op: True inside one data replica, False over every replica.

    Raises
    ------
    TraceError
        Naming the reason: the collective and its group, the message, the op.

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(2); c = b.compute(0, seconds=1e-3)
    >>> _ = b.collective("allreduce", [0, 1], 8e6, deps=[c])
    >>> check_data_parallel(b.build().with_metadata(collectives=[
    ...     {"kind": "allreduce", "bytes": 8e6, "group": [0, 1]}])).tolist()
    [True, False]
    """
    md = trace.metadata
    P = trace.ranks
    colls = md.get("collectives")
    if not isinstance(colls, list):
        _refuse("it has no list of its collectives (metadata 'collectives'), which an imported "
                "profile carries; project netsim's own recordings with workloads.plan.projection")
    if md.get("algorithm", "ring") not in FAMILIES:
        _refuse(f"unknown algorithm {md.get('algorithm')!r} in its metadata")
    if P < 2:
        _refuse("it was recorded at one rank, where no collective shows its payload")
    if grid is None:
        for j, c in enumerate(colls):
            if c.get("kind") in ("send", "recv"):
                _refuse(f"collective #{j} is a point-to-point {c['kind']} (pipeline "
                        "parallelism?); only data parallelism (every rank in every "
                        "collective) is understood")
            if sorted(c.get("group", [])) != list(range(P)):
                _refuse(f"collective #{j} ({c.get('kind')} of {c.get('bytes')} bytes) is over "
                        f"the sub-group {c.get('group')} of the {P} ranks; only data "
                        "parallelism (every collective over the whole world) is understood")
        if trace.num_messages:
            op = int(np.flatnonzero(trace.is_message)[0])
            _refuse(f"op {op} is a point-to-point message: not an imported data-parallel trace")
    _, inner, D = _grid(trace, grid)
    if D < 2:
        _refuse("it was recorded with one data replica, where no data-parallel collective "
                "shows its payload")
    within, _ = _classify(trace, D, inner)
    coll = np.flatnonzero(trace.is_collective)
    got = [(trace.specs.row(int(trace.spec[i])).op, float(trace.size[i])) for i in coll]
    want = [(c.get("kind"), float(c.get("bytes", -1))) for c in colls
            if c.get("kind") not in ("send", "recv")]
    if got != want:
        _refuse(f"its collective ops ({len(got)}) are not the ones its metadata lists "
                f"({len(want)}), in order")
    comp = trace.kind == COMPUTE
    owner = np.repeat(np.arange(trace.num_ops), np.diff(trace.dep_ptr))
    d = trace.dep_idx
    bad = comp[owner] & comp[d] & (trace.rank[owner] != trace.rank[d])
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        _refuse(f"op {owner[k]} of rank {trace.rank[owner[k]]} depends on op {d[k]} of rank "
                f"{trace.rank[d[k]]}, outside its rank's program")
    return within


def reproject(trace, ranks, batch_scale=1.0, algorithm=None, grid=None):
    """The same data-parallel job at another world size (see the module docstring).

    Parameters
    ----------
    trace : Trace
        An imported data-parallel profile (:func:`netsim.formats.kineto.load.load_kineto`).
    ranks : int
        The new world size, >= 1.
    batch_scale : float
        Batch per rank relative to the recording (> 0): measured op durations
        are multiplied by it, host gaps kept. 1 keeps the batch per rank (weak
        scaling); ``P / ranks`` keeps the global batch (strong scaling).
    algorithm : {"ring", "recursive"}, optional
        The MPICH schedule family of the projected collectives (default: the
        trace's; see :data:`netsim.trace.programs.FAMILIES`).
    grid : (int, int), optional
        ``(outer, inner)``: the positions of a data replica (see the module
        docstring); default ``(1, 1)``, every rank a replica. ``ranks`` must be
        a multiple of ``outer * inner``.

    Returns
    -------
    Trace
        ``ranks`` ranks: new rank ``q`` runs recorded rank ``q mod P``'s compute
        ops, each collective op spans all of them. Metadata: the recording's,
        with ``world_size``, ``collectives`` (groups), ``algorithm`` updated, the
        measured step times moved into ``projection`` (they measured the
        recorded world size) with ``from_world_size`` and ``batch_scale``.

    Raises
    ------
    TraceError
        For a trace the projection does not understand (:func:`check_data_parallel`),
        or a bad option, naming the value.

    Examples
    --------
    >>> from netsim.trace.programs import assemble
    >>> from netsim.comm.library import mpich_wire
    >>> progs = [[{"op": "compute", "seconds": 1e-3, "deps": [], "tag": "kernel"},
    ...           {"op": "coll", "key": 0, "collective": "ring_allreduce", "group": [0, 1],
    ...            "nbytes": 8e6, "deps": [0], "tag": "allreduce"}]] * 2
    >>> t = assemble(progs, {"algorithm": "ring", "measured_step_time": 0.01,
    ...                      "collectives": [{"kind": "allreduce", "bytes": 8e6, "group": [0, 1]}]})
    >>> big = reproject(t, 8)
    >>> big.ranks, mpich_wire(big).total_bytes == 2 * (8 - 1) * 8e6   # ring: 2 (P - 1) n
    (8, True)
    >>> big.metadata["projection"]
    {'from_world_size': 2, 'batch_scale': 1.0, 'measured_step_time': 0.01, 'measured_step_times': None}
    """
    ranks = checks.check_int(ranks, "ranks", error=TraceError)
    batch_scale = checks.check_real(batch_scale, "batch_scale", lo=0, strict=True,
                                    error=TraceError)
    md = dict(trace.metadata)
    md.pop("profile_kernels", None)   # the profile's kernel places name the old ops
    algorithm = md.get("algorithm", "ring") if algorithm is None else algorithm
    checks.check_choice(algorithm, "algorithm", FAMILIES, error=TraceError)
    within = check_data_parallel(trace, grid)
    outer, inner, D = _grid(trace, grid)
    if ranks % (outer * inner):
        raise TraceError(f"ranks {ranks} is not a multiple of the grid's {outer} x {inner} "
                         "positions per data replica")
    P, new_D, n = trace.ranks, ranks // (outer * inner), trace.num_ops
    rep = _replica(trace.rank, D, inner)
    # Copies of each op: an op of replica d is copied into new replicas d, d + D, ... < new_D.
    copies = np.where(within, np.maximum(0, (new_D - rep + D - 1) // D), 1)
    first = np.cumsum(copies) - copies
    orig = np.repeat(np.arange(n), copies)
    k = np.arange(len(orig)) - first[orig]                   # which copy
    new_rank = _moved(trace.rank[orig], D, inner, new_D, k * D)
    peer = np.where(trace.peer[orig] >= 0,
                    _moved(np.maximum(trace.peer[orig], 0), D, inner, new_D, k * D), -1)
    # Dependencies: a copy k inside a replica waits for copy k of its replica's ops (one each)
    # and for the collectives over every replica; such a collective waits for every copy.
    own = np.diff(trace.dep_ptr)
    slots = np.repeat(np.arange(len(orig)), own[orig])      # new op of each slot
    d = trace.dep_idx[ranges(trace.dep_ptr[orig], own[orig])]
    one = within[orig][slots] | ~within[d]
    dep_new = np.where(within[d], first[d] + k[slots], first[d])
    keep = one & (~within[d] | (k[slots] < copies[d]))
    owners, deps = [slots[keep]], [dep_new[keep]]
    waits_all = ~within[orig][slots] & within[d]
    owners.append(np.repeat(slots[waits_all], copies[d[waits_all]]))
    deps.append(ranges(first[d[waits_all]], copies[d[waits_all]]))
    owner, dep = np.concatenate(owners), np.concatenate(deps)
    order = np.argsort(owner, kind="stable")
    dep_ptr = np.zeros(len(orig) + 1, np.int64)
    np.cumsum(np.bincount(owner, minlength=len(orig)), out=dep_ptr[1:])
    spec = np.full(len(orig), -1, np.int32)
    rows, groups = {}, {}
    for j in np.flatnonzero(trace.kind[orig] == COLLECTIVE).tolist():
        i = int(orig[j])
        kind = trace.specs.row(int(trace.spec[i])).op
        g = trace.group(i)
        if within[i]:
            group = _moved(g, D, inner, new_D, int(k[j]) * D).tolist()
        else:
            group = _moved(np.full(new_D, g[0]), D, inner, new_D,
                           np.arange(new_D) - _replica(g[0], D, inner)).tolist()
        op, hint = SCHEDULE_SPECS[FAMILIES[algorithm][kind]]
        key = make_spec(op, group, algorithm=hint)
        spec[j] = rows.setdefault(key, len(rows))
        groups[j] = group
        new_rank[j] = group[0]
    comp = trace.kind == COMPUTE
    idle = trace.tagged(HOST_GAP)[orig]
    duration = trace.duration[orig] * np.where(comp[orig] & ~idle, batch_scale, 1.0)
    md.update(world_size=ranks, algorithm=algorithm,
              collectives=_listed(md["collectives"], trace, orig, groups),
              projection={"from_world_size": P, "batch_scale": batch_scale,
                          "measured_step_time": md.pop("measured_step_time", None),
                          "measured_step_times": md.pop("measured_step_times", None)})
    return Trace(ranks, trace.kind[orig], new_rank, peer, trace.size[orig],
                 duration, trace.flops[orig], trace.iteration[orig], trace.tag[orig], dep_ptr,
                 dep[order], tags=trace.tags, metadata=md, priority=trace.priority[orig],
                 spec=spec, specs=Specs.from_rows(list(rows)))


def _listed(colls, trace, orig, groups):
    """The metadata's list of collectives at the new size: one entry per new collective op,
    in op order, over its new group; the recorded sends and receives after them."""
    coll = np.flatnonzero(trace.is_collective).tolist()
    entry = dict(zip(coll, [c for c in colls if c.get("kind") not in ("send", "recv")]))
    return ([dict(entry[int(orig[j])], group=g) for j, g in sorted(groups.items())]
            + [c for c in colls if c.get("kind") in ("send", "recv")])
