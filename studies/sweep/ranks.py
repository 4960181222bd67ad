"""A sweep's stragglers checked against the ranks of every point, before the first point runs.

A sweep config's ``straggler: "7:10x"`` slows rank 7 of every paradigm point; a
point whose trace has fewer ranks (``P: [4, 8]``: ranks 0..3 of ``allreduce`` at
P = 4) could only fail at replay, as an error row after the rest of the grid had
run. :func:`check_straggler_ranks` refuses such a config while it is validated,
naming the point.

A paradigm's trace holds ``P + c`` ranks (its workers, and ``c`` servers or a
coordinator, fixed by its options; a single worker is one rank whatever P), so
the count at any P follows from two recordings at P = 2 and 3 of one epoch
(:func:`point_ranks`): a fraction of a second each on the built-in datasets.
"""

from netsim.errors import NetsimError
from netsim.units import parse_straggler

from studies.scaling.trace_size import grown_ranks

__all__ = ["point_ranks", "check_straggler_ranks"]

_SMALL = (2, 3)
"""The worker counts a paradigm is recorded at to find its rank count's line."""


def point_ranks(name, P, options=None, hidden=None, dataset="iris"):
    """Ranks of paradigm ``name``'s trace at ``P`` workers, from two one-epoch recordings.

    Parameters
    ----------
    name : str
        A paradigm of :data:`workloads.PARADIGMS`.
    P : int
    options : dict, optional
        Its options (``servers`` and the like change the count).
    hidden : tuple of int, optional
        Layer widths, for paradigms that take them.
    dataset : str, optional

    Returns
    -------
    int

    Examples
    --------
    >>> point_ranks("allreduce", 4), point_ranks("ps-sync", 4), point_ranks("single", 64)
    (4, 5, 1)
    >>> point_ranks("ps-partitioned", 1000, {"servers": 3})
    1003
    """
    import workloads

    opts = dict(options or {})
    if hidden is not None:
        opts["hidden"] = hidden
    counts = [workloads.record(name, dataset=dataset, workers=p, epochs=1, seed=0,
                               **opts).trace.ranks for p in _SMALL]
    return grown_ranks(counts, P, _SMALL)


def check_straggler_ranks(points, where="sweep config"):
    """Refuse a straggler naming a rank that one of a sweep's paradigm ``points`` does not have.

    Parameters
    ----------
    points : list of dict
        The config's points (:func:`studies.sweep.config.sweep_points`); a paradigm
        point's ``options`` JSON holds its ``straggler``.
    where : str, optional
        The config's name, first in the message.

    Raises
    ------
    NetsimError
        Naming the straggler, the rank, and the first point (paradigm, P, topology)
        without it.

    Examples
    --------
    >>> point = {"kind": "paradigm", "name": "allreduce", "topology": "star", "P": 4,
    ...          "hidden": None, "dataset": "iris", "options": '{"straggler": "7:10x"}'}
    >>> check_straggler_ranks([{**point, "P": 8}, point])
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: sweep config: straggler '7:10x' names rank 7, but the point allreduce at P = 4 on star has ranks 0..3 only
    """
    import json

    from netsim.units import parse_shape

    ranks = {}
    for point in points:
        if point["kind"] != "paradigm" or not point["options"]:
            continue
        opts = json.loads(point["options"])
        spec = opts.pop("straggler", None)
        named = [r for kind, r, _ in parse_straggler(spec) if kind == "rank"] if spec else []
        if not named:
            continue
        for k in ("jitter", "library", "transport"):
            opts.pop(k, None)
        hidden = parse_shape(point["hidden"], "hidden") if point["hidden"] else None
        key = (point["name"], point["P"], point["hidden"], json.dumps(opts, sort_keys=True))
        if key not in ranks:
            ranks[key] = point_ranks(point["name"], point["P"], opts, hidden, point["dataset"])
        n = ranks[key]
        if max(named) >= n:
            raise NetsimError(
                f"{where}: straggler {spec!r} names rank {max(named)}, but the point "
                f"{point['name']} at P = {point['P']} on {point['topology']} has ranks "
                f"0..{n - 1} only")
