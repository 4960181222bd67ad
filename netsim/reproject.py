"""Project an imported data-parallel trace to another number of ranks.

A profile imported by :func:`netsim.kineto.load_kineto` records one job at the
world size it ran with. In data parallelism every rank runs the same program
and every collective spans the whole world, so the same job at ``P'`` ranks is
that program on ``P'`` ranks with each collective over all of them:

* a collective keeps its payload (a gradient bucket of ``n`` bytes is ``n``
  bytes at any ``P'``) and its kind, and is expanded again through the
  schedule of :mod:`netsim.collectives` for its new group;
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
recordings project with :func:`workloads.projection.project` instead, and a
Chakra import is already expanded into messages), a recording at one rank
(no collective to grow), and a trace whose ops are not laid out as
:func:`netsim.programs.assemble` lays them out. The last check is exact: the
per-rank programs read back from the trace are assembled again at the
recorded world size and must give the very same trace, op for op.
"""

import numpy as np

from . import checks
from .errors import TraceError
from .programs import ALGORITHMS, assemble
from .trace import COMPUTE

__all__ = ["programs", "reproject"]


def _refuse(reason):
    raise TraceError(f"cannot project this trace to another world size: {reason}")


def programs(trace):
    """The per-rank programs of an imported data-parallel trace, as :func:`assemble` takes them.

    Parameters
    ----------
    trace : Trace
        Imported by :func:`netsim.kineto.load_kineto` (or projected by
        :func:`reproject`): its metadata lists its ``collectives`` and
        ``algorithm``.

    Returns
    -------
    list of list of dict
        Record lists, one per rank; collective records have keys ``0, 1, ...``
        in each rank's order. ``assemble(programs(t), t.metadata)`` rebuilds
        ``t`` op for op.

    Raises
    ------
    TraceError
        For a trace that is not data-parallel as the module docstring defines
        it, naming the reason (the collective and its group, the message).

    Examples
    --------
    >>> from netsim.programs import assemble
    >>> progs = [[{"op": "compute", "seconds": 1e-3, "deps": [], "tag": "kernel"},
    ...           {"op": "coll", "key": 0, "collective": "ring_allreduce", "group": [0, 1],
    ...            "nbytes": 8e6, "deps": [0], "tag": "allreduce"}]] * 2
    >>> meta = {"algorithm": "ring", "collectives": [
    ...     {"kind": "allreduce", "bytes": 8e6, "group": [0, 1]}]}
    >>> back = programs(assemble(progs, meta))
    >>> [r["op"] for r in back[1]], back[1][1]["deps"], back[1][1]["nbytes"]
    (['compute', 'coll'], [0], 8000000.0)
    """
    md = trace.metadata
    P = trace.ranks
    colls, algorithm = md.get("collectives"), md.get("algorithm", "ring")
    if not isinstance(colls, list):
        _refuse("it has no list of its collectives (metadata 'collectives'), which an imported "
                "profile carries; project netsim's own recordings with workloads.projection")
    if algorithm not in ALGORITHMS:
        _refuse(f"unknown algorithm {algorithm!r} in its metadata")
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
    kind, rank = trace.kind, trace.rank
    tags = list(trace.tags)
    # assemble() allocates each rank's records in rank order (a compute op each, a start and
    # an end op per collective), then the collectives' schedules, which begin with a message.
    bounds, i = [], 0
    for r in range(P):
        first = i
        while i < trace.num_ops and rank[i] == r and kind[i] == COMPUTE:
            i += 1
        if i == first:
            _refuse(f"op {i} is not a compute op of rank {r}: not an imported data-parallel "
                    "trace (point-to-point messages, or ops not laid out as assemble() does)")
        bounds.append((first, i))
    schedules = i
    progs = []
    for r, (lo, hi) in enumerate(bounds):
        ends = {e for e in range(lo, hi) if any(d >= schedules for d in trace.deps(e))}
        record, recs, j = {}, [], 0
        for op in range(lo, hi):
            if op + 1 in ends:
                continue                      # a collective's start op: read with its end op
            deps = trace.deps(op - 1 if op in ends else op)
            mapped = [record.get(int(d)) for d in deps if not (op in ends and d >= schedules)]
            if None in mapped:
                _refuse(f"op {op} of rank {r} depends on an op outside its rank's program")
            tag = tags[trace.tag[op]] if trace.tag[op] >= 0 else None
            rec = {"deps": mapped, "iteration": int(trace.iteration[op]), "tag": tag}
            if op in ends:
                if j >= len(colls) or tag != colls[j]["kind"]:
                    _refuse(f"rank {r}'s collective #{j} ({tag}) is not the collective the "
                            "metadata lists there")
                rec.update(op="coll", key=j, group=list(range(P)), nbytes=float(colls[j]["bytes"]),
                           collective=ALGORITHMS[algorithm][tag])
                j += 1
            else:
                sec = float(trace.duration[op])
                rec.update(op="compute", seconds=None if np.isnan(sec) else sec,
                           flops=float(trace.flops[op]))
            record[op] = len(recs)
            recs.append(rec)
        progs.append(recs)
    _check_rebuilds(trace, progs)
    return progs


def _check_rebuilds(trace, progs):
    """Refuse unless ``assemble(progs)`` is ``trace`` op for op."""
    try:
        again = assemble(progs, metadata=trace.metadata)
    except TraceError as exc:
        _refuse(f"its ranks do not run the same collectives ({exc})")
    names = lambda t: np.array(list(t.tags) + [""])[t.tag]  # noqa: E731
    same = again.num_ops == trace.num_ops and all(
        np.array_equal(getattr(again, c), getattr(trace, c), equal_nan=c == "duration")
        for c in ("kind", "rank", "peer", "size", "duration", "flops", "iteration", "dep_ptr",
                  "dep_idx")) and np.array_equal(names(again), names(trace))
    if not same:
        _refuse("its ops are not laid out as an imported data-parallel trace (the programs read "
                "from it do not assemble back into it)")


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
        Collective schedules for the projection (default: the trace's).

    Returns
    -------
    Trace
        ``ranks`` ranks. Metadata: the recording's, with ``world_size``,
        ``collectives`` (groups), ``algorithm`` updated, the measured step
        times moved into ``projection`` (they measured the recorded world
        size) with ``from_world_size`` and ``batch_scale``.

    Raises
    ------
    TraceError
        For a trace the projection does not understand (see :func:`programs`),
        or a bad option, naming the value.

    Examples
    --------
    >>> from netsim.programs import assemble
    >>> progs = [[{"op": "compute", "seconds": 1e-3, "deps": [], "tag": "kernel"},
    ...           {"op": "coll", "key": 0, "collective": "ring_allreduce", "group": [0, 1],
    ...            "nbytes": 8e6, "deps": [0], "tag": "allreduce"}]] * 2
    >>> t = assemble(progs, {"algorithm": "ring", "measured_step_time": 0.01,
    ...                      "collectives": [{"kind": "allreduce", "bytes": 8e6, "group": [0, 1]}]})
    >>> big = reproject(t, 8)
    >>> big.ranks, big.total_bytes == 2 * (8 - 1) * 8e6   # ring allreduce: 2 (P - 1) n bytes
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
    P = trace.ranks
    progs = programs(trace)
    world = list(range(ranks))
    scaled = []
    for recs in progs:
        out = []
        for rec in recs:
            rec = dict(rec)
            if rec["op"] == "coll":
                kind = rec["tag"]
                rec.update(group=world, collective=ALGORITHMS[algorithm][kind])
            elif rec["tag"] != "idle" and rec["seconds"] is not None:
                rec["seconds"] *= batch_scale
            out.append(rec)
        scaled.append(out)
    md.update(world_size=ranks, algorithm=algorithm,
              collectives=[dict(c, group=world) for c in md["collectives"]],
              projection={"from_world_size": P, "batch_scale": batch_scale,
                          "measured_step_time": md.pop("measured_step_time", None),
                          "measured_step_times": md.pop("measured_step_times", None)})
    return assemble([scaled[q % P] for q in range(ranks)], metadata=md)
