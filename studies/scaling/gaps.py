"""Why a replay differs from its closed form: which calls and hops took longer than alone.

The transformer's closed form (:func:`workloads.transformer.closed.closed_form`) prices
every collective and pipeline hop as it runs with its links to itself: an NCCL call as
its plan replayed alone (:class:`netsim.comm.priced.NcclPrices`), an MPICH call as
MPICH's ring (or pairwise all-to-all) on its members' alpha-beta, a message as
Hockney's ``alpha + n beta`` on its path. :func:`slower` reads the replay back and
finds the ones that took longer than that, per class (the trace's tag and the
operation): they shared a link with other traffic in flight (another class, another
group's calls, the gradient buckets under the backward). :func:`why` says it in a
line. A call that took no longer than alone is no difference, so a replay slower
than its closed form with no call or hop slower names none and says so.

The seconds a call took in the replay run from when its last member may start to its
end (``result.collectives``' ``ready`` and ``end``); a message's from its start to its
end.
"""

import numpy as np

from netsim.comm.priced import NcclPrices
from netsim.costmodel import alpha_beta

from workloads.transformer.prices import MPICH

__all__ = ["slower", "why"]


def slower(trace, result, G, placement, prices=None, hop=None, rtol=1e-6):
    """Per class of ``trace``'s calls and messages, how many took longer than alone.

    Parameters
    ----------
    trace : netsim.Trace
        The trace replayed (its collective ops and messages, with their tags).
    result : netsim.result.Result
        Its replay (with ``result.expanded``: the network it ran on).
    G : networkx.Graph
        The graph given to the replay.
    placement : sequence
        The node of each rank, as given to the replay.
    prices : netsim.comm.priced.NcclPrices, optional
        NCCL calls' prices on ``G`` (shared with the closed form's, to reuse its cache).
    hop : (float, float) or dict, optional
        The ``(alpha, beta)`` the closed form charges a message (a pipeline hop, with
        the hops of one step sharing their links counted:
        :func:`studies.scaling.transformer.hop_of`), or a dict of them by the message's
        tag (a context-parallel ring's step too, ``ring_of``); default (or a tag the dict
        lacks) each message's path alone.
    rtol : float
        A call is slower when it took more than ``1 + rtol`` times its time alone.

    Returns
    -------
    list of dict
        ``tag``, ``op``, ``calls``, ``slower`` (how many), ``alone`` and ``replay``
        (their seconds summed), largest excess first; only classes with a slower one.

    Examples
    --------
    Two 1 GB messages from two hosts to a third over one switch share its link:
    each takes twice its time alone.

    >>> import networkx as nx
    >>> from netsim import TraceBuilder, simulate
    >>> G = nx.star_graph(["s", "a", "b", "c"])
    >>> nx.set_edge_attributes(G, 1e9, "bandwidth"); nx.set_edge_attributes(G, 0.0, "latency")
    >>> b = TraceBuilder(3); _ = b.message(0, 2, 1e9, tag="pp"); _ = b.message(1, 2, 1e9, tag="pp")
    >>> t = b.build(); r = simulate(t, G, placement=["a", "b", "c"])
    >>> rows = slower(t, r, G, ["a", "b", "c"])
    >>> [(d["tag"], d["op"], d["slower"], d["alone"], d["replay"]) for d in rows]
    [('pp', 'message', 2, 2.0, 4.0)]
    """
    # the network the replay ran on: under NCCL the effective graph
    net = result.expanded.net if result.expanded is not None else G
    ops = result.ops
    tags, rows = list(trace.tags), {}
    msg = np.flatnonzero(trace.is_message)
    if len(msg):   # one (alpha, beta) per sender's node, receiver's node and tag
        pairs, at = np.unique(np.stack([trace.rank[msg], trace.peer[msg], trace.tag[msg]]),
                              axis=1, return_inverse=True)
        hops, ab = {}, []
        for r, q, k in pairs.T.tolist():
            given = hop.get(_tag(tags, k)) if isinstance(hop, dict) else hop
            key = (placement[r], placement[q], given)
            if key not in hops:
                hops[key] = given or alpha_beta(net, placement=list(key[:2]))
            ab.append(hops[key])
        alpha, beta = np.array(ab, np.float64).reshape(-1, 2).T
        at = at.reshape(-1)
        _add(rows, tags, trace.tag[msg], ["message"], np.zeros(len(msg), np.int64),
             alpha[at] + trace.size[msg] * beta[at],   # Hockney's alpha + n beta, each hop
             ops["end"][msg] - ops["start"][msg], rtol)
    calls = result.collectives
    op = np.asarray(calls["op"], np.int64)
    if len(op):
        # a call the replay kept as one op ran as its plan alone (netsim.comm.alone), which
        # the replay priced already: its isolated seconds are the price, not replayed again
        seconds = np.full(trace.num_ops, np.nan)
        collapsed = getattr(result.expanded, "alone", None)
        for i, key in ({} if collapsed is None else collapsed.calls).items():
            seconds[i] = collapsed.plans[key].seconds
        alone = seconds[op]
        rest = np.flatnonzero(np.isnan(alone))
        cache, prices = {}, prices or NcclPrices(G)
        lib = np.asarray(calls["library"]).astype(str)
        spec, size = trace.spec[op], trace.size[op]
        if len(rest):   # one price per spec and size (which choose the call's library)
            _, first, at = np.unique(np.stack([spec[rest], size[rest].view(np.int64)]), axis=1,
                                     return_index=True, return_inverse=True)
            price = np.empty(len(first))
            for u, k in enumerate(rest[first].tolist()):
                s = trace.specs.row(int(spec[k]))
                members, nbytes = [placement[r] for r in s.group], float(size[k])
                key = (tuple(members), s.op, nbytes, str(lib[k]))
                if key not in cache:
                    cache[key] = _alone(key[3], members, s, nbytes, net, prices)
                price[u] = np.nan if cache[key] is None else cache[key]
            alone[rest] = price[at.reshape(-1)]
        kinds, at = np.unique(spec, return_inverse=True)   # each spec's op, coded
        of = [trace.specs.row(int(j)).op for j in kinds.tolist()]
        names = sorted(set(of))
        code = np.array([names.index(x) for x in of], np.int64)[at.reshape(-1)]
        ok = ~np.isnan(alone)   # a call with no price (gloo's, MPICH's trees) is no row
        _add(rows, tags, trace.tag[op][ok], names, code[ok], alone[ok],
             (np.asarray(calls["end"], np.float64) - np.asarray(calls["ready"], np.float64))[ok],
             rtol)
    out = [r for r in rows.values() if r["slower"]]
    return sorted(out, key=lambda r: r["alone"] - r["replay"])


def _add(rows, tags, tag, names, code, alone, took, rtol):
    """Add to ``rows`` (by tag and op, in order of first appearance) each element's call or
    hop: its seconds ``alone`` and those it ``took``, summed in order."""
    if not len(alone):
        return
    _, first, at = np.unique(np.stack([tag, code]), axis=1, return_index=True,
                             return_inverse=True)
    at = at.reshape(-1)
    for u in np.argsort(first, kind="stable").tolist():
        sel = at == u
        j = int(first[u])
        row = rows.setdefault((_tag(tags, int(tag[j])), names[int(code[j])]),
                              {"tag": _tag(tags, int(tag[j])), "op": names[int(code[j])],
                               "calls": 0, "slower": 0, "alone": 0.0, "replay": 0.0})
        a, t = alone[sel], took[sel]
        row["calls"] += int(sel.sum())
        row["slower"] += int((t > a * (1 + rtol) + 1e-15).sum())
        row["alone"] += float(np.cumsum(a)[-1])   # in order, as one by one
        row["replay"] += float(np.cumsum(t)[-1])


def _tag(tags, k):
    return tags[k] if k >= 0 else ""


def _alone(lib, members, spec, nbytes, net, prices):
    """A call's seconds alone under its library (None where there is no price)."""
    if lib == "nccl":
        return prices.seconds(members, spec.op, int(nbytes), spec.algorithm)
    if lib == "mpich" and spec.op in MPICH and spec.algorithm in (None, "", "ring"):
        return MPICH[spec.op](len(members), nbytes, *alpha_beta(net, placement=members))
    return None


def why(rows, closed, simulated):
    """One line saying why the replay differs from the closed form, from :func:`slower`'s rows.

    Examples
    --------
    >>> why([{"tag": "dp", "op": "allreduce", "calls": 8, "slower": 8, "alone": 4.0,
    ...       "replay": 5.0}], 10.0, 10.5)
    'dp allreduce: 8 of 8 calls slower than alone (+1 s, x1.25: links shared)'
    >>> why([], 10.0, 10.0)
    'none: every call and hop as alone'
    """
    from netsim.units import format_time

    if not rows:
        if abs(simulated - closed) <= 1e-6 * closed:
            return "none: every call and hop as alone"
        return "every call and hop as alone: the difference is in the schedule's overlap"
    return "; ".join(f"{r['tag']} {r['op']}: {r['slower']} of {r['calls']} "
                     f"{'hops' if r['op'] == 'message' else 'calls'} slower than alone "
                     f"(+{format_time(r['replay'] - r['alone'])}, "
                     f"x{r['replay'] / r['alone']:.3g}: links shared)" for r in rows)
