"""The readable specification of the engine: a plain-Python reference replay.

It shares nothing with :mod:`netsim.engine` but the routing and placement (which
are not what it checks): plain Python, one global max-min solve over every active
flow at every event, time advanced from event to event. Slow and obviously
correct: the textbook progressive filling of Bertsekas & Gallager, *Data
Networks*, 2nd ed., section 6.5.2, under SimGrid's CM02 semantics (a message
waits its path latency, then shares bandwidth; it is done when its last byte
arrives, within the engine's relative tolerance of 1e-12 of the current time).
The property tests compare the engine with it on random traces.

``sharing="priority"`` is strict priority between classes of the ``priority``
column (larger first): the textbook filling, run class by class on the capacity
the classes above left.
"""

import heapq
import math

from netsim.maxmin import check_sharing  # the name check only, not the allocation
from netsim.network import Network

__all__ = ["maxmin", "reference_replay"]

SAT = 0.99


def maxmin(routes, cap, priority=None):
    """Max-min fair rates by progressive filling, one flow and one link at a time.

    Parameters
    ----------
    routes : dict
        Flow -> list of the links it crosses.
    cap : dict
        Link -> capacity (bytes/s).
    priority : dict, optional
        Flow -> priority class; each class, highest first, is filled on what the
        classes above it left (strict priority).

    Returns
    -------
    dict
        Flow -> rate (bytes/s).

    Examples
    --------
    The parking lot: flow "a" crosses links 0 and 1, "b" link 0, "c" link 1.

    >>> sorted(maxmin({"a": [0, 1], "b": [0], "c": [1]}, {0: 10.0, 1: 4.0}).items())
    [('a', 2.0), ('b', 8.0), ('c', 2.0)]
    >>> routes, cap = {"a": [0, 1], "b": [0], "c": [1]}, {0: 10.0, 1: 4.0}
    >>> sorted(maxmin(routes, cap, {"a": 0, "b": 1, "c": 0}).items())
    [('a', 0.0), ('b', 10.0), ('c', 4.0)]
    """
    if priority:
        rate, left = {}, dict(cap)
        for p in sorted(set(priority.values()), reverse=True):
            cls = {f: r for f, r in routes.items() if priority[f] == p}
            got = maxmin(cls, left)
            for f, r in got.items():
                for link in routes[f]:
                    left[link] = max(left[link] - r, 0.0)
            rate.update(got)
        return rate
    rate = {}
    left = dict(cap)
    unfrozen = set(routes)
    while unfrozen:
        count = {}
        for f in unfrozen:
            for link in routes[f]:
                count[link] = count.get(link, 0) + 1
        share = {link: left[link] / c for link, c in count.items()}
        level = min(share.values())
        tight = {link for link, s in share.items() if s <= level * (1 + 1e-12)}
        frozen = [f for f in unfrozen if any(link in tight for link in routes[f])]
        for f in frozen:
            rate[f] = level
            for link in routes[f]:
                left[link] = max(left[link] - level, 0.0)
        unfrozen.difference_update(frozen)
    return rate


def reference_replay(trace, G, ecmp=None, ecmp_seed=0, sharing="maxmin", priority=None):
    """Replay ``trace`` on graph ``G`` with the default placement, slowly and plainly.

    Each message takes the route of its (source, destination, channel), or of
    its flow's ECMP hash (:meth:`~netsim.network.Network.path_index`).

    Parameters
    ----------
    trace : Trace
        Compute ops in seconds and messages.
    G : networkx.Graph or networkx.DiGraph
        Edges carry ``bandwidth`` (bytes/s) and ``latency`` (s).
    ecmp, ecmp_seed : optional
        As for :func:`netsim.simulate`.
    sharing : {"maxmin", "priority"}
        Max-min fair sharing, or strict priority between the message classes.
    priority : sequence of int, optional
        Priority of each op (larger = more urgent); the trace's ``priority``
        column by default. Used only with ``sharing="priority"``.

    Returns
    -------
    end : list of float
        When each op ends (s).
    links : dict
        Link direction (row of the network's links) -> (busy, saturated) seconds.

    Examples
    --------
    Two 1 MB messages into one host over 1 GB/s links with no latency: they share
    the sink's link and both end at 2 ms.

    >>> import networkx as nx
    >>> from netsim import TraceBuilder
    >>> G = nx.Graph()
    >>> for h in "abc":
    ...     G.add_edge(h, "sw", bandwidth=1e9, latency=0.0)
    >>> G.nodes["sw"]["kind"] = "switch"
    >>> for h in "abc":
    ...     G.nodes[h]["kind"] = "host"
    >>> b = TraceBuilder(3); _ = b.message(0, 2, 1e6); _ = b.message(1, 2, 1e6)
    >>> end, links = reference_replay(b.build(), G)
    >>> [round(t, 12) for t in end]
    [0.002, 0.002]
    """
    check_sharing(sharing)
    prio = None
    if sharing == "priority":
        prio = [int(x) for x in (trace.priority if priority is None else priority)]
    net = Network(G)
    nodes = net.placement(trace.ranks)
    seconds = trace.compute_seconds()
    n = trace.num_ops
    succ = [[] for _ in range(n)]
    waiting = [0] * n
    for op in range(n):
        for d in trace.deps(op).tolist():
            succ[d].append(op)
            waiting[op] += 1
    cap = {k: float(b) for k, b in enumerate(net.bandwidth)}
    end = [None] * n
    timers = []  # (time, op): compute end or message latency end
    active = {}  # op -> remaining bytes
    route = {}
    busy = {k: 0.0 for k in cap}
    sat = {k: 0.0 for k in cap}
    now = 0.0

    def start(op):
        if trace.kind[op] == 1:
            s, d = int(nodes[trace.rank[op]]), int(nodes[trace.peer[op]])
            path = net.path_index(s, d, int(trace.channel[op]), ecmp, ecmp_seed) if s != d else 0
            route[op] = list(net.route(s, d, path))
            lat = sum(float(net.latency[k]) for k in route[op])
            heapq.heappush(timers, (now + lat, op))
        else:
            heapq.heappush(timers, (now + float(seconds[op]), op))

    def finish(op):
        end[op] = now
        for s in succ[op]:
            waiting[s] -= 1
            if waiting[s] == 0:
                start(s)

    for op in range(n):
        if waiting[op] == 0:
            start(op)
    while timers or active:
        rates = maxmin({f: route[f] for f in active}, cap,
                       None if prio is None else {f: prio[f] for f in active})
        t_next = min((now + active[f] / rates[f] for f in active if rates[f] > 0),
                     default=math.inf)
        if timers:
            t_next = min(t_next, timers[0][0])
        dt = t_next - now
        load = {}
        for f, r in rates.items():
            active[f] -= r * dt
            for link in route[f]:
                load[link] = load.get(link, 0.0) + r
        for link, x in load.items():
            if x <= 0:
                continue  # crossed only by starved flows of a lower priority class
            busy[link] += dt
            if x >= SAT * cap[link]:
                sat[link] += dt
        now = t_next
        # The engine's rule: done once the predicted end is within 1e-12 * now of now
        # (this also ends a flow whose remaining time underflows at time 0).
        done = [f for f in active
                if rates[f] > 0 and now + active[f] / rates[f] <= now + 1e-12 * now]
        for f in done:
            del active[f]
            finish(f)
        while timers and timers[0][0] <= now:
            _, op = heapq.heappop(timers)
            if trace.kind[op] == 1 and trace.size[op] > 0 and route[op]:
                active[op] = float(trace.size[op])
            else:
                finish(op)
    return end, {k: (busy[k], sat[k]) for k in cap}
