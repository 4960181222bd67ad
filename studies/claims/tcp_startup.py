"""Where TCP's start-up matters: the ring and the parameter server over TCP against the fluid model.

The seed papers' two exchanges, MPICH's ring allreduce and a parameter server's
push and pull (:mod:`netsim.comm.collectives`), on a star of hosts at 10 and 100 GbE
with MTU-1500 framing, each replayed with ``transport="fluid"`` and
``transport="tcp"`` (:mod:`netsim.engine.tcp`). A *cold* call opens every connection's
window from the initial 10 segments; a *warm* one follows the same call after a
compute gap shorter than the retransmission timeout, so its connections keep the
windows the first call grew (TCP restarts only after an idle period longer than
the timeout, RFC 5681 sec. 4.1).
"""

from netsim import TraceBuilder, simulate
from netsim.comm import collectives
from topologies.clusters import star
from topologies.links import ETHERNET

__all__ = ["startup_rows", "format_startup"]

#: The exchanges of the study: name -> (trace generator, ranks beyond P).
EXCHANGES = {"ring allreduce": (collectives.ring_allreduce, 0),
             "PS push-pull": (collectives.ps_push_pull, 1)}
#: Link rates of the study (bytes/s): 10 and 100 GbE line rates (:data:`topologies.links.ETHERNET`).
LINKS = {name: ETHERNET[name] for name in ("10GbE", "100GbE")}


def _twice(trace, gap):
    """``trace`` run twice, the second copy ``gap`` s after the first has ended on every rank.

    Returns the trace and the number of ops of one copy (the first copy's come first).
    """
    b = TraceBuilder(trace.ranks)
    ids = []
    for op in range(trace.num_ops):
        ids.append(b.message(int(trace.rank[op]), int(trace.peer[op]), float(trace.size[op]),
                             deps=[ids[int(d)] for d in trace.deps(op)]))
    half = len(ids)
    gate = [b.compute(r, seconds=gap, deps=list(ids)) for r in range(trace.ranks)]
    for op in range(trace.num_ops):
        deps = [ids[half + int(d)] for d in trace.deps(op)] or [gate[int(trace.rank[op])]]
        ids.append(b.message(int(trace.rank[op]), int(trace.peer[op]), float(trace.size[op]),
                             deps=deps))
    return b.build(), half


def startup_rows(sizes=(1e6, 10e6, 100e6), workers=(4, 16, 64), gap=1e-3):
    """One row per exchange, link, model size and P: fluid, cold and warm TCP times.

    Returns
    -------
    list of dict
        ``exchange``, ``link``, ``bytes``, ``P``, ``fluid`` (s), ``tcp_cold`` (s,
        the first call), ``tcp_warm`` (s, a second call ``gap`` s later) and the
        ratios ``cold`` and ``warm`` of TCP's time to the fluid one.

    Examples
    --------
    >>> row = startup_rows(sizes=[1e6], workers=[4])[0]
    >>> row["exchange"], row["link"], round(row["cold"], 3), round(row["warm"], 3)
    ('ring allreduce', '10GbE', 1.006, 1.006)
    """
    rows = []
    for name, (make, extra) in EXCHANGES.items():
        for link, rate in LINKS.items():
            for n in sizes:
                for P in workers:
                    trace = make(P, n)
                    G = star(trace.ranks, bandwidth=rate, mtu=1500)
                    fluid = simulate(trace, G).makespan
                    twice, half = _twice(trace, gap)
                    r = simulate(twice, G, transport="tcp")
                    cold = float(r.ops["end"][:half].max())
                    warm = r.makespan - cold - gap
                    rows.append({"exchange": name, "link": link, "bytes": n, "P": P,
                                 "fluid": fluid, "tcp_cold": cold, "tcp_warm": warm,
                                 "cold": cold / fluid, "warm": warm / fluid})
    return rows


def format_startup(rows):
    """The rows as a Markdown table: TCP's time over the fluid one, cold and warm."""
    from netsim.units import format_bytes, format_time

    lines = ["| exchange | link | model | P | fluid | TCP cold | cold/fluid | warm/fluid |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['exchange']} | {r['link']} | {format_bytes(r['bytes'])} | {r['P']} "
                     f"| {format_time(r['fluid'])} | {format_time(r['tcp_cold'])} "
                     f"| {r['cold']:.3f} | {r['warm']:.3f} |")
    return "\n".join(lines)
