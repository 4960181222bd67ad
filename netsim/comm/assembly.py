"""The expanded trace of :func:`netsim.comm.library.expand`, joined from its blocks.

Each collective op of a trace became a block of ops (its library's schedule or
plan) or one op (a call that moves nothing, or one that runs alone:
:mod:`netsim.comm.alone`); every other op stays itself. :func:`assemble` lays
the blocks out in op order and gives every op its dependencies, by the rules
of :mod:`netsim.comm.library`'s module docstring:

* an op that waits for a collective waits for the part on its own rank (the
  sender's, for a message), or for every part from outside the group;
* a block's ops wait for each other as its schedule says, and its entry ops
  for the *gates* of their member: the expanded ops standing for the call's
  dependencies that touch that member, or for those that touch no member at
  all; an entry of no one member (rank -1) waits for every member's gates;
* each (collective, member) *part* is a row of ``parts``: its gates and the ops
  that end it.

A call whose every op ends on one op and waits for every gate (NCCL's and
gloo's plans, a call kept as one op) whose dependencies end on one op each is
joined with array operations over all such calls at once; MPICH's schedules,
whose parts end on each member's own ops, one by one.
"""

import numpy as np

from netsim.trace.core import COMPUTE, Trace, ranges
from netsim.trace.graph import distinct, unique_pairs
from netsim.trace.ops import touches

__all__ = ["assemble"]


def assemble(a):
    """The expanded :class:`Trace`, each original op's first op and count, and the parts.

    Parameters
    ----------
    a : netsim.comm.library._Assembly
        The blocks (``a.blocks``, ``a.ends``, ``a.gate_rank``) and one-op calls
        (``a.ones``) of every collective op.

    Returns
    -------
    trace : Trace
    first, count : ndarray of int
        Per original op: its first expanded op and how many it became.
    parts : dict of ndarray
        As :class:`netsim.comm.library.Expansion`'s ``parts``.

    Examples
    --------
    A call that moves nothing is one op, waiting for the compute op before it, which
    touches rank 0 only: rank 0's part waits for it, rank 1's for nothing
    (:func:`netsim.simulate` assembles the expansion):

    >>> import networkx as nx
    >>> from netsim import TraceBuilder, simulate
    >>> G = nx.Graph(); G.add_edges_from([("h0", "s"), ("h1", "s")], bandwidth=1e9, latency=0)
    >>> b = TraceBuilder(2); c = b.compute(0, seconds=1.0)
    >>> _ = b.collective("allreduce", [0, 1], 0, deps=[c])
    >>> x = simulate(b.build(), G, placement=["h0", "h1"]).expanded
    >>> x.count.tolist(), x.trace.deps(1).tolist(), x.parts["gate_ptr"].tolist()
    ([1, 1], [0], [0, 1, 1])
    """
    tr = a.trace
    n = tr.num_ops
    count = np.ones(n, np.int64)
    for i, blk in a.blocks.items():
        count[i] = len(blk["kind"])
    first = np.cumsum(count) - count
    N = int(count.sum())
    cols = _columns(a, tr, first, count, N)
    # Ends of each collective, as expanded op ids: per member rank, and all of them.
    ends = {i: {r: first[i] + np.asarray(e, np.int64) for r, e in e_map.items()}
            for i, e_map in a.ends.items()}
    is_coll = tr.is_collective
    # An op that ends on one expanded op whoever waits: its id; -1 for MPICH's blocks.
    end_of = first.copy()
    for i, e_map in ends.items():
        end_of[i] = e_map["all"][0] if len(e_map) == 1 else -1

    def resolve(d, r):
        """Expanded ops standing for original op ``d``, for a waiter on rank ``r``."""
        if end_of[d] >= 0:
            return end_of[d:d + 1]
        e = ends[d].get(r)
        return e if e is not None and len(e) else ends[d]["all"]

    owners, deps = [], []
    # Non-collective ops: their own dependencies, each mapped.
    slot_owner = np.repeat(np.arange(n, dtype=np.int64), np.diff(tr.dep_ptr))
    plain = ~is_coll[slot_owner]
    direct = plain & (end_of[tr.dep_idx] >= 0)
    owners.append(first[slot_owner[direct]])
    deps.append(end_of[tr.dep_idx[direct]])
    for s in np.flatnonzero(plain & ~direct).tolist():
        o, d = int(slot_owner[s]), int(tr.dep_idx[s])
        e = resolve(d, int(tr.rank[o]))
        owners.append(np.full(len(e), first[o]))
        deps.append(e)
    # Blocks: internal dependencies.
    for i, blk in a.blocks.items():
        ptr, idx = np.asarray(blk["ptr"], np.int64), np.asarray(blk["idx"], np.int64)
        owners.append(first[i] + np.repeat(np.arange(count[i]), np.diff(ptr)))
        deps.append(first[i] + idx)
    # Gates: every call that waits for all of them at its first op, at once; the others
    # (MPICH's schedules, or a call waiting on one) one by one.
    calls = np.array(sorted(set(a.blocks) | set(a.ones)), np.int64)
    whole = np.array([i in a.ones or (len(a.gate_rank[i][1]) == 1
                                      and a.gate_rank[i][1][0] == -1) for i in calls.tolist()],
                     bool)
    if len(calls):
        slots = ranges(tr.dep_ptr[calls], np.diff(tr.dep_ptr)[calls])
        on_one = np.ones(len(calls), bool)
        bad = np.repeat(np.arange(len(calls)), np.diff(tr.dep_ptr)[calls])[
            end_of[tr.dep_idx[slots]] < 0]
        on_one[bad] = False
        whole &= on_one
    t_ops, t_ranks = touches(tr)
    t_start = np.searchsorted(t_ops, np.arange(n + 1))
    fast = _whole_gates(tr, calls[whole], first, end_of, t_ranks, t_start)
    owners.append(fast[0])
    deps.append(fast[1])
    part_rows = []
    for i in calls[~whole].tolist():
        gates = _gates(tr, i, t_ranks, t_start, resolve)
        g_owner, g_dep = _gate_pairs(tr.group(i), gates, *a.gate_rank[i])
        owners.append(first[i] + g_owner)
        deps.append(g_dep)
        for r in tr.group(i).tolist():
            part_rows.append((i, r, gates.get(r, np.zeros(0, np.int64)), resolve(i, r)))
    owner = np.concatenate(owners)
    dep = np.concatenate(deps)
    # Each op's dependencies in the order they were gathered.
    order = np.argsort(owner, kind="stable")
    dep_ptr = np.zeros(N + 1, np.int64)
    np.cumsum(np.bincount(owner, minlength=N), out=dep_ptr[1:])
    out = Trace(tr.ranks + len(a.extra_nodes), dep_ptr=dep_ptr, dep_idx=dep[order],
                tags=a.tags, metadata=tr.metadata, **cols)
    return out, first, count, _merge(fast[2], _parts(part_rows))


def _columns(a, tr, first, count, N):
    """The expanded trace's columns: each op's own, each block's, each one-op call's."""
    orig = np.repeat(np.arange(tr.num_ops, dtype=np.int64), count)
    cols = {name: getattr(tr, name)[orig].copy() for name in
            ("kind", "rank", "peer", "size", "duration", "flops", "iteration", "tag", "channel",
             "priority", "queue")}
    for i, blk in a.blocks.items():
        s = slice(first[i], first[i] + count[i])
        for name in ("kind", "rank", "peer", "size", "duration", "tag"):
            cols[name][s] = blk[name]
        cols["flops"][s] = 0.0
        cols["queue"][s] = -1
        comp = np.asarray(blk["kind"]) == COMPUTE
        cols["priority"][s] = np.where(comp, 0, tr.priority[i])
    if a.ones:
        ones = np.fromiter(a.ones, np.int64, len(a.ones))
        at = first[ones]
        for name, value in (("kind", COMPUTE), ("peer", -1), ("size", 0.0), ("flops", 0.0),
                            ("queue", -1), ("priority", 0)):
            cols[name][at] = value
        cols["duration"][at] = [a.ones[i][0] for i in ones.tolist()]
        cols["tag"][at] = [a.ones[i][1] for i in ones.tolist()]
    cols["spec"] = np.full(N, -1, np.int32)
    return cols


def _whole_gates(tr, calls, first, end_of, t_ranks, t_start):
    """Gates and parts of ``calls``, each waiting for every gate at its first op and each
    of whose dependencies ends on one op: ``(owners, deps, parts)``.

    A member's gates are the dependencies that touch it, and those that touch no member.
    """
    sp = tr.specs
    k = tr.spec[calls].astype(np.int64)
    glen = np.diff(sp.group_ptr)[k]
    m_op = np.repeat(calls, glen)                                   # part rows: op, member
    m_rank = sp.group_idx[ranges(sp.group_ptr[k], glen)].astype(np.int64)
    row0 = np.cumsum(glen) - glen                                   # each call's first row
    ndep = np.diff(tr.dep_ptr)[calls]
    p_call = np.repeat(np.arange(len(calls)), ndep)                 # (call, dependency) pairs
    p_dep = tr.dep_idx[ranges(tr.dep_ptr[calls], ndep)].astype(np.int64)
    value = end_of[p_dep]
    # The call's first op waits for them all, once each.
    pairs = unique_pairs(first[calls][p_call], value)
    # Touched members: (pair, rank) for each rank a dependency touches, kept if a member.
    tcnt = t_start[p_dep + 1] - t_start[p_dep]
    t_pair = np.repeat(np.arange(len(p_dep)), tcnt)
    t_rank = t_ranks[ranges(t_start[p_dep], tcnt)].astype(np.int64)
    R = max(tr.ranks, 1)
    key = m_op * R + m_rank
    by = np.argsort(key, kind="stable")
    want = calls[p_call[t_pair]] * R + t_rank
    pos = np.minimum(np.searchsorted(key[by], want), max(len(key) - 1, 0))
    hit = key[by][pos] == want if len(key) else np.zeros(len(want), bool)
    rows = [by[pos[hit]]]
    vals = [value[t_pair[hit]]]
    # A dependency touching no member is every member's gate.
    none = np.flatnonzero(np.bincount(t_pair[hit], minlength=len(p_dep)) == 0)
    c = p_call[none]
    rows.append(ranges(row0[c], glen[c]))
    vals.append(np.repeat(value[none], glen[c]))
    rows, vals = np.concatenate(rows), np.concatenate(vals)
    if len(rows):
        rows, vals = unique_pairs(rows, vals)
    M = len(m_op)
    gate_ptr = np.zeros(M + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=M), out=gate_ptr[1:])
    parts = {"op": m_op, "rank": m_rank, "gate_ptr": gate_ptr, "gate": vals.astype(np.int64),
             "end_ptr": np.arange(M + 1, dtype=np.int64), "end": end_of[m_op]}
    return pairs[0], pairs[1], parts


def _gate_pairs(group, gates, local, ranks):
    """``(block-local op, expanded op)`` pairs: each entry ``(local[k], ranks[k])`` waits
    for the gates of member ``ranks[k]`` (-1: of every member)."""
    lists = [gates.get(int(r), np.zeros(0, np.int64)) for r in group]
    lists.append(distinct(np.concatenate([np.zeros(0, np.int64)] + lists)))
    ptr = np.zeros(len(lists) + 1, np.int64)
    np.cumsum([len(x) for x in lists], out=ptr[1:])
    flat = np.concatenate(lists)
    order = np.argsort(group, kind="stable")
    ranks = np.asarray(ranks, np.int64)
    member = np.where(ranks < 0, len(group),
                      order[np.searchsorted(group[order], np.maximum(ranks, 0))])
    cnt = ptr[member + 1] - ptr[member]
    return np.repeat(np.asarray(local, np.int64), cnt), flat[ranges(ptr[member], cnt)]


def _gates(tr, i, t_ranks, t_start, resolve):
    """Per member rank of collective ``i``: the expanded ops its part waits for."""
    group = tr.group(i).tolist()
    members = set(group)
    out = {}
    for d in tr.deps(i).tolist():
        touched = [r for r in t_ranks[t_start[d]:t_start[d + 1]].tolist() if r in members]
        for r in (touched or group):
            out.setdefault(r, []).append(resolve(d, r))
    return {r: distinct(np.concatenate(v)) for r, v in out.items()}


def _parts(rows):
    """Part rows ``(op, rank, gates, ends)`` as CSR arrays."""
    def csr(lists):
        ptr = np.zeros(len(lists) + 1, np.int64)
        np.cumsum([len(x) for x in lists], out=ptr[1:])
        idx = np.concatenate([np.zeros(0, np.int64)] + [np.asarray(x, np.int64) for x in lists])
        return ptr, idx

    gate_ptr, gate = csr([r[2] for r in rows])
    end_ptr, end = csr([r[3] for r in rows])
    return {"op": np.array([r[0] for r in rows], np.int64),
            "rank": np.array([r[1] for r in rows], np.int64),
            "gate_ptr": gate_ptr, "gate": gate, "end_ptr": end_ptr, "end": end}


def _merge(p, q):
    """Two sets of part rows as one, in op order (each op's members in group order)."""
    op = np.concatenate([p["op"], q["op"]])
    order = np.argsort(op, kind="stable")
    out = {"op": op[order], "rank": np.concatenate([p["rank"], q["rank"]])[order]}
    for name in ("gate", "end"):
        ptr_p, ptr_q = p[f"{name}_ptr"], q[f"{name}_ptr"]
        lo = np.concatenate([ptr_p[:-1], ptr_q[:-1] + len(p[name])])[order]
        cnt = np.concatenate([np.diff(ptr_p), np.diff(ptr_q)])[order]
        ptr = np.zeros(len(op) + 1, np.int64)
        np.cumsum(cnt, out=ptr[1:])
        out[f"{name}_ptr"] = ptr
        out[name] = np.concatenate([p[name], q[name]])[ranges(lo, cnt)]
    return out
