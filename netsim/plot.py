"""Pictures: topologies coloured by link load, and time against P.

matplotlib is imported inside each function, so the core never needs it. The
figures are plain :class:`matplotlib.figure.Figure` objects, never registered
with pyplot: drawing one changes no backend and leaves a Jupyter session's
figures alone, and saving works whatever backend is active (or none).
"""

import networkx as nx
import numpy as np

from .errors import NetsimError
from .network import compute_nodes

__all__ = ["draw_topology", "plot_series"]


def _figure(figsize):
    """A new figure and its axes, outside pyplot (no backend switch, no global figure list)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    return fig, fig.subplots()


def _layout(G):
    """Compute nodes on the bottom row, each other node one row per hop above them."""
    ranks = compute_nodes(G)
    if len(ranks) == G.number_of_nodes() or not ranks:
        return nx.circular_layout(G) if G.number_of_nodes() <= 64 else nx.spring_layout(G, seed=0)
    U = G.to_undirected(as_view=True)
    dist = nx.multi_source_dijkstra_path_length(U, ranks, weight=None)
    far = max(dist.values(), default=0) + 1
    layers = {}
    for node in G.nodes:
        layers.setdefault(dist.get(node, far), []).append(node)
    pos = {}
    for depth in sorted(layers):
        nodes = layers[depth]
        if depth:  # order each upper row by where its lower neighbours sit
            nodes.sort(key=lambda n: np.mean([pos[m][0] for m in U[n] if m in pos] or [0.5]))
        for i, node in enumerate(nodes):
            pos[node] = ((i + 0.5) / len(nodes), float(depth))
    return pos


def draw_topology(G, result=None, path="topology.png", metric="mean_util"):
    """Draw a topology to PNG; with a result, colour and widen links by load.

    Parameters
    ----------
    G : networkx.Graph or DiGraph
    result : Result, optional
        Links are coloured by ``metric`` (the larger of a link's two directions).
    path : str or file
        Where to write the PNG.
    metric : str
        A per-link column of ``result.links``: ``mean_util``, ``peak_util``,
        ``bytes``, ``busy`` or ``saturated``.

    Examples
    --------
    >>> import os, tempfile
    >>> import networkx as nx  # a star: hosts on one switch
    >>> G = nx.Graph()
    >>> G.add_nodes_from([f"host{i}" for i in range(4)], kind="host")
    >>> G.add_edges_from([(h, "switch") for h in list(G)], bandwidth=1.25e9, latency=1e-6)
    >>> p = os.path.join(tempfile.mkdtemp(), "star.png")
    >>> draw_topology(G, path=p)
    >>> os.path.getsize(p) > 0
    True
    """
    from matplotlib import colormaps
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize
    from matplotlib.lines import Line2D

    pos = _layout(G)
    fig, ax = _figure((max(6, min(16, G.number_of_nodes() * 0.4)), 5))
    edges = list(G.edges())
    values = None
    if result is not None:
        # Result links are in Network order: edge i of G.edges() is link direction i of a
        # DiGraph, and directions 2i and 2i+1 (u->v, v->u) of an undirected graph.
        values = np.asarray(result.links[metric], np.float64)
        per_edge = 1 if G.is_directed() else 2
        if len(values) != per_edge * len(edges):
            raise NetsimError(f"the result has {len(values)} link directions but the topology "
                              f"has {per_edge * len(edges)}: simulate on this topology")
        if per_edge == 2:
            values = values.reshape(-1, 2).max(axis=1)
    kinds = [G.nodes[n].get("kind", "node") for n in G.nodes]
    palette = {"gpu": "#2ca02c", "host": "#1f77b4", "cpu": "#9467bd", "pcie_switch": "#8c564b",
               "nvswitch": "#e377c2", "nic": "#bcbd22", "switch": "#7f7f7f"}
    nx.draw_networkx_nodes(G, pos, ax=ax, node_size=160,
                           node_color=[palette.get(k, "#17becf") for k in kinds])
    if G.number_of_nodes() <= 40:
        nx.draw_networkx_labels(G, pos, ax=ax, font_size=6)
    if values is None:
        top, colors, widths = 1.0, ["#999999"] * len(edges), [1.0] * len(edges)
    else:
        top = values.max() if len(values) and values.max() > 0 else 1.0
        colors, widths = values, 0.5 + 4.0 * values / top
    # Links within one row (NVLinks between GPUs, ring and torus neighbours) are drawn as
    # arcs, so that a link to a farther node does not hide behind the nearer ones.
    row = [i for i, (u, v) in enumerate(edges) if pos[u][1] == pos[v][1]]
    rest = [i for i in range(len(edges)) if pos[edges[i][0]][1] != pos[edges[i][1]][1]]
    for idx, curved in ((rest, False), (row, True)):
        if not idx:
            continue
        style = dict(arrows=True, arrowstyle="-", connectionstyle="arc3,rad=0.3") if curved else {}
        nx.draw_networkx_edges(
            G, pos, ax=ax, edgelist=[edges[i] for i in idx],
            edge_color=[colors[i] for i in idx], width=[widths[i] for i in idx],
            edge_cmap=colormaps["plasma"] if values is not None else None,
            edge_vmin=0.0, edge_vmax=top, **style)
    if values is not None:
        scale = ScalarMappable(cmap=colormaps["plasma"], norm=Normalize(0.0, top))
        label = {"mean_util": "mean utilisation (fraction of capacity)",
                 "peak_util": "peak utilisation (fraction of capacity)",
                 "bytes": "bytes carried (B)", "busy": "busy time (s)",
                 "saturated": "time at >= 99 % of capacity (s)"}.get(metric, metric)
        fig.colorbar(scale, ax=ax, label=label)
    handles = [Line2D([], [], marker="o", ls="", color=palette.get(k, "#17becf"), label=k)
               for k in sorted(set(kinds))]
    ax.legend(handles=handles, loc="upper left", fontsize=7, frameon=False)
    ax.set_title(G.graph.get("name", "topology"))
    ax.set_axis_off()
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=110)


def plot_series(series, path, title="", xlabel="workers P", ylabel="time per iteration (s)",
                marks=(), logy=False, saturation_label="saturation point"):
    """Plot time against P on a log2 P axis: markers for simulated, lines for closed forms.

    Parameters
    ----------
    series : list of dict
        Each has ``label``, ``P`` (list), ``simulated`` (list, s) and optionally
        ``closed_form`` (list, s) and ``saturation`` (the P of its saturation
        point, circled on its simulated curve).
    path : str or file
        Where to write the PNG.
    marks : list of (P, text)
        Vertical markers, e.g. a saturation point.
    logy : bool
        Logarithmic time axis.
    saturation_label : str
        Legend entry of the circled saturation points.

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "s.png")
    >>> plot_series([{"label": "ring", "P": [2, 4, 8], "simulated": [1.0, 1.5, 1.75],
    ...               "closed_form": [1.0, 1.5, 1.75]}], p)
    >>> os.path.getsize(p) > 0
    True
    """
    many = len(series) > 3  # then the legend goes beside the axes, not over the curves
    fig, ax = _figure((11 if many else 7, 4.5))
    circled = False
    for i, s in enumerate(series):
        color = f"C{i}"
        ax.plot(s["P"], s["simulated"], "o", color=color, label=f"{s['label']} (simulated)")
        if s.get("closed_form") is not None:
            ax.plot(s["P"], s["closed_form"], "-", color=color, alpha=0.7,
                    label=f"{s['label']} (closed form)")
        if s.get("saturation") is not None and s["saturation"] in s["P"]:
            y = s["simulated"][list(s["P"]).index(s["saturation"])]
            ax.plot([s["saturation"]], [y], "o", ms=14, mfc="none", mec="red", mew=1.5,
                    label=saturation_label if not circled else None)
            circled = True
    for p, text in marks:
        ax.axvline(p, color="red", ls="--", lw=1)
        ax.annotate(text, (p, ax.get_ylim()[1]), color="red", fontsize=8, rotation=90,
                    va="top", ha="right")
    ax.set_xscale("log", base=2)
    ticks = sorted({p for s in series for p in s["P"]})
    if 0 < len(ticks) <= 16:  # label the P values themselves: 2, 4, 8 rather than 2^1, 2^2
        ax.set_xticks(ticks, [str(p) for p in ticks])
        ax.minorticks_off()
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    if many:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    else:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=110)
