"""Pictures: topologies coloured by link load, and time against P.

matplotlib is imported inside each function, so the core never needs it. The
figures are plain :class:`matplotlib.figure.Figure` objects, not pyplot's: no
backend is selected (a notebook keeps its inline one) and no global figure is
left open. Each function writes its PNG and returns the figure, which a notebook
shows under its cell.
"""

import networkx as nx
import numpy as np

from .errors import NetsimError
from .network import compute_nodes

__all__ = ["draw_topology", "plot_series", "coincident", "label_log_axis"]


def _figure(**kwargs):
    """A new :class:`matplotlib.figure.Figure`, outside pyplot (no backend, no global state)."""
    from matplotlib.figure import Figure

    return Figure(**kwargs)


def _line(**kwargs):
    """A legend handle: a :class:`matplotlib.lines.Line2D` drawn nowhere."""
    from matplotlib.lines import Line2D

    return Line2D([], [], **kwargs)


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


def draw_topology(G, result=None, path="topology.png", metric="mean_util", title=None):
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
    >>> _ = draw_topology(G, path=p)
    >>> os.path.getsize(p) > 0
    True
    """
    import matplotlib
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

    pos = _layout(G)
    fig = _figure(figsize=(max(6, min(16, G.number_of_nodes() * 0.4)), 5))
    ax = fig.subplots()
    plasma = matplotlib.colormaps["plasma"]
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
            edge_cmap=plasma if values is not None else None,
            edge_vmin=0.0, edge_vmax=top, **style)
    if values is not None:
        scale = ScalarMappable(cmap=plasma, norm=Normalize(0.0, top))
        label = {"mean_util": "mean utilisation (fraction of capacity)",
                 "peak_util": "peak utilisation (fraction of capacity)",
                 "bytes": "bytes carried (B)", "busy": "busy time (s)",
                 "saturated": "time at >= 99 % of capacity (s)"}.get(metric, metric)
        fig.colorbar(scale, ax=ax, label=label)
    handles = [_line(marker="o", ls="", color=palette.get(k, "#17becf"), label=k)
               for k in sorted(set(kinds))]
    # Below the drawing: clear of the nodes and of the colour bar on the right.
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), fontsize=8,
              frameon=False, ncol=len(handles))
    ax.set_title(title or G.graph.get("name", "topology"), wrap=True)
    ax.set_axis_off()
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=110, bbox_inches="tight", pad_inches=0.15)
    return fig


def label_log_axis(axis, fmt="{:g}"):
    """Label a log axis at enough places to read it: at least two labelled ticks.

    Decades alone leave one label, or none, on an axis spanning less than a
    few decades; this labels 1, 2, 5 times each decade over up to three
    decades, and every integer multiple over less than one.

    Parameters
    ----------
    axis : matplotlib.axis.XAxis or YAxis
        The axis, already on a log scale and with its data drawn (its limits
        decide the ticks).
    fmt : str or callable, optional
        A format string, or a function of the tick value, giving its label.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().subplots()
    >>> _ = ax.plot([0.4, 6.0], [1.0, 2.0]); ax.set_xscale("log")
    >>> label_log_axis(ax.xaxis)
    >>> [f"{x:g}" for x in ax.get_xticks() if 0.4 <= x <= 6.0]
    ['0.5', '1', '2', '5']
    """
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    lo, hi = sorted(axis.axes.get_xlim() if axis.axis_name == "x" else axis.axes.get_ylim())
    span = np.log10(hi / lo) if lo > 0 else np.inf
    subs = (1.0,) if span > 3 else (1.0, 2.0, 5.0) if span > 1 else tuple(range(1, 10))
    axis.set_major_locator(LogLocator(base=10, subs=subs))
    label = fmt if callable(fmt) else fmt.format
    axis.set_major_formatter(FuncFormatter(lambda x, _pos: label(x)))
    axis.set_minor_formatter(NullFormatter())


MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
"""Marker of the i-th series of a panel: a series hidden under another still shows its shape."""

LINESTYLES = ("-", "--", ":", "-.")
"""Closed-form line style of the i-th series of a panel."""


def _colors(n):
    """n distinct colours: tab10 up to 10 series, tab20 up to 20, then a sampled colour map."""
    import matplotlib

    if n <= 10:
        return [matplotlib.colormaps["tab10"](i) for i in range(n)]
    if n <= 20:
        return [matplotlib.colormaps["tab20"](i) for i in range(n)]
    return [matplotlib.colormaps["turbo"](i / (n - 1)) for i in range(n)]


def _same(a, b, rtol=0.01):
    """Whether two curves (lists of values, None for no curve) lie on top of each other:
    within ``rtol`` of each other at every point, less than a marker's width on either axis."""
    if a is None or b is None or len(a) != len(b):
        return False
    return bool(np.allclose(np.asarray(a, float), np.asarray(b, float), rtol=rtol, atol=0.0))


def coincident(series):
    """For each series, the label of the first earlier series it lies on (else None).

    Two series coincide when they have the same P values and their simulated
    times, and their closed forms when both have one, are within 1 % at every
    P: drawn, one marker hides the other (on a log axis of two decades, 1 % is
    under a pixel), so the legend has to say so.

    Parameters
    ----------
    series : list of dict
        As for :func:`plot_series`.

    Returns
    -------
    list of str or None

    Examples
    --------
    >>> coincident([{"label": "ring", "P": [2, 4], "simulated": [1.0, 2.0]},
    ...             {"label": "be", "P": [2, 4], "simulated": [1.0, 2.0]},
    ...             {"label": "ps", "P": [2, 4], "simulated": [1.0, 3.0]}])
    [None, 'ring', None]
    """
    out = []
    for i, s in enumerate(series):
        under = None
        for t in series[:i]:
            if list(t["P"]) != list(s["P"]) or not _same(t["simulated"], s["simulated"]):
                continue
            a, b = t.get("closed_form"), s.get("closed_form")
            if a is None or b is None or _same(a, b):
                under = t["label"]
                break
        out.append(under)
    return out


def _panel(ax, series, marks, logy, saturation_label, xlabel, ylabel):
    """Draw one panel; return its legend handles."""
    handles = []
    colors = _colors(len(series))
    circled = None
    under = coincident(series)
    for i, s in enumerate(series):
        color, marker, ls = colors[i], MARKERS[i % len(MARKERS)], LINESTYLES[i % len(LINESTYLES)]
        # The first series is filled and large, the others hollow, of other shapes and
        # smaller: a series exactly on top of another leaves both visible.
        size = 11.0 if i == 0 else max(5.0, 8.0 - 0.6 * i)
        face = {"mec": "black", "mew": 0.5} if i == 0 else {"mfc": "none", "mec": color, "mew": 1.8}
        ax.plot(s["P"], s["simulated"], ls="", marker=marker, ms=size, color=color, zorder=3 + i,
                **face)
        has_closed = s.get("closed_form") is not None
        if has_closed:
            # Earlier lines wider, drawn first: a later line on top leaves their edges showing.
            ax.plot(s["P"], s["closed_form"], ls=ls, color=color, lw=max(1.2, 3.0 - 0.6 * i),
                    alpha=0.85, zorder=2 + 0.01 * i)
        label = s["label"] if under[i] is None else f"{s['label']} (on {under[i]}'s curve, within 1 %)"
        handles.append(_line(marker=marker, ms=7, color=color, ls=ls if has_closed else "",
                             label=label, **face))
        if s.get("saturation") is not None and s["saturation"] in s["P"]:
            y = s["simulated"][list(s["P"]).index(s["saturation"])]
            circled = ax.plot([s["saturation"]], [y], "o", ms=16, mfc="none", mec="red", mew=1.5,
                              zorder=10)[0]
    if circled is not None:
        handles.append(_line(marker="o", ms=10, mfc="none", mec="red", mew=1.5,
                                  ls="", label=saturation_label))
    for p, text in marks:
        handles.append(ax.axvline(p, color="red", ls="--", lw=1, label=text))
    if any(s.get("closed_form") is not None for s in series):
        handles.append(_line(ls="", label="markers: simulated, lines: closed form"))
    ax.set_xscale("log", base=2)
    ticks = sorted({p for s in series for p in s["P"]})
    if 0 < len(ticks) <= 16:  # label the P values themselves: 2, 4, 8 rather than 2^1, 2^2
        ax.set_xticks(ticks, [str(p) for p in ticks])
        ax.minorticks_off()
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    return handles


def plot_series(series, path, title="", xlabel="workers P", ylabel="time per iteration (s)",
                marks=(), logy=False, saturation_label="saturation point"):
    """Plot time against P on a log2 P axis: markers for simulated, lines for closed forms.

    Every series has its own colour, marker and line style, and earlier ones
    are drawn larger, so identical curves stay visible. Series with a
    ``panel`` key are drawn as small multiples, one panel per value. Each
    panel's legend sits outside its data, to the right, one entry per series.

    Parameters
    ----------
    series : list of dict
        Each has ``label``, ``P`` (list), ``simulated`` (list, s) and optionally
        ``closed_form`` (list, s), ``saturation`` (the P of its saturation
        point, circled on its simulated curve) and ``panel`` (the title of
        the panel it is drawn in).
    path : str or file
        Where to write the PNG.
    marks : list of (P, text)
        Vertical markers, e.g. a saturation point, named in the legend.
    logy : bool
        Logarithmic time axis.
    saturation_label : str
        Legend entry of the circled saturation points.

    Returns
    -------
    matplotlib.figure.Figure
        The figure, already written (a notebook shows it under its cell).

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "s.png")
    >>> _ = plot_series([{"label": "ring", "P": [2, 4, 8], "simulated": [1.0, 1.5, 1.75],
    ...                   "closed_form": [1.0, 1.5, 1.75]}], p)
    >>> os.path.getsize(p) > 0
    True
    """
    panels = list(dict.fromkeys(s.get("panel", "") for s in series)) or [""]
    ncols = 1 if len(panels) == 1 else 2
    nrows = -(-len(panels) // ncols)
    fig = _figure(figsize=(7.5 * ncols + 2.5, 4.2 * nrows + 0.4), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for ax, panel in zip(axes.flat, panels):
        handles = _panel(ax, [s for s in series if s.get("panel", "") == panel], marks, logy,
                         saturation_label, xlabel, ylabel)
        ax.legend(handles=handles, fontsize=7.5, loc="upper left", bbox_to_anchor=(1.02, 1.0),
                  borderaxespad=0.0)
        if panel:
            ax.set_title(panel, fontsize=10)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    if len(panels) > 1:
        fig.suptitle(title, wrap=True)
    else:
        axes[0][0].set_title(title, wrap=True)
    fig.savefig(path, format="png", dpi=110, bbox_inches="tight", pad_inches=0.15)
    return fig
