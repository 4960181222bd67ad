"""One paradigm's scaling on a GPU cluster under each communication library, side by side.

The GPU study of the scaling page (``docs/studies.md``): BSP-SGD (the ``allreduce``
paradigm, its gradient fused in one bucket) resized to ResNet-50 on H100s, on 1 to 8 DGX
H100 machines, replayed with NCCL's plan (``library="auto"``: every member is a GPU) and with
MPICH's ring (``library="mpich"``), each next to its closed form
(:func:`studies.scaling.paradigm.study`). Regenerate the page's table and
``docs/gpu_scaling.png`` with::

    python -m studies.scaling.library
"""

import sys

from netsim.units import format_time

from studies.scaling.paradigm import study
from studies.registry import topology_factory

__all__ = ["CASE", "compare", "format_table", "plot", "main"]

#: The page's case: paradigm, P values, topology and options of :func:`compare`.
CASE = {"source": "allreduce", "workers": [8, 16, 32, 64], "topology": "dgx_h100",
        "model": "resnet50", "device": "H100", "options": {"overlap": "none"}}


def compare(source, workers, topology, model=None, device=None, libraries=("auto", "mpich"),
            iterations=3, options=None):
    """:func:`studies.scaling.paradigm.study` once per library, on the same traces' shape.

    Parameters
    ----------
    source : str
        A paradigm.
    workers : sequence of int
    topology : str
        A topology spec (GPU clusters are sized to each P).
    model : str, optional
        Resize to this model.
    device : str, optional
        A device preset of :mod:`topologies.devices` (``"H100"``): its FP32 rate.
    libraries : sequence of str
        Of :data:`netsim.comm.library.LIBRARIES`.
    iterations : int
    options : dict, optional
        Paradigm options.

    Returns
    -------
    dict
        Library -> its study.

    Examples
    --------
    >>> st = compare("allreduce", [8], "dgx_h100", iterations=1)
    >>> st["auto"]["records"][0]["plans"], st["mpich"]["records"][0]["plans"]
    (['nccl ring/LL/1ch'], ['mpich ring'])
    """
    from topologies.devices import device_flops

    flops = device_flops(device) if device else None
    make = topology_factory(topology)
    return {lib: study(source, workers, make, model=model, device_flops=flops,
                       iterations=iterations, library=lib, **(options or {}))
            for lib in libraries}


def format_table(studies):
    """A Markdown table: per P, each library's time per iteration, closed form, exposed
    communication, efficiency, busiest link and plan.

    Examples
    --------
    >>> rec = {"P": 8, "time": 3.3e-3, "closed_form": 3.2e-3, "exposed": 4e-4,
    ...        "efficiency": 0.88, "top_link": "gpu0<->nvswitch0", "saturated_fraction": 0.1,
    ...        "plans": ["nccl nvls/Simple/8ch"]}
    >>> print(format_table({"auto": {"records": [rec]}}).splitlines()[2])
    | 8 | auto | 3.3 ms | 3.2 ms | 400 us | 0.880 | gpu0<->nvswitch0 (10 %) | nccl nvls/Simple/8ch |
    """
    head = ["P", "library", "time/iter", "closed form", "exposed comm", "efficiency",
            "busiest link (time saturated)", "plan"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    rows = [(r["P"], lib, r) for lib, st in studies.items() for r in st["records"]]
    for P, lib, r in sorted(rows, key=lambda x: (x[0], list(studies).index(x[1]))):
        cells = [str(P), lib, format_time(r["time"]), format_time(r["closed_form"]),
                 format_time(r["exposed"]), f"{r['efficiency']:.3f}",
                 f"{r['top_link']} ({r['saturated_fraction']:.0%})".replace("%", " %"),
                 "; ".join(r["plans"]) or "-"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(studies, path, title=None):
    """Time per iteration against P, one line per library, its closed form dashed.

    Parameters
    ----------
    studies : dict
        From :func:`compare`.
    path : str or path-like
        The PNG to write.
    title : str, optional

    Examples
    --------
    >>> import os, tempfile
    >>> rec = {"P": 8, "time": 3.3e-3, "closed_form": 3.2e-3}
    >>> p = os.path.join(tempfile.mkdtemp(), "g.png")
    >>> plot({"auto": {"records": [rec]}}, p); os.path.getsize(p) > 0
    True
    """
    from matplotlib.figure import Figure  # no pyplot: the caller's backend stays as it is

    from netsim.drawing.plot import MARKERS

    fig = Figure(figsize=(6.4, 4.0), layout="constrained")
    ax = fig.subplots()
    Ps = set()
    for k, (lib, st) in enumerate(studies.items()):
        P = [r["P"] for r in st["records"]]
        Ps.update(P)
        ax.plot(P, [r["time"] * 1e3 for r in st["records"]], ls="-", lw=2.6,
                marker=MARKERS[k % len(MARKERS)], ms=7, color=f"C{k}", zorder=2 + k,
                label=f"{lib}: simulated")
        # Thin, white-gapped and on top: where it matches the simulation the dashes still
        # show inside the wider solid line.
        ax.plot(P, [r["closed_form"] * 1e3 for r in st["records"]], ls=(0, (3, 2)), lw=1.0,
                gapcolor="white", color=f"C{k}", zorder=10 + k, label=f"{lib}: closed form")
    ax.set_xscale("log", base=2)
    ticks = sorted(Ps)
    ax.set_xticks(ticks, [str(p) for p in ticks])
    ax.minorticks_off()
    ax.set_xlabel("GPUs (P)")
    ax.set_ylabel("time per iteration (ms)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title, fontsize=9)
    fig.savefig(path, dpi=120, bbox_inches="tight", pad_inches=0.15)


def main(argv=None):
    """Print the page's table and write ``docs/gpu_scaling.png`` (see the module docstring).

    Examples
    --------
    >>> callable(main)
    True
    """
    out = (argv or sys.argv[1:] or ["docs/gpu_scaling.png"])[0]
    c = dict(CASE)
    studies = compare(c.pop("source"), c.pop("workers"), c.pop("topology"), **c)
    print(format_table(studies))
    plot(studies, out, title="BSP-SGD, ResNet-50 on H100, 1-8 DGX H100: NCCL (auto) vs MPICH "
                             "ring")


if __name__ == "__main__":
    main()
