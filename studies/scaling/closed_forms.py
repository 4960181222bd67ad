"""The alpha-beta closed form of one iteration of a paradigm's trace: the generic dispatch.

:func:`closed_form` reads the trace's paradigm, derives ``alpha`` and ``beta``
from the topology (:func:`netsim.costmodel.alpha_beta` over the pairs the trace
uses) and calls that paradigm's own ``closed_form(trace, alpha, beta,
device_flops)`` through the registry (:data:`studies.registry.PARADIGMS`);
each paradigm module documents its formula, and :mod:`workloads.plan.closed` what
they share (``time = compute + server + communication`` per iteration). A
paradigm without one reports why (its module's ``NO_CLOSED_FORM``).
"""

from netsim import costmodel
from netsim.comm.library import mpich_wire
from workloads.plan.closed import worker_compute, worker_mask

from studies.registry import PARADIGMS

__all__ = ["NO_CLOSED_FORM", "ASYMPTOTIC_ROWS", "worker_mask", "worker_compute", "closed_form",
           "asymptotic_table"]

#: The paradigms of the table of asymptotic costs (docs/studies.md), in its order.
ASYMPTOTIC_ROWS = ("ps-sync", "allreduce", "model-averaging", "admm", "ps-async")

#: Paradigm name -> why it has no closed form, for those without one.
NO_CLOSED_FORM = {name: p.no_closed_form for name, p in PARADIGMS.items()
                  if p.closed_form is None and p.no_closed_form}


def closed_form(trace, topology, device_flops=None, placement=None):
    """Alpha-beta closed form of one iteration of a paradigm's trace.

    Parameters
    ----------
    trace : Trace
        With ``metadata["paradigm"]`` and ``metadata["roles"]``.
    topology : networkx.Graph or Network
    device_flops : float, optional
        FLOP/s of the compute ops (default: the trace's metadata).
    placement : optional
        As for :func:`netsim.simulate`.

    Returns
    -------
    dict
        ``paradigm``, ``alpha``, ``beta``, ``compute`` (workers), ``server``,
        ``communication`` and ``time`` (seconds per iteration, averaged over
        the iterations; None for a paradigm without a closed form),
        ``formula`` (a few words) and ``reason`` (why there is none, else
        None).

    Examples
    --------
    >>> from topologies import star
    >>> from studies.scaling.traces import record_at
    >>> t = record_at("ps-sync", 4, iterations=1, dataset="iris")
    >>> cf = closed_form(t, star(5, bandwidth=1.25e9, latency=1e-6))
    >>> n = 4 * 131  # the Iris model's 131 float32 parameters
    >>> abs(cf["communication"] - 2 * (2e-6 + 4 * n / 1.25e9)) < 1e-15
    True
    >>> sorted(NO_CLOSED_FORM)  # every paradigm has one
    []
    """
    paradigm = trace.metadata.get("paradigm")
    out = {"paradigm": paradigm, "alpha": None, "beta": None, "compute": None, "server": None,
           "communication": None, "time": None, "formula": None, "reason": None}
    entry = PARADIGMS.get(paradigm)
    if entry is None or entry.closed_form is None:
        why = entry.no_closed_form if entry is not None else None
        out["reason"] = why or f"no closed form for paradigm {paradigm!r}"
        return out
    wire = mpich_wire(trace)   # collectives as MPICH's messages: the Hockney model's
    if wire.is_message.any():
        alpha, beta = costmodel.alpha_beta(topology, placement=placement, trace=wire)
    else:
        alpha, beta = 0.0, 0.0
    out.update(entry.closed_form(trace, alpha, beta, device_flops))
    out.update(alpha=alpha, beta=beta)
    return out


def asymptotic_table(names=ASYMPTOTIC_ROWS):
    """A Markdown table of the paradigms' worst-case costs per iteration (their modules'
    ``ASYMPTOTIC``: :class:`workloads.plan.closed.Asymptotic`).

    Parameters
    ----------
    names : sequence of str
        Paradigms with an ``ASYMPTOTIC`` record.

    Returns
    -------
    str

    Examples
    --------
    >>> print(asymptotic_table(["ps-sync"]).splitlines()[2])  # doctest: +ELLIPSIS
    | parallel SGD (BSP) | parameter server, S servers (`ps-sync`) | 2 (alpha + 4 max(P, S) n beta / S) | ...
    """
    lines = ["| scheme | architecture (paradigm) | communication per iteration | "
             "computation per iteration | order | source |", "|" + "---|" * 6]
    for name in names:
        a = PARADIGMS[name].asymptotic
        lines.append(f"| {a.scheme} | {a.architecture} (`{name}`) | {a.communication} | "
                     f"{a.computation} | {a.order} | {a.source} |")
    return "\n".join(lines)

