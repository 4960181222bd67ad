"""Node kinds and the non-numeric argument checks shared by the builders.

Numbers are checked with :func:`netsim.checks.check_int` and
:func:`netsim.checks.check_real`, the builder's name leading the option's name
(``"star: n"``). The checks here raise :class:`netsim.errors.TopologyError`
naming the builder, the argument and the value.
"""

from netsim.errors import TopologyError

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
