"""The ``netsim`` command line: names on a command line become builders and traces.

This is the only module that maps names to topology builders, collectives and
paradigms. Every subcommand is a pair of plain functions, ``_args_NAME(parser)``
and ``_run_NAME(args)``, listed in ``_COMMANDS``.

Bad input never shows a traceback: it prints ``netsim: error: ...`` on one line
and exits with status 2.
"""

import argparse
import inspect
import json
import sys

from . import __version__
from .errors import DeadlockError, NetsimError, TopologyError
from .units import format_bandwidth, format_bytes, format_time, parse_bandwidth, parse_time

__all__ = ["main", "parse_topology"]


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _UsageError(f"{self.prog}: {message}")


class _UsageError(Exception):
    pass


def _topologies():
    import topologies

    return {name: getattr(topologies, name) for name in topologies.BUILDERS}


def _convert(key, text, default=None):
    """Turn a ``key=value`` string into the builder's SI argument.

    Bandwidths and latencies take human units and ``dims`` a shape; any other
    value is parsed to the type of the option's ``default`` (see
    :func:`_option_value`: a bool takes true or false), or to a number or the
    text itself when the option has no default.
    """
    if "bandwidth" in key:
        return parse_bandwidth(text)
    if "latency" in key:
        return parse_time(text)
    if key == "dims":
        try:
            return tuple(int(x) for x in text.replace("x", ",").split(",") if x)
        except ValueError:
            raise TopologyError(f"dims must look like 4x4 or 4,4, got {text!r}") from None
    return _option_value(key, text, None if default is inspect.Parameter.empty else default)


def _number_or_text(text):
    """An int if the text is one, else a float if it is one, else the text itself."""
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def parse_workers(text):
    """Worker counts: ``2..64`` (powers of two from 2 to 64) or ``2,3,8`` (a list).

    >>> parse_workers("2..16"), parse_workers("3,5")
    ([2, 4, 8, 16], [3, 5])
    """
    text = str(text).strip()
    # Only int() is guarded: NetsimError is a ValueError, so the range check below must sit
    # outside the try or its message would be replaced by the generic one.
    try:
        if ".." in text:
            lo, hi = (int(x) for x in text.split(".."))
        else:
            out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise NetsimError(f"workers must look like 2..64 or 2,4,8, got {text!r}") from None
    if ".." in text:
        if lo < 1 or hi < lo:
            raise NetsimError(f"workers range {text!r} must be A..B with 1 <= A <= B")
        out = []
        while lo <= hi:
            out.append(lo)
            lo *= 2
        return out
    if not out:
        raise NetsimError("the worker list is empty")
    if any(p < 1 for p in out):
        raise NetsimError(f"workers must be >= 1, got {text!r}")
    if out != sorted(set(out)):
        raise NetsimError(f"worker list must be strictly increasing, got {text!r}")
    return out


def topology_factory(spec):
    """``hosts -> graph`` for a spec; builders with an ``n`` option are sized to the ranks.

    >>> make = topology_factory("star:bandwidth=10Gbps")
    >>> make(8).number_of_nodes()
    9
    """
    name = spec.partition(":")[0]
    builders = _topologies()
    if name in builders and "n" in inspect.signature(builders[name]).parameters \
            and "n=" not in spec.partition(":")[2]:
        sep = "," if ":" in spec else ":"
        return lambda hosts: parse_topology(f"{spec}{sep}n={hosts}")
    G = parse_topology(spec)
    return lambda hosts: G


def parse_topology(spec):
    """Build a topology from ``NAME[:key=value,...]`` or a ``.json`` / ``.graphml`` file.

    Values take human units (``bandwidth=10Gbps``, ``latency=1us``).

    Examples
    --------
    >>> G = parse_topology("star:n=4,bandwidth=10Gbps")
    >>> G.number_of_nodes()
    5
    """
    if spec.endswith((".json", ".graphml")):
        from .graphio import read_topology

        return read_topology(spec)
    name, _, rest = spec.partition(":")
    builders = _topologies()
    if name not in builders:
        raise TopologyError(f"unknown topology {name!r}; known: {', '.join(sorted(builders))}")
    builder = builders[name]
    params = inspect.signature(builder).parameters
    kwargs = {}
    for item in filter(None, rest.split(",")) if rest else ():
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq:
            raise TopologyError(f"topology option {item!r} must be key=value")
        if key not in params:
            raise TopologyError(f"{name} has no option {key!r}; options: {', '.join(params)}")
        kwargs[key] = _convert(key, value.strip(), params[key].default)
    try:
        return builder(**kwargs)
    except TypeError as exc:
        raise TopologyError(f"{name}: {exc}") from None


# -- subcommands -------------------------------------------------------------------------

def _args_replay(p):
    p.add_argument("trace", help="trace file (.json or .npz)")
    p.add_argument("--topology", required=True, metavar="NAME[:k=v,...]",
                   help="topology builder and options, e.g. star:n=8,bandwidth=10Gbps")
    p.add_argument("--device-flops", type=float, default=None,
                   help="FLOP/s for compute ops given in FLOPs")
    p.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    p.add_argument("--csv", metavar="FILE", help="write the per-link table as CSV")
    p.add_argument("--timeline", metavar="FILE.json",
                   help="write the run as a Chrome trace (open it in ui.perfetto.dev): a track "
                        "group per rank, a utilisation counter per link, iteration marks")


def _run_replay(args):
    from .result import simulate
    from .traceio import load_trace

    trace = load_trace(args.trace)
    G = parse_topology(args.topology)
    # A bar only for long replays: on a terminal, without --quiet, from 10^5 messages.
    with _progress(args, trace.num_ops, "replay", unit="op",
                   show=trace.num_messages >= PROGRESS_MESSAGES) as bar:
        result = simulate(trace, G, device_flops=args.device_flops, progress=bar,
                          link_series=bool(args.timeline))
    if args.csv:
        _write(args.csv, lambda f: result.table("links").to_csv(f, index=False))
    if args.timeline:
        from .timeline import write_timeline

        with _progress(args, None, "timeline", unit="event",
                       show=trace.num_messages >= PROGRESS_MESSAGES) as bar:
            counts = write_timeline(trace, result, args.timeline, progress=bar)
        _log(args, f"wrote {args.timeline}: {counts['slices']} slices ({counts['messages']} "
                   f"messages), {counts['links']} link counters; open it in ui.perfetto.dev")
    if args.json:
        print(result.to_json())
    else:
        print(summary(result))


def _args_topology(p):
    p.add_argument("name", metavar="NAME[:k=v,...]", help="topology builder and options")
    p.add_argument("--png", metavar="FILE", default="netsim-topology.png",
                   help="draw the topology to this PNG file (default netsim-topology.png)")
    p.add_argument("--result", metavar="TRACE",
                   help="replay this trace first and colour and widen links by --metric")
    p.add_argument("--metric", default="mean_util", choices=_LINK_METRICS,
                   help="link statistic that colours the links with --result: mean_util "
                        "(default), peak_util, bytes, busy (s) or saturated (s)")
    p.add_argument("--json", action="store_true", help="print the description as JSON")


_LINK_METRICS = ("mean_util", "peak_util", "bytes", "busy", "saturated")


def _run_topology(args):
    from .network import Network, compute_nodes

    G = parse_topology(args.name)
    net = Network(G)
    kinds = {}
    for _, k in G.nodes(data="kind"):
        kinds[k or "node"] = kinds.get(k or "node", 0) + 1
    desc = {"name": G.graph.get("name", args.name), "nodes": G.number_of_nodes(),
            "links": G.number_of_edges(), "link_directions": net.num_links,
            "kinds": kinds, "compute_nodes": len(compute_nodes(G)),
            "bandwidths": sorted({float(b) for b in net.bandwidth}),
            "latencies": sorted({float(x) for x in net.latency})}
    result = None
    if args.metric != "mean_util" and not args.result:
        raise NetsimError("--metric colours links by a replay: give --result TRACE too")
    if args.result:
        from .result import simulate
        from .traceio import load_trace

        trace = load_trace(args.result)
        with _progress(args, trace.num_ops, "replay", unit="op",
                       show=trace.num_messages >= PROGRESS_MESSAGES) as bar:
            result = simulate(trace, net, progress=bar)
        desc["bottlenecks"] = result.bottlenecks(5)
    if args.png:
        from .plot import draw_topology

        _write(args.png, lambda f: draw_topology(G, result=result, path=f, metric=args.metric),
               binary=True)
    if args.json:
        print(json.dumps(desc))
        if args.png:
            _log(args, f"wrote {args.png}")
        return
    rows = [("name", desc["name"]), ("nodes", desc["nodes"]), ("links", desc["links"]),
            ("kinds", ", ".join(f"{k}={v}" for k, v in sorted(kinds.items()))),
            ("compute nodes", desc["compute_nodes"]),
            ("bandwidths", ", ".join(format_bandwidth(b) for b in desc["bandwidths"])),
            ("latencies", ", ".join(format_time(x) for x in desc["latencies"]))]
    print(table(["field", "value"], rows))
    if result is not None:
        print("\nbusiest links (" + args.metric + ")")
        lk = result.links
        order = sorted(range(len(lk["bytes"])), key=lambda i: -float(lk[args.metric][i]))[:5]
        print(_link_table([{**{k: col[i] for k, col in lk.items()},
                            "link": f"{lk['src'][i]}->{lk['dst'][i]}"}
                           for i in order if lk["bytes"][i] > 0], flows=False))
    if args.png:
        _log(args, f"wrote {args.png}")


def _args_record(p):
    p.add_argument("paradigm", nargs="?", help="paradigm name (see --list)")
    p.add_argument("--list", action="store_true", help="list the paradigms and their options")
    p.add_argument("--dataset", default="iris", help="iris, digits, mnist or sparse (default iris)")
    p.add_argument("--workers", type=int, default=None, help="logical workers (default: the paradigm's)")
    p.add_argument("--epochs", type=int, default=None, help="training epochs (default: the paradigm's)")
    p.add_argument("--seed", type=int, default=0, help="seed of all randomness (default 0)")
    p.add_argument("--set", dest="options", action="append", default=[], metavar="KEY=VALUE",
                   help="a paradigm option, e.g. --set servers=2 --set hidden=32,16 (repeatable)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the trace (.npz or .json)")
    p.add_argument("--json", action="store_true", help="print the run summary as JSON")


def _option_value(key, text, default):
    """Parse ``--set key=text`` to the type of the option's default."""
    if isinstance(default, bool):
        if text.lower() in ("1", "true", "yes", "on"):
            return True
        if text.lower() in ("0", "false", "no", "off"):
            return False
        raise NetsimError(f"option {key} takes true or false, got {text!r}")
    try:
        if isinstance(default, (tuple, list)):
            return tuple(int(x) for x in text.split(",") if x)
        if isinstance(default, int):
            return int(text)
        if isinstance(default, float):
            return float(text)
    except ValueError:
        raise NetsimError(f"option {key} takes a {type(default).__name__}, got {text!r}") from None
    return _number_or_text(text) if default is None else text


def _paradigm_options(name, entry, items):
    """``--set KEY=VALUE`` items as typed options of paradigm ``name`` (registry ``entry``)."""
    options = {}
    for item in items:
        key, eq, value = item.partition("=")
        if entry is None or not eq or key not in entry.options:
            known = f"{name} options are {', '.join(entry.options)}" if entry else "options need a PARADIGM"
            raise NetsimError(f"--set {item!r}: {known}")
        options[key] = _option_value(key, value, entry.options[key][0])
    return options


def _run_record(args):
    import workloads

    if args.list:
        print("\n".join(workloads.describe(name) for name in workloads.PARADIGMS))
        return
    if not args.paradigm:
        raise _UsageError("record: give a PARADIGM or --list")
    entry = workloads.PARADIGMS.get(args.paradigm)
    if entry is None:
        raise NetsimError(f"unknown paradigm {args.paradigm!r}; known: {', '.join(workloads.PARADIGMS)}")
    options = {"seed": args.seed}
    if args.epochs is not None:
        options["epochs"] = args.epochs
    options.update(_paradigm_options(args.paradigm, entry, args.options))
    if args.workers is not None and args.workers < 1:
        raise NetsimError(f"workers must be >= 1, got {args.workers}")
    with _progress(args, None, f"recording {args.paradigm}", unit="epoch") as bar:
        run = workloads.record(args.paradigm, dataset=args.dataset, workers=args.workers,
                               progress=bar, **options)
    if args.output:
        from .traceio import save_trace

        try:
            save_trace(run.trace, args.output)
        except OSError as exc:
            raise NetsimError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    summary_row = {"paradigm": run.paradigm, "dataset": args.dataset,
                   "workers": run.trace.metadata.get("workers"), "accuracy": run.accuracy,
                   "bytes": run.total_bytes, "messages": run.messages,
                   "iterations": run.iterations, "dropped_fraction": run.dropped_fraction}
    if args.json:
        print(json.dumps(summary_row))
        return
    rows = [(k, "-" if v is None else (f"{v:.4f}" if isinstance(v, float) else v))
            for k, v in summary_row.items()]
    print(table(["field", "value"], rows))
    if args.output:
        _log(args, f"wrote {args.output}")


def _args_collective(p):
    p.add_argument("algorithm", help="collective algorithm: mst, lp, be, ring, rd, rabenseifner, "
                                     "ring_allgather, rd_allgather, ring_reduce_scatter, "
                                     "rh_reduce_scatter, alltoall, ps, ...")
    p.add_argument("--topology", default="star", metavar="NAME[:k=v,...]",
                   help="topology (default star; builders with n are sized to the ranks)")
    p.add_argument("--workers", "-P", type=int, required=True, help="ranks P")
    p.add_argument("--bytes", "-n", required=True, help="message size, e.g. 64MB")
    p.add_argument("--segments", "-k", type=int, default=None,
                   help="LP segments (default: the optimal k* for the topology's alpha, beta)")
    p.add_argument("--gamma", type=float, default=0.0, help="reduction cost, seconds per byte")
    p.add_argument("--servers", type=int, default=1, help="servers for ps (default 1)")
    p.add_argument("--json", action="store_true", help="print the record as JSON")


def _run_collective(args):
    from .studies import compare, ranks_for
    from .units import parse_bytes

    if args.workers < 1:
        raise NetsimError(f"P must be >= 1, got {args.workers}")
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


def _args_scale(p):
    p.description = (
        "Time per iteration against the worker count P. With a PARADIGM (or a saved trace): "
        "simulate its training at each P next to its alpha-beta closed form, split into "
        "compute and exposed communication, with speed-up and efficiency (weak scaling: fixed "
        "per-worker batch, speed-up P*T(1)/T(P) with T(1) one worker's compute alone), the "
        "saturation point (smallest P at which a link is at >= 99% of capacity for more than "
        "half of the iteration; --strong: or at which time per iteration stops falling) and "
        "scaling-law fits. Without one: collective algorithms (--algorithms).")
    p.add_argument("paradigm", nargs="?", metavar="PARADIGM|TRACE",
                   help="a paradigm (see netsim record --list) or a trace file to project to "
                        "each P; omit for collective algorithms")
    p.add_argument("--algorithms", "-a", default=None,
                   help="comma-separated collective algorithms (default lp,mst,be,ring)")
    p.add_argument("--workers", "-P", default="2..64",
                   help="P values: 2..64 (powers of two) or 2,3,5 (default 2..64)")
    p.add_argument("--bytes", "-n", default="64MB", help="message size (default 64MB)")
    p.add_argument("--topology", default="star", metavar="NAME[:k=v,...]",
                   help="topology (default star; builders with n are sized to each P)")
    p.add_argument("--segments", "-k", type=int, default=None,
                   help="LP segments, fixed across P (default: the optimum k* at the largest P)")
    p.add_argument("--png", default="netsim-scale.png", help="plot file (default netsim-scale.png)")
    p.add_argument("--logy", action="store_true", help="logarithmic time axis in the plot")
    p.add_argument("--json", action="store_true", help="print the records as JSON")
    p.add_argument("--csv", metavar="FILE", help="also write the records as CSV")
    g = p.add_argument_group("paradigm scaling (with PARADIGM)")
    g.add_argument("--model", help="resize the traces to this model: resnet50, vgg16, "
                                   "bert-large, gpt2-small, ... (message sizes and FLOPs)")
    g.add_argument("--batch", type=int, default=None,
                   help="samples per worker per step (default: the recording's)")
    g.add_argument("--device", metavar="NAME[:PRECISION]",
                   help="device preset for the compute ops: V100, A100, H100 (-PCIe), "
                        "optionally :fp32 (default), :tf32 or :fp16")
    g.add_argument("--device-flops", type=float, default=None,
                   help="device throughput, FLOP/s (default: the trace's, a V100's 15.7e12)")
    g.add_argument("--dataset", default="digits", help="dataset of the recordings (default digits)")
    g.add_argument("--iterations", type=int, default=3, help="iterations simulated (default 3)")
    g.add_argument("--seed", type=int, default=0, help="seed of the recordings (default 0)")
    g.add_argument("--set", dest="options", action="append", default=[], metavar="KEY=VALUE",
                   help="a paradigm option, e.g. --set batch_size=32 (repeatable)")
    g.add_argument("--strong", action="store_true",
                   help="strong scaling: the global batch of the smallest P, split over P workers")


def _run_scale(args, title=None):
    from .studies import ALGORITHMS, fit_scaling, lp_segments, plot_scale, scale, takes_segments
    from .units import parse_bytes

    if getattr(args, "paradigm", None):
        return _run_scale_paradigm(args)
    algorithms = [a.strip() for a in (args.algorithms or "lp,mst,be,ring").split(",") if a.strip()]
    for name in algorithms:
        if name not in ALGORITHMS:
            raise NetsimError(f"unknown algorithm {name!r}; known: {', '.join(ALGORITHMS)}")
    workers = parse_workers(args.workers)
    nbytes = parse_bytes(args.bytes)
    make = topology_factory(args.topology)
    segments = args.segments
    if segments is None and any(takes_segments(name) for name in algorithms):
        segments = lp_segments(workers, nbytes, make)
    records = []
    for name in algorithms:
        _note(args, f"simulating {name} at P = {', '.join(map(str, workers))} ...")
        records += scale([name], workers, nbytes, make, segments=segments)
    fits, notes = {}, {}
    for name in algorithms:
        # A point of zero time (P = 1: one rank sends nothing) fits no law; leave it out.
        rs = [r for r in records if r["algorithm"] == name]
        timed = [r for r in rs if r["simulated"] > 0]
        fits[name] = (fit_scaling([r["P"] for r in timed], [r["simulated"] for r in timed])
                      if len({r["P"] for r in timed}) >= 2 else None)
        zero = [r["P"] for r in rs if r["simulated"] <= 0]
        if fits[name] is None:
            notes[name] = "no fit: fewer than two P with time > 0"
        elif zero:
            notes[name] = f"P = {', '.join(map(str, zero))} left out (time 0: no messages)"
    if args.csv:
        _write_csv(args.csv, records)
    _write(args.png, lambda f: plot_scale(records, f, title=title, logy=args.logy), binary=True)
    if args.json:
        print(json.dumps({"records": records, "fits": fits}))
        return
    print(table(["algorithm", "P", "simulated", "closed form", "gap", "limit"],
                [(r["algorithm"], r["P"], format_time(r["simulated"]), format_time(r["closed_form"]),
                  f"{r['gap'] + 0.0:+.2%}" if abs(r["gap"]) >= 5e-5 else "0", r["limit"] or "-")
                 for r in records]))
    print()
    print(table(["algorithm", "scaling law", "R^2", "note"],
                [(name, f["law"] if f else "-", "-" if not f or f["r2"] is None else f"{f['r2']:.4f}",
                  "; ".join(x for x in ("no single law fits" if f and f["no_single_law"] else "",
                                        notes.get(name, "")) if x))
                 for name, f in fits.items()]))
    note = f"n = {format_bytes(nbytes)}, topology {args.topology}"
    if segments is not None:
        note += f", LP segments k = {segments}"
    print(f"\n{note}; wrote {args.png}")


def _run_scale_paradigm(args):
    import workloads
    from workloads import scaling

    if args.algorithms:
        raise NetsimError("--algorithms is for collectives; give either a PARADIGM or --algorithms")
    workers = parse_workers(args.workers)
    options = _paradigm_options(args.paradigm, workloads.PARADIGMS.get(args.paradigm), args.options)
    flops = args.device_flops
    if args.device:
        if flops is not None:
            raise NetsimError("give --device or --device-flops, not both")
        flops = _device_flops(args.device)
    if args.model:
        from workloads.models import get_model

        get_model(args.model)  # an unknown name fails here, before any work
    _note(args, f"simulating {args.paradigm} at P = {', '.join(map(str, workers))} ...")
    st = scaling.study(args.paradigm, workers, topology_factory(args.topology), model=args.model,
                       device_flops=flops, iterations=args.iterations, seed=args.seed,
                       dataset=args.dataset, strong=args.strong, batch=args.batch,
                       **options)
    records = st["records"]
    if args.csv:
        _write_csv(args.csv, records)
    _write(args.png, lambda f: scaling.plot_study(st, f), binary=True)
    if args.json:
        print(json.dumps(st))
        return
    print(scaling.format_study(st))
    print(f"\ntopology {args.topology}; wrote {args.png}")


def _device_flops(spec):
    """FLOP/s of a device preset: ``V100`` or ``A100:tf32`` (``topologies.devices``)."""
    from topologies.devices import device_flops

    name, _, precision = spec.partition(":")
    return device_flops(name, precision or "fp32")


def _args_claims(p):
    p.description = (
        "Reproduce the seed papers' claims (linear pipelining, RingTMP, Parameter Flow, graph "
        "partitioning, DGC, Slim-DP) on stated topologies and sizes, and print one row per "
        "claim: claim, source, what was measured, its threshold, PASS or FAIL. A FAIL is a "
        "result, not an error: every row is shown and the exit status is 0 whatever the "
        "verdicts. Takes about half a minute.")
    p.add_argument("--seed", type=int, default=0, help="seed of every training run (default 0)")
    p.add_argument("--markdown", action="store_true", help="print a Markdown table")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")


def _run_claims(args):
    import time

    from topologies import star
    from workloads.claims import format_claims, run_claims

    _note(args, "reproducing the seed papers' claims ...")
    t0 = time.perf_counter()
    rows = run_claims(star, seed=args.seed)
    wall = time.perf_counter() - t0
    if args.json:
        print(json.dumps(rows))
    else:
        print(format_claims(rows, markdown=args.markdown))
    failed = sum(not r["passed"] for r in rows)
    print(f"{len(rows) - failed} PASS, {failed} FAIL in {wall:.0f} s (a FAIL is reported, "
          f"not an error)", file=sys.stderr)


def _args_sweep(p):
    p.add_argument("config", metavar="CONFIG.yaml",
                   help="the grid: topologies x collectives (with bytes) or paradigms (with "
                        "hidden) x P; see the README for a sample")
    p.add_argument("-o", "--output", metavar="FILE.csv",
                   help="results, one row per point (default: the config's output, else "
                        "CONFIG.csv); points already in it are skipped")
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                   help="run on this Dask scheduler (started with `dask scheduler`) instead of "
                        "a local cluster")
    p.add_argument("--jobs", "-j", type=int, default=None,
                   help="local Dask workers (default: the machine's cores)")
    p.add_argument("--threads", action="store_true",
                   help="local workers as threads of this process, not processes (quicker start)")
    p.add_argument("--timeout", type=float, default=10.0,
                   help="seconds to wait for --scheduler (default 10)")
    p.add_argument("--png", metavar="FILE",
                   help="plot of time per iteration vs P (default: the config's png, else "
                        "the output's name with .png)")
    p.add_argument("--json", action="store_true", help="print the run's counts as JSON")


def _run_sweep(args):
    import os

    from .sweep import load_config, plot_sweep, point_key, read_rows, run_sweep, sweep_points

    config = load_config(args.config)
    output = args.output or config["output"]
    png = args.png or config.get("png") or os.path.splitext(output)[0] + ".png"
    if args.jobs is not None and args.jobs < 1:
        raise NetsimError(f"--jobs must be >= 1, got {args.jobs}")
    keys = {point_key(p) for p in sweep_points(config)}
    runners = {}
    if config["paradigms"]:
        from workloads.scaling import sweep_point

        runners["paradigm"] = sweep_point
    with _progress(args, len(keys), "sweep", unit="point") as bar:
        counts = run_sweep(config, output, scheduler=args.scheduler, jobs=args.jobs,
                           processes=not args.threads, timeout=args.timeout, progress=bar,
                           log=lambda line: _log(args, line), runners=runners)
    rows = [r for r in read_rows(output) if point_key(r) in keys]
    _write(png, lambda f: plot_sweep(rows, f, title=f"sweep {os.path.basename(args.config)}"),
           binary=True)
    counts["png"] = png
    if args.json:
        print(json.dumps(counts))
        return

    def size(r):
        if r["kind"] == "collective":
            return format_bytes(float(r["nbytes"]))
        return f"hidden {r['hidden']}" if r["hidden"] else "-"

    def seconds(text):
        return format_time(float(text)) if text else "-"

    print(table(["kind", "name", "topology", "P", "size", "simulated", "closed form", "gap",
                 "top link", "saturated"],
                [(r["kind"], r["name"], r["topology"], int(r["P"]), size(r),
                  seconds(r["simulated"]) if not r["error"] else "error",
                  seconds(r["closed_form"]), f"{float(r['gap']):+.2%}" if r["gap"] else "-",
                  r["top_link"] or "-",
                  f"{float(r['saturated_fraction']):.0%}" if r["saturated_fraction"] else "-")
                 for r in rows]))
    failed = [r for r in rows if r["error"]]
    if failed:
        print("\nerrors (in the error column of the output):")
        for r in failed:
            print(f"  {r['name']} {size(r)} P={r['P']} on {r['topology']}: {r['error']}")
    print(f"\n{counts['points']} points: {counts['ran']} simulated now, {counts['skipped']} "
          f"already in {output}, {len(failed)} with errors; wrote {output} and {png}")


def _args_demo(p):
    p.add_argument("--png", default="netsim-demo.png", help="plot file (default netsim-demo.png)")
    p.add_argument("--json", action="store_true", help="print the records as JSON")


def _run_demo(args):
    """Ring allreduce, Rabenseifner (BE) and a parameter server on a 10 GbE star, P = 2..64."""
    _log(args, "netsim demo: allreduce of a 100 MB gradient (ResNet-50 size) on a 10 GbE star, "
               "ring vs Rabenseifner vs one parameter server, P = 2..64")
    ns = argparse.Namespace(algorithms="ring,rabenseifner,ps", workers="2..64", bytes="100MB",
                            topology="star:bandwidth=10Gbps,latency=1us", segments=None,
                            png=args.png, json=args.json, csv=None, logy=True,
                            quiet=getattr(args, "quiet", False))
    _run_scale(ns, title="100 MB gradient exchange on a 10 GbE star")


# -- output helpers ----------------------------------------------------------------------

def table(headers, rows):
    """Aligned plain-text table; numbers right-aligned.

    >>> print(table(["a", "bb"], [(1, "x"), (22, "yy")]))
     a  bb
    --  --
     1  x
    22  yy
    """
    cells = [[str(c) for c in r] for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    numeric = [bool(rows) and all(_is_number(r[i]) for r in rows) for i in range(len(headers))]

    def line(values):
        return "  ".join(v.rjust(w) if num else v.ljust(w)
                         for v, w, num in zip(values, widths, numeric)).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in cells])


def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def summary(result, top=5):
    """Human summary of a :class:`~netsim.result.Result`: totals, ranks, bottleneck links."""
    r = result
    lines = [table(["metric", "value"], [
        ("makespan", format_time(r.makespan)),
        ("iterations", len(r.iteration_end)),
        ("mean iteration", format_time(float(r.iteration_times.mean())) if len(r.iteration_times) else "-"),
        ("messages", r.stats["messages"]),
        ("bytes", format_bytes(r.stats["bytes"])),
        ("mean compute / rank", format_time(float(r.ranks["compute"].mean()))),
        ("mean exposed comm / rank", format_time(float(r.ranks["exposed_communication"].mean()))),
        ("mean idle / rank", format_time(float(r.ranks["idle"].mean()))),
    ]), "", "bottleneck links", _link_table(r.bottlenecks(top))]
    return "\n".join(lines)


def _link_table(links, flows=True):
    """Table of link-direction records (as of ``Result.bottlenecks``), one row each."""
    headers = ["link", "bandwidth", "bytes", "mean util", "peak util", "saturated"]
    rows = [(b["link"], format_bandwidth(b["bandwidth"]), format_bytes(b["bytes"]),
             f"{b['mean_util']:.3f}", f"{b['peak_util']:.3f}", format_time(b["saturated"]))
            + ((b["peak_flows"],) if flows else ()) for b in links]
    return table(headers + ["max flows"] * flows, rows)


PROGRESS_MESSAGES = 100_000
"""Replays of at least this many messages show a progress bar (on a terminal)."""


def _progress(args, total, desc, unit="it", show=True, initial=0):
    """A progress bar on stderr if it is a terminal, ``show`` holds and not ``--quiet``."""
    from .progress import Progress, show_progress

    return Progress(total, desc, show=show and show_progress(getattr(args, "quiet", False)),
                    initial=initial, unit=unit)


def _note(args, message):
    """A progress note: like a progress bar, shown only on a terminal and not with --quiet."""
    from .progress import show_progress

    if show_progress(getattr(args, "quiet", False)):
        print(message, file=sys.stderr)


def _log(args, message):
    """A note for people on stderr (stdout stays for results), unless ``--quiet``."""
    if not getattr(args, "quiet", False):
        print(message, file=sys.stderr)


def _write_csv(path, records):
    """Records (dicts with the same keys) as a CSV file."""
    import csv

    def write(f):
        w = csv.DictWriter(f, fieldnames=list(records[0]))
        w.writeheader()
        w.writerows(records)
    _write(path, write)


def _write(path, writer, binary=False):
    try:
        with open(path, "wb" if binary else "w") as f:
            writer(f)
    except OSError as exc:
        raise NetsimError(f"cannot write {path}: {exc.strerror or exc}") from None


_COMMANDS = {
    "replay": ("replay a trace on a topology and report times and link loads",
               _args_replay, _run_replay),
    "topology": ("describe a topology and draw it to PNG", _args_topology, _run_topology),
    "record": ("train a paradigm for real and record its message trace", _args_record, _run_record),
    "collective": ("one collective: simulated time next to its closed form, and why they differ",
                   _args_collective, _run_collective),
    "scale": ("time per iteration against P for a paradigm, or collectives: simulation, "
              "closed forms, saturation, fits, PNG",
              _args_scale, _run_scale),
    "claims": ("the seed papers' claims reproduced: a PASS/FAIL table (exit 0 either way)",
               _args_claims, _run_claims),
    "demo": ("the main job on a built-in default: gradient exchange vs P on 10 GbE, table + PNG",
             _args_demo, _run_demo),
    "sweep": ("a grid of topologies x collectives or paradigms x P x sizes, in parallel on Dask, "
              "to one resumable CSV", _args_sweep, _run_sweep),
}


def build_parser():
    """The argparse parser of every subcommand."""
    parser = _Parser(prog="netsim", description=(
        "Flow-level network simulation of distributed neural-network training: replay "
        "traces of real training runs on topologies of real hardware, next to the "
        "alpha-beta closed forms."))
    parser.add_argument("--version", action="version", version=f"netsim {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (help_text, add_args, _run) in _COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        add_args(p)
        if "--quiet" not in p._option_string_actions:  # one convention for every command
            flags = [f for f in ("--quiet", "-q") if f not in p._option_string_actions]
            p.add_argument(*flags, action="store_true",
                           help="no progress bars or notes on stderr (errors still show)")
    return parser


def main(argv=None):
    """Entry point of the ``netsim`` console script; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 2
        _COMMANDS[args.command][2](args)
    except _UsageError as exc:
        print(f"netsim: error: {exc}", file=sys.stderr)
        return 2
    except DeadlockError as exc:
        print(f"netsim: error: {str(exc).split(':')[0]}; the first of them:", file=sys.stderr)
        for s in exc.stuck[:5]:
            print(f"  op {s['op']} on rank {s['rank']}: {s['what']}, waits for ops {s['waits_for']}",
                  file=sys.stderr)
        return 2
    except NetsimError as exc:
        print(f"netsim: error: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("netsim: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader (say `| head`) closed the pipe: stop quietly, as Unix tools do.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
