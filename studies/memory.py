"""The memory this machine has available, for the estimates that refuse work up front.

Kept apart from :mod:`studies.trace_size` (the trace and replay estimates, which build
topologies through :mod:`studies.registry`) so that the registry's own check of a
topology spec's size (:func:`studies.registry.parse_topology`) can read it without an
import circle.
"""

__all__ = ["available_memory"]


def available_memory():
    """Bytes of memory available to a new allocation: MemAvailable of /proc/meminfo.

    Falls back to the physical memory (``os.sysconf``) where there is no
    /proc/meminfo, and to None where neither is known.

    Examples
    --------
    >>> m = available_memory(); m is None or m > 0
    True
    """
    import os

    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None
