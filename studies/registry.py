"""One read-only registry of names: topology builders, paradigms, collectives, models.

Every name a command line, a sweep config or a notebook may give is looked up
here, and nowhere else:

=============== ========================================== ==============================
registry        name -> what                               from
=============== ========================================== ==============================
``topologies``  builder ``f(n, ..., bandwidth, latency)``  :data:`topologies.BUILDERS`
``paradigms``   :class:`workloads.Paradigm` (run, options) :data:`workloads.PARADIGMS`
``collectives`` trace generator of the collective          :data:`netsim.analysis.collectives.NAMED_SCHEDULES`
``models``      :class:`workloads.models.Model`            :data:`workloads.models.MODELS`
=============== ========================================== ==============================

Every mapping is a :class:`types.MappingProxyType`: no caller can add or
replace an entry. :func:`parse_topology` and :func:`topology_factory` turn a
spec ``NAME[:key=value,...]`` (or a graph file) into a graph or a builder.
"""

import inspect
from types import MappingProxyType

import topologies
import workloads
from netsim.analysis.collectives import NAMED_SCHEDULES
from netsim.errors import NetsimError, TopologyError, UnitError
from netsim.units import parse_bandwidth, parse_shape, parse_spec, parse_time
from workloads.models import MODELS

from studies.cli.options import option_value

__all__ = ["TOPOLOGIES", "PARADIGMS", "COLLECTIVES", "MODELS", "REGISTRY", "parse_topology",
           "spec_gpus", "topology_factory", "parse_placement"]

TOPOLOGIES = MappingProxyType({name: getattr(topologies, name) for name in topologies.BUILDERS})
"""Topology name -> builder (read-only)."""

PARADIGMS = workloads.PARADIGMS
"""Paradigm name -> :class:`workloads.Paradigm` (read-only: the registry itself)."""

COLLECTIVES = NAMED_SCHEDULES
"""Collective algorithm name -> trace generator (read-only; see :mod:`netsim.analysis.collectives`)."""

REGISTRY = MappingProxyType({"topologies": TOPOLOGIES, "paradigms": PARADIGMS,
                             "collectives": COLLECTIVES, "models": MODELS})
"""Kind -> its read-only registry.

Examples
--------
>>> REGISTRY["topologies"]["star"](2).number_of_nodes()
3
>>> REGISTRY["paradigms"]["new"] = None
Traceback (most recent call last):
...
TypeError: 'mappingproxy' object does not support item assignment
"""


def _convert(key, text, default=None):
    """Turn a ``key=value`` string into the builder's SI argument.

    Bandwidths and latencies take human units and ``dims`` a shape; any other
    value is parsed to the type of the option's ``default`` (see
    :func:`studies.cli.options.option_value`: a bool takes true or false), or to a
    number or the text itself when the option has no default.
    """
    if "bandwidth" in key:
        return parse_bandwidth(text)
    if "latency" in key:
        return parse_time(text)
    if key == "dims":
        try:
            return parse_shape(text, "dims")
        except UnitError:
            raise TopologyError(f"dims must look like 4x4 or 4,4, got {text!r}") from None
    return option_value(key, text, None if default is inspect.Parameter.empty else default)


_EXAMPLES = {"machine": "dgx_h100", "dims": "4x4", "k": 4, "per_rack": 4, "leaves": 4, "spines": 2, "hosts_per_leaf": 4}
"""Example values of required builder options, for the message that asks for them."""


def topology_factory(spec):
    """``hosts -> graph`` for a spec; builders with an ``n`` option are sized to the ranks.

    Multi-machine GPU builders (a ``nodes`` option, e.g. ``dgx_h100``) get as
    many machines as the ranks need (``ceil(hosts / GPUs per machine)``).

    Parameters
    ----------
    spec : str
        As for :func:`parse_topology`.

    Returns
    -------
    callable
        ``make(hosts)``: the spec's graph, with ``n=hosts`` (or ``nodes=``)
        unless the spec gives it or its builder has none (then the same graph
        every time).

    Examples
    --------
    >>> make = topology_factory("star:bandwidth=10Gbps")
    >>> make(8).number_of_nodes()
    9
    >>> big = topology_factory("dgx_h100")(16)   # two machines of 8 GPUs
    >>> sum(k == "gpu" for _, k in big.nodes(data="kind"))
    16
    """
    name, _, opts = spec.partition(":")
    sep = "," if ":" in spec else ":"
    params = inspect.signature(TOPOLOGIES[name]).parameters if name in TOPOLOGIES else {}
    if "n" in params and "n=" not in opts:
        return lambda hosts: parse_topology(f"{spec}{sep}n={hosts}")
    if "nodes" in params and "nodes=" not in opts:
        # GPUs per machine counted on two machines: a network option (network=fat_tree)
        # applies to two, and one machine built for a few ranks refuses it (nothing to join)
        two = parse_topology(f"{spec}{sep}nodes=2")
        per = max(1, sum(k == "gpu" for _, k in two.nodes(data="kind")) // 2)
        return lambda hosts: parse_topology(f"{spec}{sep}nodes={max(1, -(-hosts // per))}")
    G = parse_topology(spec)
    return lambda hosts: G


def parse_topology(spec, notice=None):
    """Build a topology from ``NAME[:key=value,...]`` or a ``.json`` / ``.graphml`` file.

    Values take human units (``bandwidth=10Gbps``, ``latency=1us``).

    Parameters
    ----------
    spec : str
        A name of :data:`TOPOLOGIES` with options, or a graph file
        (:func:`netsim.formats.graphio.read_topology`).
    notice : callable, optional
        ``notice(elements)``: told a large spec's estimated nodes and edges once its memory
        check passed, before the build (``netsim topology`` announces the build's time).

    Returns
    -------
    networkx.Graph

    Raises
    ------
    TopologyError
        For an unknown name or option (listing the known ones), or a bad value.

    Examples
    --------
    >>> G = parse_topology("star:n=4,bandwidth=10Gbps")
    >>> G.number_of_nodes()
    5
    >>> parse_topology("stra")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    netsim.errors.TopologyError: unknown topology 'stra'; known: dgx1, ...
    >>> parse_topology("star:n=4,n=8")
    Traceback (most recent call last):
    ...
    netsim.errors.TopologyError: topology 'star:n=4,n=8' gives option 'n' twice
    >>> parse_topology("star:bandwidth=10Gbps")
    Traceback (most recent call last):
    ...
    netsim.errors.TopologyError: topology star needs n (e.g. star:n=8,bandwidth=10Gbps)
    """
    if spec.endswith((".json", ".graphml")):
        from netsim.formats.graphio import read_topology

        return read_topology(spec)
    name, builder, kwargs = _spec(spec)
    elements = _check_size(name, builder, kwargs)
    if elements is not None and notice is not None:
        notice(elements)
    try:
        return builder(**kwargs)
    except TypeError as exc:
        raise TopologyError(f"{name}: {exc}") from None


def _spec(spec):
    """``(name, builder, kwargs)`` of a builder spec, its options checked and converted."""
    name, options = parse_spec(spec, "topology", TopologyError)
    rest = spec.partition(":")[2]
    if name not in TOPOLOGIES:
        raise TopologyError(f"unknown topology {name!r}; known: {', '.join(sorted(TOPOLOGIES))}")
    builder = TOPOLOGIES[name]
    params = inspect.signature(builder).parameters
    kwargs = {}
    for key, value in options.items():
        if key not in params:
            raise TopologyError(f"{name} has no option {key!r}; options: {', '.join(params)}")
        try:
            kwargs[key] = _convert(key, value, params[key].default)
        except UnitError as exc:   # "time must be ... got '-1'" named no option
            if isinstance(exc, TopologyError):
                raise
            raise TopologyError(f"{name}: {key}={value}: {exc}") from None
    missing = [k for k, p in params.items() if p.default is inspect.Parameter.empty
               and p.kind is not p.VAR_KEYWORD and p.kind is not p.VAR_POSITIONAL and k not in kwargs]
    if missing:
        _refuse_missing(name, builder, kwargs, missing, rest)
    return name, builder, kwargs


def _refuse_missing(name, builder, kwargs, missing, rest):
    """Refuse a spec that lacks required options, with an example that builds.

    The example adds the missing options (:data:`_EXAMPLES`) to those given; it is
    built first (its size checked before), and where the options given make it fail
    (``star:mtu=10``, ``gpu_cluster:machine=bogus``) the example shows the missing
    options alone and the failure follows, rather than offering a spec that would not
    build.

    Examples
    --------
    >>> _refuse_missing("star", topologies.star, {"mtu": 10}, ["n"], "mtu=10")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    netsim.errors.TopologyError: topology star needs n (e.g. star:n=8); with it, star: mtu 10 ...
    """
    example = ",".join(f"{k}={_EXAMPLES.get(k, 8)}" for k in missing)
    params = inspect.signature(builder).parameters
    trial = {**kwargs, **{k: _convert(k, str(_EXAMPLES.get(k, 8)), params[k].default)
                          for k in missing}}
    try:
        _check_size(name, builder, trial)
        builder(**trial)
    except (NetsimError, ValueError, TypeError) as exc:
        raise TopologyError(f"topology {name} needs {', '.join(missing)} (e.g. {name}:"
                            f"{example}); with it, {exc}") from None
    raise TopologyError(f"topology {name} needs {', '.join(missing)} (e.g. {name}:{example}"
                        f"{',' + rest if rest else ''})")


#: An integer option at least this large has the graph's size estimated before it is built.
LARGE_OPTION = 64


def _check_size(name, builder, kwargs, limit=None):
    """Refuse, before building, a graph whose integer options make it larger than memory.

    For the integer options of at least :data:`LARGE_OPTION` (a host count, a fat
    tree's ``k``, a number of machines), the builder is called with each of them at
    16, then with each in turn at 8, the other options as given; the graph's nodes
    and edges are extended to the options' values along the larger of the power law
    and the straight line through the two points of each (:func:`_growth`: a graph of
    ``a + b v`` elements comes out exactly, one of ``v^3`` too), at the bytes per
    element of the graph at 16 (traced with :mod:`tracemalloc`). A builder that refuses the probe values is not checked.

    Examples
    --------
    >>> _check_size("star", topologies.star, {"n": 10**11}, limit=24 * 2**30)
    Traceback (most recent call last):
    ...
    netsim.errors.TopologyError: topology star with n=100000000000 would hold about 2e+11 nodes and edges, ... over the 25.8 GB of memory available; use a smaller n
    >>> round(_check_size("star", topologies.star, {"n": 5000}, limit=24 * 2**30))   # fits
    10001
    """
    from netsim.units import format_bytes

    from studies.memory import available_memory

    limit = available_memory() if limit is None else limit
    size = _extended_size(builder, kwargs) if limit is not None else None
    if size is None:
        return
    elements, nbytes, large = size
    if nbytes > limit:
        options = ", ".join(f"{k}={v}" for k, v in large.items())
        raise TopologyError(
            f"topology {name} with {options} would hold about {elements:.2g} nodes and edges, "
            f"{format_bytes(nbytes)} (extended from small graphs built with them), over the "
            f"{format_bytes(limit)} of memory available; use a smaller {' or '.join(large)}")
    return elements


def spec_size(spec):
    """Nodes plus edges, and bytes, of a builder spec's graph, estimated without building it.

    As :func:`_check_size` extends them from the graphs built with the spec's large
    integer options at 8 and 16; None for a spec without one (a small graph) or a
    graph file.

    Parameters
    ----------
    spec : str

    Returns
    -------
    dict or None
        ``elements`` and ``bytes``.

    Examples
    --------
    >>> spec_size("dgx_h100:nodes=100000")["elements"] > 4e6   # 8 GPUs, NICs, switches each
    True
    >>> spec_size("star:n=8") is None
    True
    """
    size = _sized(spec)
    return None if size is None else {"elements": int(size[0]), "bytes": int(size[1])}


def spec_gpus(spec):
    """The gpu nodes of a builder spec's graph, estimated without building it.

    As :func:`spec_size`: extended from the graphs built with the spec's large integer
    options at 8 and 16; None for a spec without one (a small graph) or a graph file.

    Examples
    --------
    >>> spec_gpus("gpu_cluster:machine=dgx_h100,nodes=100000")   # 8 GPUs a machine
    800000
    >>> spec_gpus("dgx_h100") is None
    True
    """
    def gpus(make):
        return sum(1 for _, k in make().nodes(data="kind") if k == "gpu"), 0

    size = _sized(spec, gpus)
    return None if size is None else int(round(size[0]))


def _sized(spec, measure=None):
    """:func:`_extended_size` of a builder spec, or None for a graph file or a spec whose
    size option is left to the ranks (star without n)."""
    if spec.endswith((".json", ".graphml")):
        return None
    try:
        parts = _spec(spec)
    except TopologyError:
        return None
    return _extended_size(*parts[1:], measure=measure)


def _extended_size(builder, kwargs, measure=None):
    """``(elements, bytes, large options)`` extended from probes at 8 and 16, or None;
    ``measure(make)`` gives what is extended instead of the graph's size (its first of two)."""
    import math

    from studies.memory import graph_size

    measure = graph_size if measure is None else measure

    large = {k: v for k, v in kwargs.items()
             if isinstance(v, int) and not isinstance(v, bool) and v >= LARGE_OPTION}
    shapes = {k: v for k, v in kwargs.items() if _is_shape(v) and math.prod(v) >= LARGE_OPTION}
    if shapes and not large:   # a torus's dims: the graph grows with their product
        return _extended_shape(builder, kwargs, shapes)
    if not large:
        return None
    base = {k: 16 for k in large}
    sizes = {}
    for key in ("",) + tuple(large):      # every large option at 16, then each in turn at 8
        try:
            probe = {**kwargs, **base, **({key: 8} if key else {})}
            sizes[key] = measure(lambda: builder(**probe))
        except (TopologyError, TypeError, ValueError):
            return None
    e16, b16 = sizes[""]
    elements = float(e16)
    for key, value in large.items():
        elements *= _growth(sizes[key][0], e16, value / 16)
    nbytes = elements * max(b16, 1) / max(e16, 1)          # bytes per element of the graph at 16
    return elements, nbytes, large


def _growth(small, large, ratio):
    """How much a graph grows from its probe at 16 (``large`` elements; ``small`` at 8) out
    to ``ratio`` times that option: the larger of the power law and the straight line
    through the two probes. A graph of ``a + b v`` elements is extended exactly by the
    line and one of ``v^k`` by the power law; each alone is low for the other (the power
    law through 17 and 33 elements puts a star of 5,000 hosts at 8,052 where it has
    10,001), so neither is ever low by more than the other's error.

    Examples
    --------
    >>> round(33 * _growth(17, 33, 5000 / 16)), round(8 * _growth(1, 8, 4))   # 1 + 2v; v^3
    (10001, 512)
    """
    line = 1.0 + 2.0 * (ratio - 1.0) * (large - small) / max(large, 1)
    return max(_power_law(1.0, small, large, 2, ratio), line)


def _power_law(elements, small, large, step, ratio):
    """``elements`` times the growth of a power law through two probe sizes, out to ``ratio``.

    The probes hold ``small`` and ``large`` elements, the second built with its
    option(s) ``step`` times the first's; the option's value is ``ratio`` times the
    second probe's.
    """
    import math

    return elements * (large / max(small, 1)) ** (math.log(ratio) / math.log(step))


def _is_shape(v):
    return (isinstance(v, tuple) and 0 < len(v) <= 4
            and all(isinstance(x, int) and not isinstance(x, bool) for x in v))


def _extended_shape(builder, kwargs, shapes):
    """As :func:`_extended_size` for shape options (``dims``): probes with every entry at 4
    and at 8, extended along the power law in the shape's product."""
    import math

    from studies.memory import graph_size

    sizes = []
    for side in (4, 8):
        probe = {**kwargs, **{k: (side,) * len(v) for k, v in shapes.items()}}
        try:
            sizes.append(graph_size(lambda: builder(**probe)))
        except (TopologyError, TypeError, ValueError):
            return None
    (e4, _), (e8, b8) = sizes
    grow = 1.0
    for v in shapes.values():
        grow *= math.prod(v) / 8 ** len(v)
    elements = _power_law(e8, e4, e8, 2 ** sum(map(len, shapes.values())), grow)
    return elements, elements * max(b8, 1) / max(e8, 1), {k: "x".join(map(str, v))
                                                           for k, v in shapes.items()}


_COMPUTE_KINDS = ("gpu", "host", "cpu")
"""Node kinds a rank may run on (the others, switch, nvswitch, pcie_switch, nic, forward)."""


def parse_placement(text, G, ranks):
    """``--placement NODE,NODE,...``: the node of each rank, in rank order.

    A name is taken as the graph's node of that name, else as an integer node
    (graphs built from files or by hand may number their nodes).

    Parameters
    ----------
    text : str or None
        Comma-separated node names; None keeps the default placement.
    G : networkx.Graph
    ranks : int
        The trace's ranks: exactly this many nodes must be named.

    Returns
    -------
    list or None

    Raises
    ------
    TopologyError
        For a node not in the graph or of a kind that runs no rank (a switch, a NIC), a
        node named twice or a wrong count.

    Examples
    --------
    >>> G = parse_topology("star:n=4")
    >>> parse_placement("host3,host2", G, 2)
    ['host3', 'host2']
    >>> parse_placement("host3,host9", G, 2)
    Traceback (most recent call last):
    ...
    netsim.errors.TopologyError: --placement: no node 'host9' in the topology
    """
    if text is None:
        return None
    nodes = []
    for item in text.split(","):
        name = item.strip()
        if name in G:
            nodes.append(name)
        elif name.lstrip("-").isdigit() and int(name) in G:
            nodes.append(int(name))
        else:
            raise TopologyError(f"--placement: no node {name!r} in the topology")
        kind = G.nodes[nodes[-1]].get("kind")
        if kind is not None and kind not in _COMPUTE_KINDS:  # a switch or a NIC only forwards
            raise TopologyError(f"--placement: node {name!r} is a {kind}, which runs no rank; "
                                f"name {', '.join(_COMPUTE_KINDS)} nodes")
    if len(set(nodes)) != len(nodes):
        raise TopologyError(f"--placement names a node twice: {text!r}")
    if len(nodes) != ranks:
        raise TopologyError(f"--placement names {len(nodes)} nodes for a trace of {ranks} ranks")
    return nodes
