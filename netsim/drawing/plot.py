"""Pictures: time against P, and (from :mod:`netsim.drawing.topology`) topologies.

matplotlib is imported inside each function, so the core never needs it. The
figures are plain :class:`matplotlib.figure.Figure` objects, not pyplot's: no
backend is selected (a notebook keeps its inline one) and no global figure is
left open. Each function writes its PNG and returns the figure, which a notebook
shows under its cell.
"""

import numpy as np

from netsim.drawing.topology import draw_topology

__all__ = ["draw_topology", "plot_series", "coincident", "label_log_axis"]


def _figure(**kwargs):
    """A new :class:`matplotlib.figure.Figure`, outside pyplot (no backend, no global state)."""
    from matplotlib.figure import Figure

    return Figure(**kwargs)


def _line(**kwargs):
    """A legend handle: a :class:`matplotlib.lines.Line2D` drawn nowhere."""
    from matplotlib.lines import Line2D

    return Line2D([], [], **kwargs)


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
        label = s["label"] if under[i] is None else f"{s['label']} (on {under[i]}'s curve, within 1 %)"
        apart = s.get("closed_label") is not None   # the closed form's own legend entry
        dots = ax.plot(s["P"], s["simulated"], ls="", marker=marker, ms=size, color=color,
                       zorder=3 + i, label=label if apart else None, **face)[0]
        has_closed = s.get("closed_form") is not None
        if has_closed:
            # Earlier lines wider, drawn first: a later line on top leaves their edges showing.
            line = ax.plot(s["P"], s["closed_form"], ls=ls, color=color,
                           lw=max(1.2, 3.0 - 0.6 * i), alpha=0.85, zorder=2 + 0.01 * i,
                           label=s["closed_label"] if apart else None)[0]
        if apart:   # the drawn artists themselves, each under the name of what it shows
            handles += [dots] + ([line] if has_closed else [])
        else:
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
    if any(s.get("closed_form") is not None and s.get("closed_label") is None for s in series):
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
        ``closed_form`` (list, s), ``closed_label`` (the closed form's own
        legend entry, for a closed form that is not the simulated quantity:
        then the markers and the line are each in the legend under their own
        name, ``label`` naming the markers), ``saturation`` (the P of its
        saturation point, circled on its simulated curve) and ``panel`` (the
        title of the panel it is drawn in).
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
