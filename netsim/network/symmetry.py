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

__all__ = ["SymmetryError", "Quotient", "quotient"]


class SymmetryError(NetsimError):
    """A rank permutation that is not a symmetry of the placement or the graph (its reason)."""


class Quotient:
    """A :class:`~netsim.network.compiled.Network` seen from the home machines.

    Attributes: ``base`` (the network), ``g`` (copies), ``perm`` (node
    permutation, an index array), ``home`` (bool per node: in a home machine or
    fixed), ``moved`` (bool per node), ``link_rep`` (each link direction's
    representative), ``fixed_link`` (bool per link), ``bandwidth`` (the
    quotient's capacities). The replay reads ``routes``, ``num_links``,
    ``bandwidth``, ``latency``, ``nodes``, ``link_src`` and ``link_dst``.
    """

    def __init__(self, base, g, perm, home, link_rep, fixed_link):
        self.base, self.g, self.perm, self.home = base, g, perm, home
        self.moved = perm != np.arange(len(perm))
        self.link_rep, self.fixed_link = link_rep, fixed_link
        self.bandwidth = np.where(fixed_link, base.bandwidth / g, base.bandwidth)

    def __getattr__(self, name):   # everything else is the base network's
        return getattr(self.base, name)

    def whole(self, record):
        """A replay's record on this quotient as the whole network's: a fixed link carried
        one copy's flows of each orbit, so its bytes, messages and peak flow count are
        ``g`` times the record's (times and utilisations are already the whole's).

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
        return record._replace(**{name: np.where(self.fixed_link, getattr(record, name) * self.g,
                                                  getattr(record, name))
                                  for name in ("link_bytes", "link_messages", "link_peak_flows")})

    def routes(self, src, dst, placed=None, channel=None, ecmp=None, seed=0):
        """The base network's routes with each link direction replaced by its representative.

        Raises
        ------
        SymmetryError
            For a route that leaves from outside the home, or that crosses two
            links of one orbit.
        """
        src = np.asarray(src, np.int64)
        if len(src) and not self.home[src].all():
            bad = int(src[~self.home[src]][0])
            raise SymmetryError(f"a flow leaves {self.base.nodes[bad]!r}, outside the "
                                f"simulated machines")
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
    for r, s in zip(range(P), sigma.tolist()):
        a, b = int(placed[r]), int(placed[s])
        ma, mb = int(machine[a]), int(machine[b])
        if ma < 0 or mb < 0:
            raise SymmetryError(f"rank {r} is on {net.nodes[a]!r}, which has no machine "
                                f"('node' attribute)")
        if image.setdefault(ma, mb) != mb:
            raise SymmetryError(f"sigma sends machine {ma}'s ranks to machines {image[ma]} "
                                f"and {mb}")
        if local[ma].index(a) != local[mb].index(b):
            raise SymmetryError(f"sigma sends {net.nodes[a]!r} to {net.nodes[b]!r}, another "
                                f"position in its machine")
    perm = np.arange(n, dtype=np.int64)
    for ma, mb in image.items():
        if len(local[ma]) != len(local[mb]):
            raise SymmetryError(f"machines {ma} and {mb} differ in size")
        perm[local[ma]] = local[mb]
    if not np.array_equal(np.sort(perm), np.arange(n)):
        raise SymmetryError("sigma's machine map is not a permutation of the machines")
    _check_automorphism(net, perm, machine)
    # The home: the machines of each cycle's smallest rank, and every fixed node.
    first = _cycle_min(sigma)
    home_machines = {int(machine[placed[r]]) for r in np.flatnonzero(first == np.arange(P))}
    home = (machine < 0) | np.isin(machine, list(home_machines)) | (perm == np.arange(n))
    return Quotient(net, g, perm, home, *_link_orbits(net, perm, home, g))


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


def _check_automorphism(net, perm, machine):
    """Raise unless ``perm`` maps every node and edge to one with the same attributes."""
    G = net.graph
    names = net.nodes
    for i in np.flatnonzero(perm != np.arange(len(perm))).tolist():
        a = {k: v for k, v in G.nodes[names[i]].items() if k != "node"}
        b = {k: v for k, v in G.nodes[names[perm[i]]].items() if k != "node"}
        if a != b:
            raise SymmetryError(f"{names[i]!r} and its image {names[perm[i]]!r} differ: "
                                f"{a} against {b}")
    for u, v, data in G.edges(data=True):
        iu, iv = net.index[u], net.index[v]
        pu, pv = names[perm[iu]], names[perm[iv]]
        if not G.has_edge(pu, pv) or G.edges[pu, pv] != data:
            raise SymmetryError(f"edge {u!r}-{v!r} has no like image {pu!r}-{pv!r}")


def _link_orbits(net, perm, home, g):
    """Each link direction's representative in the home, and whether the symmetry fixes it."""
    n = len(perm)
    key = {(s, d): k for k, (s, d) in enumerate(zip(net.link_src.tolist(),
                                                    net.link_dst.tolist()))}
    rep = np.arange(len(net.link_src), dtype=np.int64)
    fixed = np.zeros(len(rep), bool)
    # inverse powers: back[j][x] = perm^-j (x)
    inv = np.empty(n, np.int64)
    inv[perm] = np.arange(n)
    back, cur = [np.arange(n)], np.arange(n)
    for _ in range(g - 1):
        cur = inv[cur]
        back.append(cur)
    moved = perm != np.arange(n)
    for k, (s, d) in enumerate(zip(net.link_src.tolist(), net.link_dst.tolist())):
        if not moved[s] and not moved[d]:
            fixed[k] = True
            continue
        end = s if moved[s] else d   # the end the symmetry moves decides the copy
        for b in back:
            if home[b[end]]:
                rep[k] = key[(int(b[s]), int(b[d]))]
                break
    return rep, fixed
