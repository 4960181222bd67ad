"""Overlap study: time per iteration against P with communication hidden behind computation.

Synchronous data parallelism with a ring allreduce of the gradient
(:mod:`workloads.paradigms.allreduce`) on a star of hosts (one switch), for each way the
gradient may leave (:mod:`workloads.overlap`):

* ``none``: one fused allreduce after the whole backward pass;
* ``layerwise``: one allreduce per layer, started when its backward op ends;
* ``bucketed``: PyTorch DDP's buckets (25 MiB by default);
* ``priority``: P3 / ByteScheduler: per-layer tensors cut into chunks of
  ``partition_bytes``, the first layer's most urgent, replayed with strict
  priority sharing (``sharing="priority"``).

In every mode the next forward op of a layer waits only for that layer's new
parameters. A small allreduce run is recorded once per mode (Iris, two workers)
and resized to the real model's shapes (:func:`workloads.models.resize`) at each
P. Next to each simulation: the closed form of the communication left exposed
(:func:`workloads.overlap.exposed_communication`, the pieces one after the
other at the ring allreduce closed form of their bytes, with alpha = two hops of
latency and beta = 1 / link bandwidth), and the fused ring allreduce time
(:func:`netsim.costmodel.ring_allreduce`) that ``none`` leaves exposed whole.

Examples
--------
>>> recs = overlap_study(models=("resnet50",), networks=("100GbE",), workers=(2,),
...                      modes=("none", "bucketed"))
>>> [(r["overlap"], r["P"]) for r in recs]
[('none', 2), ('bucketed', 2)]
>>> recs[1]["speedup"] > 1.0
True
"""

import numpy as np

from netsim import costmodel
from netsim.checks import check_int, check_real
from netsim.comm.library import check_placed
from netsim.result import simulate
from netsim.trace.core import COMPUTE
from topologies import ETHERNET, ETHERNET_LATENCY, star
import workloads
from workloads.models import get_model, resize
from workloads.overlap import DDP_BUCKET_BYTES, OVERLAP, exposed_communication, pieces
from workloads.recorder import V100_FP32_FLOPS
from workloads.errors import WorkloadError

__all__ = ["format_speedups", "overlap_study", "plot_overlap", "PARTITION_BYTES"]

#: The study's tensor partition of the ``priority`` mode: 4 MB chunks. A study
#: parameter, not a hardware constant: ByteScheduler tunes it per model and network
#: (Peng et al., SOSP 2019, section 5), P3 slices parameters finer than layers
#: (Jayarajan et al., MLSys 2019).
PARTITION_BYTES = 4e6


def _compute(trace, device_flops):
    """Seconds of forward and backward on worker 0 in iteration 0."""
    names = list(trace.tags)
    tags = [names.index(t) for t in ("forward", "backward") if t in names]
    sel = ((trace.kind == COMPUTE) & np.isin(trace.tag, tags) & (trace.rank == 0)
           & (trace.iteration == 0))
    return float(trace.flops[sel].sum()) / device_flops


def overlap_study(models=("resnet50", "bert-large"), networks=("10GbE", "100GbE"),
                  workers=(2, 4, 8), modes=OVERLAP, batch_size=32,
                  partition_bytes=PARTITION_BYTES, bucket_bytes=DDP_BUCKET_BYTES, iterations=2,
                  device_flops=V100_FP32_FLOPS, latency=ETHERNET_LATENCY, library="auto",
                  progress=None):
    """Time per iteration of allreduce data parallelism for each overlap mode, model, network, P.

    Parameters
    ----------
    models : sequence of str
        Names of :data:`workloads.models.MODELS`.
    networks : sequence of str
        Names of :data:`topologies.specs.ETHERNET` (the star's link speed).
    workers : sequence of int
        The worker counts P (>= 2).
    modes : sequence of str
        Of :data:`workloads.overlap.OVERLAP`.
    batch_size : int
        Samples per worker per step (weak scaling).
    partition_bytes : float
        Chunk size of the ``priority`` mode.
    bucket_bytes : float
        Bucket size of the ``bucketed`` mode.
    iterations : int
        Iterations simulated; the time per iteration is the last one's.
    device_flops : float
        FLOP/s of each worker (default a V100's FP32 peak).
    latency : float
        Latency of each link (s).
    library : {"auto", "mpich", "nccl"}, optional
        Expands the collectives at replay (:func:`netsim.simulate`; the stars'
        hosts run MPICH under ``"auto"``).
    progress : callable, optional
        Called as ``progress(runs_done, runs)`` after each simulation (one per
        model, network, P and mode), for a progress bar
        (:class:`netsim.progress.Progress`).

    Returns
    -------
    list of dict
        One per (model, network, P, mode): ``time`` (simulated seconds per
        iteration), ``compute`` (forward + backward), ``exposed`` (``time -
        compute``), ``closed_exposed`` and ``closed_time`` (the closed form),
        ``fused_comm`` (ring allreduce of the whole gradient), ``speedup``
        (``none``'s time over this one's; None when ``none`` is not among the modes).

    Raises
    ------
    WorkloadError, netsim.NetsimError
        For an unknown model, network or mode, or bad numbers (naming them).

    Examples
    --------
    >>> r = overlap_study(models=("resnet50",), networks=("10GbE",), workers=(2,),
    ...                   modes=("none",))[0]
    >>> abs(r["closed_exposed"] / r["fused_comm"] - 1) < 1e-12   # none hides nothing
    True
    """
    for mode in modes:
        pieces((1, 1), mode)                      # names the unknown mode
    for net in networks:
        if net not in ETHERNET:
            raise WorkloadError(f"unknown network {net!r}; known: {', '.join(ETHERNET)}")
    workers = [check_int(P, "P", 2, error=WorkloadError) for P in workers]
    batch_size = check_int(batch_size, "batch_size", error=WorkloadError)
    iterations = check_int(iterations, "iterations", error=WorkloadError)
    device_flops = check_real(device_flops, "device_flops", lo=0, strict=True,
                              error=WorkloadError)
    check_placed(library, star(2), 2)   # hosts: --library nccl refused before any recording
    recorded = {mode: workloads.record(
        "allreduce", workers=2, epochs=1, overlap=mode, bucket_bytes=bucket_bytes,
        partition_bytes=partition_bytes if mode == "priority" else None).trace
        for mode in modes}
    out = []
    runs = len(models) * len(networks) * len(workers) * len(modes)
    for name in models:
        model = get_model(name)
        n = 4.0 * model.params
        for net in networks:
            bw = float(ETHERNET[net])
            alpha, beta = 2 * latency, 1.0 / bw
            for P in workers:
                G = star(P, bandwidth=bw, latency=latency)
                base = None
                for mode in modes:
                    t = resize(recorded[mode], name, workers=P, iterations=iterations,
                               batch_size=batch_size, device_flops=device_flops)
                    res = simulate(t, G, sharing="priority" if mode == "priority" else "maxmin",
                                   library=library)
                    time = float(res.iteration_times[-1])
                    compute = _compute(t, device_flops)
                    pcs = pieces(model, mode, 4.0, bucket_bytes,
                                 partition_bytes if mode == "priority" else None)
                    secs = [costmodel.ring_allreduce(P, 4.0 * v, alpha, beta)
                            for v in pcs.values.tolist()]
                    closed = exposed_communication(model, pcs, batch_size, device_flops, secs)
                    base = time if mode == "none" else base
                    out.append({"model": name, "network": net, "P": P, "overlap": mode,
                                "time": time, "compute": compute, "exposed": time - compute,
                                "closed_exposed": closed, "closed_time": compute + closed,
                                "fused_comm": costmodel.ring_allreduce(P, n, alpha, beta),
                                "pieces": len(pcs.lo),
                                "speedup": (base / time) if base else None})
                    if progress is not None:
                        progress(len(out), runs)
    return out


def format_speedups(records):
    """The Markdown table of speed-ups over ``none``: one row per (model, network), each
    cell the P values' figures joined by `` / ``. The documentation's overlap table is
    ``format_speedups(overlap_study())``.

    Examples
    --------
    >>> recs = [{"model": "resnet50", "network": "10GbE", "P": P, "overlap": m, "time": t,
    ...          "compute": 0.05, "speedup": s} for P, m, t, s in
    ...         ((2, "none", 0.132, 1.0), (2, "layerwise", 0.1, 1.32))]
    >>> print(format_speedups(recs).splitlines()[2])
    | ResNet-50, 10 GbE | 2 | 50.0 ms | 132 ms | 1.32 |
    """
    names = {"resnet50": "ResNet-50", "bert-large": "BERT-large"}
    modes = [m for m in dict.fromkeys(r["overlap"] for r in records) if m != "none"]
    head = ["model, network", "P", "compute", "`none`"] + modes
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for model, net in dict.fromkeys((r["model"], r["network"]) for r in records):
        rows = [r for r in records if (r["model"], r["network"]) == (model, net)]
        Ps = list(dict.fromkeys(r["P"] for r in rows))
        none = [r["time"] for r in rows if r["overlap"] == "none"]
        unit = 1e3 if max(none) < 1 else 1.0
        times = " / ".join(f"{t * unit:.3g}" for t in none) + (" ms" if unit > 1 else " s")
        comp = rows[0]["compute"]
        cells = [f"{names.get(model, model)}, {net.replace('GbE', ' GbE')}",
                 " / ".join(map(str, Ps)),
                 f"{comp * 1e3:.1f} ms" if comp < 1 else f"{comp:.2f} s", times]
        cells += [" / ".join(f"{r['speedup']:.2f}" for r in rows if r["overlap"] == m)
                  for m in modes]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot_overlap(records, path=None):
    """Time per iteration against P, one panel per (model, network), one colour and marker
    per mode: simulated solid with markers, its closed form dashed, compute dotted.

    Every line has its legend entry (one legend for all panels, to the right). Modes
    whose curves lie on an earlier mode's (within 1 %, :func:`netsim.drawing.plot.coincident`)
    are drawn narrower and smaller over it, and the panel names them under its title.

    Parameters
    ----------
    records : list of dict
        Of :func:`overlap_study`.
    path : str, optional
        Where to save the figure (PNG).

    Returns
    -------
    matplotlib.figure.Figure
        Outside pyplot: no backend is selected, a notebook shows it under its cell.

    Examples
    --------
    >>> recs = overlap_study(models=("resnet50",), networks=("100GbE",), workers=(2,),
    ...                      modes=("none",))
    >>> len(plot_overlap(recs).axes)
    1
    """
    from matplotlib.figure import Figure  # no pyplot: the caller's backend stays as it is

    from netsim.drawing.plot import MARKERS, coincident

    panels = sorted({(r["model"], r["network"]) for r in records})
    modes = list(dict.fromkeys(r["overlap"] for r in records))
    ncols = min(len(panels), 2)
    nrows = -(-len(panels) // ncols)
    fig = Figure(figsize=(5.0 * ncols + 2.6, 3.9 * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for ax, (model, net) in zip(axes.flat, panels):
        rows = [r for r in records if (r["model"], r["network"]) == (model, net)]
        series = [{"label": mode, "P": [r["P"] for r in rows if r["overlap"] == mode],
                   "simulated": [r["time"] for r in rows if r["overlap"] == mode],
                   "closed_form": [r["closed_time"] for r in rows if r["overlap"] == mode]}
                  for mode in modes]
        under = coincident(series)
        for s in series:
            k = modes.index(s["label"])
            color, lw = f"C{k}", max(1.6, 3.0 - 0.6 * k)  # earlier wider: later ones on top
            ax.plot(s["P"], s["simulated"], ls="-", marker=MARKERS[k % len(MARKERS)],
                    ms=max(4.0, 9.0 - 1.5 * k), lw=lw, color=color, zorder=3 + k,
                    label=f"{s['label']}: simulated")
            # Thin, white-gapped and above every simulated line: on a curve it matches, the
            # dashes still show inside the wider solid line.
            ax.plot(s["P"], s["closed_form"], ls=(0, (3, 2)), lw=1.0, gapcolor="white",
                    color=color, zorder=10 + k, label=f"{s['label']}: closed form (dashed)")
        P = sorted({r["P"] for r in rows})
        compute = {r["P"]: r["compute"] for r in rows}
        ax.plot(P, [compute[p] for p in P], ":", color="gray", label="compute alone (dotted)")
        ax.set_xscale("log", base=2)
        ax.set_xticks(P, [str(p) for p in P])
        ax.minorticks_off()
        ax.set_xlabel("workers P")
        ax.set_ylabel("seconds per iteration")
        same = [f"{s['label']} on {u}" for s, u in zip(series, under) if u is not None]
        ax.set_title(f"{model}, {net}" + ("\ncurves within 1 %: " + ", ".join(same) if same
                                          else ""), fontsize=9)
        ax.grid(True, alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right upper", fontsize=8)
    if path is not None:
        fig.savefig(path, dpi=110, bbox_inches="tight", pad_inches=0.15)
    return fig
