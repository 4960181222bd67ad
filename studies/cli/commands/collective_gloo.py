"""``netsim collective allreduce --library gloo``: gloo's allreduce over TCP on host cores.

The call is a one-op trace replayed with :mod:`netsim.comm.gloo` (the network's
bytes, and each process's copies and sums at its cores' memory rate, from the
hosts' ``memory_bandwidth``, ``core_bandwidth`` and ``cores``; e.g.
``--topology star:n=2,bandwidth=40Gbps,mtu=1500,cpu=Xeon-E5-2620-v4``).
"""

from netsim import TraceBuilder, simulate
from netsim.errors import NetsimError
from netsim.units import format_bytes, format_time, parse_bytes

from studies.cli.console import expect
from studies.registry import topology_factory
from studies.scaling.trace_size import check_fits
from studies.reports.text import table

__all__ = ["run_gloo"]


def run_gloo(args):
    """Print the simulated time of one gloo allreduce (``--library gloo``; ``--json``: a record).

    Examples
    --------
    >>> import argparse
    >>> unset = dict.fromkeys(["nccl_algorithm", "sizes", "png", "protocol", "channels",
    ...                        "factor", "segments"])
    >>> run_gloo(argparse.Namespace(algorithm="allreduce", workers=2, bytes="20MB",
    ...     topology="star:bandwidth=40Gbps,mtu=1500,cpu=Xeon-E5-2620-v4", gamma=0.0,
    ...     servers=1, **unset))  # doctest: +NORMALIZE_WHITESPACE
               value
    ---------  ------------------------------------
    operation  allreduce (gloo model, ring_chunked)
    topology   star(2 hosts, 40 Gbps, MTU 1500)
    ranks      2
    bytes      20000000 (20 MB)
    time       11.7 ms
    """
    from netsim.comm import gloo

    if args.algorithm != "allreduce":
        raise NetsimError(f"the gloo model runs allreduce, not {args.algorithm!r}")
    others = [flag for flag, value in (("--sizes", args.sizes), ("--png", args.png),
              ("--protocol", args.protocol), ("--channels", args.channels),
              ("--factor", args.factor), ("--segments", args.segments),
              ("--gamma", args.gamma or None),
              ("--servers", None if args.servers == 1 else args.servers)) if value is not None]
    if others:
        raise NetsimError(f"{others[0]} is not an option of --library gloo")
    if args.workers is None or args.bytes is None:
        raise NetsimError("--library gloo needs -P/--workers and -n/--bytes")
    if args.workers < 2:
        raise NetsimError(f"P must be >= 2, got {args.workers}")
    algorithm = args.nccl_algorithm or gloo.DEFAULT
    if algorithm not in gloo.GLOO_ALGORITHMS:
        raise NetsimError(f"unknown gloo algorithm {algorithm!r}; known: "
                          f"{', '.join(gloo.GLOO_ALGORITHMS)}")
    nbytes = parse_bytes(args.bytes)
    spec = args.topology or "star"
    if not getattr(args, "force", False):
        # gloo's ring (ring_chunked halves each step's chunk) sends at least the 2 P (P - 1)
        # messages of MPICH's ring allreduce, with host copies and sums besides: its count
        # is a lower bound, priced before the topology or the trace is built.
        fits = check_fits("ring", args.workers, topology=spec)
        expect(args, fits.get("seconds"), f"gloo {algorithm} allreduce on P = {args.workers}")
    G = topology_factory(spec)(args.workers)
    b = TraceBuilder(args.workers)
    b.collective("allreduce", range(args.workers), nbytes,
                 algorithm=algorithm if algorithm == "ring" else None)
    r = simulate(b.build(), G, library="gloo")
    if getattr(args, "json", False):
        import json

        print(json.dumps({"library": "gloo", "op": "allreduce",
                          "algorithm": str(r.collectives["algorithm"][0]),
                          "topology": G.graph.get("name", spec), "ranks": args.workers,
                          "bytes": int(nbytes), "time": r.makespan}))
        return
    print(table(["", "value"], [
        ("operation", f"allreduce (gloo model, {r.collectives['algorithm'][0]})"),
        ("topology", G.graph.get("name", spec)), ("ranks", args.workers),
        ("bytes", f"{int(nbytes)} ({format_bytes(nbytes)})"),
        ("time", format_time(r.makespan))]))
