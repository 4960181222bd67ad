"""Drawing a topology: rows by hops from the ranks, links by bandwidth, crowded rows merged.

:func:`draw_topology` lays the compute nodes out on the bottom row and every
other node one row per hop above them (a graph of compute nodes only goes on a
circle). What a reader needs to see is kept visible:

* each node's name sits beside its marker, never over it (rotated when a row is
  crowded; left out, and the title says so, for the spring layout of over 64 ranks);
* each link is drawn in the colour of its kind and a width growing with its
  bandwidth, and the legend gives both in human units (``NVLink2 x2: 400
  Gbps``); with a replay result the colour is the link's load instead;
* in a row of more than :data:`MAX_ROW` nodes, nodes of one kind with the
  same neighbours below (the NICs of one PCIe switch; in the bottom row, above:
  the hosts of one edge switch) are drawn as one square
  marker labelled with their count, and the links they share as one line
  labelled ``x k``;
* links within a row (NVLinks between GPUs) are arcs, split between the two
  sides of the row so that as few cross as the row's order allows, nested by
  span so that none lies on another or passes through a node's marker
  (:mod:`netsim.drawing.row_arcs`); neighbours are joined by a straight line.

matplotlib is imported inside the function: the core never needs it.
"""

import networkx as nx
import numpy as np

from netsim.errors import NetsimError
from netsim.network.compiled import compute_nodes
from netsim.drawing.row_arcs import arc_depths, arc_sides, interleaving
from netsim.units import format_bandwidth

__all__ = ["draw_topology", "MAX_ROW"]

MAX_ROW = 48
"""Most nodes drawn side by side in one row before nodes of a kind with the same
neighbours below are merged into one marker (a drawing choice: at the figure's widest,
24 inches, 48 markers leave about a third of an inch each)."""

_PALETTE = {"gpu": "#2ca02c", "host": "#1f77b4", "cpu": "#9467bd", "pcie_switch": "#8c564b",
            "nvswitch": "#e377c2", "nic": "#bcbd22", "switch": "#7f7f7f"}
_NODE_SIZE = 110.0  # scatter marker area (points^2) of one node; a merged group's is twice


def _rows(G):
    """Row of every node: hops from the nearest compute node, or None for a circle layout."""
    ranks = compute_nodes(G)
    if len(ranks) == G.number_of_nodes() or not ranks:
        return None
    U = G.to_undirected(as_view=True)
    dist = nx.multi_source_dijkstra_path_length(U, ranks, weight=None)
    far = max(dist.values(), default=0) + 1
    return {n: dist.get(n, far) for n in G.nodes}


def _merge(G, rows):
    """Groups of nodes drawn as one: {member: group name}, and each group's members.

    Only in rows longer than :data:`MAX_ROW`: nodes of one kind whose neighbours in
    lower rows (in the bottom row: in upper rows) are the same set, and whose links are
    of the same kinds and bandwidths, share a group.
    """
    by_row = {}
    for n, r in rows.items():
        by_row.setdefault(r, []).append(n)
    U = G.to_undirected(as_view=True)
    group, members = {}, {}
    for r, nodes in by_row.items():
        if len(nodes) <= MAX_ROW:
            continue
        keys = {}
        for n in nodes:
            # the bottom row has nothing below: its nodes group by the node(s) above them
            under = frozenset(m for m in U[n] if (rows[m] < r if r else rows[m] > r))
            # and the same kinds of link: a merged line stands for links of one kind
            links = frozenset((d.get("link") or d.get("technology"), d.get("bandwidth"))
                              for _, _, d in U.edges(n, data=True))
            keys.setdefault((G.nodes[n].get("kind", "node"), under, links), []).append(n)
        for same in keys.values():
            if len(same) > 1:
                name = f"{same[0]}..{same[-1]}"
                members[name] = same
                group.update((n, name) for n in same)
    return group, members


def _interleaved_links(H, row):
    """How many pairs of links within ``row`` (a node list) interleave: arcs that may cross."""
    slot = {n: i for i, n in enumerate(row)}
    return len(interleaving([(slot[u], slot[v]) for u, v in H.subgraph(row).edges
                             if abs(slot[u] - slot[v]) > 1]))


def _untangle(H, rows, bottom):
    """The bottom row reordered, without tangling the tree above it, so that fewer of its
    within-row links interleave: the block of ranks under one upper node is reversed
    (the GPUs of a PCIe switch, a socket's switches) when that lowers the count."""
    if not H.subgraph(bottom).number_of_edges():
        return bottom
    below = {}  # each upper node's ranks: reached by steps down a row at a time
    for n in sorted(H.nodes, key=lambda n: rows[n]):
        if rows[n]:
            below[n] = set().union(*({m} if rows[m] == 0 else below.get(m, set())
                                     for m in H[n] if rows[m] == rows[n] - 1))
    best, count = list(bottom), _interleaved_links(H, bottom)
    # from the top down, and right to left in a row: the left end keeps its order
    for n in sorted(below, key=lambda n: (-rows[n], -min(bottom.index(m) for m in below[n]))):
        slots = [i for i, m in enumerate(best) if m in below[n]]
        if len(slots) < 2 or slots[-1] - slots[0] + 1 != len(slots):
            continue  # not one block of the row: reversing it would cross the tree
        trial = best[:slots[0]] + best[slots[0]:slots[-1] + 1][::-1] + best[slots[-1] + 1:]
        if (c := _interleaved_links(H, trial)) < count:
            best, count = trial, c
    return best


def _positions(H, rows):
    """Bottom row first, each upper row ordered by where its lower neighbours sit."""
    layers = {}
    for node in H.nodes:
        layers.setdefault(rows[node], []).append(node)
    if 0 in layers:
        layers[0] = _untangle(H, rows, layers[0])
    pos = {}
    for depth in sorted(layers):
        nodes = layers[depth]
        if depth:
            nodes.sort(key=lambda n: np.mean([pos[m][0] for m in H[n] if m in pos] or [0.5]))
        for i, node in enumerate(nodes):
            pos[node] = ((i + 0.5) / len(nodes), float(depth))
    return pos


def _drawn_graph(G):
    """The graph as drawn: merged groups contracted; each drawn edge keeps its original
    edge indices (``index``), its ``count`` and the bandwidth and name of one link."""
    rows = _rows(G)
    group, members = _merge(G, rows) if rows else ({}, {})
    H = nx.Graph()
    for n in G.nodes:
        g = group.get(n, n)
        if g not in H:
            H.add_node(g, kind=G.nodes[n].get("kind", "node"),
                       count=len(members.get(g, [n])))
    for i, (u, v, d) in enumerate(G.edges(data=True)):
        a, b = group.get(u, u), group.get(v, v)
        if a == b:
            continue
        if not H.has_edge(a, b):
            H.add_edge(a, b, index=[], pairs=set(), bandwidth=float(d.get("bandwidth", 0.0)),
                       link=d.get("link") or d.get("technology"))
        H.edges[a, b]["index"].append(i)
        H.edges[a, b]["pairs"].add(frozenset((u, v)))  # a DiGraph's two directions: one link
    for _, _, d in H.edges(data=True):
        d["count"] = len(d.pop("pairs"))
    drawn_rows = ({g: rows[m[0]] for g, m in members.items()} | rows) if rows else None
    return H, drawn_rows


def _layout(H, rows):
    if rows is None:
        if H.number_of_nodes() <= 64:
            return nx.circular_layout(H)
        return nx.spring_layout(H, seed=0)
    return _positions(H, {n: rows[n] for n in H.nodes})


def _row_order(H, pos):
    """{node: slot in its row}, rows left to right."""
    order = {}
    for y in sorted({p[1] for p in pos.values()}):
        row = sorted((n for n in pos if pos[n][1] == y), key=lambda n: pos[n][0])
        order.update((n, i) for i, n in enumerate(row))
    return order


def _arc_depths(H, pos):
    """Signed depth (rows; negative below) of each within-row edge that skips a node.

    :mod:`netsim.drawing.row_arcs` splits a row's arcs between its two sides so that as few
    as the order allows cross, and sets their depths by span. The bottom row's arcs
    go down to 0.9 rows below it and the top row's 0.9 above; elsewhere at most 0.42
    rows, so that the arcs of two neighbouring rows stay apart."""
    order = _row_order(H, pos)
    ys = sorted({p[1] for p in pos.values()})
    depths = {}
    for y in ys:
        edges = [(u, v) for u, v in H.edges if pos[u][1] == pos[v][1] == y
                 and abs(order[u] - order[v]) > 1]
        arcs = [(order[u], order[v]) for u, v in edges]
        sides = arc_sides(arcs)
        deep = arc_depths(arcs, sides, below=0.9 if y == ys[0] else 0.42,
                          above=0.9 if y == ys[-1] else 0.42)
        depths.update(zip(edges, deep))
    return depths


def _curve(p, q, depth, samples=40):
    """Points of a quadratic Bezier from p to q bulging ``depth`` rows (negative: below)."""
    t = np.linspace(0.0, 1.0, samples)[:, None]
    p, q = np.asarray(p, float), np.asarray(q, float)
    c = (p + q) / 2 + np.array([0.0, 2.0 * depth])  # the curve's apex is half the control's
    return (1 - t) ** 2 * p + 2 * (1 - t) * t * c + t ** 2 * q


def _link_classes(H):
    """Each distinct (link name, bandwidth), by bandwidth: the legend's link entries."""
    keys = {(d["link"], d["bandwidth"]) for _, _, d in H.edges(data=True)}
    return sorted(keys, key=lambda k: (k[1], str(k[0])))


def _edge_values(G, result, metric):
    """Per original edge, the larger of its directions' ``metric`` (None without result)."""
    if result is None:
        return None
    values = np.asarray(result.links[metric], np.float64)
    per_edge = 1 if G.is_directed() else 2
    if len(values) != per_edge * G.number_of_edges():
        raise NetsimError(f"the result has {len(values)} link directions but the topology "
                          f"has {per_edge * G.number_of_edges()}: simulate on this topology")
    # Result links are in Network order: edge i of G.edges() is link direction i of a
    # DiGraph, and directions 2i and 2i+1 (u->v, v->u) of an undirected graph.
    return values.reshape(-1, 2).max(axis=1) if per_edge == 2 else values


def _label_nodes(ax, fig, H, pos, rows):
    """Each node's name beside its marker: below it in a row (rotated when the row is
    crowded), outward on a circle."""
    texts = {n: f"{H.nodes[n]['count']} x {H.nodes[n]['kind']}" if H.nodes[n]["count"] > 1
             else str(n) for n in H.nodes}
    crowded = set()
    if rows is not None:  # a row is rotated whole when its longest label is wider than a slot
        by_row = {}
        for n in H.nodes:
            by_row.setdefault(pos[n][1], []).append(len(texts[n]))
        for y, lengths in by_row.items():
            slot = fig.get_figwidth() * 0.7 * 72 / len(lengths)  # points of row per node
            if max(lengths) * 7 * 0.62 + 4 > slot:  # 7 pt characters about 0.62 em wide
                crowded.add(y)
    for n in H.nodes:
        count = H.nodes[n]["count"]
        text = texts[n]
        radius = np.sqrt(_NODE_SIZE * (2 if count > 1 else 1)) / 2  # points
        if rows is None:
            x, y = pos[n]
            r = np.hypot(x, y) or 1.0
            off = (radius + 3) * np.array([x / r, y / r])
            ax.annotate(text, pos[n], xytext=off, textcoords="offset points", fontsize=7,
                        ha="left" if x > 0.05 else "right" if x < -0.05 else "center",
                        va="bottom" if y > 0.05 else "top" if y < -0.05 else "center",
                        gid=f"label:{n}", zorder=5)
            continue
        ax.annotate(text, pos[n], xytext=(0, -(radius + 2)), textcoords="offset points",
                    fontsize=7, ha="center", va="top", rotation=90 if pos[n][1] in crowded else 0,
                    gid=f"label:{n}", zorder=5,
                    bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.8))


def _draw_links(ax, H, pos, colors, widths):
    """Straight lines between rows and to within-row neighbours, arcs for the others; a
    merged link is labelled with its count."""
    depths = _arc_depths(H, pos)
    for (u, v, d), color, width in zip(H.edges(data=True), colors, widths):
        depth = depths.get((u, v), depths.get((v, u)))
        pts = (np.array([pos[u], pos[v]], float) if depth is None
               else _curve(pos[u], pos[v], depth))
        ax.plot(pts[:, 0], pts[:, 1], color=color, lw=width, solid_capstyle="butt", zorder=1,
                gid=f"edge:{u}|{v}")
        if d["count"] > 1:
            mid = pts[len(pts) // 2] if depth is not None else pts.mean(axis=0)
            ax.text(mid[0], mid[1], f"x{d['count']}", fontsize=6, ha="center", va="center",
                    zorder=4, bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none"))


def draw_topology(G, result=None, path="topology.png", metric="mean_util", title=None):
    """Draw a topology to PNG: links by kind and bandwidth, or by load with a result.

    Parameters
    ----------
    G : networkx.Graph or DiGraph
    result : Result, optional
        Links are coloured by ``metric`` (the larger of a link's two directions;
        for links drawn as one, the largest of them).
    path : str or file
        Where to write the PNG.
    metric : str
        A per-link column of ``result.links``: ``mean_util``, ``peak_util``,
        ``bytes``, ``busy`` or ``saturated``.
    title : str, optional
        The picture's title (default: the graph's ``name``, else "topology").

    Returns
    -------
    matplotlib.figure.Figure
        The figure, already written (a notebook shows it under its cell).

    Examples
    --------
    >>> import os, tempfile
    >>> import networkx as nx  # a star: hosts on one switch
    >>> G = nx.Graph()
    >>> G.add_nodes_from([f"host{i}" for i in range(4)], kind="host")
    >>> G.add_edges_from([(h, "switch") for h in list(G)], bandwidth=1.25e9, latency=1e-6)
    >>> p = os.path.join(tempfile.mkdtemp(), "star.png")
    >>> fig = draw_topology(G, path=p)
    >>> os.path.getsize(p) > 0, fig.axes[0].get_legend().get_texts()[0].get_text()
    (True, '10 Gbps')
    """
    import matplotlib
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    values = _edge_values(G, result, metric)
    H, rows = _drawn_graph(G)
    pos = _layout(H, rows)
    widest = max(np.unique([p[1] for p in pos.values()], return_counts=True)[1]) if rows else 12
    depth = max(rows.values()) + 1 if rows else 4
    fig = Figure(figsize=(min(24.0, max(7.0, 0.42 * widest + 2.0)), max(4.5, 1.25 * depth + 2.0)))
    ax = fig.subplots()
    classes = _link_classes(H)
    bws = np.log([max(bw, 1.0) for _, bw in classes])
    span = bws.max() - bws.min() if len(bws) else 0.0
    width_of = {k: 0.8 + (2.6 * (b - bws.min()) / span if span > 0 else 1.0)
                for k, b in zip(classes, bws)}
    tab = matplotlib.colormaps["Dark2"]
    color_of = {k: tab(i % 8) for i, k in enumerate(classes)}
    keys = [(d["link"], d["bandwidth"]) for _, _, d in H.edges(data=True)]
    widths = [width_of[k] for k in keys]
    if values is None:
        colors = [color_of[k] for k in keys]
    else:
        load = [max(values[i] for i in d["index"]) for _, _, d in H.edges(data=True)]
        top = max(load) if load and max(load) > 0 else 1.0
        plasma = matplotlib.colormaps["plasma"]
        colors = [plasma(v / top) for v in load]
    _draw_links(ax, H, pos, colors, widths)
    kinds = sorted({H.nodes[n]["kind"] for n in H.nodes})
    for kind in kinds:
        for merged in (False, True):
            nodes = [n for n in H.nodes if H.nodes[n]["kind"] == kind
                     and (H.nodes[n]["count"] > 1) == merged]
            if nodes:
                ax.scatter([pos[n][0] for n in nodes], [pos[n][1] for n in nodes],
                           s=_NODE_SIZE * (2 if merged else 1), marker="s" if merged else "o",
                           color=_PALETTE.get(kind, "#17becf"), edgecolor="white",
                           linewidth=0.6, zorder=3, gid=f"nodes:{kind}:{int(merged)}")
    # A spring layout (over 64 nodes, all ranks) packs nodes too closely to name them all.
    unnamed = rows is None and H.number_of_nodes() > 64
    if not unnamed:
        _label_nodes(ax, fig, H, pos, rows)
    if values is not None:
        label = {"mean_util": "mean utilisation (fraction of capacity)",
                 "peak_util": "peak utilisation (fraction of capacity)",
                 "bytes": "bytes carried (B)", "busy": "busy time (s)",
                 "saturated": "time at >= 99 % of capacity (s)"}.get(metric, metric)
        fig.colorbar(ScalarMappable(cmap=plasma, norm=Normalize(0.0, top)), ax=ax, label=label,
                     fraction=0.04)
    links = [Line2D([], [], lw=width_of[k], color=color_of[k] if values is None else "gray",
                    label=(f"{k[0]}: " if k[0] else "") + format_bandwidth(k[1]))
             for k in classes]
    nodes = [Line2D([], [], marker="o", ls="", color=_PALETTE.get(k, "#17becf"), label=k)
             for k in kinds]
    if any(H.nodes[n]["count"] > 1 for n in H.nodes):
        nodes.append(Line2D([], [], marker="s", ls="", color="gray", ms=8,
                            label="k nodes of a kind on the same neighbours, drawn as one"))
    # Below the drawing: clear of the nodes and of the colour bar on the right.
    ax.legend(handles=links + nodes, loc="upper center", bbox_to_anchor=(0.5, -0.02),
              fontsize=8, frameon=False, ncol=min(4, len(links) + len(nodes)),
              title="links (width grows with bandwidth)" + (f"; colour: {metric}" if values
                                                           is not None else ""),
              title_fontsize=8)
    ax.set_title((title or G.graph.get("name", "topology"))
                 + (f"\n(node names left out: {H.number_of_nodes()} nodes)" if unnamed else ""),
                 wrap=True)
    ax.margins(0.06, 0.12)
    ax.set_axis_off()
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=110, bbox_inches="tight", pad_inches=0.15)
    return fig
