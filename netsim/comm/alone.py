"""NCCL calls that run alone on their links, each replayed once and kept as one op.

A tensor-parallel allreduce inside one NVSwitch machine crosses links nothing
else crosses, and the calls of one group run one after another on the group's
stream. Such a call's flows see the same rates every time it runs: its
duration is that of the call replayed by itself, wherever it starts. Expanding
it into its flows again and again (138 ops per call on average for a GPT
iteration on DGX H100 machines) is the bulk of a large simulation's work and
memory (``benchmarks/transformer_phases.py``).

:func:`collapse` finds these calls in an expansion (:mod:`netsim.comm.library`)
and replaces each by one compute op of its isolated duration. A *class* is the
calls of one member set (the same graph nodes, in the same order); a class is
kept whole, as one op per call, when

1. no link direction any of its flows crosses is crossed by a flow of anything
   else in the trace (another class, a message, an MPICH or gloo schedule),
   which is checked before the replay on the routes themselves, and
2. no two of its calls overlap in time, which is checked after the replay
   (:func:`overlapping`): a class whose calls overlapped is expanded again and
   the trace replayed again (:func:`netsim.result.simulate` does this), since
   two calls at once share their links.

A class whose links other classes' NCCL calls cross, and nothing else (a tensor-parallel
group sharing its GPUs' NVLink with the NVLS part of a data-parallel call), may still run
alone most of the time: its calls are kept as one op each on a *condition checked in
time*. After the replay, each such call whose interval met, on one of its links, the
interval of any flow replayed or of another call kept as one op (:func:`shared_in_time`)
is expanded again, and the trace replayed again, until no such call met anything: then
every call kept as one op had its links to itself while it ran, which is what the proof
below needs (the two replays agree event by event up to the first meeting, and there is
none).

Under both, the replay is the full one's up to float rounding: an NCCL call
starts when every member may and ends when its last flow does (its latency op,
its flows, its end op), so a call alone on its links takes the same seconds
from its start whenever it runs. What the collapsed ops do not carry is added
back from each plan's isolated replay (:func:`add_back`): every link's bytes,
messages, busy and saturated seconds (sums: the calls of a class never share a
link in time with anything else) and peak utilisation and flow count (maxima),
the replay's message and byte counts, and each call's first byte on the wire.
"""

from typing import NamedTuple

import numpy as np

from netsim.errors import TraceError
from netsim.trace.core import MESSAGE, TraceBuilder
from netsim.trace.graph import distinct, unique_pairs

__all__ = ["Alone", "FusedNotAlone", "collapse", "fuse", "isolated", "overlapping",
           "shared_in_time", "add_back"]


class FusedNotAlone(TraceError):
    """A trace's fused calls (``metadata["fused_tp"]``) whose witness does not run alone,
    or whose plan alone takes other seconds than the ones the trace summed."""


class Alone(NamedTuple):
    """What :func:`collapse` did: ``calls`` maps each collapsed original op to its plan
    key; ``plans`` maps a plan key to its isolated :class:`Isolated` replay; ``classes``
    maps a class (its member nodes) to its collapsed original ops; ``timed`` holds the
    collapsed original ops whose links other calls cross, kept as one op only while no
    replay shows them meeting anything on those links (:func:`shared_in_time`); ``fused``
    maps a plan key to the calls of it the trace holds inside fused ops (:func:`fuse`), or
    is None."""

    calls: dict
    plans: dict
    classes: dict
    timed: frozenset = frozenset()
    fused: dict = None


class Isolated(NamedTuple):
    """One NCCL plan replayed alone: its seconds, its first byte's offset, its flows' count
    and bytes, and per link direction it crossed (``links``) the record's link columns."""

    seconds: float
    transfer: float
    messages: int
    bytes: float
    links: np.ndarray
    columns: dict


#: The per-link columns of :class:`netsim.engine.replay.Record` added back, and how.
_SUMS = ("link_bytes", "link_messages", "link_busy", "link_saturated")
_MAXES = ("link_peak_util", "link_peak_flows")
_FLOATS = ("link_bytes", "link_busy", "link_saturated", "link_peak_util")


def isolated(call, net):
    """Replay one NCCL plan (its latency, its flows, its end) by itself on ``net``.

    Parameters
    ----------
    call : netsim.comm.nccl.model.Call
        The plan: ``latency``, ``launch``, ``flows`` (source node, destination node,
        bytes) and their ``bounds``.
    net : netsim.network.compiled.Network
        The network the replay runs on (its node names are the flows').

    Returns
    -------
    Isolated

    Examples
    --------
    Two GPUs, 1 GB each way over a 1 GB/s link after 1 us of latency:

    >>> import networkx as nx
    >>> from types import SimpleNamespace
    >>> from netsim.network.compiled import as_network
    >>> G = nx.Graph(); G.add_edge("g0", "g1", bandwidth=1e9, latency=0.0)
    >>> call = SimpleNamespace(latency=1e-6, launch=0.0, bounds=(np.inf, np.inf),
    ...                        flows=(("g0", "g1", 1e9), ("g1", "g0", 1e9)))
    >>> iso = isolated(call, as_network(G))
    >>> iso.seconds, iso.messages, iso.bytes
    (1.000001, 2, 2000000000.0)
    """
    from netsim.engine.replay import replay

    names = list(dict.fromkeys([u for u, _, _ in call.flows] + [v for _, v, _ in call.flows]))
    local = {name: k for k, name in enumerate(names)}
    b = TraceBuilder(max(1, len(names)))
    first = b.compute(0, seconds=call.latency + call.launch)
    flows = [b.message(local[u], local[v], float(n), deps=[first]) for u, v, n in call.flows]
    b.compute(0, seconds=0.0, deps=flows or [first])
    t = b.build()
    nodes = np.array([net.node_of(x) for x in names] or [0], np.int64)
    rec = replay(t, net, nodes, t.compute_seconds(),
                 bound=np.array([np.inf] + list(call.bounds) + [np.inf], np.float64))
    links = np.flatnonzero(rec.link_bytes > 0)
    xfer = rec.transfer[1:-1]
    return Isolated(rec.makespan, float(np.min(xfer)) if len(xfer) else np.nan,
                    len(call.flows), float(sum(n for _, _, n in call.flows)),
                    links, {name: getattr(rec, name)[links] for name in _SUMS + _MAXES})


def collapse(a, net, nodes, planned, keep=frozenset(), whole=frozenset(), replayed=None):
    """Which NCCL calls run alone: each class that does, replayed once per plan.

    Parameters
    ----------
    a : netsim.comm.library._Assembly
        The expansion so far: every block but the NCCL calls'.
    net : netsim.network.compiled.Network
        The network the replay runs on.
    nodes : ndarray of int
        Node index of every rank of the trace.
    planned : dict
        Each NCCL call's original op -> ``(plan key, plan)``; the key is
        ``(member nodes, op, bytes, algorithm)``.
    keep : container
        Classes (member-node tuples) and calls (original ops) to leave expanded.
    whole : container
        Plan keys whose plans hold every flow of a call on a quotient network
        (:func:`netsim.comm.replicas.home_share`): replayed on its base network.
    replayed : callable, optional
        ``replayed(key, call, net)``: the plan's :class:`Isolated` replay on ``net`` if
        already made (:meth:`netsim.comm.priced.NcclPrices.alone`), else None.

    Returns
    -------
    Alone

    Examples
    --------
    Two calls one after the other on the only link of two GPUs run alone: each is
    one op of the replay (:func:`netsim.simulate` with ``collapse=True``).

    >>> import networkx as nx
    >>> from netsim import simulate
    >>> G = nx.Graph(); G.add_nodes_from(["g0", "g1"], kind="gpu", model="V100", sm=70)
    >>> G.add_edge("g0", "g1", bandwidth=25e9, latency=0.0)
    >>> b = TraceBuilder(2); c = b.collective("allreduce", [0, 1], 1e6)
    >>> _ = b.collective("allreduce", [0, 1], 1e6, deps=[c])
    >>> x = simulate(b.build(), G, placement=["g0", "g1"], collapse=True).expanded
    >>> x.trace.num_ops, sorted(x.alone.calls)
    (2, [0, 1])
    """
    trace = a.trace
    node = np.concatenate([nodes, np.array([net.node_of(x) for x in a.extra_nodes], np.int64)])
    msg = np.flatnonzero(trace.is_message)
    src, dst, chan = [node[trace.rank[msg]]], [node[trace.peer[msg]]], [trace.channel[msg]]
    owner = [np.full(len(msg), -1, np.int64)]   # -1: traffic of no class
    for i, blk in a.blocks.items():   # MPICH's and gloo's schedules
        m = np.asarray(blk["kind"]) == MESSAGE
        src.append(node[np.asarray(blk["rank"], np.int64)[m]])
        dst.append(node[np.asarray(blk["peer"], np.int64)[m]])
        chan.append(np.full(int(m.sum()), trace.channel[i]))
        owner.append(np.full(int(m.sum()), -1, np.int64))
    classes, seen = {}, set()
    for i, (key, call) in planned.items():
        # A class kept expanded, or a call on a channel's own paths, is traffic of no class.
        cls = (-1 if key[0] in keep or trace.channel[i]
               else classes.setdefault(key[0], len(classes)))
        if (key, int(trace.channel[i])) in seen or not call.flows:
            continue
        seen.add((key, int(trace.channel[i])))
        src.append(np.array([net.node_of(u) for u, _, _ in call.flows], np.int64))
        dst.append(np.array([net.node_of(v) for _, v, _ in call.flows], np.int64))
        chan.append(np.full(len(call.flows), trace.channel[i]))
        owner.append(np.full(len(call.flows), cls, np.int64))
    alone, timed = _alone_classes(net, np.concatenate(src), np.concatenate(dst),
                                  np.concatenate(chan), np.concatenate(owner), len(classes))
    if hasattr(net, "base"):   # on a quotient: a class's images are other classes too
        ok = alone | timed
        _images_apart(net, planned, classes, ok)
        alone, timed = alone & ok, timed & ok
    out = Alone({}, {}, {}, set())
    for i, (key, call) in planned.items():
        cls = classes.get(key[0])
        if cls is None or not call.flows or trace.channel[i] or i in keep:
            continue
        # a plan kept whole (replayed on the base network) is checked on no links in time
        on_time = timed[cls] and key not in whole
        if not (alone[cls] or on_time):
            continue
        if key not in out.plans:
            on = net.base if key in whole else net
            iso = None if replayed is None else replayed(key, call, on)
            out.plans[key] = isolated(call, on) if iso is None else iso
        out.calls[i] = key
        out.classes.setdefault(key[0], []).append(i)
        if on_time:
            out.timed.add(i)
    return out


def fuse(alone, trace, planned, rows):
    """``alone`` with the calls a trace fused into its compute ops, each by its witness.

    A trace written with fused chains (:mod:`workloads.transformer.fused`) holds, per
    group and kind of call, one call as the collective it is (the witness) and counts
    the others, each summed into a compute op at its seconds alone. They are the
    replay's only if the witness's class runs alone (:func:`collapse` collapsed it, and
    not on the condition checked in time, which the fused calls cannot be checked on)
    and its plan alone takes the seconds summed.

    Parameters
    ----------
    alone : Alone
        :func:`collapse`'s result.
    trace : netsim.Trace
        The trace expanded.
    planned : dict
        Each NCCL call's op -> ``(plan key, plan)``.
    rows : list
        ``metadata["fused_tp"]``: ``[group ranks, op, bytes, count, seconds]`` rows.

    Returns
    -------
    Alone
        With ``fused``: plan key -> calls fused.

    Raises
    ------
    FusedNotAlone
        For a row without a collapsed witness, or whose seconds differ from its plan's
        alone (relative 1e-12).

    Examples
    --------
    >>> fuse(Alone({}, {}, {}), None, {}, [[[0, 1], "allreduce", 64.0, 3, 0.5]])
    Traceback (most recent call last):
    ...
    netsim.comm.alone.FusedNotAlone: 3 fused allreduce calls of 64 B among ranks [0, 1]: their witness does not run alone
    """
    witness = {}
    for i in planned:
        if i in alone.calls and i not in alone.timed:   # alone on its links, not in time only
            spec = trace.specs.row(int(trace.spec[i]))
            witness[tuple(int(x) for x in spec.group), spec.op, float(trace.size[i])] = i
    fused = {}
    for group, op, nbytes, count, seconds in rows:
        i = witness.get((tuple(group), op, float(nbytes)))
        what = f"{count} fused {op} calls of {nbytes:g} B among ranks {list(group)}"
        if i is None:
            raise FusedNotAlone(f"{what}: their witness does not run alone")
        key = alone.calls[i]
        alone_s = alone.plans[key].seconds
        if abs(alone_s - seconds) > 1e-12 * max(abs(alone_s), abs(seconds)):
            raise FusedNotAlone(f"{what}: summed at {seconds!r} s, alone {alone_s!r} s")
        fused[key] = fused.get(key, 0) + count
    return alone._replace(fused=fused)


def _images_apart(net, planned, classes, alone):
    """On a quotient (:mod:`netsim.network.symmetry`), clear ``alone`` for each class whose
    images under the permutation, other classes of the full replay, share its links.

    A class whose members the permutation moves to other members has ``g - 1`` images
    that are other classes (the copies' calls), and the quotient's routes show their
    flows as its own. It runs alone only if its flows cross no link the permutation
    fixes and no two links of one orbit (one the image of the other): NCCL's plan of a
    GPU's data-parallel group through both NICs of its PCIe switch shares each with the
    group of the switch's other GPU. A class the permutation maps onto itself is its own
    image.
    """
    base, perm = net.base, net.perm
    for key, call in {key: call for key, call in planned.values()}.items():
        cls = classes.get(key[0])
        if cls is None or not alone[cls] or not call.flows:
            continue
        members = np.array([base.node_of(v) for v in key[0]], np.int64)
        if set(perm[members].tolist()) == set(members.tolist()):
            continue
        _, links, _ = base.routes([base.node_of(u) for u, _, _ in call.flows],
                                  [base.node_of(v) for _, v, _ in call.flows])
        used = distinct(links[links < base.num_links])
        if (net.orbit[used] < net.g).any() or len(distinct(net.link_rep[used])) < len(used):
            alone[cls] = False


def _alone_classes(net, src, dst, chan, owner, n):
    """Per class: whether no flow outside it crosses any link direction its flows cross
    (alone), and whether only other classes' flows do (alone on a condition in time).

    ``owner`` is each flow's class (-1: traffic of no class, which shares with all).
    """
    alone = np.ones(n, bool)
    if n == 0:
        return alone, ~alone
    pair, links, _ = net.routes(src, dst, channel=chan)
    L = net.num_links
    p_u, o_u = unique_pairs(pair, owner)
    hops = links.shape[1]
    lk = links[p_u].reshape(-1)
    ow = np.repeat(o_u, hops)
    real = lk < L
    l_u, o_l = unique_pairs(lk[real], ow[real])
    owners = np.bincount(l_u, minlength=L)   # distinct owners of each link direction
    bad = distinct(o_l[owners[l_u] > 1])
    alone[bad[bad >= 0]] = False
    unowned = np.zeros(L, bool)   # link directions traffic of no class crosses
    unowned[l_u[o_l < 0]] = True
    timed = ~alone
    worse = distinct(o_l[unowned[l_u]])
    timed[worse[worse >= 0]] = False
    return alone, timed


def overlapping(start, end, x):
    """The classes of ``x.alone`` two of whose calls overlapped in a replay.

    Parameters
    ----------
    start, end : ndarray
        Per expanded op, from the replay's record.
    x : netsim.comm.library.Expansion

    Returns
    -------
    set of tuple
        Member-node tuples.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> x = SimpleNamespace(alone=Alone({}, {}, {("g0", "g1"): [0, 1]}), first=np.array([0, 1]))
    >>> overlapping(np.array([0.0, 1.0]), np.array([1.0, 2.0]), x)
    set()
    >>> overlapping(np.array([0.0, 0.5]), np.array([1.0, 2.0]), x)
    {('g0', 'g1')}
    """
    classes = list(x.alone.classes)
    bad = set()
    if classes:   # every class's calls by start (stable), one sort for all
        cls = np.repeat(np.arange(len(classes)), [len(v) for v in x.alone.classes.values()])
        ids = x.first[np.fromiter((i for v in x.alone.classes.values() for i in v), np.int64,
                                  len(cls))]
        order = np.lexsort((start[ids], cls))
        cls, s, e = cls[order], start[ids][order], end[ids][order]
        met = (cls[1:] == cls[:-1]) & (s[1:] < e[:-1])
        bad = {classes[k] for k in distinct(cls[1:][met]).tolist()}
    return bad | shared_in_time(start, end, x)


def shared_in_time(start, end, x):
    """The calls kept as one op on a condition in time (``x.alone.timed``) that met, on
    one of their links, a flow of the replay or another call kept as one op.

    Each flow (an expanded message: from its start to its end, latency included) and
    each collapsed call (its op's interval, on the links its isolated replay crossed)
    occupies its link directions over an interval; two intervals meet when each starts
    before the other ends.

    Returns
    -------
    set of int
        Original ops, to leave expanded in the next expansion (``keep``).

    Examples
    --------
    Two GPUs and a switch; a call kept on condition on link 0, a message on links 0
    and 1, and another call on link 1:

    >>> from types import SimpleNamespace
    >>> iso = {k: SimpleNamespace(links=np.array([j])) for j, k in enumerate("ab")}
    >>> net = SimpleNamespace(num_links=2, routes=lambda s, d, channel=None: (
    ...     np.zeros(len(s), np.int64), np.array([[0, 1]]), None))
    >>> t = SimpleNamespace(is_message=np.array([False, False, True]),
    ...                     rank=np.array([0, 0, 0]), peer=np.array([0, 0, 1]),
    ...                     channel=np.zeros(3, np.int64))
    >>> first = np.zeros(9, np.int64); first[8] = 1   # original op 7 became op 0, 8 op 1
    >>> x = SimpleNamespace(alone=Alone({7: "a", 8: "b"}, iso, {}, {7}), first=first,
    ...                     trace=t, net=net, nodes=np.array([0, 1]))
    >>> shared_in_time(np.array([0.0, 0.0, 1.0]), np.array([1.0, 3.0, 2.0]), x)  # touching
    set()
    >>> shared_in_time(np.array([0.0, 0.0, 0.5]), np.array([1.0, 3.0, 2.0]), x)
    {7}
    """
    timed = x.alone.timed
    if not timed:
        return set()
    L = x.net.num_links
    watched = np.zeros(L + 1, bool)   # the link directions a call kept on condition crosses
    for i in timed:
        watched[x.alone.plans[x.alone.calls[i]].links] = True
    link, s, e, tag = [], [], [], []   # one row per (interval, link direction it occupies)
    by_plan, on_time = {}, np.fromiter(timed, np.int64, len(timed))
    for i, key in x.alone.calls.items():
        by_plan.setdefault(key, []).append(i)
    for key, calls in by_plan.items():
        ls = x.alone.plans[key].links
        ls = ls[watched[ls]]
        if not len(ls):
            continue
        calls = np.asarray(calls, np.int64)
        ops = x.first[calls]
        link.append(np.tile(ls, len(calls)))
        s.append(np.repeat(start[ops], len(ls)))
        e.append(np.repeat(end[ops], len(ls)))
        mine = np.isin(calls, on_time)
        tag.append(np.repeat(np.where(mine, calls, -1), len(ls)))
    t = x.trace
    msg = np.flatnonzero(t.is_message)
    if len(msg):
        pair, links, _ = x.net.routes(x.nodes[t.rank[msg]], x.nodes[t.peer[msg]],
                                      channel=t.channel[msg])
        rows = np.flatnonzero(watched[links].any(axis=1))
        hit = np.flatnonzero(np.isin(pair, rows))
        sub = links[pair[hit]]
        keep = watched[sub]
        link.append(sub[keep])
        reps = keep.sum(axis=1)
        s.append(np.repeat(start[msg[hit]], reps))
        e.append(np.repeat(end[msg[hit]], reps))
        tag.append(np.full(int(reps.sum()), -1, np.int64))
    link, s, e, tag = (np.concatenate(v) for v in (link, s, e, tag))
    # exact comparisons on ranks: each time's place among all of them
    times, inv = np.unique(np.concatenate([s, e]), return_inverse=True)
    rs, re = inv[:len(s)], inv[len(s):]
    order = np.lexsort((rs, link))
    link, rs, re, tag = link[order], rs[order], re[order], tag[order]
    base = link * len(times)   # each link direction's ranks apart from the others'
    earlier = np.maximum.accumulate(base + re)   # the latest end so far, links in order
    before = np.concatenate([[-1], earlier[:-1]]) > base + rs
    after = np.zeros(len(link), bool)
    after[:-1] = (link[1:] == link[:-1]) & (rs[1:] < re[:-1])
    return set(tag[(before | after) & (tag >= 0)].tolist())


def add_back(record, x):
    """``record`` with the collapsed calls' link statistics and first bytes added back.

    Parameters
    ----------
    record : netsim.engine.replay.Record
    x : netsim.comm.library.Expansion

    Returns
    -------
    record : netsim.engine.replay.Record
    messages, nbytes : int, float
        The flows and bytes the collapsed calls stand for.

    Examples
    --------
    :func:`netsim.simulate` adds them back: the links carry what the flows did.

    >>> import networkx as nx
    >>> from netsim import simulate
    >>> G = nx.Graph(); G.add_nodes_from(["g0", "g1"], kind="gpu", model="V100", sm=70)
    >>> G.add_edge("g0", "g1", bandwidth=25e9, latency=0.0)
    >>> b = TraceBuilder(2); _ = b.collective("allreduce", [0, 1], 1e6); t = b.build()
    >>> full, fast = (simulate(t, G, placement=["g0", "g1"], collapse=c) for c in (False, True))
    >>> fast.links["bytes"].tolist() == full.links["bytes"].tolist(), fast.stats["messages"]
    (True, 2)
    """
    # bytes and seconds are floats even where the replay moved no flow of its own
    cols = {name: (getattr(record, name).astype(np.float64) if name in _FLOATS
                   else getattr(record, name).copy()) for name in _SUMS + _MAXES}
    transfer = record.transfer.copy()
    counts = dict(x.alone.fused or {})   # calls fused into compute ops (:func:`fuse`)
    for i, key in x.alone.calls.items():
        counts[key] = counts.get(key, 0) + 1
        op = x.first[i]
        transfer[op] = record.start[op] + x.alone.plans[key].transfer
    messages, nbytes = 0, 0.0
    for key, k in counts.items():
        iso = x.alone.plans[key]
        for name in _SUMS:
            cols[name][iso.links] += (k * iso.columns[name]).astype(cols[name].dtype)
        for name in _MAXES:
            cols[name][iso.links] = np.maximum(cols[name][iso.links], iso.columns[name])
        messages += k * iso.messages
        nbytes += k * iso.bytes
    return record._replace(transfer=transfer, **cols), messages, nbytes
