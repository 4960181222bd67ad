"""The memory this machine has available (:func:`netsim.checks.available_memory`, re-exported)
and a graph's measured size, for the estimates that refuse work up front.

Kept apart from :mod:`studies.scaling.trace_size` (the trace and replay estimates, which build
topologies through :mod:`studies.registry`) so that the registry's own check of a
topology spec's size (:func:`studies.registry.parse_topology`) can read it without an
import circle.
"""

from netsim.checks import available_memory

__all__ = ["available_memory", "graph_size"]


def graph_size(build):
    """Nodes plus edges, and the bytes allocated, of the graph ``build()`` returns.

    The bytes are the allocations traced with :mod:`tracemalloc` while it builds (within a
    caller's own tracing, if one is running), with the garbage collector paused meanwhile: a
    collection during the build freed other objects' memory and made a graph look a few kB
    (a star's 2^20-host estimate fell from 458 MB to 10 kB once a probe graph with reference
    cycles had been dropped before). Nothing is collected first: a full collection costs
    20 ms or more in a large process, and these probes run several times per command. The estimates of how large a topology would
    grow (:func:`studies.scaling.trace_size.topology_size` along the ranks,
    :func:`studies.registry.parse_topology` along a builder's options) measure their small
    probe graphs with it.

    Examples
    --------
    >>> from topologies import star
    >>> elements, nbytes = graph_size(lambda: star(8))
    >>> elements, nbytes > 0          # 9 nodes and 8 links
    (17, True)
    """
    import gc
    import tracemalloc

    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    paused = gc.isenabled()
    gc.disable()
    before = tracemalloc.get_traced_memory()[0]
    try:
        G = build()
    finally:
        used = tracemalloc.get_traced_memory()[0] - before
        if paused:
            gc.enable()
        if started:
            tracemalloc.stop()
    return G.number_of_nodes() + G.number_of_edges(), max(used, 0)
