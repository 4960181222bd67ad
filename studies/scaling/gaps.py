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
from netsim.costmodel import alpha_beta, hockney

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
    rows = {}

    def add(tag, op, alone, took):
        row = rows.setdefault((tag, op), {"tag": tag, "op": op, "calls": 0, "slower": 0,
                                          "alone": 0.0, "replay": 0.0})
        row["calls"] += 1
        row["slower"] += bool(took > alone * (1 + rtol) + 1e-15)
        row["alone"] += alone
        row["replay"] += took

    tags = list(trace.tags)
    hops = {}
    msg = np.flatnonzero(trace.is_message)
    for i in msg.tolist():
        tag = _tag(tags, trace.tag[i])
        given = hop.get(tag) if isinstance(hop, dict) else hop
        key = (placement[int(trace.rank[i])], placement[int(trace.peer[i])], given)
        if key not in hops:
            hops[key] = given or alpha_beta(net, placement=list(key[:2]))
        add(tag, "message", hockney(float(trace.size[i]), *hops[key]),
            float(ops["end"][i] - ops["start"][i]))
    calls = result.collectives
    cache, prices = {}, prices or NcclPrices(G)
    # a call the replay kept as one op ran as its plan alone (netsim.comm.alone), which the
    # replay priced already: its isolated seconds are the price, not replayed again
    collapsed = getattr(result.expanded, "alone", None)
    for k, i in enumerate(np.asarray(calls["op"], np.int64).tolist()):
        spec = trace.specs.row(int(trace.spec[i]))
        if collapsed is not None and i in collapsed.calls:
            alone = collapsed.plans[collapsed.calls[i]].seconds
        else:
            members = [placement[r] for r in spec.group]
            nbytes, lib = float(trace.size[i]), str(calls["library"][k])
            key = (tuple(members), spec.op, nbytes, lib)
            if key not in cache:
                cache[key] = _alone(lib, members, spec, nbytes, net, prices)
            alone = cache[key]
        if alone is not None:
            add(_tag(tags, trace.tag[i]), spec.op, alone,
                float(calls["end"][k] - calls["ready"][k]))
    out = [r for r in rows.values() if r["slower"]]
    return sorted(out, key=lambda r: r["alone"] - r["replay"])


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
