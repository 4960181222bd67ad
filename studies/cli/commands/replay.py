"""``netsim replay``: replay a trace on a topology and report times and link loads.

Prints the summary (:func:`studies.reports.text.summary`) or the result as JSON;
optionally writes the per-link table as CSV and a Chrome trace timeline.
``--straggler``, ``--jitter`` and ``--seed`` perturb the trace's compute before
the replay (:func:`netsim.trace.perturb.perturb`). For a ps-async trace the summary
adds the staleness of its updates (:func:`workloads.paradigms.ps_async.staleness`).
"""

import os

from netsim.errors import NetsimError
from topologies.devices import PRECISIONS

from studies.cli.console import (PROGRESS_MESSAGES, UsageError, check_not_read, check_options,
                                 check_writable, expect, log, progress, write)
from studies.cli.options import (add_force_argument, add_library_argument, add_perturb_arguments,
                                 add_transport_argument, given_options, perturb_label,
                                 perturb_options)
from studies.scaling.trace_size import check_ops, projection_ops
from studies.registry import parse_placement, topology_factory
from studies.validation.profile_check import compare_text
from studies.reports.text import summary

HELP = "replay a trace on a topology and report times and link loads"
"""One line for ``netsim --help``."""


def add_arguments(p):
    """Add the command's arguments to ``p``, its ``argparse`` parser.

    Parameters
    ----------
    p : argparse.ArgumentParser

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> p.parse_args(["t.npz", "--topology", "star:n=2"]).topology
    'star:n=2'
    """
    p.add_argument("trace", help="trace file (.json or .npz)")
    p.add_argument("--topology", required=True, metavar="NAME[:k=v,...]",
                   help="topology builder and options, e.g. star:n=8,bandwidth=10Gbps (a builder "
                        "with an n option and no n given is sized to the trace's ranks), or a "
                        ".json/.graphml file")
    p.add_argument("--placement", metavar="NODE,NODE,...",
                   help="the node of each rank, in rank order (default: the gpu nodes in graph "
                        "order, else the host nodes)")
    p.add_argument("--device-flops", type=float, default=None,
                   help="FLOP/s for compute ops given in FLOPs (default: the trace's "
                        "device_flops metadata; required if it has none and ops are in FLOPs)")
    p.add_argument("--ranks", type=int, metavar="N",
                   help="replay an imported data-parallel profile at N ranks instead (see "
                        "netsim import --ranks; collectives keep their payload over all N)")
    p.add_argument("--ecmp", choices=("off", "hash"), default="off",
                   help="how messages spread over equal-cost shortest paths (leaf-spine, "
                        "fat-tree, torus): 'off' (default) sends a message on channel c along "
                        "path c mod k of its k paths, so channel-0 traffic keeps one "
                        "deterministic path per pair, as in earlier versions; 'hash' sends each "
                        "(source, destination, channel) flow along the path a seeded hash picks, "
                        "as ECMP switches do (two flows may collide on one path)")
    p.add_argument("--ecmp-seed", type=int, default=None, metavar="INT",
                   help="seed of the ECMP hash, >= 0 (default 0; only with --ecmp hash)")
    p.add_argument("--sharing", choices=("maxmin", "priority"), default="maxmin",
                   help="bandwidth sharing on every link: max-min fair (default), or strict "
                        "priority between the messages' priority classes (larger first, each "
                        "class max-min on what the classes above left)")
    add_library_argument(p)
    p.add_argument("--compute-scale", type=float, default=None, metavar="S",
                   help="an imported profile: every measured kernel, memcpy and memset times S "
                        "(0.5: a device twice as fast on everything, a first-order rule); host "
                        "gaps and collectives unchanged")
    p.add_argument("--device-from", metavar="GPU",
                   help="an imported profile recorded on this GPU (A100, H100, V100, ...): with "
                        "--device-to, its kernels scaled by the ratio of the devices' peak "
                        "rates (a first-order rule; not with --compute-scale)")
    p.add_argument("--device-to", metavar="GPU",
                   help="the GPU to replay the profile's compute on (see --device-from)")
    p.add_argument("--precision", choices=PRECISIONS, default=None,
                   help="the peak rate --device-from/--device-to compare (default: from the "
                        "profile's communication dtype, else fp32, said in the output)")
    p.add_argument("--host-gaps", choices=("keep", "drop"), default="keep",
                   help="an imported profile's host time between kernels: replay it as measured "
                        "(keep, default) or as zero (drop)")
    p.add_argument("--compare", action="store_true",
                   help="an imported PyTorch profile: each recorded rank's measured step next to "
                        "the replayed one, and each collective class's measured kernel time "
                        "(min, median over ranks and calls) next to the simulated one")
    add_transport_argument(p)
    p.add_argument("--inexact", action="store_true",
                   help="large batches of flows re-solve only the flows whose rates they change "
                        "(verified by max-min's bottleneck conditions, netsim.engine.tolerant): "
                        "times within a relative 1e-9 of the exact replay rather than bit for "
                        "bit, several times faster where --jitter or --straggler spreads a "
                        "collective's starts over many instants (default: exact)")
    add_force_argument(p)
    p.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    p.add_argument("--csv", metavar="FILE", help="write the per-link table as CSV")
    p.add_argument("--timeline", metavar="FILE.json",
                   help="write the run as a Chrome trace (open it in ui.perfetto.dev): a track "
                        "group per rank, a utilisation counter per link, iteration marks); "
                        "with --timeline-format kineto a directory")
    p.add_argument("--timeline-format", choices=("perfetto", "kineto"), default="perfetto",
                   help="perfetto: one Chrome trace of the whole run (default); kineto: the "
                        "PyTorch profiler's layout, one file per rank (GPU streams, kernels, "
                        "ProfilerStep#, distributedInfo), which HolisticTraceAnalysis reads")
    add_perturb_arguments(p, "seed of the --jitter and p=P:Kx --straggler draws (default 0)")


def run(args):
    """Run the command on its parsed arguments: the report on stdout, notes on stderr.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed by the parser :func:`add_arguments` filled (``quiet`` is read if present).

    Examples
    --------
    >>> import argparse, os, tempfile
    >>> from netsim import TraceBuilder, save_trace
    >>> b = TraceBuilder(2); _ = b.message(0, 1, 1e6)
    >>> path = os.path.join(tempfile.mkdtemp(), "t.npz"); save_trace(b.build(), path)
    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> run(p.parse_args([path, "--topology", "star:n=2,bandwidth=8Gbps,latency=0s"]))
    ... # doctest: +ELLIPSIS
    metric ...
    makespan                  1 ms
    ...
    """
    from netsim.checks import check_int, check_real
    from netsim.result import simulate
    from netsim.trace.core import HOST_GAP
    from netsim.comm.library import check_applies
    from netsim.formats.tracefile import load_trace

    if args.device_flops is not None:
        check_real(args.device_flops, "--device-flops", lo=0, strict=True)
    if args.compute_scale is not None:
        check_real(args.compute_scale, "--compute-scale", lo=0, strict=True)
    check_options(args, seed=(0, 2**32 - 1))
    if args.ecmp_seed is not None and args.ecmp != "hash":
        raise NetsimError("--ecmp-seed applies with --ecmp hash (the seed of its hash)")
    perturbation = perturb_options(args)
    if args.seed and not (perturbation.get("jitter") or "p=" in perturbation.get("straggler", "")):
        raise UsageError("--seed applies with --jitter or a p=P:Kx --straggler (the seed of "
                         "their draws)")
    kineto = getattr(args, "timeline_format", "perfetto") == "kineto"
    if kineto and not args.timeline:
        raise UsageError("--timeline-format kineto needs --timeline DIR (the files' directory)")
    given = given_options(args, add_arguments)   # on the command line, even at a default
    for dest, needs in (("force", "ranks"), ("timeline_format", "timeline")):
        if dest in given and getattr(args, needs) is None:
            raise UsageError(f"{given[dest]} applies with --{needs}")
    if args.timeline and not kineto and not str(args.timeline).endswith(".json"):
        raise UsageError(f"--timeline {args.timeline}: a Chrome trace is JSON; its file name "
                         f"must end in .json")
    if getattr(args, "compare", False) and args.ranks is not None:
        raise UsageError("--compare sets the replay beside the profile's own measurements, "
                         "taken at its own ranks; a projection to --ranks has none: give one")
    check_writable(args.csv, None if kineto else args.timeline)   # kineto: a directory
    check_not_read({"--csv": args.csv, "--timeline": args.timeline},
                   [args.trace, args.topology if os.path.isfile(args.topology) else None])
    trace = load_trace(args.trace)
    check_applies(getattr(args, "library", "auto"), trace, args.trace)
    if getattr(args, "compare", False) and not trace.metadata.get("measured_rank_step_times"):
        raise UsageError(f"--compare: {args.trace} holds no measurements to compare with "
                         "(import a PyTorch profile with netsim import kineto)")
    if args.host_gaps == "drop" and HOST_GAP not in trace.tags:
        raise UsageError(f"--host-gaps drop: {args.trace} has no host gaps to drop (compute ops "
                         f"tagged {HOST_GAP!r}, which an imported PyTorch profile has)")
    seconds = None  # the replay's CPU priced at --ranks, announced once all checks passed
    if args.ranks is not None:
        from netsim.trace.reproject import reproject

        check_int(args.ranks, "--ranks")
        if not args.force:  # before the projection: it grows with the ranks, and the replay more
            seconds = check_ops(projection_ops(trace, args.ranks),
                                f"the replay at {args.ranks} ranks", instead="fewer --ranks",
                                topology=args.topology, ranks=args.ranks).get("seconds")
        trace = reproject(trace, args.ranks)
    scale, device = _device_scale(args, trace), None
    if scale is not None:
        scale, device = scale
    elif args.compute_scale is not None:
        scale = args.compute_scale
    if scale is not None or args.host_gaps != "keep":
        from netsim.trace.whatif import whatif

        trace = whatif(trace, 1.0 if scale is None else scale, args.host_gaps)
    if perturbation:
        from netsim.trace.perturb import perturb

        trace = perturb(trace, **perturbation)
    if getattr(args, "library", "auto") in ("auto", "mpich"):
        from netsim.comm.mpich import check_calls

        check_calls(trace)   # sub-byte ring chunks: refused before the note, not at replay
    G = topology_factory(args.topology)(trace.ranks)
    placement = parse_placement(args.placement, G, trace.ranks)
    expect(args, seconds, f"the replay at {args.ranks} ranks")
    # A bar only for long replays: on a terminal, without --quiet, from 10^5 messages.
    # Collectives expand at replay into ops not counted in advance: no total then.
    with progress(args, None if trace.num_collectives else trace.num_ops, "replay", unit="op",
                  show=trace.num_messages >= PROGRESS_MESSAGES) as bar:
        result = simulate(trace, G, placement=placement, device_flops=args.device_flops,
                          progress=bar if bar.drawn else None,
                          link_series=bool(args.timeline) and not kineto,
                          ecmp=None if args.ecmp == "off" else args.ecmp, ecmp_seed=args.ecmp_seed or 0,
                          sharing=getattr(args, "sharing", "maxmin"),
                          library=getattr(args, "library", "auto"),
                          transport=getattr(args, "transport", "fluid"),
                          exact=not getattr(args, "inexact", False))
    if args.csv:
        write(args.csv, lambda f: result.table("links").to_csv(f, index=False))
    if args.timeline and kineto:
        from netsim.formats.kineto.timeline import write_kineto

        paths = write_kineto(trace, result, args.timeline)
        log(args, f"wrote {len(paths)} PyTorch-profiler traces {args.timeline}/rank<r>.json "
                  f"(HolisticTraceAnalysis: TraceAnalysis(trace_dir=...))")
    elif args.timeline:
        from netsim.formats.timeline import write_timeline

        with progress(args, None, "timeline", unit="event",
                      show=trace.num_messages >= PROGRESS_MESSAGES) as bar:
            counts = write_timeline(trace, result, args.timeline, progress=bar)
        log(args, f"wrote {args.timeline}: {counts['slices']} slices ({counts['messages']} "
                  f"messages), {counts['links']} link counters; open it in ui.perfetto.dev")
    stale = _staleness(trace, result)
    checked = None
    if getattr(args, "compare", False):
        from netsim.formats.kineto.measured import compare

        checked = compare(trace, result)
    if args.json:
        extra = {k: v for k, v in (("staleness", stale), ("compare", checked),
                                   ("device_scale", device)) if v is not None}
        if not extra:
            print(result.to_json())
        else:
            import json

            print(json.dumps({**json.loads(result.to_json()), **extra}, sort_keys=True))
        return
    print(summary(result))
    if perturbation:
        print(f"\nperturbed at replay: {perturb_label(perturbation)} (seed {perturbation['seed']})")
    if device is not None:
        print(f"\nwhat-if: {device['note']}")
    if checked is not None:
        print("\n" + compare_text(checked))
    if stale is not None:
        print(f"\nstaleness (ps-async): {stale['mean_updates']:.2f} updates between a worker's "
              f"fetch and its push on average, at most {stale['max_updates']}; at most "
              f"{stale['max_steps']} steps behind")


def _device_scale(args, trace):
    """(factor, JSON record) of --device-from/--device-to, or None when not asked."""
    given = [getattr(args, k, None) for k in ("device_from", "device_to")]
    if given == [None, None]:
        if getattr(args, "precision", None) is not None:
            raise UsageError("--precision applies with --device-from and --device-to")
        return None
    if None in given:
        raise UsageError("--device-from and --device-to go together")
    if args.compute_scale is not None:
        raise UsageError("--device-from/--device-to and --compute-scale both scale the "
                         "kernels: give one")
    from studies.validation.device_scale import device_scale

    factor, note = device_scale(trace.metadata, *given, precision=args.precision)
    return factor, {"from": given[0], "to": given[1], "factor": factor, "note": note}


def _staleness(trace, result):
    """Mean and largest staleness of a ps-async trace's updates (None for other traces)."""
    if trace.metadata.get("paradigm") != "ps-async" or "update" not in trace.tags:
        return None
    from workloads.paradigms.ps_async import staleness

    st = staleness(trace, result)
    if not len(st["updates"]):
        return None
    return {"mean_updates": float(st["updates"].mean()), "max_updates": int(st["updates"].max()),
            "max_steps": int(st["clocks"].max())}
