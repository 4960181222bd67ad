"""Project an imported data-parallel trace to another number of ranks.

A profile imported by :func:`netsim.kineto.load_kineto` records one job at the
world size it ran with. In data parallelism every rank runs the same program
and every collective spans the whole world, so the same job at ``P'`` ranks is
that program on ``P'`` ranks with each collective over all of them:

* a collective op keeps its payload (a gradient bucket of ``n`` bytes is ``n``
  bytes at any ``P'``) and its kind, over the new world (the replay's library
  expands it, :mod:`netsim.library`);
* per-rank compute keeps its measured durations (weak scaling: the batch per
  rank stays as recorded) unless ``batch_scale`` says the batch per rank
  changes; then every measured op (GPU kernel, memcpy, memset, CPU operator)
  scales linearly with it, and host gaps (``idle`` ops: launch latency, data
  loading, Python) stay as recorded;
* new rank ``q`` runs what recorded rank ``q mod P`` ran (with one rank file
  and ``symmetric=True`` every rank runs the same program anyway).

Any topology then replays the result (``netsim replay --topology ...``).

What the projection understands, and what it refuses
----------------------------------------------------
Only data parallelism as defined above. It refuses, naming the reason:
a collective over a sub-group (tensor, pipeline or expert parallelism, or a
hierarchical scheme: which ranks would the new groups hold?), point-to-point
messages (pipeline stages: whom would a new rank send to?), a trace without
the import's list of collectives (``metadata["collectives"]``: netsim's own
recordings project with :func:`workloads.projection.project` instead), a
recording at one rank (no collective to grow), a trace whose collective ops
are not the ones that list names, in order, and a compute op that waits for an
op of another rank (not a per-rank program).
"""

import numpy as np

from . import checks
from .collop import Specs
from .collop import spec as make_spec
from .errors import TraceError
from .programs import ALGORITHMS, SCHEDULE_SPECS
from .trace import COLLECTIVE, COMPUTE, Trace, ranges

__all__ = ["check_data_parallel", "reproject"]


def _refuse(reason):
    raise TraceError(f"cannot project this trace to another world size: {reason}")


def check_data_parallel(trace):
    """Refuse a trace that is not an imported data-parallel job (see the module docstring).

    Parameters
    ----------
    trace : Trace

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
    ...     {"kind": "allreduce", "bytes": 8e6, "group": [0, 1]}]))
    """
    md = trace.metadata
    P = trace.ranks
    colls = md.get("collectives")
    if not isinstance(colls, list):
        _refuse("it has no list of its collectives (metadata 'collectives'), which an imported "
                "profile carries; project netsim's own recordings with workloads.projection")
    if md.get("algorithm", "ring") not in ALGORITHMS:
        _refuse(f"unknown algorithm {md.get('algorithm')!r} in its metadata")
    if P < 2:
        _refuse("it was recorded at one rank, where no collective shows its payload")
    for j, c in enumerate(colls):
        if c.get("kind") in ("send", "recv"):
            _refuse(f"collective #{j} is a point-to-point {c['kind']} (pipeline parallelism?); "
                    "only data parallelism (every rank in every collective) is understood")
        if sorted(c.get("group", [])) != list(range(P)):
            _refuse(f"collective #{j} ({c.get('kind')} of {c.get('bytes')} bytes) is over the "
                    f"sub-group {c.get('group')} of the {P} ranks; only data parallelism "
                    "(every collective over the whole world) is understood")
    if trace.num_messages:
        op = int(np.flatnonzero(trace.is_message)[0])
        _refuse(f"op {op} is a point-to-point message: not an imported data-parallel trace")
    coll = np.flatnonzero(trace.is_collective)
    got = [(trace.specs.row(int(trace.spec[i])).op, float(trace.size[i])) for i in coll]
    want = [(c.get("kind"), float(c.get("bytes", -1))) for c in colls]
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


def reproject(trace, ranks, batch_scale=1.0, algorithm=None):
    """The same data-parallel job at another world size (see the module docstring).

    Parameters
    ----------
    trace : Trace
        An imported data-parallel profile (:func:`netsim.kineto.load_kineto`).
    ranks : int
        The new world size, >= 1.
    batch_scale : float
        Batch per rank relative to the recording (> 0): measured op durations
        are multiplied by it, host gaps kept. 1 keeps the batch per rank (weak
        scaling); ``P / ranks`` keeps the global batch (strong scaling).
    algorithm : {"ring", "recursive"}, optional
        The MPICH schedule family of the projected collectives (default: the
        trace's; see :data:`netsim.programs.ALGORITHMS`).

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
    >>> from netsim.programs import assemble
    >>> from netsim.library import mpich_wire
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
    algorithm = md.get("algorithm", "ring") if algorithm is None else algorithm
    if algorithm not in ALGORITHMS:
        raise TraceError(f"unknown algorithm {algorithm!r}; known: {', '.join(ALGORITHMS)}")
    check_data_parallel(trace)
    P, n = trace.ranks, trace.num_ops
    comp = trace.kind == COMPUTE
    # Copies of each op: a compute op of rank r runs on r, r + P, ... below ``ranks``.
    copies = np.where(comp, np.maximum(0, (ranks - trace.rank.astype(np.int64) + P - 1) // P), 1)
    first = np.cumsum(copies) - copies
    orig = np.repeat(np.arange(n), copies)
    k = np.arange(len(orig)) - first[orig]                   # which copy
    new_rank = np.where(comp[orig], trace.rank[orig] + k * P, 0)
    # Dependencies: a compute copy k waits for copy k of its rank's ops (one each) and for
    # the collectives; a collective waits for every copy of its dependencies.
    own = np.diff(trace.dep_ptr)
    slots = np.repeat(np.arange(len(orig)), own[orig])      # new op of each slot
    d = trace.dep_idx[ranges(trace.dep_ptr[orig], own[orig])]
    one = comp[orig][slots] | ~comp[d]                       # compute waiter or collective dep
    dep_new = np.where(comp[d], first[d] + k[slots], first[d])
    keep = one & (~comp[d] | (k[slots] < copies[d]))
    owners, deps = [slots[keep]], [dep_new[keep]]
    waits_all = ~comp[orig][slots] & comp[d]                 # collective on a compute op
    owners.append(np.repeat(slots[waits_all], copies[d[waits_all]]))
    deps.append(ranges(first[d[waits_all]], copies[d[waits_all]]))
    owner, dep = np.concatenate(owners), np.concatenate(deps)
    order = np.argsort(owner, kind="stable")
    dep_ptr = np.zeros(len(orig) + 1, np.int64)
    np.cumsum(np.bincount(owner, minlength=len(orig)), out=dep_ptr[1:])
    world = list(range(ranks))
    spec = np.full(len(orig), -1, np.int32)
    rows = []
    for i in np.flatnonzero(~comp).tolist():
        kind = trace.specs.row(int(trace.spec[i])).op
        op, hint = SCHEDULE_SPECS[ALGORITHMS[algorithm][kind]]
        key = make_spec(op, world, algorithm=hint)
        if key not in rows:
            rows.append(key)
        spec[first[i]] = rows.index(key)
    tags = np.array(list(trace.tags) + [""])
    idle = tags[trace.tag[orig]] == "idle"
    duration = trace.duration[orig] * np.where(comp[orig] & ~idle, batch_scale, 1.0)
    md.update(world_size=ranks, algorithm=algorithm,
              collectives=[dict(c, group=world) for c in md["collectives"]],
              projection={"from_world_size": P, "batch_scale": batch_scale,
                          "measured_step_time": md.pop("measured_step_time", None),
                          "measured_step_times": md.pop("measured_step_times", None)})
    return Trace(ranks, trace.kind[orig], new_rank, trace.peer[orig], trace.size[orig],
                 duration, trace.flops[orig], trace.iteration[orig], trace.tag[orig], dep_ptr,
                 dep[order], tags=trace.tags, metadata=md, priority=trace.priority[orig],
                 spec=spec, specs=Specs.from_rows(rows))
