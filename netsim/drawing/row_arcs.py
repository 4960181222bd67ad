"""Links within one row of a drawing: arcs that cross as little as the row's order allows.

Two arcs drawn on the same side of a row cross exactly when their ends
interleave (``a < c < b < d``); nested or disjoint arcs need not. So the arcs
of a row are split between the two sides so that as few interleaving pairs as
possible share a side: none when the graph of interleaving pairs is bipartite
(the row's links form a two-page book embedding), else a local minimum found
by moving one arc at a time. On each side an arc's depth grows with its span
(in slots) as ``a m + b m**2``: the depth over the span never decreases, so of
two nested arcs the outer is everywhere outside the inner (the two parabolas
meet only at a shared end), and two arcs leaving one node leave it at different
angles. The smallest span clears the neighbouring node by ``clear`` rows.

Pure functions of integer positions: the drawing (:mod:`netsim.drawing.topology`)
turns them into curves.
"""

import itertools

import networkx as nx

__all__ = ["interleaving", "arc_sides", "arc_depths"]


def interleaving(arcs):
    """Pairs (i, j), i < j, of arcs whose ends interleave: on one side they cross.

    Parameters
    ----------
    arcs : list of (int, int)
        Each arc's two end positions in the row (slots), in either order.

    Returns
    -------
    list of (int, int)

    Examples
    --------
    >>> interleaving([(0, 2), (1, 3), (0, 3), (4, 6)])  # (0, 3) holds (1, 3) at its end
    [(0, 1)]
    """
    spans = [tuple(sorted(a)) for a in arcs]
    return [(i, j) for (i, (a, b)), (j, (c, d)) in itertools.combinations(enumerate(spans), 2)
            if a < c < b < d or c < a < d < b]


def _same_side(i, side, neighbours):
    return sum(side[j] == side[i] for j in neighbours[i])


def arc_sides(arcs):
    """Side of each arc, -1 below the row or +1 above, with fewest interleaving pairs on a side.

    A bipartite graph of interleaving pairs is 2-coloured (no crossing at all);
    otherwise single arcs are moved to the other side while that lowers the
    count. In each group of arcs that interleave, the larger part goes below.

    Parameters
    ----------
    arcs : list of (int, int)

    Returns
    -------
    list of int

    Examples
    --------
    >>> arc_sides([(0, 2), (1, 3), (0, 3)])  # the first two interleave: one goes above
    [-1, 1, -1]
    """
    C = nx.Graph()
    C.add_nodes_from(range(len(arcs)))
    C.add_edges_from(interleaving(arcs))
    side = {}
    for comp in nx.connected_components(C):
        start = min(comp)
        side[start] = -1
        for u, v in nx.bfs_edges(C, start):
            side[v] = -side[u]
    neighbours = {i: list(C[i]) for i in C}
    improved = not nx.is_bipartite(C)
    while improved:
        improved = False
        for i in range(len(arcs)):
            before = _same_side(i, side, neighbours)
            side[i] = -side[i]
            if _same_side(i, side, neighbours) < before:
                improved = True
            else:
                side[i] = -side[i]
    for comp in nx.connected_components(C):
        if sum(side[i] for i in comp) > 0:  # more above than below: turn the group over
            side.update((i, -side[i]) for i in comp)
    return [side[i] for i in range(len(arcs))]


def arc_depths(arcs, sides, below=0.9, above=0.9, clear=0.12):
    """Depth of each arc away from its row (rows), signed: negative below, positive above.

    Parameters
    ----------
    arcs : list of (int, int)
    sides : list of int
        From :func:`arc_sides`.
    below, above : float
        The deepest an arc may go on each side (rows).
    clear : float
        How far the shortest arc passes from the node it skips (rows).

    Returns
    -------
    list of float

    Examples
    --------
    >>> [round(d, 3) for d in arc_depths([(0, 2), (0, 3), (1, 5)], [-1, -1, 1])]
    [-0.2, -0.45, 0.6]
    """
    out = [0.0] * len(arcs)
    for s, deepest in ((-1, below), (1, above)):
        mine = [i for i, side in enumerate(sides) if side == s]
        if not mine:
            continue
        top = max(abs(arcs[i][1] - arcs[i][0]) for i in mine)
        cap = min(deepest, 0.15 * top)
        if top > 2:  # a + 2 b = clear / 2 (the span-2 arc clears its node), a top + b top^2 = cap
            b = (cap - clear * top / 2) / (top * top - 2 * top)
            if b <= 0:  # too many slots to clear every node within the cap: a straight rise
                a, b = cap / top, 0.0
            elif clear / 2 < 2 * b:  # room to spare: a pure square, clearing by more
                a, b = 0.0, cap / (top * top)
            else:
                a = clear / 2 - 2 * b
        else:
            a, b = cap / 2, 0.0
        for i in mine:
            m = abs(arcs[i][1] - arcs[i][0])
            out[i] = s * (a * m + b * m * m)
    return out
