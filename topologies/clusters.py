"""Cluster-scale topologies: hosts joined by switches or by direct links.

Every builder returns an undirected :class:`networkx.Graph` in which an edge is
a full-duplex link (each direction has the full ``bandwidth``, in bytes/s, and
the ``latency``, in seconds) and every node has a ``kind``. The compute nodes
(kind ``"host"``, or ``"gpu"`` where a builder takes ``kind``) are added first
and in rank order, so the simulator's default placement makes ``host0`` rank 0.
``G.graph["name"]`` is a short description.

Latency is per link: a message from ``host0`` to ``host1`` through one switch
waits ``2 * latency``. Human strings such as ``"10Gbps"`` are not accepted;
parse them with :func:`netsim.units.parse_bandwidth` or look a product up with
:func:`topologies.specs.link_speed`.

By default netsim sends the messages between two hosts along one deterministic
shortest path (channel 0). On topologies with path diversity (``leaf_spine``,
``fat_tree``, ``torus``) concurrent flows may then share a link that
load-balanced hardware would have avoided; messages on other channels, or a
replay with ``ecmp="hash"``, spread over the equal-cost paths (see
:mod:`netsim.network.compiled`).

Framing: the switched Ethernet builders (``star``, ``two_tier``,
``leaf_spine``, ``fat_tree``) take ``mtu``. None (the default) leaves the
raw bandwidth; an MTU in bytes writes every link's ``efficiency``, the share of
the line rate TCP/IPv4 payload gets at that MTU
(:func:`topologies.links.payload_efficiency`, e.g. 1448 / 1538 at 1500), which
netsim multiplies into the link's capacity.
"""

import itertools
import math
import numbers

import networkx as nx

from netsim.checks import check_int, check_real
from netsim.errors import TopologyError
from netsim.units import format_bandwidth

from topologies import _validate as _check
from topologies.devices import host_cpu
from topologies.links import payload_efficiency
from topologies.specs import ETHERNET, ETHERNET_LATENCY

__all__ = ["star", "two_tier", "leaf_spine", "fat_tree", "ring", "torus"]

_HOST_BW = ETHERNET["10GbE"]
_UPLINK_BW = ETHERNET["40GbE"]


def _link(G, u, v, bandwidth, latency):
    G.add_edge(u, v, bandwidth=bandwidth, latency=latency)


def _framed(G, fn, mtu):
    """``G`` with every link's ``efficiency`` at TCP/IPv4-over-Ethernet ``mtu`` (None: as is)."""
    if mtu is None:
        return G
    try:
        # Every Ethernet rate frames alike (IEEE 802.3): the technology only names the family.
        eff = payload_efficiency("10GbE", mtu)
    except TopologyError as exc:
        raise TopologyError(f"{fn}: mtu {mtu!r} is not a TCP/IPv4-over-Ethernet MTU "
                            f"({str(exc).split(': ', 1)[-1]})") from None
    nx.set_edge_attributes(G, eff, "efficiency")
    nx.set_edge_attributes(G, mtu, "mtu")  # the IP MTU, for TCP's segment size (netsim.engine.tcp)
    G.graph["name"] = f"{G.graph['name'][:-1]}, MTU {mtu})"
    return G


def star(n, bandwidth=_HOST_BW, latency=ETHERNET_LATENCY, mtu=None, cpu=None, cores=1):
    """Hosts on one non-blocking switch.

    Parameters
    ----------
    n : int
        Number of hosts, >= 1. They are ``"host0"`` .. ``"host{n-1}"``.
    bandwidth : float, optional
        Bytes/s per direction of each host's link (default 10GbE, 1.25e9).
    latency : float, optional
        Seconds per link (default :data:`topologies.specs.ETHERNET_LATENCY`).
    mtu : int, optional
        IP MTU in bytes: every link gets the ``efficiency`` of TCP/IPv4 over
        Ethernet framing at that MTU (module docstring). None (default): no
        framing, the raw bandwidth.
    cpu : str, optional
        The hosts' CPU part (a key of :data:`topologies.devices.HOST_CPUS`): each
        host carries its ``memory_bandwidth`` and ``core_bandwidth``, and ``cores``,
        which a CPU collective's host work reads (:mod:`netsim.comm.gloo`). None
        (default): no host attributes.
    cores : int, optional
        Cores each host's process uses, with ``cpu`` (default 1; another count without
        ``cpu`` is refused).

    Returns
    -------
    networkx.Graph
        ``n + 1`` nodes (the hosts and ``"switch"``, kind ``"switch"``) and
        ``n`` edges, one per host. The switch is non-blocking: only the host
        links limit traffic.

    Raises
    ------
    TopologyError
        If ``n < 1``, ``bandwidth <= 0``, ``latency < 0``, ``cores < 1``, or ``cores``
        other than 1 without ``cpu``.

    Examples
    --------
    >>> G = star(4)
    >>> G.number_of_nodes(), G.number_of_edges()
    (5, 4)
    >>> G.graph["name"]
    'star(4 hosts, 10 Gbps)'
    >>> G.edges["host0", "switch"]["bandwidth"]
    1250000000.0
    """
    n = check_int(n, "star: n", error=TopologyError)
    bandwidth = check_real(bandwidth, "star: bandwidth (bytes/s)", lo=0, strict=True,
                           error=TopologyError)
    latency = check_real(latency, "star: latency (s)", lo=0, error=TopologyError)
    _check.check_size("star", 2 * n + 1, f"n={n}")
    G = nx.Graph(name=f"star({n} hosts, {format_bandwidth(bandwidth)})")
    G.add_nodes_from((f"host{i}" for i in range(n)), kind="host")
    cores = check_int(cores, "star: cores", error=TopologyError)
    if cpu is None and cores != 1:   # no host attributes: the count would be dropped
        raise TopologyError(f"star: cores={cores} applies with cpu= (the hosts' CPU part, "
                            f"whose cores it counts)")
    if cpu is not None:
        nx.set_node_attributes(G, {f"host{i}": dict(host_cpu(cpu), cores=cores)
                                   for i in range(n)})
    G.add_node("switch", kind="switch")
    for i in range(n):
        _link(G, f"host{i}", "switch", bandwidth, latency)
    return _framed(G, "star", mtu)


def two_tier(
    n,
    per_rack,
    bandwidth=_HOST_BW,
    uplink_bandwidth=_UPLINK_BW,
    latency=ETHERNET_LATENCY,
    mtu=None,
):
    """Racks of hosts behind top-of-rack switches, the ToRs on one core switch.

    Host ``i`` is in rack ``i // per_rack`` behind switch ``"tor{i // per_rack}"``;
    the last rack holds the remainder when ``per_rack`` does not divide ``n``.
    Each ToR has exactly one uplink to ``"core"``. Hosts carry a ``rack``
    attribute.

    Parameters
    ----------
    n : int
        Number of hosts, >= 1.
    per_rack : int
        Hosts per rack, >= 1.
    bandwidth : float, optional
        Bytes/s per direction of each host link (default 10GbE).
    uplink_bandwidth : float, optional
        Bytes/s per direction of each ToR-core link (default 40GbE). A rack is
        oversubscribed when ``per_rack * bandwidth > uplink_bandwidth``.
    latency : float, optional
        Seconds per link, hosts and uplinks alike (default
        :data:`topologies.specs.ETHERNET_LATENCY`).
    mtu : int, optional
        IP MTU in bytes: every link gets the ``efficiency`` of TCP/IPv4 over
        Ethernet framing at that MTU (module docstring). None (default): no
        framing, the raw bandwidth.

    Returns
    -------
    networkx.Graph
        A tree with ``n + ceil(n / per_rack) + 1`` nodes and
        ``n + ceil(n / per_rack)`` edges.

    Raises
    ------
    TopologyError
        If ``n < 1``, ``per_rack < 1``, a bandwidth ``<= 0`` or ``latency < 0``.

    Examples
    --------
    >>> G = two_tier(10, 4)
    >>> sorted(G["core"])
    ['tor0', 'tor1', 'tor2']
    >>> G.nodes["host9"]["rack"], G.degree("tor2")
    (2, 3)
    """
    n = check_int(n, "two_tier: n", error=TopologyError)
    per_rack = check_int(per_rack, "two_tier: per_rack", error=TopologyError)
    bandwidth = check_real(bandwidth, "two_tier: bandwidth (bytes/s)", lo=0, strict=True,
                           error=TopologyError)
    uplink_bandwidth = check_real(uplink_bandwidth, "two_tier: uplink_bandwidth (bytes/s)", lo=0,
                                  strict=True, error=TopologyError)
    latency = check_real(latency, "two_tier: latency (s)", lo=0, error=TopologyError)
    racks = math.ceil(n / per_rack)
    _check.check_size("two_tier", 2 * n + 2 * racks + 1, f"n={n}")
    G = nx.Graph(
        name=f"two_tier({n} hosts, {per_rack} per rack, {format_bandwidth(bandwidth)}, "
        f"uplink {format_bandwidth(uplink_bandwidth)})"
    )
    for i in range(n):
        G.add_node(f"host{i}", kind="host", rack=i // per_rack)
    G.add_nodes_from((f"tor{r}" for r in range(racks)), kind="switch")
    G.add_node("core", kind="switch")
    for i in range(n):
        _link(G, f"host{i}", f"tor{i // per_rack}", bandwidth, latency)
    for r in range(racks):
        _link(G, f"tor{r}", "core", uplink_bandwidth, latency)
    return _framed(G, "two_tier", mtu)


def leaf_spine(
    leaves,
    spines,
    hosts_per_leaf,
    bandwidth=_HOST_BW,
    uplink_bandwidth=_UPLINK_BW,
    latency=ETHERNET_LATENCY,
    mtu=None,
):
    """A two-level Clos network: every leaf switch linked to every spine switch.

    Hosts are numbered leaf-major: ``"host{l * hosts_per_leaf + j}"`` is the
    ``j``-th host of ``"leaf{l}"`` and carries ``leaf=l``. Spines are
    ``"spine0"`` ... Without channels or ECMP netsim routes each pair on one
    shortest path, so traffic between two leaves uses one spine; with
    ``ecmp="hash"`` flows spread over the spines (module docstring).

    Parameters
    ----------
    leaves, spines, hosts_per_leaf : int
        Counts, each >= 1.
    bandwidth : float, optional
        Bytes/s per direction of each host-leaf link (default 10GbE).
    uplink_bandwidth : float, optional
        Bytes/s per direction of each leaf-spine link (default 40GbE).
    latency : float, optional
        Seconds per link (default :data:`topologies.specs.ETHERNET_LATENCY`).
    mtu : int, optional
        IP MTU in bytes: every link gets the ``efficiency`` of TCP/IPv4 over
        Ethernet framing at that MTU (module docstring). None (default): no
        framing, the raw bandwidth.

    Returns
    -------
    networkx.Graph
        ``leaves * (hosts_per_leaf + 1) + spines`` nodes and
        ``leaves * (hosts_per_leaf + spines)`` edges.

    Raises
    ------
    TopologyError
        If a count is < 1, a bandwidth ``<= 0`` or ``latency < 0``.

    Examples
    --------
    >>> G = leaf_spine(4, 2, 8)
    >>> G.number_of_nodes(), G.number_of_edges()
    (38, 40)
    >>> sorted(G["spine0"])
    ['leaf0', 'leaf1', 'leaf2', 'leaf3']
    """
    fn = "leaf_spine"
    leaves = check_int(leaves, f"{fn}: leaves", error=TopologyError)
    spines = check_int(spines, f"{fn}: spines", error=TopologyError)
    hosts_per_leaf = check_int(hosts_per_leaf, f"{fn}: hosts_per_leaf", error=TopologyError)
    bandwidth = check_real(bandwidth, f"{fn}: bandwidth (bytes/s)", lo=0, strict=True,
                           error=TopologyError)
    uplink_bandwidth = check_real(uplink_bandwidth, f"{fn}: uplink_bandwidth (bytes/s)", lo=0,
                                  strict=True, error=TopologyError)
    latency = check_real(latency, f"{fn}: latency (s)", lo=0, error=TopologyError)
    _check.check_size(fn, 2 * leaves * hosts_per_leaf + leaves * spines + leaves + spines,
                      f"leaves={leaves}, spines={spines}, hosts_per_leaf={hosts_per_leaf}")
    G = nx.Graph(
        name=f"leaf_spine({leaves} leaves x {hosts_per_leaf} hosts, {spines} spines, "
        f"{format_bandwidth(bandwidth)}, uplink {format_bandwidth(uplink_bandwidth)})"
    )
    for i in range(leaves * hosts_per_leaf):
        G.add_node(f"host{i}", kind="host", leaf=i // hosts_per_leaf)
    G.add_nodes_from((f"leaf{l}" for l in range(leaves)), kind="switch")
    G.add_nodes_from((f"spine{s}" for s in range(spines)), kind="switch")
    for i in range(leaves * hosts_per_leaf):
        _link(G, f"host{i}", f"leaf{i // hosts_per_leaf}", bandwidth, latency)
    for l in range(leaves):
        for s in range(spines):
            _link(G, f"leaf{l}", f"spine{s}", uplink_bandwidth, latency)
    return _framed(G, fn, mtu)


def fat_tree(k, bandwidth=_HOST_BW, latency=ETHERNET_LATENCY, mtu=None):
    """The k-ary fat-tree of Al-Fares, Loukissas and Vahdat (2008).

    ``k`` pods, each with ``k/2`` edge switches (``"edge{j}"``) and ``k/2``
    aggregation switches (``"agg{j}"``), numbered pod-major. Each edge switch
    serves ``k/2`` hosts and links to every aggregation switch of its pod.
    The ``(k/2)**2`` core switches ``"core{c}"`` each link to aggregation
    switch ``c // (k/2)`` of every pod. All links have the same bandwidth, so
    every switch has ``k`` ports in use and the bisection is full. Hosts,
    edge and aggregation switches carry their ``pod``.

    netsim routes each pair on one deterministic shortest path (no ECMP and
    no two-level routing tables as in the paper), so concurrent flows can
    collide on a core link that hashing would have spread out.

    Parameters
    ----------
    k : int
        Switch port count, even and >= 2.
    bandwidth : float, optional
        Bytes/s per direction of every link (default 10GbE).
    latency : float, optional
        Seconds per link (default :data:`topologies.specs.ETHERNET_LATENCY`).
    mtu : int, optional
        IP MTU in bytes: every link gets the ``efficiency`` of TCP/IPv4 over
        Ethernet framing at that MTU (module docstring). None (default): no
        framing, the raw bandwidth.

    Returns
    -------
    networkx.Graph
        ``k**3 / 4`` hosts, ``5 * k**2 / 4`` switches and ``3 * k**3 / 4``
        edges.

    Raises
    ------
    TopologyError
        If ``k`` is not an even integer >= 2, ``bandwidth <= 0`` or
        ``latency < 0``.

    References
    ----------
    .. [1] M. Al-Fares, A. Loukissas and A. Vahdat, "A Scalable, Commodity Data
           Center Network Architecture", SIGCOMM 2008, Section 3.

    Examples
    --------
    >>> G = fat_tree(4)
    >>> G.graph["name"]
    'fat_tree(k=4, 16 hosts, 10 Gbps)'
    >>> G.number_of_nodes(), G.number_of_edges()
    (36, 48)
    """
    k = check_int(k, "fat_tree: k", 2, error=TopologyError)
    if k % 2:
        raise TopologyError(f"fat_tree: k must be even, got {k}")
    bandwidth = check_real(bandwidth, "fat_tree: bandwidth (bytes/s)", lo=0, strict=True,
                           error=TopologyError)
    latency = check_real(latency, "fat_tree: latency (s)", lo=0, error=TopologyError)
    half = k // 2
    hosts = k * half * half
    # k^3/4 hosts, 5k^2/4 switches; k^3/4 host links, k^3/4 edge-agg and k^3/4 agg-core
    _check.check_size("fat_tree", 4 * hosts + 5 * k * half // 2, f"k={k}")
    G = nx.Graph(name=f"fat_tree(k={k}, {hosts} hosts, {format_bandwidth(bandwidth)})")
    for i in range(hosts):
        G.add_node(f"host{i}", kind="host", pod=i // (half * half))
    for j in range(k * half):
        G.add_node(f"edge{j}", kind="switch", pod=j // half)
    for j in range(k * half):
        G.add_node(f"agg{j}", kind="switch", pod=j // half)
    G.add_nodes_from((f"core{c}" for c in range(half * half)), kind="switch")
    for i in range(hosts):
        _link(G, f"host{i}", f"edge{i // half}", bandwidth, latency)
    for pod in range(k):
        for e in range(half):
            for a in range(half):
                _link(G, f"edge{pod * half + e}", f"agg{pod * half + a}", bandwidth, latency)
        for c in range(half * half):
            _link(G, f"agg{pod * half + c // half}", f"core{c}", bandwidth, latency)
    return _framed(G, "fat_tree", mtu)


def ring(n, bandwidth=_HOST_BW, latency=ETHERNET_LATENCY, kind="host"):
    """Compute nodes in a cycle, each linked directly to its two neighbours.

    ``n = 1`` gives one node and no link, ``n = 2`` one link (a graph has no
    parallel edges; the single full-duplex link serves both directions).

    Parameters
    ----------
    n : int
        Number of nodes, >= 1, named ``f"{kind}{i}"`` in ring order.
    bandwidth : float, optional
        Bytes/s per direction of each link (default 10GbE).
    latency : float, optional
        Seconds per link (default :data:`topologies.specs.ETHERNET_LATENCY`).
    kind : {"host", "gpu"}, optional
        Kind (and name prefix) of the nodes.

    Returns
    -------
    networkx.Graph
        ``torus((n,))`` without the ``coord`` node attribute;
        isomorphic to ``networkx.cycle_graph(n)`` for ``n >= 3``.

    Raises
    ------
    TopologyError
        If ``n < 1``, ``bandwidth <= 0``, ``latency < 0`` or ``kind`` is not
        ``"host"`` or ``"gpu"``.

    Examples
    --------
    >>> G = ring(4, kind="gpu")
    >>> list(G.edges)
    [('gpu0', 'gpu1'), ('gpu0', 'gpu3'), ('gpu1', 'gpu2'), ('gpu2', 'gpu3')]
    """
    n = check_int(n, "ring: n", error=TopologyError)
    bandwidth = check_real(bandwidth, "ring: bandwidth (bytes/s)", lo=0, strict=True,
                           error=TopologyError)
    latency = check_real(latency, "ring: latency (s)", lo=0, error=TopologyError)
    kind = _check.compute_kind("ring", kind)
    _check.check_size("ring", 2 * n, f"n={n}")
    # A one-dimensional torus, checked above so that errors name "ring".
    G = torus((n,), bandwidth, latency, kind)
    for _, data in G.nodes(data=True):
        del data["coord"]  # a ring's nodes have no coordinates
    G.graph["name"] = f"ring({n} {kind}s, {format_bandwidth(bandwidth)})"
    return G


def torus(dims, bandwidth=_HOST_BW, latency=ETHERNET_LATENCY, kind="host"):
    """A periodic grid (k-ary n-cube) of directly linked compute nodes.

    Node ``f"{kind}{i}"`` sits at coordinate ``coord`` (a tuple, stored as a
    node attribute) where ``i`` is the row-major index of ``coord`` (the last
    dimension varies fastest). Along a dimension of size ``s >= 3`` each node
    links to its two neighbours, wrapping around; a dimension of size 2 gives
    one link between the two nodes and a dimension of size 1 none.

    Parameters
    ----------
    dims : tuple of int
        Size of each dimension, each >= 1; an int ``n`` means ``(n,)``.
    bandwidth : float, optional
        Bytes/s per direction of each link (default 10GbE).
    latency : float, optional
        Seconds per link (default :data:`topologies.specs.ETHERNET_LATENCY`).
    kind : {"host", "gpu"}, optional
        Kind (and name prefix) of the nodes.

    Returns
    -------
    networkx.Graph
        ``prod(dims)`` nodes, isomorphic to
        ``networkx.grid_graph(dims, periodic=True)`` without its self-loops.

    Raises
    ------
    TopologyError
        If ``dims`` is empty or has a size < 1, ``bandwidth <= 0``,
        ``latency < 0`` or ``kind`` is not ``"host"`` or ``"gpu"``.

    Examples
    --------
    >>> G = torus((2, 3))
    >>> G.nodes["host4"]["coord"]
    (1, 1)
    >>> sorted(G["host4"])
    ['host1', 'host3', 'host5']
    """
    if isinstance(dims, numbers.Integral) and not isinstance(dims, bool):
        dims = (dims,)
    try:
        dims = tuple(dims)
    except TypeError:
        raise TopologyError(f"torus: dims must be a tuple of ints >= 1, got {dims!r}") from None
    if not dims:
        raise TopologyError(f"torus: dims must have at least one dimension, got {dims!r}")
    dims = tuple(check_int(s, f"torus: dims[{d}]", error=TopologyError)
                 for d, s in enumerate(dims))
    bandwidth = check_real(bandwidth, "torus: bandwidth (bytes/s)", lo=0, strict=True,
                           error=TopologyError)
    latency = check_real(latency, "torus: latency (s)", lo=0, error=TopologyError)
    kind = _check.compute_kind("torus", kind)
    shape = "x".join(map(str, dims))
    nodes = math.prod(dims)   # and per dimension a link per node (half of them at size 2)
    _check.check_size("torus", nodes + sum(nodes if s > 2 else nodes // 2 if s == 2 else 0
                                           for s in dims),
                      f"dims={shape}" if len(dims) <= 8 else f"dims of {len(dims)} dimensions")
    G = nx.Graph(name=f"torus({shape} {kind}s, {format_bandwidth(bandwidth)})")
    index = {}
    for i, coord in enumerate(itertools.product(*(range(s) for s in dims))):
        index[coord] = f"{kind}{i}"
        G.add_node(f"{kind}{i}", kind=kind, coord=coord)
    for coord, name in index.items():
        for d, s in enumerate(dims):
            if s > 1:  # size 2: both ends name the same edge, added once
                nxt = coord[:d] + ((coord[d] + 1) % s,) + coord[d + 1 :]
                _link(G, name, index[nxt], bandwidth, latency)
    return G
