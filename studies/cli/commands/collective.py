"""``netsim collective``: one collective's simulated time beside its closed form, and why.

Two libraries. ``--library mpich`` (the default): the MPICH-style algorithms of
:mod:`netsim.comm.collectives` as traces, :func:`netsim.analysis.collectives.compare` on the
topology built for their ranks. ``--library nccl``: NCCL's plan for the
operation on the topology's GPUs (:func:`netsim.nccl.simulate`), one size or a
sweep of sizes as nccl-tests prints it (:mod:`studies.reports.nccl`).
``--library gloo``: gloo's allreduce over TCP with its host work on the
hosts' cores (:mod:`studies.cli.commands.collective_gloo`).
"""

import json

from netsim.analysis.collectives import compare, ranks_for
from netsim.checks import check_choice, check_int, check_real
from netsim.comm.library import LIBRARIES as COMM_LIBRARIES
from netsim.errors import NetsimError
from netsim.comm.nccl import OPS as NCCL_OPS
from netsim.comm.nccl.model import ALGORITHMS as NCCL_ALGORITHMS
from netsim.comm.nccl.search import MAX_CHANNELS
from netsim.comm.nccl.tuning import PROTOCOLS, NcclModelError
from netsim.units import format_bandwidth, format_bytes, format_time, parse_bytes

from studies.reports import nccl as nccl_report, nccl_tests as nccl_tests_format
from studies.cli.console import check_options, check_png, expect
from studies.registry import COLLECTIVES, parse_topology, spec_gpus, topology_factory
from studies.scaling.trace_size import check_fits, check_ops, nccl_flow_count
from studies.reports.text import table

HELP = "one collective: simulated time next to its closed form, and why they differ"
"""One line for ``netsim --help``."""

LIBRARIES = tuple(name for name in COMM_LIBRARIES if name != "auto")
"""``--library`` choices: the libraries of :data:`netsim.comm.library.LIBRARIES` but ``auto``
(one collective runs on one library); ``mpich`` is the default."""

EPILOG = """\
--library nccl models NVIDIA's NCCL: NCCL's own tuning model (a transcription of
src/graph/tuning.cc of NCCL v2.30.7-1: baseLat/hwLat latencies, per-protocol
bandwidths) picks the algorithm (ring, tree, nvls, nvls_tree, pat, collnet_chain on
switches with sharp=True; p2p for alltoall and sendrecv), the protocol (LL,
LL128, Simple) and the channels its topology search reaches on the graph's
links (src/graph/search.cc, topo.h); the call is then replayed as flows over
the real links, so shared links are counted.
Across machines each inter-node step also pays the latency the network plugin
reports to NCCL (EFA: 75 us, aws-ofi-nccl platform-aws.cpp; IB/RoCE: none).
Not modelled: the host time of one thread launching on several GPUs
(nccl-tests -g N), which bounds small sizes of such runs from below.
Link rates and latencies come from topologies.links (IEEE 802.3, IBTA,
PCI-SIG, NVIDIA whitepapers, AWS EFA docs). busbw = algbw x nccl-tests' bus
factor (doc/PERFORMANCE.md): allreduce 2(n-1)/n; allgather, reduce_scatter,
alltoall (n-1)/n; broadcast, reduce, sendrecv 1. --png draws busbw against size
with the published nccl-tests measurements of the same machine
(studies/data/nccl_measurements.csv, each row with its source URL).
--sizes prints nccl-tests' whole log (its header and one "# Rank" line per GPU;
the table: size, count, type, redop, root, then time, algbw, busbw, #wrong
out-of-place and in-place; the footer to "Collective test concluded"), then
NCCL's plan as comment lines; --json writes nccl-tests' -J JSON. Sizes are
rounded as nccl-tests rounds them (allgather, reduce_scatter, alltoall: 16
bytes per rank); one that rounds to 0 is left out.
Examples: netsim collective allreduce --library nccl --topology dgx_h100:nodes=2
-n 1GiB;  ... --sizes 8B..16GiB --png busbw.png
"""


def add_arguments(p):
    """Add the command's arguments to ``p``, its ``argparse`` parser.

    Parameters
    ----------
    p : argparse.ArgumentParser

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> p.parse_args(["ring", "-P", "4", "-n", "1MB"]).workers
    4
    """
    import argparse

    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = EPILOG
    p.add_argument("algorithm",
                   help="collective algorithm: " + ", ".join(COLLECTIVES) + "; with --library "
                        "nccl the operation: " + ", ".join(NCCL_OPS))
    p.add_argument("--library", default="mpich", metavar="|".join(LIBRARIES),
                   help="mpich: netsim's MPICH-style algorithms (default); nccl: the NCCL model; "
                        "gloo: gloo's allreduce over TCP on host cores (netsim.comm.gloo)")
    p.add_argument("--topology", default=None, metavar="NAME[:k=v,...]",
                   help="topology (default star, dgx_h100 with --library nccl; builders with n "
                        "are sized to the ranks)")
    p.add_argument("--workers", "-P", type=int, default=None,
                   help="ranks P (required with mpich; nccl: the first P GPUs, default all)")
    p.add_argument("--bytes", "-n", default=None, help="message size, e.g. 64MB")
    p.add_argument("--sizes", default=None, metavar="LO..HI",
                   help="nccl: sizes from LO to HI, doubling (e.g. 8B..16GiB), or A,B,...")
    p.add_argument("--factor", type=int, default=None,
                   help="nccl: ratio of the steps of a --sizes LO..HI range (default 2)")
    p.add_argument("--algorithm", dest="nccl_algorithm", default=None,
                   help="nccl: ring, tree, nvls, nvls_tree, pat, collnet_chain or p2p (default "
                        "NCCL's choice); gloo: ring_chunked (default) or ring")
    p.add_argument("--protocol", default=None,
                   help="nccl: LL, LL128 or Simple (default NCCL's choice)")
    p.add_argument("--channels", type=int, default=None,
                   help="nccl: channels (default what NCCL's search reaches)")
    p.add_argument("--png", default=None, metavar="PATH",
                   help="nccl: write busbw against size, with published measurements")
    p.add_argument("--segments", "-k", type=int, default=None,
                   help="LP segments (default: the optimal k* for the topology's alpha, beta)")
    p.add_argument("--gamma", type=float, default=0.0, help="reduction cost, seconds per byte")
    p.add_argument("--servers", type=int, default=1, help="servers for ps (default 1)")
    p.add_argument("--json", action="store_true", help="print the record as JSON")
    p.add_argument("--force", action="store_true",
                   help="run even if the trace's estimated size (messages x the bytes of its "
                        "columns) exceeds the memory available")


def run(args):
    """Run the command on its parsed arguments: the report on stdout, notes on stderr.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed by the parser :func:`add_arguments` filled (``quiet`` is read if present).

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> run(p.parse_args(["ring", "-P", "4", "-n", "1MB"]))  # doctest: +ELLIPSIS
                      value
    ----------------  -----------------------
    algorithm         ring (ring_allreduce)
    ...
    messages          24
    ...
    """
    if args.library not in LIBRARIES:
        raise NetsimError(f"unknown library {args.library!r}; known: {', '.join(LIBRARIES)}")
    if args.library == "nccl":
        return _run_nccl(args)
    if args.library == "gloo":
        from studies.cli.commands.collective_gloo import run_gloo

        return run_gloo(args)
    nccl_only = [flag for flag, value in (("--sizes", args.sizes), ("--png", args.png),
                 ("--algorithm", args.nccl_algorithm), ("--protocol", args.protocol),
                 ("--channels", args.channels), ("--factor", args.factor)) if value is not None]
    if nccl_only:
        raise NetsimError(f"{nccl_only[0]} needs --library nccl")
    if args.workers is None or args.bytes is None:
        missing = "--workers/-P" if args.workers is None else "--bytes/-n"
        raise NetsimError(f"collective: the following arguments are required: {missing}")
    if args.topology is None:
        args.topology = "star"
    if args.workers < 1:
        raise NetsimError(f"P must be >= 1, got {args.workers}")
    check_options(args, segments=(1, None), servers=(1, None))
    from netsim.analysis.collectives import takes_segments

    if args.segments is not None and not takes_segments(args.algorithm):
        raise NetsimError(f"--segments applies to the LP family (lp, lp_reduce, lp_allreduce), "
                          f"not {args.algorithm}")
    if args.servers != 1 and args.algorithm != "ps":
        raise NetsimError(f"--servers applies to ps, not {args.algorithm}")
    check_real(args.gamma, "--gamma", lo=0)
    if not args.force:  # before the topology or the trace is built: both grow with P
        # LP without -k: k >= 1, so the count is a lower bound (k* is known only on the topology).
        fits = check_fits(args.algorithm, args.workers, segments=args.segments or 1,
                          servers=args.servers, topology=args.topology)
        expect(args, fits.get("seconds"), f"{args.algorithm} on P = {args.workers}")
    G = topology_factory(args.topology)(ranks_for(args.algorithm, args.workers, args.servers))
    rec = compare(args.algorithm, G, args.workers, parse_bytes(args.bytes), segments=args.segments,
                  gamma=args.gamma, servers=args.servers)
    if args.json:
        print(json.dumps(rec))
        return
    rows = [("algorithm", f"{rec['algorithm']} ({rec['collective']})"), ("P", rec["P"]),
            ("bytes", format_bytes(rec["nbytes"])), ("topology", rec["topology"]),
            ("alpha", format_time(rec["alpha"])),
            # beta is 0 when no message is sent (P = 1): there is no bandwidth to show.
            ("1/beta", format_bandwidth(1 / rec["beta"]) if rec["beta"] > 0 else "-"),
            ("messages", rec["messages"]), ("simulated", format_time(rec["simulated"])),
            ("closed form", format_time(rec["closed_form"])), ("gap", f"{rec['gap']:+.3%}"),
            ("contention bound", format_time(rec["contention_bound"])
             + (f" on {rec['bound_link']}" if rec["bound_link"] else ""))]
    if rec["segments"] is not None:
        rows.insert(3, ("segments k", rec["segments"]))
    print(table(["", "value"], rows))
    if rec["limit"]:
        print(f"\nthe simulation is {rec['gap']:+.1%} off the uncontended closed form: link "
              f"{rec['limit']} limited it, shared by up to {rec['limit_peak_flows']} messages at "
              f"once and saturated for {format_time(rec['limit_saturated'])}")


def _devices(G, ranks):
    """nccl-tests' device of each rank: (host, device index on that host, device name)."""
    out, seen = [], {}
    for g in ranks:
        node = G.nodes[g].get("node", 0)
        seen[node] = seen.get(node, -1) + 1
        out.append((f"node{node}", seen[node], f"NVIDIA {G.nodes[g].get('model', 'GPU')}"))
    return out


def _named(message, args):
    """An NCCL model's refusal of the command's one call, named by the options it came from.

    The call is the trace's op 0, which the user never wrote: ``op 0: algorithm 'p2p' is for
    alltoall and sendrecv, not allreduce`` reads ``--algorithm p2p: algorithm 'p2p' is for
    ...``, and with no option to blame the prefix goes.

    Examples
    --------
    >>> import argparse
    >>> a = argparse.Namespace(nccl_algorithm="p2p", protocol=None)
    >>> _named("op 0: algorithm 'p2p' is for alltoall and sendrecv, not allreduce", a)
    "--algorithm p2p: algorithm 'p2p' is for alltoall and sendrecv, not allreduce"
    >>> _named("op 0: NCCL moves whole bytes", argparse.Namespace(nccl_algorithm=None,
    ...                                                          protocol=None))
    'NCCL moves whole bytes'
    """
    message = message.removeprefix("op 0: ")
    given = [f"{flag} {value}" for flag, value in (("--algorithm", args.nccl_algorithm),
                                                    ("--protocol", args.protocol))
             if value is not None and str(value) in message]
    return f"{', '.join(given)}: {message}" if given else message


def _run_nccl(args):
    """``--library nccl``: one size (a summary) or a sweep (a table), and the PNG."""
    if args.algorithm not in NCCL_OPS:
        raise NetsimError(f"unknown NCCL operation {args.algorithm!r}; known: "
                          f"{', '.join(NCCL_OPS)}")
    mpich_only = [flag for flag, value in (("--segments", args.segments),
                  ("--servers", None if args.servers == 1 else args.servers),
                  ("--gamma", args.gamma or None)) if value is not None]
    if mpich_only:
        raise NetsimError(f"{mpich_only[0]} is an option of --library mpich, not nccl")
    if (args.bytes is None) == (args.sizes is None):
        raise NetsimError("--library nccl needs one of -n/--bytes SIZE or --sizes LO..HI")
    if args.factor is not None and (args.sizes is None or ".." not in args.sizes):
        raise NetsimError("--factor applies to a --sizes LO..HI range")
    if args.protocol is not None:   # named as the option, not as the trace's "op 0"
        check_choice(args.protocol, "--protocol", PROTOCOLS)
    if args.nccl_algorithm is not None:
        check_choice(args.nccl_algorithm, "--algorithm", NCCL_ALGORITHMS)
    if args.channels is not None:  # NCCL's MAXCHANNELS (netsim.comm.nccl.search.MAX_CHANNELS)
        check_int(args.channels, "--channels", maximum=MAX_CHANNELS)
    check_png(args.png)  # before the sweep: a directory or /proc/x.png fails now
    factor = 2 if args.factor is None else args.factor   # nccl-tests' -f: the sizes' ratio
    sizes = ([parse_bytes(args.bytes)] if args.sizes is None
             else nccl_report.parse_sizes(args.sizes, factor))
    if min(sizes) < 1:
        raise NetsimError(f"size must be >= 1 byte, got {args.bytes}")
    spec = args.topology or "dgx_h100"
    if args.workers is not None:
        check_int(args.workers, "P")
    if not args.force:   # the graph's build, a route search from each GPU and the plan's
        ranks = args.workers if args.workers is not None else spec_gpus(spec)   # flows
        if ranks is not None:
            flows, pairs = nccl_flow_count(args.algorithm, ranks)   # replayed at each size
            fits = check_ops(flows * len(sizes), f"NCCL's {args.algorithm} on {spec} of "
                             f"{ranks} GPUs at {len(sizes)} size(s)", noun="flows",
                             topology=spec, ranks=ranks, pairs=pairs)
            expect(args, fits.get("seconds"), f"NCCL's {args.algorithm} on {spec}")
    if args.workers is not None:
        G = topology_factory(spec)(args.workers)
    else:
        G = parse_topology(spec)
    gpus = [n for n, k in G.nodes(data="kind") if k == "gpu"]
    if not gpus:
        raise NetsimError(f"topology {spec!r} has no gpu nodes: the NCCL model runs on GPUs "
                          f"(try dgx1, dgx_h100:nodes=2, pcie_box)")
    if args.workers is not None and args.workers > len(gpus):
        raise NetsimError(f"{args.workers} ranks but the topology has only {len(gpus)} GPUs")
    ranks = gpus[:args.workers] if args.workers else gpus
    asked = [int(s) for s in sizes]
    if args.sizes is not None or args.json:   # nccl-tests' layout: the sizes it would run
        sizes = [n for n in (nccl_tests_format.rounded_bytes(args.algorithm, s, len(ranks))
                             for s in asked) if n > 0]   # 0 bytes: nothing to simulate
        if not sizes:
            raise NetsimError(f"every size rounds to 0 bytes as nccl-tests rounds "
                              f"{args.algorithm} over {len(ranks)} ranks (16 bytes per rank)")
    try:
        records = nccl_report.sweep(G, args.algorithm, [int(s) for s in sizes], ranks=ranks,
                                    algorithm=args.nccl_algorithm, protocol=args.protocol,
                                    channels=args.channels)
    except NcclModelError as exc:   # the one call is the trace's "op 0": name the option
        raise NcclModelError(_named(str(exc), args)) from None
    measured = nccl_report.measured_rows(G, args.algorithm, ranks)
    if args.json:
        import sys

        print(nccl_tests_format.to_json(args.algorithm, records, measured,
                                        args=["netsim", *sys.argv[1:]], factor=factor,
                                        devices=_devices(G, ranks),
                                        limits=(min(asked), max(asked))))
    elif len(records) == 1 and args.sizes is None:
        r = records[0]
        print(table(["", "value"], [
            ("operation", f"{args.algorithm} (NCCL model)"), ("topology", G.graph.get("name", spec)),
            ("ranks", f"{r['ranks']} on {r['nodes']} machine(s)"),
            ("bytes", f"{r['bytes']} ({format_bytes(r['bytes'])})"),
            ("time", format_time(r["time"])),
            ("algbw", f"{r['algbw'] / 1e9:.2f} GB/s"), ("busbw", f"{r['busbw'] / 1e9:.2f} GB/s"),
            ("algorithm", r["algorithm"]), ("protocol", r["protocol"]),
            ("channels", r["channels"])]))
    else:
        note = (f"{args.algorithm} on {G.graph.get('name', spec)}: {records[0]['ranks']} ranks, "
                f"{records[0]['nodes']} machine(s); NCCL model (tuning of NCCL "
                f"v2.30.7-1, flows on the links)")
        print(nccl_tests_format.header(args.algorithm, _devices(G, ranks), min(asked),
                                       max(asked), factor))
        print(nccl_tests_format.table(args.algorithm, records, measured, note=note))
    if args.png:
        title = f"{args.algorithm}, {G.graph.get('name', spec)}"
        nccl_report.plot_busbw(records, measured, args.png, title,
                                step=2 if args.factor is None else args.factor)
        if not getattr(args, "quiet", False):
            import sys

            print(f"wrote {args.png}" + (f" ({len(measured)} measured points)" if measured
                                         else " (no published measurement of this machine)"),
                  file=sys.stderr)
