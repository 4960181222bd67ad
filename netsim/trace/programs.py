"""Per-rank programs of compute ops, collectives and messages, joined into one trace.

The importers (:mod:`netsim.formats.kineto.load`, :mod:`netsim.formats.chakra`) describe each rank
as a list of records (a compute op, one rank's part in a collective, one side
of a message) with dependencies on earlier records of the same rank;
:func:`assemble` keeps every collective as one collective op of the trace
(:mod:`netsim.trace.collop`), which the replay's library expands
(:mod:`netsim.comm.library`), and returns the whole job as one
:class:`~netsim.trace.core.Trace`.
"""

from types import MappingProxyType

import numpy as np

from netsim.trace.collop import OPS, Specs
from netsim.trace.collop import owner as spec_owner
from netsim.trace.collop import spec as make_spec
from netsim.errors import TraceError
from netsim.comm.mpich import DEFAULT, SCHEDULES
from netsim.trace.core import COLLECTIVE, COMPUTE, MESSAGE, Trace

__all__ = ["assemble", "FAMILIES", "SCHEDULE_SPECS"]

#: The MPICH hint each algorithm family (the ``algorithm=`` of the trace importers) picks per
#: collective kind: ``ring`` takes MPICH's defaults (:data:`netsim.comm.mpich.DEFAULT`: ring,
#: or the pipeline for the rooted ones), ``recursive`` recursive doubling or halving, and the
#: binomial tree for the rooted ones.
_FAMILY_HINTS = MappingProxyType({
    "ring": DEFAULT,
    "recursive": MappingProxyType({"allreduce": "rd", "allgather": "rd", "reduce_scatter": "rh",
                                   "broadcast": "mst", "reduce": "mst", "alltoall": "pairwise"}),
})
#: Algorithm family -> collective kind -> :mod:`netsim.comm.collectives` generator name,
#: read from MPICH's table (:data:`netsim.comm.mpich.SCHEDULES`); the kinds are the trace's
#: ops (:data:`netsim.trace.collop.OPS`) a profile's collectives take: all but sendrecv.
#: Read-only.
FAMILIES = MappingProxyType({
    family: MappingProxyType({kind: SCHEDULES[kind, hints[kind]].__name__
                              for kind in OPS if kind != "sendrecv"})
    for family, hints in _FAMILY_HINTS.items()})
#: A :mod:`netsim.comm.collectives` generator as a collective op: (op, algorithm hint), read
#: from MPICH's table (:data:`netsim.comm.mpich.SCHEDULES`). MPICH's defaults (the ring family,
#: :data:`netsim.comm.mpich.DEFAULT`) carry no hint, so NCCL may plan them on GPUs; the others
#: only MPICH runs. Read-only.
SCHEDULE_SPECS = MappingProxyType({
    gen.__name__: (op, None if hint == DEFAULT[op] else hint)
    for (op, hint), gen in SCHEDULES.items() if not gen.__name__.startswith("_")})


def assemble(programs, metadata=None, return_ids=False):
    """Join per-rank programs of compute ops, collectives and messages into one trace.

    ``programs[r]`` is rank r's list of records (dicts). Every record has
    ``op``, ``deps`` (indices of earlier or later records of the same rank),
    and optionally ``iteration`` and ``tag``:

    * ``{"op": "compute", "seconds": s}`` (or ``"flops": f`` with seconds None);
    * ``{"op": "coll", "key": k, "collective": name, "group": ranks, "nbytes": n,
      "options": {...}}``: one rank's part in collective ``k`` (any hashable key,
      the same on every member); ``name`` is a :mod:`netsim.comm.collectives`
      generator (:data:`SCHEDULE_SPECS`: MPICH runs that schedule over
      ``group``, schedule rank i being ``group[i]``; ``options`` may give its
      ``segments``; or ``"spec": (op, hint, root, segments, element)`` gives the
      op exactly). The call is one collective op waiting for every member's
      deps; the library runs each member's part once that member's deps are done
      (:mod:`netsim.comm.library`), and later records of a member wait for its part.
    * ``{"op": "send", "key": k, "peer": dst, "nbytes": n}`` and the matching
      ``{"op": "recv", "key": k, "peer": src}``: one message, waiting for the
      deps of both sides (a rendezvous); records depending on either side wait
      for the message. With ``"eager": True`` on the recv, the message waits
      only for the send's deps (the sender does not wait for the receive to be
      posted, as in Chakra and ASTRA-sim), and records depending on the recv
      wait for a zero-second op on the receiver that waits for the message and
      the recv's own deps. The send record may give the message's ``channel``
      and ``priority`` (default 0) and ``queue`` (default -1).

    Parameters
    ----------
    programs : list of list of dict
        One list of records per rank, as above.
    metadata : dict, optional
        Stored on the trace.
    return_ids : bool
        Also return, per rank, the trace op of each record (``ids[r][i]``: the
        op record i of rank r became; the collective or message op for its
        part of one).

    Returns
    -------
    Trace, or (Trace, list of list of int) with ``return_ids``

    Raises
    ------
    TraceError
        For a dependency on a missing record, a collective or message that some
        member never reaches or that members describe differently, and for a
        dependency cycle (from :class:`~netsim.trace.core.Trace`).

    Examples
    --------
    >>> progs = [[{"op": "compute", "seconds": 1e-3, "deps": []},
    ...           {"op": "send", "key": "a", "peer": 1, "nbytes": 8, "deps": [0]}],
    ...          [{"op": "recv", "key": "a", "peer": 0, "nbytes": 8, "deps": []}]]
    >>> t = assemble(progs)
    >>> t.num_messages, t.deps(1).tolist()
    (1, [0])
    >>> assemble(progs, return_ids=True)[1]        # the message is op 1 on both ranks
    [[0, 1], [1]]
    """
    ranks = len(programs)
    cols = {k: [] for k in ("kind", "rank", "peer", "size", "duration", "flops", "iteration",
                            "tag", "channel", "priority", "spec", "queue")}
    tags, specs = {}, {}
    deps = []

    def new(kind, rank, peer=-1, size=0.0, duration=0.0, flops=0.0, iteration=0, tag=None,
            channel=0, priority=0, spec=-1, queue=-1):
        for key, val in zip(cols, (kind, rank, peer, size, duration, flops, iteration,
                                   -1 if tag is None else tags.setdefault(str(tag), len(tags)),
                                   channel, priority, spec, queue)):
            cols[key].append(val)
        deps.append([])
        return len(deps) - 1

    ids = [[None] * len(p) for p in programs]      # op each record's successors wait for
    instances = {}
    # Pass 1: allocate ops.
    for r, prog in enumerate(programs):
        for i, rec in enumerate(prog):
            it, tag = int(rec.get("iteration", 0)), rec.get("tag")
            kind = rec.get("op")
            if kind == "compute":
                sec = rec.get("seconds")
                ids[r][i] = new(COMPUTE, r, duration=float("nan") if sec is None else sec,
                                flops=rec.get("flops") or 0.0, iteration=it, tag=tag)
            elif kind in ("send", "recv"):
                src, dst = (r, rec["peer"]) if kind == "send" else (rec["peer"], r)
                inst = instances.setdefault(("p2p", rec["key"]), {"sides": {}})
                if kind in inst["sides"]:
                    raise TraceError(f"rank {r}: message {rec['key']!r} has two {kind} sides")
                inst["sides"][kind] = (r, i, src, dst, rec.get("nbytes"))
                if "op" not in inst:
                    inst["op"] = new(MESSAGE, src, dst, iteration=it, tag=tag)
                ids[r][i] = inst["op"]
                if kind == "recv" and rec.get("eager"):
                    ids[r][i] = new(COMPUTE, r, iteration=it, tag=tag)  # the receive's end
            elif kind == "coll":
                inst = instances.setdefault(("coll", rec["key"]), {"members": {}, "rec": rec})
                first = inst["rec"]
                same = (first["collective"], tuple(first["group"]), float(first["nbytes"]))
                if (rec["collective"], tuple(rec["group"]), float(rec["nbytes"])) != same:
                    raise TraceError(f"rank {r}: collective {rec['key']!r} is "
                                     f"{rec['collective']} of {rec['nbytes']} bytes over "
                                     f"{list(rec['group'])}, but another member has it as "
                                     f"{same[0]} of {same[2]:g} bytes over {list(same[1])}")
                if r not in rec["group"] or r in inst["members"]:
                    raise TraceError(f"rank {r}: collective {rec['key']!r} over "
                                     f"{list(rec['group'])} {'does not include' if r not in rec['group'] else 'appears twice on'} rank {r}")
                inst["members"][r] = i
                if "op" not in inst:
                    inst["op"] = _collective_op(new, specs, rec, it, tag)
                ids[r][i] = inst["op"]
            else:
                raise TraceError(f"rank {r}: record {i} has unknown op {kind!r}")

    def resolve(r, rec_deps, who):
        out = []
        for d in rec_deps:
            if not (isinstance(d, (int, np.integer)) and 0 <= d < len(programs[r])):
                raise TraceError(f"rank {r}: {who} depends on missing record {d!r}")
            out.append(ids[r][d])
        return out

    # Pass 2: dependencies, and the collectives' schedules.
    for r, prog in enumerate(programs):
        for i, rec in enumerate(prog):
            if rec["op"] == "compute":
                deps[ids[r][i]] = resolve(r, rec.get("deps", ()), f"record {i}")
            elif rec["op"] == "coll":
                op = ids[r][i]
                deps[op] = list(dict.fromkeys(deps[op] + resolve(r, rec.get("deps", ()),
                                                                 f"record {i}")))
    for (what, key), inst in instances.items():
        if what == "p2p":
            sides = inst["sides"]
            if len(sides) != 2:
                (r, i, src, dst, _), = sides.values()
                missing = "recv on rank" if "send" in sides else "send on rank"
                raise TraceError(f"message {key!r} {src}->{dst} (rank {r}, record {i}) has "
                                 f"no matching {missing} {dst if 'send' in sides else src}")
            (rs, i_s, src, dst, n_s), (rr, i_r, src2, dst2, n_r) = sides["send"], sides["recv"]
            if (src, dst) != (src2, dst2) or (n_s is not None and n_r is not None and n_s != n_r):
                raise TraceError(f"message {key!r}: send {src}->{dst} of {n_s} bytes does not "
                                 f"match recv {src2}->{dst2} of {n_r} bytes")
            nbytes = n_s if n_s is not None else n_r
            if nbytes is None:
                raise TraceError(f"message {key!r} {src}->{dst} has no byte count")
            op = inst["op"]
            cols["size"][op] = float(nbytes)
            send = programs[rs][i_s]
            cols["channel"][op], cols["priority"][op], cols["queue"][op] = (
                send.get("channel", 0), send.get("priority", 0), send.get("queue", -1))
            sent = resolve(rs, programs[rs][i_s].get("deps", ()), f"record {i_s}")
            posted = resolve(rr, programs[rr][i_r].get("deps", ()), f"record {i_r}")
            if programs[rr][i_r].get("eager"):
                deps[op] = sent
                deps[ids[rr][i_r]] = list(dict.fromkeys([op] + posted))
            else:
                deps[op] = list(dict.fromkeys(sent + posted))
        else:
            absent = sorted(set(inst["rec"]["group"]) - set(inst["members"]))
            if absent:
                raise TraceError(f"collective {key!r} ({inst['rec']['collective']} over "
                                 f"{list(inst['rec']['group'])}) is never reached by rank(s) "
                                 f"{absent} (reached by {sorted(inst['members'])})")
    dep_ptr = np.zeros(len(deps) + 1, np.int64)
    np.cumsum([len(d) for d in deps], out=dep_ptr[1:])
    dep_idx = np.array([x for d in deps for x in d], np.int64)
    trace = Trace(ranks, np.array(cols["kind"], np.uint8), cols["rank"], cols["peer"],
                  cols["size"], cols["duration"], cols["flops"], cols["iteration"], cols["tag"],
                  dep_ptr, dep_idx, tags=list(tags), metadata=metadata, channel=cols["channel"],
                  priority=cols["priority"], spec=cols["spec"],
                  specs=Specs.from_rows(list(specs)), queue=cols["queue"])
    return (trace, ids) if return_ids else trace


def _collective_op(new, specs, rec, iteration, tag):
    """The collective op of a ``coll`` record (its first member's), its spec registered."""
    group, root, element = rec["group"], None, 0
    if "spec" in rec:   # given exactly: (op, hint, root, segments, element)
        op, hint, root, segments, element = rec["spec"]
    else:
        name = rec["collective"]
        if name not in SCHEDULE_SPECS:
            raise TraceError(f"collective {rec['key']!r}: unknown schedule {name!r}; known: "
                             f"{', '.join(SCHEDULE_SPECS)}")
        op, hint = SCHEDULE_SPECS[name]
        options = dict(rec.get("options") or {})
        segments = int(options.pop("segments", 0))
        if options:
            raise TraceError(f"collective {rec['key']!r}: unknown options {sorted(options)}")
    try:
        key = make_spec(op, group, root, hint, segments, element)
    except TraceError as exc:
        raise TraceError(f"collective {rec['key']!r}: {exc}") from None
    k = specs.setdefault(key, len(specs))
    return new(COLLECTIVE, spec_owner(key), size=float(rec["nbytes"]), iteration=iteration,
               tag=tag, spec=k, priority=int(rec.get("priority", 0)))
