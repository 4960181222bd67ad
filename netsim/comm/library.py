"""Communication libraries chosen at replay: each collective op expanded into flows.

A trace keeps a collective as one op (:mod:`netsim.trace.collop`); :func:`expand`
turns every one into the ops a library would run, in place, so that a
collective shares links with everything else in flight:

* ``"mpich"``: :mod:`netsim.comm.mpich`, MPICH's schedules as messages between the
  members (the algorithm hint, else ring; :data:`netsim.comm.mpich.DEFAULT`).
* ``"nccl"``: :mod:`netsim.comm.nccl`'s plan for that call on that graph: NCCL's
  latency as a compute op (with, for a call one host thread launches on several
  GPUs in turn, the wait for those launches: :mod:`netsim.comm.nccl.launch`), then
  every flow of its channels on the real links
  (relays such as NICs, CPUs and NVSwitches become ranks of their own), then a
  zero-length op that waits for all of them. A replay with any NCCL call runs
  on the link capacities NCCL counts on
  (:func:`netsim.comm.nccl.hardware.effective_graph`: NVLink and PCIe at their
  achievable share), each channel's flow out of a GPU held to its GPU-side
  limit by a per-flow rate bound (``Expansion.bound``).
* ``"gloo"``: :mod:`netsim.comm.gloo`'s allreduce over TCP on host cores: each
  rank's bytes to its ring neighbour, and each process's copies and sums as a
  flow into its host's memory (a relay node ``"<host>#mem"``) held to its cores'
  rate by a per-flow rate bound (``Expansion.bound``); the algorithm is the
  call's hint when it is one of gloo's (``"ring"``), else ``gloo_options``'
  ``algorithm``, else ``ring_chunked``. Other operations are refused.
* ``"auto"`` (the default): NCCL for a call whose members all sit on
  ``kind="gpu"`` nodes, unless its hint is one only MPICH has
  (:data:`netsim.trace.collop.MPICH_ONLY`); MPICH otherwise.

Dependencies, per member rank: a collective's part on rank ``r`` waits for its
dependencies that touch ``r`` (a compute op on ``r``, a message from or to
``r``, a collective whose group holds ``r``), and for those that touch no
member at all; an op that waits for a collective waits for the part on its own
rank (the sender's, for a message), or for every part from outside the group.
MPICH runs each part as its schedule's ops on that rank, and nothing moves to
or from a member before that member has entered the call (a rendezvous; a
tree's inner rank forwards only once its own data exists); a part ends when
its rank's last schedule ops and its own dependencies are done. An NCCL call
starts when every part may (NCCL's kernels wait for each other) and every part
ends with the call. A call of one member or of no bytes moves nothing: one
zero-length op passes its dependencies on.

Where two calls disagree on hardware a replay cannot hold (GPUs of two compute
capabilities under NCCL), :class:`~netsim.errors.NcclModelError` says so.
"""

from typing import NamedTuple

import numpy as np

from netsim.comm import alone as _alone
from netsim.comm import mpich
from netsim.comm import replicas as _replicas
from netsim.comm.priced import NcclPrices
from netsim.comm.assembly import assemble
from netsim.trace.collop import MPICH_ONLY
from netsim.checks import check_choice
from netsim.errors import NcclModelError, TraceError
from netsim.network.compiled import as_network
from netsim.network.symmetry import SymmetryError, quotient
from netsim.trace.core import COMPUTE, MESSAGE, ranges
from netsim.trace.graph import distinct

__all__ = ["LIBRARIES", "Expansion", "check_library", "check_applies", "check_placed", "choose", "expand", "fold", "mpich_wire",
           "plan_names"]

LIBRARIES = ("auto", "mpich", "nccl", "gloo")


class Expansion(NamedTuple):
    """A trace with its collectives expanded, and how to read the replay back (see :func:`expand`).

    ``first[i]``/``count[i]``: the ops original op ``i`` became. ``parts``: one
    row per (collective, member): columns ``op``, ``rank``, and CSR lists
    ``gate_ptr``/``gate`` (expanded ops its part waits for) and
    ``end_ptr``/``end`` (expanded ops that end it). ``calls``: one row per
    collective op: ``op``, ``library``, ``algorithm``, ``protocol``,
    ``channels``, ``latency``, ``tuning_time`` (NaN/"" where MPICH has none).
    ``bound``: each expanded op's rate bound in bytes/s (inf: none), or None
    when no op has one (the replay is then exactly the unbounded one).
    ``alone``: the NCCL calls kept as one op each (:class:`netsim.comm.alone.Alone`),
    or None without ``collapse``.
    """

    trace: object
    net: object
    nodes: np.ndarray
    first: np.ndarray
    count: np.ndarray
    parts: dict
    calls: dict
    bound: object = None
    alone: object = None


def check_library(library):
    """Return ``library`` if it is one of :data:`LIBRARIES`, else raise :class:`TraceError`.

    Examples
    --------
    >>> check_library("nccl")
    'nccl'
    """
    check_choice(library, "library", LIBRARIES, error=TraceError)
    return library


def check_applies(library, trace, what="the trace"):
    """Refuse a library named for a trace that has no collective op to expand.

    A library only expands collectives; a trace of point-to-point messages (a parameter
    server's pushes and pulls) replays the same under any of them, so naming one
    (``"mpich"``, ``"nccl"``, ``"gloo"``) would change nothing and is refused rather than
    silently dropped. ``"auto"``, the default, always passes.

    Parameters
    ----------
    library : str
        One of :data:`LIBRARIES`.
    trace : Trace
    what : str, optional
        The trace's name for the message (``"ps-sync's trace"``).

    Returns
    -------
    str
        ``library``.

    Raises
    ------
    TraceError
        When ``library`` is not ``"auto"`` and ``trace`` has no collective.

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(2); _ = b.message(0, 1, 100)
    >>> check_applies("auto", b.build())
    'auto'
    >>> check_applies("nccl", b.build(), "ps-sync's trace")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    netsim.errors.TraceError: library 'nccl' expands collectives and ps-sync's trace has none ...
    """
    check_library(library)
    if library != "auto" and not trace.num_collectives:
        raise TraceError(f"library {library!r} expands collectives and {what} has none (its "
                         f"messages are point-to-point): it would change nothing")
    return library


def choose(library, spec, kinds, op=None):
    """The library that runs a call: ``"mpich"``, ``"nccl"`` or ``"none"`` (it moves nothing).

    Parameters
    ----------
    library : {"auto", "mpich", "nccl", "gloo"}
    spec : netsim.trace.collop.Spec
    kinds : sequence of str
        The ``kind`` of each member's node.
    op : int, optional
        The op's index, for messages.

    Raises
    ------
    NcclModelError
        ``"nccl"`` with a member off a gpu node (naming the first), or an MPICH-only hint.
    TraceError
        ``"gloo"`` with a member on a gpu node (naming the first): the gloo model puts its
        copies and sums on the member's host cores, which a gpu node does not carry.

    Examples
    --------
    >>> from netsim.trace.collop import Spec
    >>> s = Spec("allreduce", (0, 1), -1, None, 0, 0)
    >>> choose("auto", s, ["gpu", "gpu"]), choose("auto", s, ["gpu", "host"])
    ('nccl', 'mpich')
    >>> choose("gloo", s, ["host", "gpu"])
    Traceback (most recent call last):
    ...
    netsim.errors.TraceError: library 'gloo' runs on hosts' cores; rank 1 sits on a 'gpu' node (use library 'nccl' there)
    """
    where = "" if op is None else f"op {op}: "
    if library == "gloo":
        on_gpu = [r for r, k in zip(spec.group, kinds) if k == "gpu"]
        if on_gpu:
            raise TraceError(f"{where}library 'gloo' runs on hosts' cores; rank {on_gpu[0]} "
                             f"sits on a 'gpu' node (use library 'nccl' there)")
        return "gloo"
    if library == "nccl":
        off = [r for r, k in zip(spec.group, kinds) if k != "gpu"]
        if off:
            raise NcclModelError(f"{where}library 'nccl' needs every member on a gpu node; "
                                 f"rank {off[0]} sits on a {kinds[spec.group.index(off[0])]!r} "
                                 f"node")
        if spec.algorithm in MPICH_ONLY:
            from netsim.comm import nccl

            raise NcclModelError(f"{where}NCCL has no algorithm {spec.algorithm!r} (it has "
                                 f"{', '.join(nccl.ALGORITHMS)}); use library 'mpich'")
        return "nccl"
    if library == "auto" and all(k == "gpu" for k in kinds) \
            and spec.algorithm not in MPICH_ONLY:
        return "nccl"
    return "mpich"


def check_placed(library, G, ranks, placement=None):
    """Refuse, before a replay, a library that cannot run on the nodes its ranks sit on.

    :func:`choose` refuses it at the first collective of an expansion, naming that op
    (``op 8: library 'nccl' needs every member on a gpu node``), which reads as a fault of
    a trace the user never wrote when a study built it; this asks the same of a call over
    every rank, naming no op.

    Parameters
    ----------
    library : str
        One of :data:`LIBRARIES`.
    G : networkx.Graph
    ranks : int
        Ranks of the replay, on ``placement`` or else the graph's first compute nodes
        (:func:`netsim.network.placement.compute_nodes`).
    placement : sequence, optional

    Raises
    ------
    NcclModelError, TraceError
        As :func:`choose`.

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.Graph(); G.add_nodes_from(["h0", "h1"], kind="host"); G.add_edge("h0", "h1")
    >>> check_placed("mpich", G, 2)
    >>> check_placed("nccl", G, 2)
    Traceback (most recent call last):
    ...
    netsim.errors.NcclModelError: library 'nccl' needs every member on a gpu node; rank 0 sits on a 'host' node
    """
    from netsim.network.placement import compute_nodes
    from netsim.trace.collop import Spec

    nodes = list(placement) if placement is not None else compute_nodes(G)[:ranks]
    kinds = [G.nodes[n].get("kind") for n in nodes]
    choose(check_library(library), Spec("allreduce", tuple(range(len(nodes))), -1, None, 0, 0),
           kinds)


class _Assembly:
    """The expanded trace's ops, gathered block by block."""

    def __init__(self, trace, nodes, net):
        self.trace, self.net = trace, net
        self.names = [net.nodes[x] for x in nodes] if net is not None else list(nodes)
        self.rank_of_node = {name: r for r, name in enumerate(self.names)}
        self.extra_nodes = []
        self.tags = list(trace.tags)
        self.blocks = {}          # original op -> dict of block columns (local op order)
        self.ends = {}            # collective op -> {rank: block-local end ops}, "all" -> ...
        self.gate_rank = {}       # collective op -> (block-local ops, their member rank; -1: all)
        # Collective op -> (seconds, tag) of a call kept as one compute op on its owner
        # (it moves nothing, or it runs alone: netsim.comm.alone), which waits for every
        # member's dependencies and ends every member's part.
        self.ones = {}

    def tag(self, name):
        if name not in self.tags:
            self.tags.append(name)
        return self.tags.index(name)

    def relay(self, node):
        """The rank of graph node ``node``: its placed rank, else a relay rank of its own."""
        if node not in self.rank_of_node:
            self.rank_of_node[node] = self.trace.ranks + len(self.extra_nodes)
            self.extra_nodes.append(node)
        return self.rank_of_node[node]


def _pass_block(a, i, spec):
    """A call that moves nothing: one zero-length op on its owner."""
    a.ones[i] = (0.0, -1)
    return {"library": "none", "algorithm": "", "protocol": "", "channels": 0,
            "latency": 0.0, "tuning_time": np.nan}


def _mpich_block(a, i, spec, nbytes, cache):
    """The schedule's ops on the members, and a zero-length op for a member it leaves out.

    An op of the schedule also waits for the call's dependencies on each member
    it touches (a message: its sender and its receiver) unless one of its own
    dependencies touches that member already (:attr:`netsim.comm.mpich.Block.entries`):
    nothing moves to or from a member before it has entered the call, and a
    tree's inner rank forwards only once its own data exists. So every schedule
    op touching a member comes after the call's dependencies on it, and the
    member's part ends with its last ops of the schedule
    (:func:`netsim.trace.ops.terminal_ops`), which an op waiting for the call on
    that rank waits for, as a rank's next op waited for them when schedules were
    joined with :func:`netsim.trace.ops.concat`. A member the schedule does not
    touch gets one zero-length op waiting for its dependencies instead.
    """
    key = (spec, nbytes)
    if key not in cache:
        try:
            cache[key] = mpich.block(spec, nbytes)
        except TraceError as exc:
            raise TraceError(f"op {i}: {exc}") from None
    b = cache[key]
    t, order = b.trace, np.array(mpich.local_order(spec), np.int64)
    k = t.num_ops
    idle = np.flatnonzero(np.diff(b.ends_ptr) == 0)   # local ranks the schedule leaves out
    m = len(idle)
    tag = np.array([a.tag(x) for x in t.tags] + [-1], np.int64)
    a.blocks[i] = dict(
        kind=np.concatenate([t.kind, np.full(m, COMPUTE, np.uint8)]),
        rank=np.concatenate([order[t.rank], order[idle]]),
        peer=np.concatenate([np.where(t.peer >= 0, order[np.maximum(t.peer, 0)], -1),
                             np.full(m, -1)]),
        size=np.concatenate([t.size, np.zeros(m)]),
        duration=np.concatenate([t.duration, np.zeros(m)]),
        tag=np.concatenate([tag[t.tag], np.full(m, -1)]),
        ptr=np.concatenate([t.dep_ptr, np.full(m, t.dep_ptr[-1])]),
        idx=t.dep_idx)
    ends = {int(order[j]): b.ends[b.ends_ptr[j]:b.ends_ptr[j + 1]] for j in range(len(order))}
    ends.update({int(order[j]): np.array([k + n]) for n, j in enumerate(idle.tolist())})
    ends["all"] = distinct(np.concatenate(list(ends.values())))
    a.ends[i] = ends
    a.gate_rank[i] = (np.concatenate([b.entries, k + np.arange(m)]),
                      np.concatenate([order[b.entry_ranks], order[idle]]))
    return {"library": "mpich", "algorithm": b.algorithm, "protocol": "", "channels": 0,
            "latency": 0.0, "tuning_time": np.nan}


def _nccl_call(a, i, spec, nbytes, planner, options):
    """NCCL's plan of call ``i`` (:meth:`netsim.comm.priced.NcclPrices.plan`, cached by
    member nodes, op, bytes and algorithm): its key, the plan and the call's row of ``calls``."""
    nodes = tuple(a.names[r] for r in mpich.local_order(spec))
    key = (nodes, spec.op, nbytes, spec.algorithm)
    try:
        call = planner.plan(nodes, spec.op, nbytes, spec.algorithm, **options)
    except NcclModelError as exc:
        raise NcclModelError(f"op {i}: {exc}") from None
    return key, call, {"library": "nccl", "algorithm": call.algorithm,
                       "protocol": call.protocol, "channels": call.channels,
                       "latency": call.latency, "tuning_time": call.tuning_time}


def _nccl_columns(a, call):
    """The columns of an NCCL plan's ops (its latency, its flows, a zero-length end), the
    owner rank left -1: every call of the plan shares them (:func:`_nccl_block`)."""
    F = len(call.flows)
    return dict(
        kind=np.array([COMPUTE] + [MESSAGE] * F + [COMPUTE], np.uint8),
        rank=np.array([-1] + [a.relay(u) for u, _, _ in call.flows] + [-1], np.int64),
        peer=np.array([-1] + [a.relay(v) for _, v, _ in call.flows] + [-1], np.int64),
        size=np.array([0.0] + [b for _, _, b in call.flows] + [0.0], np.float64),
        duration=np.array([call.latency + call.launch] + [0.0] * F + [0.0], np.float64),
        tag=np.array([a.tag("nccl latency")] + [a.tag("nccl")] * F + [-1], np.int64),
        ptr=np.array([0, 0] + list(range(1, F + 1)) + [2 * F + (F == 0)], np.int64),
        idx=np.array([0] * F + (list(range(1, F + 1)) if F else [0]), np.int64),
        bound=np.array([np.inf] + list(call.bounds) + [np.inf], np.float64))


def _nccl_block(a, i, columns, seconds=None):
    """NCCL call ``i``'s ops: its plan's ``columns`` (:func:`_nccl_columns`) on its owner
    rank; or, with ``seconds`` (a call that runs alone, :mod:`netsim.comm.alone`), one op."""
    if seconds is not None:
        a.ones[i] = (seconds, a.tag("nccl latency"))
        return
    rank = columns["rank"].copy()
    rank[0] = rank[-1] = int(a.trace.rank[i])
    a.ends[i] = {"all": np.array([len(rank) - 1])}
    a.gate_rank[i] = ([0], [-1])
    a.blocks[i] = {**columns, "rank": rank}


def _gloo_block(a, i, spec, nbytes, state, options):
    """gloo's allreduce (:mod:`netsim.comm.gloo`): its latency, its flows with their bounds."""
    from netsim.comm import gloo

    if spec.op != "allreduce":
        raise TraceError(f"op {i}: the gloo model runs allreduce "
                         f"({', '.join(gloo.GLOO_ALGORITHMS)}), not {spec.op}")
    if "H" not in state:
        state["H"] = a.net.graph.copy()
    nodes = [a.names[r] for r in mpich.local_order(spec)]
    hint = spec.algorithm if spec.algorithm in gloo.GLOO_ALGORITHMS else None
    try:
        call = gloo.plan(state["H"], nodes, nbytes, hint or options.get("algorithm"))
    except TraceError as exc:
        raise TraceError(f"op {i}: {exc}") from None
    F = len(call.flows)
    owner = int(a.trace.rank[i])
    a.blocks[i] = dict(
        kind=[COMPUTE] + [MESSAGE] * F + [COMPUTE],
        rank=[owner] + [a.relay(u) for u, _, _ in call.flows] + [owner],
        peer=[-1] + [a.relay(v) for _, v, _ in call.flows] + [-1],
        size=[0.0] + [b for _, _, b in call.flows] + [0.0],
        duration=[call.latency] + [0.0] * (F + 1), tag=[a.tag("gloo latency")]
        + [a.tag("gloo")] * F + [-1], ptr=[0, 0] + list(range(1, F + 1)) + [2 * F],
        idx=[0] * F + list(range(1, F + 1)), bound=[np.inf] + list(call.bounds) + [np.inf])
    a.ends[i] = {"all": np.array([F + 1])}
    a.gate_rank[i] = ([0], [-1])
    return {"library": "gloo", "algorithm": call.algorithm, "protocol": "", "channels": 0,
            "latency": call.latency, "tuning_time": np.nan}


def expand(trace, topology, placement=None, library="auto", nccl_options=None,
           gloo_options=None, collapse=False, keep=frozenset(), symmetry=None, planner=None):
    """Expand every collective op of ``trace`` with the library chosen for it.

    Parameters
    ----------
    trace : Trace
    topology : networkx.Graph, Network or None
        None expands with MPICH without a graph (ranks stand for themselves):
        the messages a trace sends under MPICH, for counting.
    placement : sequence or dict, optional
        As for :func:`netsim.simulate`.
    library : {"auto", "mpich", "nccl", "gloo"}, optional
        See the module docstring.
    nccl_options : dict, optional
        ``protocol`` and ``channels`` fixed for every NCCL call, and its ``launch``
        mode (the lone call of :func:`netsim.nccl.simulate`).
    gloo_options : dict, optional
        ``algorithm``: gloo's algorithm of a call whose hint is none of gloo's
        (:data:`netsim.comm.gloo.GLOO_ALGORITHMS`; default ``ring_chunked``).
    collapse : bool, optional
        Keep each NCCL call whose class runs alone on its links as one op of its
        isolated duration (:mod:`netsim.comm.alone`); the replay must then check
        that no two calls of a class overlapped (:func:`netsim.comm.alone.overlapping`).
    keep : container, optional
        Classes (member-node tuples) never collapsed.
    symmetry : array_like of int, optional
        A rank permutation under which the trace's work is symmetric, the trace
        holding the simulated ranks' ops only (:mod:`netsim.comm.replicas`); the
        expansion's ``net`` is then the quotient network
        (:func:`netsim.network.symmetry.quotient`).
    planner : netsim.comm.priced.NcclPrices, optional
        The planner of NCCL calls on ``topology``'s graph, to share its setups and plans
        with a closed form that priced the same calls (default: a new one).

    Returns
    -------
    Expansion
        ``trace`` holds compute ops and messages only; ``nodes`` is the node
        index (in ``net``) of each of its ranks: the trace's own first, then
        relay nodes. ``net`` is the network to replay on.

    Raises
    ------
    TraceError
        For an unknown library, or a call MPICH has no schedule for.
    NcclModelError
        For a call NCCL cannot run (naming the op), or ``"nccl"`` off gpu nodes.

    Examples
    --------
    >>> import networkx as nx
    >>> from netsim import TraceBuilder
    >>> G = nx.Graph(); G.add_edges_from([("h0", "s"), ("h1", "s")], bandwidth=1e9, latency=0)
    >>> b = TraceBuilder(2); _ = b.collective("allreduce", [0, 1], 1e6)
    >>> x = expand(b.build(), G, ["h0", "h1"])
    >>> x.trace.num_messages, x.calls["library"].tolist(), x.calls["algorithm"].tolist()
    (4, ['mpich'], ['ring'])
    """
    check_library(library)
    if topology is None:
        if library != "mpich":
            raise TraceError(f"library {library!r} needs a topology to expand on")
        net, nodes = None, np.arange(trace.ranks, dtype=np.int64)
    else:
        net = as_network(topology)
        nodes = net.placement(trace.ranks, placement)
    a = _Assembly(trace, nodes, net)
    colls = np.flatnonzero(trace.is_collective)
    calls = {k: [] for k in ("op", "library", "algorithm", "protocol", "channels", "latency",
                             "tuning_time")}
    mpich_cache, gloo_state = {}, {}
    if planner is not None and (net is None or planner.G is not net.graph):
        raise TraceError("the NCCL planner was made for another graph than the topology's")
    planned = {}   # NCCL call -> (plan key, plan): their blocks are built once all are planned
    specs, nccl_calls = {}, {}   # per spec: (spec, library); per (spec, bytes): NCCL's plan
    for i in colls.tolist():
        j = int(trace.spec[i])
        if j not in specs:
            spec = trace.specs.row(j)
            kinds = [None if net is None else net.graph.nodes[a.names[r]].get("kind")
                     for r in spec.group]
            specs[j] = spec, choose(library, spec, kinds, i)
        spec, lib = specs[j]
        nbytes = float(trace.size[i])
        if len(spec.group) < 2 or nbytes == 0:
            row = _pass_block(a, i, spec)
        elif lib == "nccl":
            if not nbytes.is_integer():
                raise NcclModelError(f"op {i}: NCCL moves whole bytes, got {nbytes!r}")
            if planner is None:   # made with the first NCCL call
                planner = NcclPrices(net.graph)
            if (j, nbytes) not in nccl_calls:   # a layer's call each micro-batch: planned once
                nccl_calls[j, nbytes] = _nccl_call(a, i, spec, int(nbytes), planner,
                                                   nccl_options or {})
            key, call, row = nccl_calls[j, nbytes]
            planned[i] = (key, call)
        elif lib == "gloo":
            row = _gloo_block(a, i, spec, nbytes, gloo_state, gloo_options or {})
        else:
            row = _mpich_block(a, i, spec, nbytes, mpich_cache)
        calls["op"].append(i)
        for k, v in row.items():
            calls[k].append(v)
    if planner is not None and planner.E is not None:   # on the capacities NCCL counts on
        net_e = planner.network()   # compiled once per planner, its route cache kept
        nodes = np.array([net_e.node_of(net.nodes[x]) for x in nodes], np.int64)
        net = net_e
    elif gloo_state:   # the replay runs on the graph with the hosts' memory nodes
        net_g = as_network(gloo_state["H"])
        nodes = np.array([net_g.node_of(net.nodes[x]) for x in nodes], np.int64)
        net = net_g
    q, whole = None, set()
    if symmetry is not None and net is not None:
        q = quotient(net, nodes, symmetry)
        planned, whole = _replicas.home_share(q, planned)
        _replicas.check_blocks(a, q, nodes)
        net = q
    def replayed(key, call, on):   # the planner's replay of the plan alone, where it is one
        if planner is not None and not nccl_options and on is planner.network():
            return planner.alone(*key)
        return None

    alone = _alone.collapse(a, net, nodes, planned, keep, whole, replayed) if collapse else None
    # the symmetry first: a fused trace refused by it would be refused unfused too (its
    # witnesses are its calls' classes, collapsed or not alike), so the caller tries the next
    # symmetry rather than building the unfused trace for this one
    for i, (key, _) in planned.items():
        if key in whole and (alone is None or i not in alone.calls):
            raise SymmetryError(f"op {i}: NCCL's plan inside a machine is not symmetric "
                                f"under the permutation and does not run alone")
    if trace.metadata.get("fused_tp"):   # calls summed into compute ops, each by its witness
        if alone is None:
            raise TraceError("a trace with fused tensor-parallel calls replays with "
                             "collapse=True only")
        alone = _alone.fuse(alone, trace, planned, trace.metadata["fused_tp"])
    columns = {}   # plan key -> its columns, made once for its calls
    for i, (key, call) in planned.items():
        if alone is not None and i in alone.calls:
            _nccl_block(a, i, None, alone.plans[key].seconds)
        else:
            if key not in columns:
                columns[key] = _nccl_columns(a, call)
            _nccl_block(a, i, columns[key])
    extra = [net.node_of(x) for x in a.extra_nodes] if net is not None else []
    nodes = np.concatenate([nodes, np.array(extra, np.int64)])
    out, first, count, parts = assemble(a)
    if q is not None:
        parts = _replicas.home_parts(parts, q, nodes)
    return Expansion(out, net, nodes, first, count, parts,
                     {k: np.array(v) for k, v in calls.items()},
                     _bounds(a, first, count, out.num_ops), alone)


def _bounds(a, first, count, n):
    """Each expanded op's rate bound (inf: none), or None when no block set one."""
    if not any("bound" in blk for blk in a.blocks.values()):
        return None
    bound = np.full(n, np.inf)
    for i, blk in a.blocks.items():
        if "bound" in blk:
            bound[first[i]:first[i] + count[i]] = blk["bound"]
    return bound if (bound < np.inf).any() else None


def mpich_wire(trace):
    """The messages ``trace`` sends with its collectives expanded by MPICH, graph-free.

    For counting what a trace moves (bytes per iteration, the alpha and beta
    its messages see): ``trace`` itself when it has no collective op.

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(4); _ = b.collective("allreduce", range(4), 4e6)
    >>> w = mpich_wire(b.build()); w.num_messages, w.total_bytes   # 2 P (P - 1) of n / P
    (24, 24000000.0)
    """
    return expand(trace, None, library="mpich").trace if trace.num_collectives else trace


def plan_names(calls):
    """How a replay's collectives ran, one text per distinct plan (sorted), e.g.
    ``"nccl nvls_tree/Simple/16ch"`` or ``"mpich ring"``; empty without collectives.

    Parameters
    ----------
    calls : dict of ndarray
        ``result.collectives`` of a :class:`~netsim.result.Result`.

    Examples
    --------
    >>> import networkx as nx
    >>> from netsim import TraceBuilder, simulate
    >>> G = nx.Graph(); G.add_edges_from([("h0", "s"), ("h1", "s")], bandwidth=1e9, latency=0)
    >>> b = TraceBuilder(2); _ = b.collective("allreduce", [0, 1], 1e6)
    >>> plan_names(simulate(b.build(), G, placement=["h0", "h1"]).collectives)
    ['mpich ring']
    """
    out = set()
    for lib, alg, proto, ch in zip(calls["library"], calls["algorithm"], calls["protocol"],
                                   calls["channels"]):
        if lib == "nccl":
            out.add(f"nccl {alg}/{proto}/{int(ch)}ch")
        elif lib == "mpich":
            out.add(f"mpich {alg}")
    return sorted(out)


def fold(record, x):
    """Per original op ``(start, transfer, end)`` and per part ``(rank, start, end)``.

    A collective starts when its first part may start (its gates done) and ends
    with its last op; a part runs from its gates' end to its ends' end.

    Parameters
    ----------
    record : netsim.engine.replay.Record
        The replay of ``x.trace``.
    x : Expansion

    Returns
    -------
    start, transfer, end : ndarray
        One entry per op of the original trace.
    parts : tuple of ndarray
        ``(rank, start, end)`` of every (collective, member) part.
    ready : ndarray
        Per collective op (``x.calls["op"]``), when its last member may start.
    """
    p = x.parts
    p_start = _seg_max(record.end[p["gate"]], p["gate_ptr"])
    p_end = np.maximum(_seg_max(record.end[p["end"]], p["end_ptr"]), p_start)
    start = record.start[x.first].copy()
    transfer = record.transfer[x.first].copy()
    end = record.end[x.first].copy()
    c = x.calls["op"].astype(np.int64)
    ready = np.zeros(len(c))
    if len(c):
        first = np.full(len(start), np.inf)
        np.minimum.at(first, p["op"], p_start)
        start[c] = first[c]
        last = np.full(len(start), -np.inf)
        np.maximum.at(last, p["op"], p_start)
        ready = last[c]
        idx = ranges(x.first[c], x.count[c])
        ptr = np.cumsum(x.count[c]) - x.count[c]
        end[c] = np.maximum.reduceat(record.end[idx], ptr)
        transfer[c] = np.fmin.reduceat(record.transfer[idx], ptr)
    return start, transfer, end, (p["rank"], p_start, p_end), ready


def _seg_max(values, ptr):
    """Per CSR row, the largest value (0 for an empty row)."""
    out = np.zeros(len(ptr) - 1)
    has = np.diff(ptr) > 0
    if values.size and has.any():
        out[has] = np.maximum.reduceat(values, ptr[:-1][has])
    return out
