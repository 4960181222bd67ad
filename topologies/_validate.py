"""Argument checks shared by the builders.

Each check raises :class:`netsim.errors.TopologyError` naming the builder, the
argument and the value, and returns the value in its canonical type.
"""

import math
import numbers

from netsim.errors import TopologyError

# The node kinds the simulator understands; every builder uses only these.
KINDS = frozenset({"gpu", "host", "cpu", "pcie_switch", "nvswitch", "nic", "switch"})

# Kinds that can be ranks (the default placement takes gpus, else hosts).
COMPUTE_KINDS = ("host", "gpu")


def count(fn, name, value, minimum=1):
    """An integer >= minimum (bool is refused: ``True`` is not a count)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TopologyError(f"{fn}: {name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise TopologyError(f"{fn}: {name} must be >= {minimum}, got {value}")
    return int(value)


def bandwidth(fn, name, value):
    """A finite number of bytes/s > 0. Strings such as ``"10Gbps"`` are refused:
    parse them at the edge with :func:`netsim.units.parse_bandwidth`."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TopologyError(
            f"{fn}: {name} must be a number of bytes/s (parse strings with "
            f"netsim.units.parse_bandwidth), got {value!r}"
        )
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise TopologyError(f"{fn}: {name} must be a finite bandwidth > 0 bytes/s, got {value!r}")
    return value


def latency(fn, name, value):
    """A finite number of seconds >= 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TopologyError(
            f"{fn}: {name} must be a number of seconds (parse strings with "
            f"netsim.units.parse_time), got {value!r}"
        )
    value = float(value)
    if not math.isfinite(value) or value < 0:
        raise TopologyError(f"{fn}: {name} must be a finite latency >= 0 s, got {value!r}")
    return value


def compute_kind(fn, value):
    """``"host"`` or ``"gpu"``: the kinds the default placement turns into ranks."""
    if value not in COMPUTE_KINDS:
        raise TopologyError(f"{fn}: kind must be one of {COMPUTE_KINDS}, got {value!r}")
    return value


def choice(fn, name, value, table):
    """A key of ``table``; the error lists the known keys."""
    if not isinstance(value, str) or value not in table:
        raise TopologyError(f"{fn}: {name} must be one of {', '.join(table)}, got {value!r}")
    return value
