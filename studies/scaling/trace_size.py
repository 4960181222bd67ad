"""How big a collective's trace would be, known before it is generated.

``netsim collective ring -P 2000000`` would need 8e12 messages: rather than run
for minutes and die for lack of memory, the command counts the messages from
the schedule's closed form (:func:`message_count`), prices each op at the bytes
of the trace's columns (:func:`bytes_per_op`, from their numpy dtypes), and
refuses (:func:`check_fits`) what the machine's available memory cannot hold.
The same estimate guards every command that makes a trace grow with a rank
count: ``scale -P`` (each algorithm at each P), a sweep's points,
``replay --ranks`` and ``import kineto --ranks`` (:func:`projection_ops`,
:func:`check_ops`), and a paradigm's scaling study, whose size at a large P is
grown from its traces at the small P of :data:`PROBE` (:func:`grown_ops`);
``--force`` goes on anyway.

The trace is not all a replay holds or does: given the topology (a builder sized
to the ranks, as the commands make it), :func:`check_ops` also adds the graph's
own memory (:func:`topology_size`: its nodes and edges at the probe rank counts,
grown to the ranks) and refuses work whose CPU time exceeds :data:`TIME_LIMIT`. The
time counts what the command will do, each at a unit cost measured in
``benchmarks/`` (:func:`replay_seconds`): its messages (:data:`MESSAGE_SECONDS`, or
:data:`SMALL_MESSAGE_SECONDS` when a pipeline runs them a few at a time), their
distinct pairs of ranks (:func:`pair_count`, :data:`PAIR_SECONDS`), a parameter
server's P^2 S dependencies (:func:`fan_in_dependencies`, :data:`DEP_SECONDS`), one
route search per sending rank over the whole graph (:data:`ROUTE_SECONDS`) and the
topology's build (:data:`BUILD_SECONDS`). ``netsim scale ps-sync -P 1048576``
holds 4.3e6 ops, which fit, but its routes alone are 2^20 Dijkstra searches over a
star of 2^20 hosts. ``benchmarks/estimate.py`` sets the estimate beside the measured
CPU of 15 commands.
"""

import math

from netsim.analysis.collectives import NAMED_SCHEDULES, ranks_for, takes_segments
from netsim.errors import NetsimError
from netsim.units import format_bytes

from studies.memory import available_memory, graph_size

__all__ = ["message_count", "pair_count", "nccl_flow_count", "fan_in_dependencies", "bytes_per_op",
           "available_memory", "check_fits", "check_ops", "projection_ops", "grown_ops",
           "grown_ranks", "topology_size", "unequal_paths", "replay_seconds", "PROBE",
           "MESSAGE_SECONDS", "SMALL_MESSAGE_SECONDS", "COMPONENT_FLOW_SECONDS",
           "PRIORITY_MESSAGE_SECONDS", "BATCH_OPS",
           "PAIR_SECONDS", "DEP_SECONDS", "BUILD_SECONDS", "ROUTE_SECONDS", "TIME_LIMIT"]

PROBE = (8, 16)
"""The rank counts a paradigm's traces are built at to estimate their size at a larger P
(:func:`grown_ops`)."""


MESSAGE_SECONDS = 2.9e-6
"""CPU seconds per message of a command that replays a collective, when the steps run many
messages at once (the engine's compiled batch path): the trace built, replayed and analysed
(closed form, link saturation). ``benchmarks/README.md``, "The work estimate", calibration
row "ring, star, P = 512" (2.86 and 3.44 us per message in two runs, the lower taken;
``benchmarks/estimate.py --calibrate``)."""

SMALL_MESSAGE_SECONDS = 16.7e-6
"""CPU seconds per message (or op) when at most :data:`BATCH_OPS` run at once (a linear
pipeline on 9 ranks or fewer; a paradigm's trace, whose compute ops desynchronise the
ranks): each instant takes the engine's plain-Python small-event path). ``benchmarks/README.md``, "The work estimate", calibration row "lp, star, P = 8,
k = 10000" (16.7 and 16.9 us); the desynchronised ring of the same page costs 17.8-21.5 us."""

COMPONENT_FLOW_SECONDS = 22e-9
"""CPU seconds per op and per flow of the component a small-event instant re-rates, over
:data:`SMALL_MESSAGE_SECONDS`. A paradigm whose trace holds collectives (BSP-SGD's ring
allreduces, one per layer or bucket, several in flight while the backward pass runs) chains
every rank's flows through the links the collectives share, so each instant re-rates a
component of about P flows, and the ranks desynchronise (each message ends at its own
instant): the cost per op grows with P (16.5, 28.0, 47.4 us at P = 256, 512, 1024 for
``netsim scale allreduce``). ``benchmarks/README.md``, "The work estimate", calibration row
"scale allreduce, star, P = 512" (27.96 and 31.46 us per op in two runs, the lower taken,
less :data:`SMALL_MESSAGE_SECONDS`, over 512 flows: 22.0 ns); a parameter server's pushes
end together (one instant for all) and take none of it."""

PRIORITY_MESSAGE_SECONDS = 74e-6
"""CPU seconds per message of a replay with strict-priority sharing and many pieces in flight
at once (``netsim overlap``'s priority mode: each layer's gradient cut into pieces, all
released when its backward ends). ``benchmarks/README.md``, "The work estimate", row
"overlap priority, resnet50, P = 2, 10kB pieces" (74.2 and 75.5 us, the lower taken); it
grows with the pieces in flight: 3kB pieces cost 1.22x, 1kB about 3x what it prices."""

BATCH_OPS = 8
"""Ops an instant must start or end, beyond which the engine takes its compiled batch path
(``benchmarks/README.md``, "Third round (2026-11-25)", "What changed": "any instant starting
or ending more than 8 ops and flows")."""

PAIR_SECONDS = 6.5e-6
"""CPU seconds per distinct (source, destination) pair of ranks, over the per-message cost:
a path extracted from the route search, and the pair's share of the closed form's alpha and
beta. ``benchmarks/README.md``, "The work estimate", calibration row "alltoall, star,
P = 300" (every message a distinct pair: 6.55 and 6.91 us per pair beyond the message's
:data:`MESSAGE_SECONDS` as it then stood, 3.5 us)."""

DEP_SECONDS = 0.15e-6
"""CPU seconds per dependency beyond the few each message has: a parameter server's pulls
each wait for every push (P^2 S dependencies, :func:`fan_in_dependencies`), which are sorted,
inverted and counted down at replay. ``benchmarks/README.md``, "The work estimate",
calibration row "ps, star, P = 4096" (0.150 and 0.152 us)."""

BUILD_SECONDS = 17.4e-6
"""CPU seconds per node or edge of a topology the command builds, compiles to a
:class:`netsim.network.compiled.Network` and places ranks on. ``benchmarks/README.md``, "The work
estimate", calibration row "ring, P = 8, dgx_h100:nodes=4000" (17.4 and 19.5 us per node
or edge: a machine's graph carries many attributes per element)."""

ROUTE_SECONDS = 17.4e-9
"""CPU seconds per step of the route search, the steps counted as sources x (nodes + edges):
one Dijkstra per message source (:meth:`netsim.network.compiled.Network.routes`) over the whole
graph. The lowest of ``benchmarks/routing.py``'s figures for searches that cover the graph
(``benchmarks/README.md``, "Routing", 2026-11-26: 17.4-27 ns on a star, 41-47 ns for a
parameter server on a two-tier cluster); a ring on a two-tier cluster stops one rack away
(2.5-3.9 ns), where the messages cost far more than the routes."""

TIME_LIMIT = 3600.0
"""CPU seconds of estimated work (:func:`replay_seconds`) above which a command is refused
before it starts (``--force`` goes on): an hour, a policy of this project, not a measurement.
The estimate counts what the replay will do at measured unit costs; ``benchmarks/README.md``,
"The work estimate", shows it against the CPU measured on 15 commands."""


def _pow2_split(algorithm, P):
    """``(p, lg, r)``: the largest power of two p <= P, log2 p and the r = P - p ranks MPICH
    folds in, for a known ``algorithm``."""
    if algorithm not in NAMED_SCHEDULES:
        raise NetsimError(f"unknown algorithm {algorithm!r}; known: {', '.join(NAMED_SCHEDULES)}")
    p = 1 << (max(P, 1).bit_length() - 1)
    return p, p.bit_length() - 1, P - p


def message_count(algorithm, P, segments=1, servers=1):
    """Messages of a collective's schedule (:data:`netsim.analysis.collectives.NAMED_SCHEDULES`) on P ranks.

    With p the largest power of two <= P and r = P - p (the ranks folded in
    and out, as MPICH does): binomial trees P - 1; linear pipelines (P - 1) k
    (twice for allreduce); ring allreduce 2 P (P - 1); ring allgather,
    ring reduce-scatter and all-to-all P (P - 1); recursive doubling and
    halving p log2 p + 2 r; Rabenseifner 2 p log2 p + 2 r; BE broadcast
    (binomial scatter, then recursive-doubling allgather) p - 1 + p log2 p + r;
    a parameter server 2 P S. ``tests/test_cli_bad_input.py`` checks every
    formula against the generated traces.

    Parameters
    ----------
    algorithm : str
    P : int
    segments : int, optional
        LP segments k.
    servers : int, optional
        Servers S of ``ps``.

    Returns
    -------
    int

    Examples
    --------
    >>> message_count("ring", 2_000_000)
    7999996000000
    >>> message_count("rabenseifner", 12)
    56
    """
    p, lg, r = _pow2_split(algorithm, P)
    if algorithm == "ps":
        return 2 * P * servers
    if P < 2:
        return 0
    k = segments if takes_segments(algorithm) else 1
    counts = {
        "mst": P - 1, "mst_reduce": P - 1,
        "lp": (P - 1) * k, "lp_reduce": (P - 1) * k, "lp_allreduce": 2 * (P - 1) * k,
        "be": p - 1 + p * lg + r,
        "ring": 2 * P * (P - 1),
        "ring_allgather": P * (P - 1), "ring_reduce_scatter": P * (P - 1),
        "alltoall": P * (P - 1),
        "rd": p * lg + 2 * r, "rd_allgather": p * lg + 2 * r, "rh_reduce_scatter": p * lg + 2 * r,
        "rabenseifner": 2 * p * lg + 2 * r,
    }
    return counts[algorithm]


def pair_count(algorithm, P, servers=1):
    """Distinct (source, destination) pairs of ranks among a collective's messages on P ranks.

    With p and r as for :func:`message_count`: a ring's each rank to the next, P; a
    pipeline's P - 1 (twice for allreduce); binomial trees P - 1; recursive doubling
    and halving p log2 p + 2 r (every message its own pair), as Rabenseifner, whose
    halving and doubling share them; BE p log2 p + r (its scatter within the
    doubling's pairs); all-to-all P (P - 1); a parameter server 2 P S.
    ``tests/test_work_estimate.py`` checks every formula against the generated traces.

    Parameters
    ----------
    algorithm : str
    P : int
    servers : int, optional

    Returns
    -------
    int

    Examples
    --------
    >>> pair_count("ring", 1024), pair_count("alltoall", 4), pair_count("be", 12)
    (1024, 12, 28)
    """
    p, lg, r = _pow2_split(algorithm, P)
    if algorithm == "ps":
        return 2 * P * servers
    if P < 2:
        return 0
    doubling = p * lg + 2 * r
    return {"mst": P - 1, "mst_reduce": P - 1, "lp": P - 1, "lp_reduce": P - 1,
            "lp_allreduce": 2 * (P - 1), "be": p * lg + r, "ring": P, "ring_allgather": P,
            "ring_reduce_scatter": P, "alltoall": P * (P - 1), "rd": doubling,
            "rd_allgather": doubling, "rh_reduce_scatter": doubling,
            "rabenseifner": doubling}[algorithm]


def nccl_flow_count(op, P):
    """Flows NCCL's plan of ``op`` on P GPUs holds at the least, and their distinct pairs.

    An all-to-all is NCCL's point-to-point plan: at least one flow from each GPU to each
    other, P (P - 1), each its own pair (inside one GB200 NVL72 rack at P = 72 exactly
    5,112; across two racks at P = 144, 103,104, each pair across machines cut into a flow
    per hop of its staging, 2026-12-07, :meth:`netsim.comm.priced.NcclPrices.plan`), and
    as many again for each channel beyond one. Any other collective reaches every GPU but
    its root: at least P - 1 flows over P - 1 pairs (allgather's ring at P = 72: 1,152
    flows, 16 channels; allreduce's NVLS 4,608).

    Returns
    -------
    (int, int)
        Flows and distinct (source, destination) pairs.

    Examples
    --------
    >>> nccl_flow_count("alltoall", 1152), nccl_flow_count("allreduce", 1152)
    ((1325952, 1325952), (1151, 1151))
    """
    n = P * (P - 1) if op == "alltoall" else P - 1
    return n, n


def fan_in_dependencies(algorithm, P, servers=1):
    """Dependencies beyond the few per message: a parameter server's pulls wait for every push.

    Each of a server's P pulls waits for all P pushes to it: P^2 S dependencies
    (:func:`netsim.comm.collectives.ps_push_pull` without a reduction cost). Every other
    schedule has at most 2 + log2(P) / 2 dependencies per message (BE's and Rabenseifner's
    grow so; 3.6 at P = 129), priced within :data:`MESSAGE_SECONDS`: 0 here.

    Parameters
    ----------
    algorithm : str
    P : int
    servers : int, optional

    Returns
    -------
    int

    Examples
    --------
    >>> fan_in_dependencies("ps", 4096), fan_in_dependencies("ring", 4096)
    (16777216, 0)
    """
    return P * P * servers if algorithm == "ps" else 0


def bytes_per_op(deps=1):
    """Bytes one op takes in a :class:`netsim.trace.core.Trace`: its columns' dtypes, CSR included.

    Parameters
    ----------
    deps : float, optional
        Dependencies per op (each an int64 of ``dep_idx``).

    Returns
    -------
    int or float

    Examples
    --------
    >>> bytes_per_op()  # 1+4+4+8+8+8+4+2 bytes of columns, 8 of dep_ptr, 8 of dep_idx
    55
    """
    from netsim.trace.core import TraceBuilder

    b = TraceBuilder(2)
    b.message(0, 1, 1.0)
    t = b.build()
    columns = ("kind", "rank", "peer", "size", "duration", "flops", "iteration", "tag", "dep_ptr")
    return sum(getattr(t, c).dtype.itemsize for c in columns) + deps * t.dep_idx.dtype.itemsize


def check_fits(algorithm, P, segments=1, servers=1, limit=None, topology=None):
    """Refuse, in one line, a collective whose trace would not fit in memory.

    Parameters
    ----------
    algorithm : str
    P, segments, servers : int
        As for :func:`message_count`.
    limit : int, optional
        Bytes allowed (default :func:`available_memory`; None there: no check).
    topology : str or callable or networkx.Graph, optional
        What the collective runs on (a builder is called with its ranks,
        :func:`netsim.analysis.collectives.ranks_for`): its memory and the replay's time count
        too (:func:`check_ops`).

    Returns
    -------
    dict
        As :func:`check_ops`: ``messages``, ``bytes``, ``limit`` (with a topology,
        ``topology`` and ``seconds``), counting the schedule's distinct pairs
        (:func:`pair_count`) and fan-in dependencies (:func:`fan_in_dependencies`), and a
        pipeline of at most :data:`BATCH_OPS` + 1 ranks at :data:`SMALL_MESSAGE_SECONDS`.

    Raises
    ------
    NetsimError
        Naming the messages, the bytes and the limit, when bytes > limit.

    Examples
    --------
    >>> check_fits("ring", 8, limit=10**9)["messages"]
    112
    >>> check_fits("ring", 2_000_000, limit=16 * 2**30)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: ring on P = 2000000 would be 8e+12 messages, a trace of 440 TB ...
    """
    messages = message_count(algorithm, P, segments, servers)
    return check_ops(messages, f"{algorithm} on P = {P}", "messages", "a smaller P", limit,
                     topology, ranks_for(algorithm, P, servers),
                     pairs=pair_count(algorithm, P, servers),
                     deps=fan_in_dependencies(algorithm, P, servers),
                     small=_few_at_a_time(algorithm, P))


def _few_at_a_time(algorithm, P):
    """Whether a collective's messages run a few at a time (the engine's small-event path).

    A linear pipeline of at most :data:`BATCH_OPS` + 1 ranks moves at most that many
    segments at once; a pipelined allreduce at any P, whose reduction and broadcast
    pipelines end their segments at different instants (``benchmarks/README.md``, "The
    work estimate": 11.3 and 11.8 us per message at P = 16 and 64, the small path's cost).
    """
    return algorithm == "lp_allreduce" or (takes_segments(algorithm) and P - 1 <= BATCH_OPS)


def check_ops(ops, what, noun="ops", instead="fewer ranks", limit=None, topology=None,
              ranks=None, time_limit=TIME_LIMIT, pairs=None, deps=0, small=False, passes=1,
              component=0):
    """Refuse, in one line, ``ops`` trace ops that would not fit in memory.

    Parameters
    ----------
    ops : int
        Ops (or messages) the work would hold at once.
    what : str
        What they are of, for the message (``ring on P = 8``).
    noun : str, optional
        What to call them (``messages``).
    instead : str, optional
        What to try instead, for the message.
    limit : int, optional
        Bytes allowed (default :func:`available_memory`; None there: no check).
    topology : str or callable or networkx.Graph, optional
        What the work replays on: a spec (``star:bandwidth=10Gbps``, built by
        :func:`studies.registry.topology_factory` only once the trace fits) or a builder,
        called with the rank count (its size and memory from :func:`topology_size`), or a
        graph; None: the trace alone is counted.
    ranks : int, optional
        Ranks of the work (the builder's argument and the message sources); with ``topology``.
    time_limit : float, optional
        CPU seconds allowed (:data:`TIME_LIMIT`); None: no time check.
    pairs : int, optional
        Distinct (source, destination) pairs of the messages (default: none counted).
    deps : int, optional
        Dependencies beyond the few per message (:func:`fan_in_dependencies`); their
        int64 ``dep_idx`` entries count in the bytes too.
    small : bool, optional
        The messages run a few at a time (:data:`SMALL_MESSAGE_SECONDS` each); also taken
        when the topology's ranks lie at unequal latencies (:func:`unequal_paths`).
    passes : int, optional
        Route searches per source (default one: a command's replay and closed form share
        one compiled topology and its route cache; 0: nothing is replayed, the topology
        is only built).
    component : int, optional
        Flows of the component each small-event instant re-rates (with ``small``; priced
        at :data:`COMPONENT_FLOW_SECONDS` per op and flow): P for a paradigm whose
        collectives chain every rank's flows; 0 (default) for a few flows.

    Returns
    -------
    dict
        ``messages`` (the ops), ``bytes`` (at :func:`bytes_per_op` each, the fan-in
        dependencies, plus the topology's), ``limit``, and with a topology ``topology``
        (of :func:`topology_size`) and ``seconds`` (:func:`replay_seconds`, plus the
        topology's build at :data:`BUILD_SECONDS` per node or edge).

    Raises
    ------
    NetsimError
        Naming the count, the bytes and the limit, when bytes > limit; naming the
        seconds, their parts and the costs, when seconds > time_limit.

    Examples
    --------
    >>> check_ops(10**6, "a projection", limit=10**9)["bytes"]
    55000000
    >>> check_ops(10**9, "replay at 1000000 ranks", limit=10**9)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: replay at 1000000 ranks would be 1e+09 ops, a trace of 55 GB ...
    """
    nbytes = ops * bytes_per_op() + deps * (bytes_per_op(1) - bytes_per_op(0))
    limit = available_memory() if limit is None else limit
    # The trace alone first: a refusal then builds nothing, not even the small probe graphs.
    topo = (topology_size(topology, ranks) if topology is not None and ranks
            and (limit is None or nbytes <= limit) else None)
    if limit is not None and nbytes + (topo["bytes"] if topo else 0) > limit:
        raise NetsimError(
            f"{what} would be {ops:.3g} {noun}, a trace of "
            f"{format_bytes(nbytes)} ({bytes_per_op()} B per {noun[:-1]} in its columns; the "
            f"replay needs several times more)"
            + (f" and a topology of {format_bytes(topo['bytes'])} ({topo['elements']:.3g} "
               f"nodes and edges)" if topo else "")
            + f", over the {format_bytes(limit)} of memory available; use {instead}, or "
              f"--force to try anyway")
    out = {"messages": ops, "bytes": nbytes + (topo["bytes"] if topo else 0), "limit": limit}
    if topo:
        small = small or topo.get("unequal", False)  # desynchronised by unequal paths
        seconds = (replay_seconds(ops, ranks, topo["elements"], pairs or 0, deps, small, passes,
                                  component)
                   + topo["elements"] * BUILD_SECONDS)
        out.update(topology=topo, seconds=seconds)
        if time_limit is not None and seconds > time_limit:
            each = SMALL_MESSAGE_SECONDS if small else MESSAGE_SECONDS
            raise NetsimError(
                f"{what} would take about {seconds:.3g} s of CPU, over the "
                f"{time_limit:.0f} s allowed: {ops:.3g} {noun} at {each * 1e6:g} us each"
                + (f" and {COMPONENT_FLOW_SECONDS * 1e9:g} ns per op for each of the {component} "
                   f"flows an instant re-rates" if small and component else "")
                + (f", {pairs:.3g} distinct pairs at {PAIR_SECONDS * 1e6:g} us" if pairs else "")
                + (f", {deps:.3g} fan-in dependencies at {DEP_SECONDS * 1e6:g} us" if deps else "")
                + (f", route searches from {ranks} sources"
                   + (f" ({passes} times)" if passes > 1 else "")
                   + f" over {topo['elements']:.3g} nodes and edges at "
                     f"{ROUTE_SECONDS * 1e9:g} ns a step and their build" if passes else
                   f", the build of {topo['elements']:.3g} nodes and edges")
                + f" at {BUILD_SECONDS * 1e6:g} us each (figures of "
                  f"benchmarks/README.md); use {instead}, or --force to try anyway")
    return out


def replay_seconds(messages, sources, elements, pairs=0, deps=0, small=False, passes=1,
                   component=0):
    """CPU seconds a replay takes: messages, pairs, dependencies and route searches at their costs.

    ``messages`` x :data:`MESSAGE_SECONDS` (when ``small``, :data:`SMALL_MESSAGE_SECONDS`
    + ``component`` x :data:`COMPONENT_FLOW_SECONDS`) + ``pairs`` x :data:`PAIR_SECONDS` + ``deps`` x :data:`DEP_SECONDS` + ``passes`` x
    ``sources`` x ``elements`` x :data:`ROUTE_SECONDS` (one route search per message source
    over the topology's nodes and edges).

    Parameters
    ----------
    messages : int
        Messages (or ops) replayed.
    sources : int
        Ranks that send (at most the ranks).
    elements : int
        Nodes plus edges of the topology.
    pairs : int, optional
        Distinct (source, destination) pairs (:func:`pair_count`).
    deps : int, optional
        Fan-in dependencies (:func:`fan_in_dependencies`).
    small : bool, optional
        The messages run a few at a time.
    passes : int, optional
        Route searches per source.
    component : int, optional
        Flows each small-event instant re-rates (with ``small``).

    Returns
    -------
    float

    Examples
    --------
    >>> round(replay_seconds(4.3e6, 2**20 + 1, 2**21 + 1))  # ps-sync at P = 2^20 on a star
    38276
    >>> round(replay_seconds(4089900, 1025, 2051, small=True, component=1024))  # allreduce
    160
    """
    each = (SMALL_MESSAGE_SECONDS + component * COMPONENT_FLOW_SECONDS if small
            else MESSAGE_SECONDS)
    return (messages * each
            + pairs * PAIR_SECONDS + deps * DEP_SECONDS
            + passes * sources * elements * ROUTE_SECONDS)


def topology_size(topology, ranks, probe=(64, 128)):
    """Nodes plus edges, and bytes, of the topology a command would build for ``ranks`` ranks.

    A builder is called once untraced (its imports and caches), then at the two rank
    counts of ``probe`` (small, cheap) with the allocations traced (:mod:`tracemalloc`);
    nodes + edges and bytes are each extended to ``ranks`` along the line through the
    two points (a builder's graph has a + b P nodes and edges; a graph read from a file
    keeps its size), never below the larger probe's. A graph given as such is counted as
    it is (its memory is already spent). A builder that refuses a probe size (a fixed
    machine) is called at ``ranks`` itself: such builders are small.

    Parameters
    ----------
    topology : str or callable or networkx.Graph
        ``topology(ranks)`` builds the graph, as :func:`studies.registry.topology_factory`
        makes (a spec string is turned into its builder).
    ranks : int
    probe : (int, int), optional

    Returns
    -------
    dict
        ``elements`` (nodes + edges, int), ``bytes`` (int) and ``unequal``
        (:func:`unequal_paths` on the smaller probe, or on the graph given; False for a
        spec sized without a build).

    Examples
    --------
    >>> from topologies import fat_tree, star
    >>> size = topology_size(star, 2**20)   # 2^20 hosts, a switch, 2^20 links
    >>> size["elements"], size["unequal"], topology_size(fat_tree(16), 256)["unequal"]
    (2097153, False, True)
    """
    if isinstance(topology, str):
        from studies.registry import spec_size, topology_factory

        fixed = spec_size(topology)   # a spec whose own options size it: counted, not built
        if fixed is not None:
            return fixed
        topology = topology_factory(topology)
    if not callable(topology):
        return {"elements": topology.number_of_nodes() + topology.number_of_edges(), "bytes": 0,
                "unequal": unequal_paths(topology, ranks)}
    points = []
    try:
        first = topology(probe[0])  # untraced: the builder's imports and caches
    except NetsimError:
        return topology_size(topology(ranks), ranks)
    for p in probe:
        points.append(graph_size(lambda: topology(p)))
    (p0, p1), ((e0, b0), (e1, b1)) = probe, points

    def affine(c0, c1):  # through both points: exact for a graph of a + b P nodes and edges
        return max(c1, int(round(c1 + (c1 - c0) * (ranks - p1) / (p1 - p0))))

    return {"elements": affine(e0, e1), "bytes": affine(b0, b1),
            "unequal": unequal_paths(first, p0)}


def unequal_paths(G, ranks):
    """Whether the first ``ranks`` rank nodes of ``G`` lie at unequal latencies from the first.

    A synchronous collective's messages of one step end together only when every rank's
    path takes as long: on a star they do, and the engine moves a step as one batch. On a
    fat-tree, a two-tier cluster or several machines the paths differ (same switch, same
    pod, across the core), the steps desynchronise and the engine runs the messages a few
    at a time (``benchmarks/README.md``, "The work estimate": a ring on a fat-tree ran
    13,600 instants for 32,512 messages at P = 128), which :func:`check_fits` prices at
    :data:`SMALL_MESSAGE_SECONDS`.

    Parameters
    ----------
    G : networkx.Graph
    ranks : int
        Ranks placed on the graph's compute nodes in order (:func:`netsim.compute_nodes`).

    Returns
    -------
    bool

    Examples
    --------
    >>> from topologies import star, two_tier
    >>> unequal_paths(star(8), 8), unequal_paths(two_tier(8, per_rack=4), 8)
    (False, True)
    """
    import networkx as nx

    from netsim import compute_nodes

    nodes = compute_nodes(G)[:ranks]
    if len(nodes) < 3:
        return False
    far = nx.single_source_dijkstra_path_length(G, nodes[0],
                                                weight=lambda u, v, d: d.get("latency", 0.0))
    return len({far.get(n) for n in nodes[1:]}) > 1


def projection_ops(trace, ranks, expanded=True):
    """Ops of an imported data-parallel ``trace`` projected to ``ranks`` ranks.

    :func:`netsim.trace.reproject.reproject` gives new rank q the ops of recorded rank
    q mod P, so the ops grow as ``ranks / P``; each collective spans every rank,
    and at replay (``expanded``) becomes the messages of its MPICH schedule in
    the trace's algorithm family (:data:`netsim.trace.programs.FAMILIES`; a
    pipeline counted at k = 1, a lower bound), counted by :func:`message_count`;
    a kind without a schedule there counts ``ranks - 1`` messages, the fewest
    that reach every rank.

    Parameters
    ----------
    trace : netsim.trace.core.Trace
    ranks : int
    expanded : bool, optional
        Count the collectives' messages at replay (True), or the written trace only.

    Returns
    -------
    int

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(2)
    >>> c = [b.compute(r, seconds=1e-3) for r in (0, 1)]
    >>> _ = b.collective("allreduce", [0, 1], 8e6, deps=c)
    >>> t = b.build()
    >>> projection_ops(t, 8, expanded=False), projection_ops(t, 8)  # 8 compute + 1; + 2*8*7
    (9, 121)
    """
    from netsim.trace.programs import FAMILIES

    ranks = int(ranks)
    compute = trace.num_ops - trace.num_collectives - trace.num_messages
    ops = -(-compute * ranks // max(trace.ranks, 1)) + trace.num_collectives
    if not expanded:
        return ops
    short = {gen.__name__: name for name, gen in NAMED_SCHEDULES.items()}
    family = FAMILIES.get(trace.metadata.get("algorithm", "ring"), FAMILIES["ring"])
    for i in trace.is_collective.nonzero()[0].tolist():
        name = short.get(family.get(trace.specs.row(int(trace.spec[i])).op))
        ops += message_count(name, ranks) if name else ranks - 1
    return ops


def grown_ranks(ranks, P, probe=PROBE):
    """Ranks of a paradigm's trace at ``P`` workers, from its rank counts at two worker counts.

    A paradigm's trace holds ``a P + c`` ranks: its workers (a = 1) and ``c`` servers or a
    coordinator fixed by its options, or one rank whatever P (a = 0, ``single``). The
    line through the counts at the two largest ``probe`` worker counts gives it exactly.

    Parameters
    ----------
    ranks : sequence of int
        The trace's ranks at each worker count of ``probe``.
    P : int
    probe : sequence of int, optional

    Returns
    -------
    int

    Examples
    --------
    >>> grown_ranks([9, 17], 1024), grown_ranks([1, 1], 1024), grown_ranks([5, 6], 1000, (2, 3))
    (1025, 1, 1003)
    """
    (p0, p1), (r0, r1) = probe[-2:], ranks[-2:]
    return r1 + (r1 - r0) * (P - p1) // (p1 - p0)


def grown_ops(counts, P, probe=PROBE, least=1.0):
    """Ops of a paradigm's trace at ``P``, grown from its counts at the rank counts ``probe``.

    A paradigm's trace holds a polynomial in P of ops (compute and messages per
    worker, its collectives' messages, P log P or P^2 for some): the power law
    through the two largest probe points, ``c1 (P / p1)^b`` with ``b = log(c1 / c0) /
    log(p1 / p0)`` taken at least 1 (a trace grows at least with its workers),
    follows the leading term. It is an estimate for refusing work that cannot fit
    (:func:`check_ops`), not a result, and it errs both ways: a term that dominates
    only beyond the probe points makes it low; lower-order terms seen at the probe
    points can make it high (``P (P - 1)`` from 8 and 16 gives ``b = 2.1`` and 1.4x
    the true count at P = 1024), so a refusal near the memory limit may be early
    (``--force`` goes on).

    Parameters
    ----------
    counts : sequence of int
        Ops (messages expanded, :func:`projection_ops`) at each rank count of ``probe``.
    P : int
    probe : sequence of int, optional
    least : float, optional
        The smallest exponent b taken (1: a trace grows at least with its workers;
        :func:`topology_size` takes 0).

    Returns
    -------
    int

    Examples
    --------
    >>> grown_ops([8 * 7, 16 * 15], 1024)   # P (P - 1): b = log2(240 / 56) = 2.1
    1487135
    >>> grown_ops([24, 48], 1 << 20)        # linear
    3145728
    """
    (p0, p1), (c0, c1) = probe[-2:], counts[-2:]
    b = max(least, math.log(c1 / c0) / math.log(p1 / p0)) if c0 > 0 and c1 > 0 else 1.0
    return int(round(c1 * (P / p1) ** b))
