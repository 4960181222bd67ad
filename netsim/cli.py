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
from .errors import NetsimError, TopologyError
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


def _convert(key, text):
    """Turn a ``key=value`` string into the builder's SI argument."""
    if "bandwidth" in key:
        return parse_bandwidth(text)
    if "latency" in key:
        return parse_time(text)
    if key == "dims":
        try:
            return tuple(int(x) for x in text.replace("x", ",").split(",") if x)
        except ValueError:
            raise TopologyError(f"dims must look like 4x4 or 4,4, got {text!r}") from None
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


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
        kwargs[key] = _convert(key, value.strip())
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


def _run_replay(args):
    from .result import simulate
    from .trace import load_trace

    trace = load_trace(args.trace)
    G = parse_topology(args.topology)
    result = simulate(trace, G, device_flops=args.device_flops)
    if args.csv:
        _write(args.csv, lambda f: result.table("links").to_csv(f, index=False))
    if args.json:
        print(result.to_json())
    else:
        print(summary(result))


def _args_topology(p):
    p.add_argument("name", metavar="NAME[:k=v,...]", help="topology builder and options")
    p.add_argument("--png", metavar="FILE", help="draw the topology to this PNG file")
    p.add_argument("--result", metavar="TRACE",
                   help="replay this trace first and colour links by utilisation")
    p.add_argument("--json", action="store_true", help="print the description as JSON")


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
    if args.result:
        from .result import simulate
        from .trace import load_trace

        result = simulate(load_trace(args.result), net)
    if args.png:
        from .plot import draw_topology

        _write(args.png, lambda f: draw_topology(G, result=result, path=f), binary=True)
    if args.json:
        print(json.dumps(desc))
        return
    rows = [("name", desc["name"]), ("nodes", desc["nodes"]), ("links", desc["links"]),
            ("kinds", ", ".join(f"{k}={v}" for k, v in sorted(kinds.items()))),
            ("compute nodes", desc["compute_nodes"]),
            ("bandwidths", ", ".join(format_bandwidth(b) for b in desc["bandwidths"])),
            ("latencies", ", ".join(format_time(x) for x in desc["latencies"]))]
    print(table(["field", "value"], rows))
    if args.png:
        print(f"wrote {args.png}", file=sys.stderr)


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
    if default is None:
        for cast in (int, float):
            try:
                return cast(text)
            except ValueError:
                pass
    return text


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
    for item in args.options:
        key, eq, value = item.partition("=")
        if not eq or key not in entry.options:
            raise NetsimError(f"--set {item!r}: {args.paradigm} options are "
                              f"{', '.join(entry.options)}")
        options[key] = _option_value(key, value, entry.options[key][0])
    if args.workers is not None and args.workers < 1:
        raise NetsimError(f"workers must be >= 1, got {args.workers}")
    print(f"recording {args.paradigm} on {args.dataset} ...", file=sys.stderr)
    run = workloads.record(args.paradigm, dataset=args.dataset, workers=args.workers, **options)
    if args.output:
        from .trace import save_trace

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
        print(f"wrote {args.output}", file=sys.stderr)


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
    ]), "", "bottleneck links"]
    rows = [(b["link"], format_bandwidth(b["bandwidth"]), format_bytes(b["bytes"]),
             f"{b['mean_util']:.3f}", f"{b['peak_util']:.3f}", format_time(b["saturated"]),
             b["peak_flows"]) for b in r.bottlenecks(top)]
    lines.append(table(["link", "bandwidth", "bytes", "mean util", "peak util", "saturated",
                        "max flows"], rows))
    return "\n".join(lines)


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
        add_args(sub.add_parser(name, help=help_text, description=help_text))
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
    except NetsimError as exc:
        print(f"netsim: error: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("netsim: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
