"""A permutation of the ranks' nodes extended to the whole graph, and checked.

:mod:`netsim.network.symmetry` needs a permutation of every node of the graph that
is an automorphism (every node and edge to a like one). A shift of data-parallel
replicas moves whole machines, and the permutation follows from the machines. A
shift of tensor-parallel shards keeps each machine and moves its GPUs among
themselves (a GPU to another position, its NIC to that GPU's NIC, the rail switch of
one NIC rail to another's), and nothing names those images directly; :func:`extend`
finds them by refinement, as colour refinement finds a graph's automorphisms: a node
whose mapped neighbours' images have exactly one common neighbour like it (same
attributes, its machine's image, its rail's image) is mapped there, and the sweep
repeats until every node is mapped or none can be.

A node's ``rail`` is a label, not a property: a shift of shards sends rail ``j`` to
rail ``rho(j)``, read off the GPUs (each GPU's rail to its image's), so a rail must map
to one rail throughout and every other attribute must be equal.
"""

import numpy as np

from netsim.errors import NetsimError

__all__ = ["extend", "check", "odometers", "strides"]

# Of a node's mapped neighbours, the images whose neighbourhoods are intersected to find
# its image: the smallest few suffice, and the check below verifies every edge anyway.
_WITNESSES = 4


def extend(net, partial, machine, machines, rails, error=NetsimError):
    """Complete a node permutation given on some nodes (the ranks' GPUs).

    Parameters
    ----------
    net : netsim.network.compiled.Network
    partial : ndarray of int
        Per node, its image, or -1 where unknown.
    machine : ndarray of int
        Per node, its machine (``node`` attribute), -1 for none.
    machines : dict
        Machine -> its image's machine.
    rails : dict
        Rail -> its image's rail.
    error : type
        The exception raised.

    Returns
    -------
    ndarray of int
        The image of every node.

    Raises
    ------
    error
        Naming a node with no image or more than one candidate.

    Examples
    --------
    One machine of two GPUs, each with its own NIC on its own rail switch, both rails on
    one spine; the GPUs swap:

    >>> import networkx as nx
    >>> from netsim.network.compiled import as_network
    >>> G = nx.Graph()
    >>> for j in (0, 1):
    ...     G.add_node(f"gpu{j}", kind="gpu", node=0, rail=j)
    ...     G.add_node(f"nic{j}", kind="nic", node=0, rail=j)
    ...     G.add_edge(f"gpu{j}", f"nic{j}", bandwidth=1e9, latency=1e-6)
    ...     G.add_edge(f"nic{j}", f"rail{j}", bandwidth=1e9, latency=1e-6)
    ...     G.add_edge(f"rail{j}", "spine", bandwidth=1e9, latency=1e-6)
    >>> net = as_network(G)
    >>> part = np.full(len(net.nodes), -1); part[[net.node_of("gpu0"), net.node_of("gpu1")]] = [
    ...     net.node_of("gpu1"), net.node_of("gpu0")]
    >>> machine = np.array([G.nodes[v].get("node", -1) for v in net.nodes])
    >>> perm = extend(net, part, machine, {0: 0}, {0: 1, 1: 0})
    >>> [(net.nodes[i], net.nodes[p]) for i, p in enumerate(perm) if net.nodes[i][0] != "g"]
    [('nic0', 'nic1'), ('rail0', 'rail1'), ('spine', 'spine'), ('nic1', 'nic0'), ('rail1', 'rail0')]
    """
    G, names = net.graph, net.nodes
    n = len(names)
    nbrs = [set() for _ in range(n)]
    for s, d in zip(net.link_src.tolist(), net.link_dst.tolist()):
        nbrs[s].add(d)
        nbrs[d].add(s)
    attrs = [{k: v for k, v in G.nodes[x].items() if k not in ("node", "rail")} for x in names]
    rail = [G.nodes[x].get("rail") for x in names]
    perm = np.asarray(partial, np.int64).copy()
    taken = set(perm[perm >= 0].tolist())
    left = np.flatnonzero(perm < 0).tolist()
    while left:
        still = []
        for v in left:
            images = sorted((perm[w] for w in nbrs[v] if perm[w] >= 0), key=lambda x: len(nbrs[x]))
            if not images:
                still.append(v)
                continue
            cand = set(nbrs[images[0]])
            for x in images[1:_WITNESSES]:
                cand &= nbrs[x]
            cand = [c for c in cand if c not in taken and attrs[c] == attrs[v]
                    and machine[c] == machines.get(int(machine[v]), -1)
                    and rail[c] == (None if rail[v] is None else rails.get(rail[v]))]
            if len(cand) > 1:
                raise error(f"{names[v]!r} has {len(cand)} like images "
                            f"({names[cand[0]]!r}, {names[cand[1]]!r}): the permutation of the "
                            f"ranks does not fix one automorphism")
            if not cand:
                raise error(f"{names[v]!r} has no like image under the permutation of the ranks")
            perm[v] = cand[0]
            taken.add(cand[0])
        if len(still) == len(left):
            raise error(f"{names[still[0]]!r} is not connected to the ranks' nodes")
        left = still
    return perm


def check(net, perm, rails=None, error=NetsimError):
    """Raise ``error`` unless ``perm`` maps every node and edge to one with the same
    attributes (a node's ``node`` aside, and its ``rail`` through ``rails`` when given).

    Examples
    --------
    >>> import networkx as nx
    >>> from netsim.network.compiled import as_network
    >>> G = nx.Graph(); G.add_edge("a", "b", bandwidth=1e9, latency=1e-6)
    >>> G.add_edge("b", "c", bandwidth=2e9, latency=1e-6)
    >>> net = as_network(G)
    >>> check(net, np.array([2, 1, 0]))
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: edge 'a'-'b' has no like image 'c'-'b'
    """
    G = net.graph
    names = net.nodes
    if not np.array_equal(np.sort(perm), np.arange(len(perm))):
        raise error("the node map is not a permutation of the nodes")
    skip = ("node",) if rails is None else ("node", "rail")
    for i in np.flatnonzero(perm != np.arange(len(perm))).tolist():
        da, db = G.nodes[names[i]], G.nodes[names[perm[i]]]
        a = {k: v for k, v in da.items() if k not in skip}
        b = {k: v for k, v in db.items() if k not in skip}
        if a != b or (rails is not None and db.get("rail") != (
                None if da.get("rail") is None else rails.get(da["rail"]))):
            raise error(f"{names[i]!r} and its image {names[perm[i]]!r} differ: "
                        f"{dict(da)} against {dict(db)}")
    for u, v, data in G.edges(data=True):
        iu, iv = net.index[u], net.index[v]
        pu, pv = names[perm[iu]], names[perm[iv]]
        if not G.has_edge(pu, pv) or G.edges[pu, pv] != data:
            raise error(f"edge {u!r}-{v!r} has no like image {pu!r}-{pv!r}")


def odometers(n):
    """The cycles through ``n`` positions that are symmetries of a machine built as a tree
    (sockets of switches of GPUs, say): one per ordered factorisation ``n = r1 r2 ... rk``.

    Position ``x`` has digits ``x = d1 + r1 (d2 + r2 (d3 + ...))``, ``d1`` the place
    within the innermost group; the cycle adds one to the outermost digit ``dk`` and
    carries inwards, as an odometer read backwards. Each step moves every innermost
    group to the next and so keeps the tree (the adding machine, an automorphism of
    the tree of order ``n``). Factorisations that give the same cycle give it once.

    Returns
    -------
    list of list of int
        Each cycle as ``next``: position ``x`` goes to ``next[x]``.

    Examples
    --------
    >>> odometers(4)
    [[1, 2, 3, 0], [2, 3, 1, 0]]
    >>> c = odometers(8)[1]; x, seen = 0, []
    >>> for _ in range(8):
    ...     seen.append(x); x = c[x]
    >>> seen   # GPU pairs on four PCIe switches: next switch first, then the pair's other GPU
    [0, 2, 4, 6, 1, 3, 5, 7]
    """
    out = []
    for radix in _factorisations(n):
        nxt = []
        for x in range(n):
            digits, y = [], x
            for r in radix:
                digits.append(y % r)
                y //= r
            for i in reversed(range(len(radix))):   # outermost first, carrying inwards
                digits[i] += 1
                if digits[i] < radix[i]:
                    break
                digits[i] = 0
            y = 0
            for r, d in zip(reversed(radix), reversed(digits)):
                y = y * r + d
            nxt.append(y)
        if nxt not in out:
            out.append(nxt)
    return out


def strides(n):
    """The shifts ``x -> x + s (mod n)`` of ``n`` positions, ``s`` each proper divisor of
    ``n`` from the smallest: each moves every block of ``s`` consecutive positions to the
    next block, so its cycles all have ``n / s`` positions and their smallest are
    ``0 .. s - 1``.

    Where no cycle through all ``n`` positions (:func:`odometers`) maps what runs on them
    onto itself, a stride may: NCCL's ring ``0, 1, 2, 3`` through four GPUs is no image of
    itself under the cycle ``0, 2, 1, 3`` that keeps a DGX H100's PCIe pairs, but is under
    the stride 2, which swaps the pairs (``0 <-> 2, 1 <-> 3``); then ``s`` positions of
    each block of ``n`` are simulated, not one.

    Returns
    -------
    list of tuple
        ``(s, next)``: position ``x`` goes to ``next[x]``.

    Examples
    --------
    >>> strides(4)
    [(2, [2, 3, 0, 1])]
    >>> [s for s, _ in strides(8)]
    [2, 4]
    """
    return [(s, [(x + s) % n for x in range(n)]) for s in range(2, n) if n % s == 0]


def _factorisations(n):
    """Ordered factorisations of ``n`` into factors >= 2 (``n`` itself first)."""
    if n < 2:
        return [[n]] if n == 1 else []
    out = [[n]]
    for f in range(2, n):
        if n % f == 0:
            out += [[f, *rest] for rest in _factorisations(n // f)]
    return out
