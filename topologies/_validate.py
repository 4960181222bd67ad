"""Node kinds and the non-numeric argument checks shared by the builders.

Numbers are checked with :func:`netsim.checks.check_int` and
:func:`netsim.checks.check_real`, the builder's name leading the option's name
(``"star: n"``). The checks here raise :class:`netsim.errors.TopologyError`
naming the builder, the argument and the value. :func:`check_size` refuses, before
anything is built, counts whose graph could not be held in the memory available.
"""

from netsim.checks import available_memory
from netsim.errors import TopologyError
from netsim.units import format_bytes

# The node kinds the simulator understands; every builder uses only these.
KINDS = frozenset({"gpu", "host", "cpu", "pcie_switch", "nvswitch", "nic", "switch"})

# Kinds that can be ranks (the default placement takes gpus, else hosts).
COMPUTE_KINDS = ("host", "gpu")


def compute_kind(fn, value):
    """``"host"`` or ``"gpu"``: the kinds the default placement turns into ranks.

    Parameters
    ----------
    fn : str
        The builder's name, for the message.
    value : object
        The ``kind`` the builder was given.

    Examples
    --------
    >>> compute_kind("ring", "gpu")
    'gpu'
    >>> compute_kind("ring", "cpu")
    Traceback (most recent call last):
    ...
    netsim.errors.TopologyError: ring: kind must be one of ('host', 'gpu'), got 'cpu'
    """
    if value not in COMPUTE_KINDS:
        raise TopologyError(f"{fn}: kind must be one of {COMPUTE_KINDS}, got {value!r}")
    return value


def choice(fn, name, value, table):
    """A key of ``table``; the error lists the known keys.

    Parameters
    ----------
    fn : str
        The builder's name, for the message.
    name : str
        The option's name.
    value : object
        What the builder was given.
    table : mapping
        The allowed keys.

    Examples
    --------
    >>> choice("pcie_tree", "gen", "gen4", {"gen3": 1, "gen4": 2})
    'gen4'
    >>> choice("pcie_tree", "gen", 4, {"gen3": 1, "gen4": 2})
    Traceback (most recent call last):
    ...
    netsim.errors.TopologyError: pcie_tree: gen must be one of gen3, gen4, got 4
    """
    if not isinstance(value, str) or value not in table:
        raise TopologyError(f"{fn}: {name} must be one of {', '.join(table)}, got {value!r}")
    return value


ELEMENT_BYTES = 319
"""Bytes a node or an edge of a builder's graph takes at the least: the allocations of a
built graph (:func:`studies.memory.graph_size`, :mod:`tracemalloc`) over its nodes plus
edges were 319 B for ``torus((64, 64))``, 358 for ``ring(4096)``, 365 for ``fat_tree(16)``,
371 for ``star(4096)``, 387 for ``dgx_h100(nodes=64)``, 418 for ``gb200_nvl72(nodes=16)``
and 502 for ``pcie_box(gpus=1024)`` (2026-12-07); the least is taken, so a graph refused
by it could not be held."""


def check_size(fn, elements, options, limit=None):
    """Refuse a graph of at least ``elements`` nodes and edges that could not be held.

    A builder counts the nodes and edges its arguments make (a lower bound is enough)
    before it builds anything: without this, ``star(10**30)`` ran until it ran out of
    memory or time. At :data:`ELEMENT_BYTES` each, a count over the memory available
    (:func:`netsim.checks.available_memory`) is refused.

    Parameters
    ----------
    fn : str
        The builder's name, for the message.
    elements : int
        Nodes plus edges the graph would have, at least.
    options : str
        The arguments that chose the count, for the message (``"n=1000000000000"``).
    limit : int, optional
        Bytes allowed (default: the memory available; None there: no check).

    Returns
    -------
    int
        ``elements``.

    Raises
    ------
    TopologyError
        Naming the builder, the arguments, the count and the bytes.

    Examples
    --------
    >>> check_size("star", 2 * 10**6 + 1, "n=1000000", limit=2**30)
    2000001
    >>> check_size("star", 2 * 10**12 + 1, "n=1000000000000", limit=2**34)
    Traceback (most recent call last):
    ...
    netsim.errors.TopologyError: star: n=1000000000000 makes 2e+12 nodes and edges, at least 638 TB at 319 B each, over the 17.2 GB of memory available
    """
    limit = available_memory() if limit is None else limit
    if limit is not None and elements * ELEMENT_BYTES > limit:
        raise TopologyError(f"{fn}: {options} makes {elements:.3g} nodes and edges, at least "
                            f"{format_bytes(elements * ELEMENT_BYTES)} at {ELEMENT_BYTES} B "
                            f"each, over the {format_bytes(limit)} of memory available")
    return elements
