"""Parameter Flow's threshold sweep: bytes and accuracy against ``tau0``, a study.

:mod:`workloads.paradigms.pf` keeps an update in a worker's or server's filter while its
magnitude is below ``tau0 / t^(1/a)``; :func:`sweep` trains it once per
threshold with otherwise equal options and sets each row against the first.
"""

from workloads.paradigms import pf

__all__ = ["sweep"]


def sweep(tau0s=(0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5), **options):
    """Bytes and accuracy of :func:`workloads.paradigms.pf.run` against ``tau0``, one row per value.

    Parameters
    ----------
    tau0s : sequence of float
        Thresholds to try; the first row is the reference for ``traffic_ratio``
        (use 0 for the unfiltered baseline).
    **options
        Passed to :func:`workloads.paradigms.pf.run` (dataset, workers, epochs, seed, a, ...).

    Returns
    -------
    list of dict
        ``tau0``, ``accuracy``, ``total_bytes``, ``messages``,
        ``dropped_fraction``, ``traffic_ratio`` (bytes of the first row over
        this row's) and ``accuracy_change`` (this row's accuracy minus the
        first row's).

    Examples
    --------
    >>> rows = sweep((0.0, 0.01), epochs=2, workers=2)
    >>> [r["tau0"] for r in rows], rows[0]["traffic_ratio"]
    ([0.0, 0.01], 1.0)
    >>> rows[1]["total_bytes"] < rows[0]["total_bytes"]
    True
    """
    rows = []
    for tau0 in tau0s:
        r = pf.run(tau0=tau0, **options)
        rows.append({"tau0": float(tau0), "accuracy": r.accuracy, "total_bytes": r.total_bytes,
                     "messages": r.messages, "dropped_fraction": r.dropped_fraction})
    ref = rows[0] if rows else None
    for row in rows:
        nbytes = row["total_bytes"]
        row["traffic_ratio"] = ref["total_bytes"] / nbytes if nbytes else float("inf")
        row["accuracy_change"] = row["accuracy"] - ref["accuracy"]
    return rows
