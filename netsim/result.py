"""Results of a replay as flat records, and `simulate`, which produces them.

A :class:`Result` holds plain numpy columns: one row per rank, one per link
direction, one per iteration, one per op. Tables (pandas), JSON and plots are
functions over those columns.

Definitions
-----------
* ``compute`` time of a rank: the length of the union of its compute intervals.
  Compute ops tagged ``idle`` are not counted: they stand for the host time between
  a profile's kernels (:mod:`netsim.formats.kineto.load`), when the GPU is idle, and count as
  ``idle`` as HTA's temporal breakdown counts them.
* ``communication`` time: the union of the intervals of the messages it sends or
  receives, from the moment each becomes ready (latency included) to its last byte,
  and of its parts of collectives (from when the collective's dependencies on
  the rank are done to the end of its part, :mod:`netsim.comm.library`).
* ``exposed_communication``: communication not overlapped by the rank's compute.
* ``idle``: makespan minus the union of both.
* Per link direction: ``bytes`` carried, ``busy`` time (at least one message
  transferring), ``mean_util`` = bytes / (bandwidth x makespan), ``peak_util``
  (largest fraction of capacity in use at any instant), ``saturated`` time
  (at least 99 % of capacity in use) and ``peak_flows`` (most messages sharing it
  at one instant).
* Iteration ``k`` ends when its last op ends. ``iteration_times`` are the gaps
  between successive iteration ends (the running maximum, so overlapping
  iterations of asynchronous schemes never give negative times).
"""

import json
import time

import numpy as np

from netsim.engine import replay as engine
from netsim.comm import alone as _alone
from netsim.comm import library as _library
from netsim.checks import check_array, check_callable, check_flag
from netsim.errors import TopologyError
from netsim.network.compiled import as_network
from netsim.network.symmetry import Quotient
from netsim.trace.core import HOST_GAP, check_trace
from netsim.trace.ops import touches

__all__ = ["Result", "simulate", "union_length", "active_idle"]


_BLOCK = 1 << 22  # intervals per block of groups in union_length (bounds its memory)


def union_length(starts, ends, groups, ngroups):
    """Length of the union of intervals ``[starts, ends]``, per group.

    Parameters
    ----------
    starts, ends : ndarray of float
        The intervals.
    groups : ndarray of int
        Each interval's group, in ``0 .. ngroups - 1``.
    ngroups : int
        Number of groups.

    Returns
    -------
    ndarray of float
        Per group, the length of the union of its intervals.

    Examples
    --------
    >>> import numpy as np
    >>> union_length(np.array([0.0, 1.0, 5.0]), np.array([2.0, 3.0, 6.0]),
    ...              np.array([0, 0, 1]), 2).tolist()
    [3.0, 1.0]
    """
    return _union_length_parts([(starts, ends, groups)], ngroups)


def _union_length_parts(parts, ngroups):
    """Length of the union of intervals, per group.

    ``parts`` is a list of ``(starts, ends, groups)`` arrays, taken together (so
    callers need not concatenate large arrays). Groups are handled in blocks of
    about ``_BLOCK`` intervals, so memory stays bounded on traces of 10^7 messages;
    each group's sum is the same whatever the blocks.
    """
    out = np.zeros(ngroups)
    total = sum(len(p[0]) for p in parts)
    if not total:
        return out
    nblocks = -(-total // _BLOCK)
    edges = np.linspace(0, ngroups, nblocks + 1).round().astype(np.int64)
    for lo_group, hi_group in zip(edges[:-1].tolist(), edges[1:].tolist()):
        if nblocks == 1:
            sel = [(st, en, gr) for st, en, gr in parts]
        else:
            sel = []
            for st, en, gr in parts:
                keep = (gr >= lo_group) & (gr < hi_group)
                sel.append((st[keep], en[keep], gr[keep]))
        starts = np.concatenate([p[0] for p in sel])
        ends = np.concatenate([p[1] for p in sel])
        groups = np.concatenate([p[2] for p in sel])
        _union_into(out, starts, ends, groups, ngroups)
    return out


def _union_into(out, starts, ends, groups, ngroups):
    """Add the union length of each group's intervals to ``out``."""
    if not len(starts):
        return
    order = np.lexsort((starts, groups))
    s, e, g = starts[order], ends[order], groups[order]
    del order
    bounds = np.searchsorted(g, np.arange(ngroups + 1))
    for k in np.flatnonzero(np.diff(bounds)):
        lo, hi = bounds[k], bounds[k + 1]
        ee = e[lo:hi]
        reach = np.maximum.accumulate(ee)
        prev = np.concatenate([[s[lo]], reach[:-1]])
        out[k] = np.maximum(ee - np.maximum(s[lo:hi], prev), 0.0).sum()


class Result:
    """Flat records of one simulated run, built from an engine's :class:`~netsim.engine.replay.Record`.

    Attributes
    ----------
    makespan : float
        Seconds from time 0 to the end of the last op.
    iteration_end, iteration_times : ndarray
        Per iteration, seconds.
    ranks : dict of ndarray
        Columns ``rank``, ``node``, ``compute``, ``communication``,
        ``exposed_communication``, ``idle`` (seconds).
    links : dict of ndarray
        One row per link direction: ``src``, ``dst``, ``bandwidth``, ``latency``,
        ``bytes``, ``messages``, ``busy``, ``mean_util``, ``peak_util``,
        ``saturated``, ``peak_flows``.
    ops : dict of ndarray
        ``start`` (ready), ``transfer`` (first byte on the wire, messages only) and
        ``end`` of every op, seconds.
    link_series : dict of ndarray or None
        With ``simulate(..., link_series=True)``: every change of a link
        direction's load, as columns ``time`` (s), ``link`` (row of ``links``)
        and ``load`` (bytes/s from that time on); loads start at 0.
    stats : dict
        Engine counters: ops, messages, settle steps, rate solves, wall seconds.
    metadata : dict
        The trace's metadata.
    plan : object or None
        What a library model decided before the replay (``netsim.nccl.simulate``
        puts its read-only :class:`~netsim.comm.nccl.Plan` here: algorithm, protocol,
        channels, bus bandwidth); None for a plain replay.
    collectives : dict of ndarray
        One row per collective op of the trace: ``op``, ``library`` (``"mpich"``,
        ``"nccl"``, or ``"none"`` for a call that moves nothing), ``algorithm``,
        ``protocol`` and ``channels`` (NCCL's), ``latency`` (NCCL's, s),
        ``tuning_time`` (NCCL's own prediction, s), ``start`` (its first member
        may start), ``ready`` (its last member may start) and ``end`` (s).
        Empty columns for a trace without collectives.
    expanded : netsim.comm.library.Expansion or None
        The trace actually replayed (collectives expanded) and its network, with
        ``expanded_ops`` its ops' times; None without collectives.
    """

    def __init__(self, record, trace, net, wall, plan=None, expansion=None):
        tr = trace
        self.makespan = record.makespan
        self.plan = plan
        self.metadata = dict(tr.metadata)
        self.expanded = expansion
        parts = []
        if expansion is None:
            self.ops = {"start": record.start, "transfer": record.transfer, "end": record.end}
            self.expanded_ops = None
            self.collectives = {k: np.zeros(0) for k in _CALL_COLUMNS}
        else:
            start, transfer, end, part, ready = _library.fold(record, expansion)
            self.ops = {"start": start, "transfer": transfer, "end": end}
            self.expanded_ops = {"start": record.start, "transfer": record.transfer,
                                 "end": record.end}
            c = expansion.calls["op"].astype(np.int64)
            self.collectives = {**expansion.calls, "start": start[c], "ready": ready,
                                "end": end[c]}
            parts = [(part[1], part[2], part[0])]
            record = record._replace(start=start, transfer=transfer, end=end)
        # Iterations.
        niter = tr.num_iterations
        ends = np.full(niter, -np.inf)
        if niter:
            np.maximum.at(ends, tr.iteration, record.end)
            ends = np.maximum.accumulate(np.where(np.isfinite(ends), ends, 0.0))
        self.iteration_end = ends
        self.iteration_times = np.diff(np.concatenate([[0.0], ends]))
        # Ranks.
        P = tr.ranks
        msg = tr.is_message
        comp = (tr.kind == 0) & ~tr.tagged(HOST_GAP)   # compute ops, but for host gaps
        start, end = record.start, record.end
        computing = (start[comp], end[comp], tr.rank[comp])
        compute = _union_length_parts([computing], P)
        ms, me = start[msg], end[msg]
        # A message counts for its sender and its receiver.
        comm = [(ms, me, tr.rank[msg]), (ms, me, tr.peer[msg])] + parts
        both = _union_length_parts([computing] + comm, P)
        self.ranks = {
            "rank": np.arange(P),
            "node": np.array([str(net.nodes[i]) for i in record.nodes[:P]]),
            "compute": compute,
            "communication": _union_length_parts(comm, P),
            "exposed_communication": both - compute,
            "idle": self.makespan - both,
        }
        # Links.
        nbytes = record.link_bytes
        span = self.makespan if self.makespan > 0 else np.inf
        self.links = {
            "src": np.array([str(net.nodes[i]) for i in net.link_src]),
            "dst": np.array([str(net.nodes[i]) for i in net.link_dst]),
            "bandwidth": net.bandwidth,
            "latency": net.latency,
            "bytes": nbytes,
            "messages": record.link_messages,
            "busy": record.link_busy,
            "mean_util": nbytes / (net.bandwidth * span),
            "peak_util": record.link_peak_util,
            "saturated": record.link_saturated,
            "peak_flows": record.link_peak_flows,
        }
        self.link_series = record.link_series
        played = tr if expansion is None else expansion.trace
        self.stats = {"ops": tr.num_ops, "messages": played.num_messages,
                      "bytes": played.total_bytes, "settles": record.settles,
                      "rate_solves": record.rate_solves, "wall_seconds": wall}
        if expansion is not None:
            self.stats["collectives"] = tr.num_collectives

    def bottlenecks(self, k=5):
        """The ``k`` most loaded link directions, most saturated first.

        Ranked by time at saturation, then mean utilisation, then bytes. Links
        that carried nothing are left out.

        Returns
        -------
        list of dict
            One record per link direction with its statistics.
        """
        lk = self.links
        order = np.lexsort((-lk["bytes"], -lk["mean_util"], -lk["saturated"]))
        order = [i for i in order if lk["bytes"][i] > 0][:k]
        return [{key: _plain(col[i]) for key, col in lk.items()} | {"link": f"{lk['src'][i]}->{lk['dst'][i]}"}
                for i in order]

    def table(self, kind="links"):
        """A pandas DataFrame of ``"links"``, ``"ranks"`` or ``"iterations"``."""
        import pandas as pd

        if kind == "links":
            return pd.DataFrame(self.links)
        if kind == "ranks":
            return pd.DataFrame(self.ranks)
        if kind == "iterations":
            return pd.DataFrame({"iteration": np.arange(len(self.iteration_end)),
                                 "end": self.iteration_end, "time": self.iteration_times})
        raise ValueError(f"unknown table {kind!r}: use 'links', 'ranks' or 'iterations'")

    def to_dict(self, ops=False):
        """Plain-Python dict of every record (op times only if ``ops``)."""
        out = {
            "makespan": self.makespan,
            "iteration_end": self.iteration_end.tolist(),
            "iteration_times": self.iteration_times.tolist(),
            "ranks": {k: v.tolist() for k, v in self.ranks.items()},
            "links": {k: v.tolist() for k, v in self.links.items()},
            "bottlenecks": self.bottlenecks(),
            "metadata": self.metadata,
            "stats": {k: v for k, v in self.stats.items() if k != "wall_seconds"},
        }
        if len(self.collectives["op"]):
            out["collectives"] = {k: _plain_list(v) for k, v in self.collectives.items()}
        if ops:
            out["ops"] = {k: v.tolist() for k, v in self.ops.items()}
        return out

    def to_json(self, ops=False):
        """JSON text of :meth:`to_dict`; byte-identical for identical runs."""
        return json.dumps(self.to_dict(ops=ops), sort_keys=True, allow_nan=True)

    def __repr__(self):
        return (f"Result(makespan={self.makespan:.6g} s, iterations={len(self.iteration_end)}, "
                f"ranks={len(self.ranks['rank'])}, links={len(self.links['bytes'])})")


_CALL_COLUMNS = ("op", "library", "algorithm", "protocol", "channels", "latency", "tuning_time",
                 "start", "ready", "end")


def _plain_list(values):
    """A column as JSON-ready values (NaN becomes None)."""
    return [None if isinstance(v, float) and v != v else v for v in np.asarray(values).tolist()]


def _plain(x):
    return x.item() if isinstance(x, np.generic) else x


def simulate(trace, topology, placement=None, device_flops=None, progress=None, link_series=False,
             ecmp=None, ecmp_seed=0, sharing="maxmin", priority=None, library="auto",
             transport="fluid", tcp=None, collapse=False, symmetry=None, planner=None,
             exact=True):
    """Replay a trace on a topology and return its :class:`Result`.

    Parameters
    ----------
    trace : Trace
        The ops to replay.
    topology : networkx.Graph, networkx.DiGraph or Network
        Edges carry ``bandwidth`` (bytes/s) and ``latency`` (s). Pass a
        :class:`~netsim.network.compiled.Network` to reuse its route cache across runs.
    placement : sequence or dict, optional
        ``placement[r]`` is the node hosting rank ``r``. By default the compute
        nodes (gpus, else hosts) in graph order.
    device_flops : float, optional
        FLOP/s for compute ops given in FLOPs (else ``trace.metadata["device_flops"]``).
    progress : callable, optional
        Called as ``progress(ops_done)`` while ops complete (for progress bars).
    link_series : bool, optional
        Keep every change of every link direction's load in
        ``result.link_series`` (for timelines; costs memory on large runs).
    ecmp : {None, "hash"}, optional
        None (default): a message on channel c takes equal-cost path c mod k, so
        channel-0 traffic keeps one deterministic route per pair. ``"hash"``:
        each (source, destination, channel) flow takes the path its hash under
        ``ecmp_seed`` picks, as ECMP switches do (see :mod:`netsim.network.compiled`).
    ecmp_seed : int, optional
        Seed of the ECMP hash (ignored without ``ecmp``).
    sharing : {"maxmin", "priority"}, optional
        Bandwidth sharing on every link direction: max-min fair (default), or
        strict priority between the messages' priority classes, each class
        max-min among itself on what the classes above left
        (:func:`netsim.engine.replay.replay`).
    priority : sequence of int, optional
        Priority of each op (larger = more urgent) for ``sharing="priority"``;
        the trace's ``priority`` column by default. A collective's flows take
        its priority.
    library : {"auto", "mpich", "nccl", "gloo"}, optional
        The communication library that expands the trace's collective ops
        (:mod:`netsim.comm.library`): ``"auto"`` (default) runs NCCL's plan for a
        collective whose members all sit on gpu nodes and MPICH's schedules
        otherwise. A trace without collectives replays the same under any.
    transport : {"fluid", "tcp"}, optional
        ``"fluid"`` (default): a message moves at its max-min share from its
        first byte. ``"tcp"``: each message is a TCP transfer over its path
        (:mod:`netsim.engine.tcp`): store-and-forward of the first segment, slow start
        from 10 segments as a rate bound doubling every round trip until the
        flow reaches its share, connections kept per rank pair and channel.
    tcp : dict, optional
        TCP options with ``transport="tcp"`` (:func:`netsim.engine.tcp.tcp_options`):
        ``initial_window``, ``restart_after_idle``, ``handshake``, ``rto``, ``mtu``.
    collapse : bool, optional
        Replay each NCCL call that runs alone on its links as one op of its
        isolated duration (:mod:`netsim.comm.alone`): the same result up to float
        rounding, with far fewer ops. A class of calls two of which overlapped
        is expanded again and the trace replayed again. Not with
        ``link_series``, ``ecmp`` or ``transport="tcp"`` (then every call is
        expanded).
    symmetry : array_like of int, optional
        A permutation ``sigma`` of the ranks (a shift of identical data-parallel
        replicas) under which the trace's work is symmetric; the trace holds the
        ops of each cycle's smallest rank only, and its collectives name every
        member. The replay runs one flow per orbit on the quotient network
        (:mod:`netsim.network.symmetry`, :mod:`netsim.comm.replicas`): the full
        replay's times, with a flow per copy. Links the permutation moves report
        their own statistics (each stands for its copies), links it fixes their
        whole load. Ranks other than the simulated ones have no statistics of
        their own (those of their cycle's smallest rank are theirs).
        :class:`~netsim.network.symmetry.SymmetryError` says why a permutation
        is not a symmetry of the placement, the graph or a call's plan.
    planner : netsim.comm.priced.NcclPrices, optional
        NCCL's planner on ``topology``'s graph, shared with whatever priced the same
        calls (a closed form): each plan is made once (:func:`netsim.comm.library.expand`).
    exact : bool, optional
        True (default): results bit-identical to the engine's specification
        (:mod:`netsim.engine.reference`). False: large batches of a replay re-solve
        only the flows whose rates change (:mod:`netsim.engine.tolerant`), within a
        relative 1e-9 of the exact result; far faster where jitter or a straggler
        spreads a collective's starts over many instants.

    Returns
    -------
    Result

    Raises
    ------
    TopologyError
        For a bad topology or placement, ranks with no path between them, or
        an unknown ``ecmp`` or bad ``ecmp_seed``.
    TraceError
        For compute ops in FLOPs with no device throughput, an unknown library,
        or a collective MPICH has no schedule for.
    NcclModelError
        For a collective NCCL cannot run, or ``library="nccl"`` with a member
        off a gpu node.
    DeadlockError
        If some ops can never run.

    Examples
    --------
    One 1 MB message across a 1 GB/s star with 1 us links: two hops of latency,
    then 1 MB at 1 GB/s.

    >>> from netsim import TraceBuilder, simulate
    >>> import networkx as nx  # a star: hosts on one switch
    >>> G = nx.Graph()
    >>> G.add_nodes_from(["host0", "host1"], kind="host")
    >>> G.add_edges_from([(h, "switch") for h in list(G)], bandwidth=1e9, latency=1e-6)
    >>> b = TraceBuilder(2); _ = b.message(0, 1, 1e6)
    >>> r = simulate(b.build(), G)
    >>> round(r.makespan, 12)
    0.001002

    A 2 MB allreduce of two hosts, MPICH's ring: each sends half of it twice.

    >>> b = TraceBuilder(2); _ = b.collective("allreduce", [0, 1], 2e6)
    >>> r = simulate(b.build(), G)
    >>> round(r.makespan, 12), r.collectives["algorithm"].tolist()
    (0.002004, ['ring'])

    Over TCP a 1 MB message on these 1 us links first doubles its window from
    10 segments (one more round trip than the fluid flow needs here):

    >>> b = TraceBuilder(2); _ = b.message(0, 1, 1e6)
    >>> simulate(b.build(), G, transport="tcp").makespan > simulate(b.build(), G).makespan
    True
    """
    check_trace(trace)
    check_callable(progress, "progress", "progress(ops_done)")
    link_series, collapse, exact = (check_flag(link_series, "link_series"),
                                    check_flag(collapse, "collapse"), check_flag(exact, "exact"))
    if placement is not None and (isinstance(placement, (str, bytes))
                                  or not hasattr(placement, "__getitem__")):
        raise TopologyError(f"placement must be a sequence or dict of the ranks' nodes, got "
                            f"{type(placement).__name__} {placement!r:.40}")
    if symmetry is not None:
        check_array(symmetry, "symmetry (a permutation of the ranks)", trace.ranks)
    _library.check_library(library)
    net = as_network(topology)
    if not trace.num_collectives and symmetry is None:
        nodes = net.placement(trace.ranks, placement)
        seconds = trace.compute_seconds(device_flops)
        t0 = time.perf_counter()
        record = engine.replay(trace, net, nodes, seconds, progress=progress,
                               link_series=link_series, ecmp=ecmp, seed=ecmp_seed,
                               sharing=sharing, priority=priority, transport=transport, tcp=tcp,
                               exact=exact)
        return Result(record, trace, net, time.perf_counter() - t0)
    collapse = collapse and not link_series and ecmp is None and transport == "fluid"
    keep = frozenset()
    while True:
        x = _library.expand(trace, net, placement, library, collapse=collapse, keep=keep,
                            symmetry=symmetry, planner=planner)
        res = replay_expansion(trace, x, device_flops, progress, link_series, ecmp, ecmp_seed,
                               sharing, priority, transport, tcp, exact)
        bad = (_alone.overlapping(res.expanded_ops["start"], res.expanded_ops["end"], x)
               if x.alone is not None else None)
        if not bad:
            return res
        keep = keep | bad


def replay_expansion(trace, x, device_flops=None, progress=None, link_series=False, ecmp=None,
                     ecmp_seed=0, sharing="maxmin", priority=None, transport="fluid", tcp=None,
                     exact=True):
    """Replay an :class:`~netsim.comm.library.Expansion` of ``trace``; its :class:`Result`.

    The one replay path of a trace with collectives (:func:`simulate`) and of a
    lone library call (:func:`netsim.nccl.simulate`). Arguments as for
    :func:`simulate`; ``priority`` is per op of ``trace`` and reaches its
    collectives' flows.

    Examples
    --------
    >>> import networkx as nx
    >>> from netsim import TraceBuilder
    >>> from netsim.comm.library import expand
    >>> G = nx.Graph(); G.add_edges_from([("h0", "s"), ("h1", "s")], bandwidth=1e9, latency=0)
    >>> b = TraceBuilder(2); _ = b.collective("allgather", [0, 1], 2e6); t = b.build()
    >>> replay_expansion(t, expand(t, G, ["h0", "h1"])).makespan
    0.001
    """
    seconds = x.trace.compute_seconds(device_flops)
    if priority is not None:
        priority = np.repeat(np.asarray(priority, np.int64), x.count)
    t0 = time.perf_counter()
    record = engine.replay(x.trace, x.net, x.nodes, seconds, progress=progress,
                           link_series=link_series, ecmp=ecmp, seed=ecmp_seed, sharing=sharing,
                           priority=priority, bound=x.bound, transport=transport, tcp=tcp,
                           exact=exact)
    extra = (0, 0.0)
    if x.alone is not None:
        record, *extra = _alone.add_back(record, x)
    net = x.net
    if isinstance(net, Quotient):   # the links' statistics of the whole network
        record, net = net.whole(record), net.base
    res = Result(record, trace, net, time.perf_counter() - t0, expansion=x)
    res.stats["messages"] += extra[0]
    res.stats["bytes"] += extra[1]
    return res


def active_idle(result, trace):
    """Per rank: when it is done (its last op, sent or received, ends) and its idle time
    before then.

    ``result.ranks["idle"]`` runs to the makespan; a rank that finishes its own
    work early (a fast worker beside a straggler with a fixed number of steps)
    idles after it. This is the waiting *while it still has work*: its span minus
    its busy time (compute or communication).

    Parameters
    ----------
    result : Result
    trace : Trace
        The trace replayed.

    Returns
    -------
    done, idle : ndarray of float
        Seconds, one entry per rank (0 for a rank without ops).

    Examples
    --------
    >>> import networkx as nx
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(2); a = b.compute(0, seconds=3.0); _ = b.compute(1, seconds=1.0)
    >>> _ = b.compute(1, seconds=1.0, deps=[a])
    >>> G = nx.Graph(); G.add_edge("a", "b", bandwidth=1e9, latency=0.0)
    >>> r = simulate(b.build(), G)
    >>> [x.tolist() for x in active_idle(r, b.build())], r.ranks["idle"].tolist()
    ([[3.0, 4.0], [0.0, 2.0]], [1.0, 2.0])
    """
    done = np.zeros(trace.ranks)
    ops, ranks = touches(trace)   # a message ends for both its ranks, a collective for all
    np.maximum.at(done, ranks, result.ops["end"][ops])
    busy = result.makespan - result.ranks["idle"]
    return done, np.maximum(done - busy, 0.0)
