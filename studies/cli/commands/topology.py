"""``netsim topology``: describe a topology and draw it to PNG.

With ``--result TRACE`` the trace is replayed first and the links are coloured
by a link statistic; the busiest links are listed.
"""

import inspect
import json
import os
import sys
import warnings

from netsim.errors import NetsimError
from netsim.units import format_bandwidth, format_time

from studies.cli.console import PROGRESS_MESSAGES, check_png, expect, log, progress, write
from studies.cli.options import refuse_with_list
from studies.registry import TOPOLOGIES, parse_topology, topology_factory
from studies.scaling.trace_size import BUILD_SECONDS
from studies.reports.text import link_table, table

HELP = "describe a topology and draw it to PNG"
"""One line for ``netsim --help``."""


DEFAULT_PNG = "netsim-topology.png"

DRAW_NODES = 2000
"""Graphs of more nodes are drawn only when ``--png`` names a file: a policy of this project.
A 256-machine DGX H100 cluster (5,385 nodes) draws in 17 s of CPU and shows no readable
label; 64 machines (1,353 nodes) still do."""

DRAW_SECONDS = 3e-3
"""CPU seconds a drawing takes per node, for the note before a large one: the slope between
``dgx_h100:nodes=64`` and ``=256`` (1,353 and 5,385 nodes, 5.4 and 16.9 s of CPU on the
2-core development machine, 2026-11-26)."""


def add_arguments(p):
    """Add the command's arguments to ``p``, its ``argparse`` parser.

    Parameters
    ----------
    p : argparse.ArgumentParser

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> p.parse_args(["star:n=4", "--json"]).json
    True
    """
    p.description = (
        "Describe a topology and draw it to PNG. NAME is a builder with key=value options in "
        "human units (star:n=8,bandwidth=10Gbps,latency=1us; --list shows every builder and "
        "its options), or a .json (networkx node-link) or .graphml file. A file's edges must "
        "carry bandwidth (bytes/s, > 0) and should carry latency (s; a missing one is 0); its "
        "nodes should carry kind (gpu, host, cpu, pcie_switch, nvswitch, nic, switch): ranks go "
        "on the gpu nodes in graph order, else on the host nodes, and on every node when no "
        "node has a kind. Missing latencies or kinds and ranks that cannot reach each other "
        "are reported as warnings.")
    p.add_argument("name", nargs="?", metavar="NAME[:k=v,...]",
                   help="topology builder and options, or a .json/.graphml file")
    p.add_argument("--list", action="store_true",
                   help="list the topology builders and their options, with defaults")
    p.add_argument("--png", metavar="FILE", default=DEFAULT_PNG,
                   help=f"draw the topology to this PNG file (default {DEFAULT_PNG}, not drawn "
                        f"by default above {DRAW_NODES} nodes: name the file to draw those)")
    p.add_argument("--result", metavar="TRACE",
                   help="replay this trace first and colour and widen links by --metric")
    p.add_argument("--metric", default="mean_util", choices=_LINK_METRICS,
                   help="link statistic that colours the links with --result: mean_util "
                        "(default), peak_util, bytes, busy (s) or saturated (s)")
    p.add_argument("--json", action="store_true", help="print the description as JSON")


_LINK_METRICS = ("mean_util", "peak_util", "bytes", "busy", "saturated")



def run(args):
    """Run the command on its parsed arguments: the report on stdout, notes on stderr.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed by the parser :func:`add_arguments` filled (``quiet`` is read if present).

    Examples
    --------
    >>> import argparse, os, tempfile
    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> png = os.path.join(tempfile.mkdtemp(), "t.png")
    >>> run(p.parse_args(["star:n=4", "--png", png, "--json"]))  # doctest: +ELLIPSIS
    {"name": "star(4 hosts, 10 Gbps)", "nodes": 5, "links": 4, "link_directions": 8, ...}
    """
    from netsim.network.compiled import Network, compute_nodes

    if args.list:
        refuse_with_list(args, add_arguments, "every builder")
        print(describe_builders())
        return
    if not args.name:
        raise NetsimError("topology: give NAME[:k=v,...] or a graph file, or --list")
    check_png(args.png)
    trace = None
    if args.result:
        from netsim.formats.tracefile import load_trace

        trace = load_trace(args.result)
        G = topology_factory(args.name)(trace.ranks)  # a builder without n: the trace's ranks
    else:
        # a large builder spec that fits in memory: its build is announced with its price
        G = parse_topology(args.name, notice=lambda elements: expect(
            args, elements * BUILD_SECONDS, f"building {args.name} ({elements:.3g} nodes and "
                                            f"edges)"))
    with warnings.catch_warnings():
        # What the library would warn about is in topology_warnings, printed below once.
        warnings.simplefilter("ignore", UserWarning)
        net = Network(G)
    kinds = {}
    for _, k in G.nodes(data="kind"):
        kinds[k or "node"] = kinds.get(k or "node", 0) + 1
    desc = {"name": G.graph.get("name", args.name), "nodes": G.number_of_nodes(),
            "links": G.number_of_edges(), "link_directions": net.num_links,
            "kinds": kinds, "compute_nodes": len(compute_nodes(G)),
            "bandwidths": sorted({float(b) for b in net.bandwidth}),
            "latencies": sorted({float(x) for x in net.latency})}
    desc["warnings"] = topology_warnings(G)
    for line in desc["warnings"]:
        print(f"netsim: warning: {line}", file=sys.stderr)
    result = None
    if args.metric != "mean_util" and not args.result:
        raise NetsimError("--metric colours links by a replay: give --result TRACE too")
    if args.result:
        from netsim.result import simulate

        with progress(args, trace.num_ops, "replay", unit="op",
                      show=trace.num_messages >= PROGRESS_MESSAGES) as bar:
            result = simulate(trace, net, progress=bar if bar.drawn else None)
        desc["bottlenecks"] = result.bottlenecks(5)
    if args.png and G.number_of_nodes() > DRAW_NODES:
        seconds = DRAW_SECONDS * G.number_of_nodes()
        if args.png == DEFAULT_PNG:
            log(args, f"not drawn: {G.number_of_nodes()} nodes, more than the {DRAW_NODES} a "
                      f"drawing shows readably; name the file with --png to draw it anyway "
                      f"(about {seconds:.0f} s)")
            args.png = None
        else:
            log(args, f"drawing {G.number_of_nodes()} nodes: about {seconds:.0f} s")
    if args.png:
        from netsim.drawing.plot import draw_topology

        title = G.graph.get("name") or args.name
        if result is not None:
            title += f": links by {args.metric} replaying {os.path.basename(args.result)}"
        write(args.png, lambda f: draw_topology(G, result=result, path=f, metric=args.metric,
                                                title=title), binary=True)
    if args.json:
        print(json.dumps(desc))
        if args.png:
            log(args, f"wrote {args.png}")
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
        print(link_table([{**{k: col[i] for k, col in lk.items()},
                            "link": f"{lk['src'][i]}->{lk['dst'][i]}"}
                           for i in order if lk["bytes"][i] > 0], flows=False))
    if args.png:
        log(args, f"wrote {args.png}")


def describe_builders():
    """One line per topology builder: its name and options with their defaults.

    Examples
    --------
    >>> print(describe_builders().splitlines()[0])  # doctest: +ELLIPSIS
    star: n (required), bandwidth=10 Gbps, latency=1 us, mtu=None, cpu=None, cores=1
    """
    lines = []
    for name, builder in TOPOLOGIES.items():
        opts = []
        for p in inspect.signature(builder).parameters.values():
            if p.default is inspect.Parameter.empty:
                opts.append(f"{p.name} (required)")
            elif "bandwidth" in p.name:
                opts.append(f"{p.name}={format_bandwidth(p.default)}")
            elif "latency" in p.name:
                opts.append(f"{p.name}={format_time(p.default)}")
            else:
                opts.append(f"{p.name}={p.default}")
        lines.append(f"{name}: " + ", ".join(opts) if opts else f"{name} (no options)")
    return "\n".join(lines)


def topology_warnings(G):
    """What a topology leaves to defaults that a user may not expect, one line each.

    Nodes without a ``kind`` (ranks then go on the degree-1 nodes, or on
    every node when there is none: :func:`netsim.network.compiled.compute_nodes`),
    edges without a ``latency`` (taken as 0 s, as :class:`netsim.Network`
    warns), and compute nodes that cannot reach each other (a replay refuses
    those).

    Parameters
    ----------
    G : networkx.Graph or DiGraph

    Returns
    -------
    list of str

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.Graph(); G.add_edge("a", "b", bandwidth=1e9)
    >>> G.add_edge("c", "d", bandwidth=1e9, latency=0.0)
    >>> for line in topology_warnings(G): print(line)
    no node carries a kind: ranks go on the 4 degree-1 nodes (a, b, c, d); give each node a kind to choose
    1 of 2 edges carry no latency: taken as 0 s
    ranks cannot all reach each other: 2 disconnected groups of compute nodes (e.g. a and c); a replay refuses this topology
    """
    import networkx as nx

    from netsim.network.compiled import compute_nodes, leaves

    out = []
    if not any("kind" in d for _, d in G.nodes(data=True)):
        ends = leaves(G)
        shown = ", ".join(map(str, ends[:4])) + (", ..." if len(ends) > 4 else "")
        out.append(f"no node carries a kind: ranks go on the {len(ends)} degree-1 nodes "
                   f"({shown}); give each node a kind to choose" if ends else
                   f"no node carries a kind and none has degree 1: ranks go on every node "
                   f"({G.number_of_nodes()}), switches included")
    missing = sum("latency" not in d for _, _, d in G.edges(data=True))
    if missing:
        out.append(f"{missing} of {G.number_of_edges()} edges carry no latency: taken as 0 s")
    ranks = compute_nodes(G)
    groups = (nx.strongly_connected_components(G) if G.is_directed()
              else nx.connected_components(G))
    hit = [g for g in groups if any(r in g for r in ranks)]
    if len(hit) > 1:
        first = [next(r for r in ranks if r in g) for g in hit[:2]]
        out.append(f"ranks cannot all reach each other: {len(hit)} disconnected groups of "
                   f"compute nodes (e.g. {first[0]} and {first[1]}); a replay refuses this "
                   f"topology")
    return out
