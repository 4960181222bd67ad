"""Identical replicas simulated once: the quotient of a network by a rank symmetry.

Data-parallel replicas of a training job do the same work on machines that are
alike. When a permutation ``sigma`` of the ranks (a shift of the replicas by
``k``) maps the placement onto itself machine by machine, and the machine
permutation it induces is an automorphism of the graph (every node and edge to
one with the same attributes), the max-min fluid replay is equivariant under
it: the unique max-min rates are invariant under the graph's automorphisms, so
a flow and its images run at the same rate and every op ends when its images
do. The replay then needs one flow of each orbit (those leaving the machines of
the simulated ranks, the *home*), on the *quotient* network:

* a link direction inside or at the edge of a machine stands for its orbit of
  ``g`` links (one per copy), carried by it alone in the home;
* a link direction the permutation fixes (a rail leaf's uplink, a spine) is
  crossed by all ``g`` images of each home flow that crosses it; its capacity
  is divided by ``g`` so that each home flow gets the share its orbit gets.

So a home flow's route is its real route with each link replaced by its orbit's
representative (:meth:`Quotient.routes`), and the quotient's capacities are the
links' own, fixed links' divided by ``g``: max-min with these capacities is the
full replay's restricted to the home (Bertsekas & Gallager's progressive
filling, each round's fair share of a link being its remaining capacity over its
unfrozen flows, counts ``g`` flows of an orbit on a fixed link as one flow on a
``1/g`` link). A route that crossed two links of one orbit would count twice;
:func:`quotient` checks the routes it is asked for and refuses such a route.

:func:`quotient` builds it or says why it cannot (:class:`SymmetryError`);
:func:`netsim.simulate` with ``symmetry=`` replays a trace that holds the home
ranks' ops only.
"""

import numpy as np

from netsim.errors import NetsimError
from netsim.network import automorphism as _automorphism

__all__ = ["SymmetryError", "Quotient", "quotient"]


class SymmetryError(NetsimError):
    """A rank permutation that is not a symmetry of the placement or the graph (its reason)."""


class Quotient:
    """A :class:`~netsim.network.compiled.Network` seen from the home machines.

    Attributes: ``base`` (the network), ``g`` (copies), ``perm`` (node
    permutation, an index array), ``home`` (bool per node: in a home machine or
    fixed), ``moved`` (bool per node), ``size`` (each node's orbit size),
    ``link_rep`` (each link direction's representative), ``orbit`` (each link
    direction's orbit size; 1: the symmetry fixes it), ``bandwidth`` (the
    quotient's capacities: a link of ``o`` copies carries ``g / o`` images of each
    home flow crossing it, so its capacity is ``o / g`` of its own). The replay reads
    ``routes``, ``num_links``, ``bandwidth``, ``latency``, ``nodes``, ``link_src`` and
    ``link_dst``.
    """

    def __init__(self, base, g, perm, home, size, link_rep, orbit):
        self.base, self.g, self.perm, self.home, self.size = base, g, perm, home, size
        self.moved = size > 1
        self.link_rep, self.orbit = link_rep, orbit
        self.bandwidth = np.where(orbit == g, base.bandwidth, base.bandwidth * orbit / g)

    def __getattr__(self, name):   # everything else is the base network's
        return getattr(self.base, name)

    def whole(self, record):
        """A replay's record on this quotient as the whole network's: a link of ``o``
        copies carried one copy's flows of each orbit, so its bytes, messages and peak flow
        count are ``g / o`` times the record's (times and utilisations are already the
        whole's).

        Examples
        --------
        Two machines on a switch ``sw``, which a link to ``core`` joins: the shift of the
        machines fixes that link, so the one copy's 1 byte on it stands for 2.

        >>> import networkx as nx
        >>> from collections import namedtuple
        >>> from netsim.network.compiled import as_network
        >>> G = nx.Graph(); G.add_edge("sw", "core", bandwidth=1e9, latency=0.0)
        >>> for m in (0, 1):
        ...     G.add_node(f"gpu{m}", node=m); G.add_edge(f"gpu{m}", "sw", bandwidth=1e9, latency=0.0)
        >>> net = as_network(G)
        >>> q = quotient(net, np.array([net.node_of("gpu0"), net.node_of("gpu1")]), [1, 0])
        >>> Record = namedtuple("Record", "link_bytes link_messages link_peak_flows")
        >>> ones = np.ones(net.num_links)
        >>> w = q.whole(Record(ones, ones.astype(int), ones.astype(int)))
        >>> [(net.link_name(k), int(b)) for k, b in enumerate(w.link_bytes) if b > 1]
        [('sw->core', 2), ('core->sw', 2)]
        """
        copies = self.g // self.orbit
        return record._replace(**{name: np.where(copies > 1, getattr(record, name) * copies,
                                                  getattr(record, name))
                                  for name in ("link_bytes", "link_messages", "link_peak_flows")})

    def routes(self, src, dst, placed=None, channel=None, ecmp=None, seed=0):
        """The base network's routes with each link direction replaced by its representative.

        A flow may leave from any node: which flows stand for their orbits is the
        callers' to choose (:mod:`netsim.comm.replicas`: one flow of each).

        Raises
        ------
        SymmetryError
            For a route that crosses two links of one orbit.
        """
        src = np.asarray(src, np.int64)
        pair, links, lat = self.base.routes(src, dst, placed=placed, channel=channel, ecmp=ecmp,
                                            seed=seed)
        L = self.base.num_links
        rep = np.append(self.link_rep, L)[links]
        srt = np.sort(rep, axis=1)
        if ((srt[:, 1:] == srt[:, :-1]) & (srt[:, 1:] < L)).any():
            raise SymmetryError("a route crosses two links of one orbit of the symmetry")
        return pair, rep, lat


def quotient(net, placed, sigma):
    """The quotient of ``net`` by the rank permutation ``sigma`` (a cyclic shift of replicas).

    Parameters
    ----------
    net : netsim.network.compiled.Network
    placed : ndarray of int
        Node index of each rank.
    sigma : array_like of int
        ``sigma[r]``: the rank whose work is rank ``r``'s, moved. Its cycles must
        all have one length ``g >= 2``. The simulated ranks are each cycle's
        smallest; the home is their machines and every node the symmetry fixes.

    Returns
    -------
    Quotient

    Raises
    ------
    SymmetryError
        Naming why ``sigma`` is not a symmetry: cycles of unequal length, ranks
        of one machine sent to two machines or to other positions, or a node or
        edge with no like image.

    Examples
    --------
    Two machines of one GPU and a NIC each on one switch; the shift swaps them:

    >>> import networkx as nx
    >>> from netsim.network.compiled import as_network
    >>> G = nx.Graph()
    >>> for m in (0, 1):
    ...     G.add_node(f"gpu{m}", kind="gpu", node=m); G.add_node(f"n{m}.nic", kind="nic", node=m)
    ...     G.add_edge(f"gpu{m}", f"n{m}.nic", bandwidth=50e9, latency=1e-6)
    ...     G.add_edge(f"n{m}.nic", "sw", bandwidth=50e9, latency=1e-6)
    >>> net = as_network(G)
    >>> q = quotient(net, np.array([net.node_of("gpu0"), net.node_of("gpu1")]), [1, 0])
    >>> q.g, [net.nodes[i] for i in np.flatnonzero(q.home & q.moved)]
    (2, ['gpu0', 'n0.nic'])
    """
    sigma = np.asarray(sigma, np.int64)
    P = len(placed)
    if sigma.shape != (P,) or not np.array_equal(np.sort(sigma), np.arange(P)):
        raise SymmetryError(f"sigma must be a permutation of the {P} ranks")
    g = _order(sigma)
    G = net.graph
    n = len(net.nodes)
    machine = np.array([G.nodes[v].get("node", -1) for v in net.nodes], np.int64)
    # Each machine's nodes in graph order: its position j is its local identity.
    local = {}
    for i, m in enumerate(machine.tolist()):
        if m >= 0:
            local.setdefault(m, []).append(i)
    image = {}   # machine -> machine, from the ranks
    node_map = np.full(n, -1, np.int64)
    inside = False   # whether some rank changes its position within the machines
    for r, s in zip(range(P), sigma.tolist()):
        a, b = int(placed[r]), int(placed[s])
        ma, mb = int(machine[a]), int(machine[b])
        if ma < 0 or mb < 0:
            raise SymmetryError(f"rank {r} is on {net.nodes[a]!r}, which has no machine "
                                f"('node' attribute)")
        if image.setdefault(ma, mb) != mb:
            raise SymmetryError(f"sigma sends machine {ma}'s ranks to machines {image[ma]} "
                                f"and {mb}")
        if node_map[a] >= 0 and node_map[a] != b:
            raise SymmetryError(f"sigma sends the ranks on {net.nodes[a]!r} to two nodes")
        node_map[a] = b
        inside |= local[ma].index(a) != local[mb].index(b)
    if inside:   # shards move among a machine's GPUs: the rest follows by refinement
        rails = {}
        for a in np.flatnonzero(node_map >= 0).tolist():
            ra, rb = G.nodes[net.nodes[a]].get("rail"), G.nodes[net.nodes[node_map[a]]].get("rail")
            if ra is not None and rails.setdefault(ra, rb) != rb:
                raise SymmetryError(f"sigma sends rail {ra} to rails {rails[ra]} and {rb}")
        machines = {m: image.get(m, m) for m in local}
        perm = _automorphism.extend(net, node_map, machine, machines, rails, SymmetryError)
        _automorphism.check(net, perm, rails, SymmetryError)
    else:
        perm = np.arange(n, dtype=np.int64)
        for ma, mb in image.items():
            if len(local[ma]) != len(local[mb]):
                raise SymmetryError(f"machines {ma} and {mb} differ in size")
            perm[local[ma]] = local[mb]
        if not np.array_equal(np.sort(perm), np.arange(n)):
            raise SymmetryError("sigma's machine map is not a permutation of the machines")
        _automorphism.check(net, perm, error=SymmetryError)
    size = _orbit_sizes(perm, g)
    home = _home(perm, size, g, machine, placed, sigma, P)
    return Quotient(net, g, perm, home, size, *_link_orbits(net, perm, home, g, size))


def _order(sigma):
    """The common length of ``sigma``'s cycles (at least 2)."""
    lengths = set()
    seen = np.zeros(len(sigma), bool)
    for r in range(len(sigma)):
        if not seen[r]:
            k, x = 0, r
            while not seen[x]:
                seen[x] = True
                x = sigma[x]
                k += 1
            lengths.add(k)
    if len(lengths) != 1 or lengths == {1}:
        raise SymmetryError(f"sigma's cycles have lengths {sorted(lengths)}: one length >= 2 "
                            f"is needed")
    return lengths.pop()


def _cycle_min(sigma):
    """Each rank's cycle's smallest rank."""
    out = np.arange(len(sigma))
    x = sigma.copy()
    while True:
        nxt = np.minimum(out, x)
        if np.array_equal(nxt, out):
            return out
        out, x = nxt, sigma[x]


def _orbit_sizes(perm, g):
    """Each node's orbit size under ``perm`` (a divisor of ``g``)."""
    size = np.zeros(len(perm), np.int64)
    ident, cur = np.arange(len(perm)), perm.copy()
    for i in range(1, g + 1):
        size[(cur == ident) & (size == 0)] = i
        cur = perm[cur]
    return size


def _home(perm, size, g, machine, placed, sigma, P):
    """One node of each orbit: a rank's node, the node of its cycle's smallest rank; any
    other node, its orbit's one in those ranks' machines where there is one, else its
    orbit's lowest index; a fixed node, itself."""
    n = len(perm)
    first = _cycle_min(sigma)
    hosts = np.unique(np.asarray(placed, np.int64)[first == np.arange(P)])
    ranked = np.zeros(n, bool)
    ranked[np.asarray(placed, np.int64)] = True
    in_home = np.isin(machine, np.unique(machine[hosts]))
    home = size == 1
    home[hosts] = True
    seen = np.zeros(n, bool)
    seen[home] = True
    for v in np.flatnonzero(~seen).tolist():
        orbit = [v]
        x = perm[v]
        while x != v:
            orbit.append(int(x))
            x = perm[x]
        seen[orbit] = True
        if ranked[orbit].any():
            if home[orbit].sum() != 1:
                raise SymmetryError("the ranks' nodes are not one of each orbit")
            continue
        mine = [x for x in orbit if in_home[x]]
        home[mine[0] if len(mine) == 1 else min(orbit)] = True
    return home


def _link_orbits(net, perm, home, g, size):
    """Each link direction's representative and its orbit's size (the least common
    multiple of its ends' orbits; 1 where the symmetry fixes it).

    The representative is the orbit's member whose *anchor* end is in the home: the end
    whose orbit is as large as the link's (the tail where both are)."""
    src, dst = net.link_src, net.link_dst
    n = len(perm)
    orbit = np.lcm(size[src], size[dst])
    anchor_src = size[src] == orbit
    if not (anchor_src | (size[dst] == orbit)).all():
        k = int(np.flatnonzero(~(anchor_src | (size[dst] == orbit)))[0])
        raise SymmetryError(f"link {net.link_name(k)} moves with neither of its ends")
    key = src * n + dst
    order = np.argsort(key)
    inv = np.empty(n, np.int64)
    inv[perm] = np.arange(n)
    rep = np.arange(len(src), dtype=np.int64)
    done = orbit == 1   # a fixed link stands for itself
    bs, bd = src.copy(), dst.copy()
    for _ in range(g):
        hit = ~done & home[np.where(anchor_src, bs, bd)]
        if hit.any():
            at = order[np.searchsorted(key, bs[hit] * n + bd[hit], sorter=order)]
            rep[hit] = at
            done |= hit
        bs, bd = inv[bs], inv[bd]
    if not done.all():
        k = int(np.flatnonzero(~done)[0])
        raise SymmetryError(f"link {net.link_name(k)} has no representative in the home")
    return rep, orbit
