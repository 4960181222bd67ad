"""The text of a replay checked against its profile (``netsim replay --compare``)."""

from .report import table

__all__ = ["compare_text"]


def _pct(x):
    return "-" if x != x else f"{100 * x:+.1f} %"


def compare_text(checked):
    """Two tables: each recorded rank's step, measured and replayed; each collective class.

    Parameters
    ----------
    checked : dict
        From :func:`netsim.measured.compare`.

    Returns
    -------
    str

    Examples
    --------
    >>> c = {"ranks": [{"rank": 0, "measured": 2e-3, "replayed": 1.9e-3, "error": -0.05,
    ...                 "compute": 1e-3, "host_gaps": 1e-4}],
    ...      "steps": {"median_error": 0.05, "worst_error": 0.05},
    ...      "collectives": [{"kind": "allreduce", "bytes": 4e6, "calls": 3,
    ...                       "measured_min": 1e-4, "measured_median": 2e-4,
    ...                       "simulated": 1.1e-4, "error": 0.1, "plan": "nccl ring Simple 8ch"}]}
    >>> print(compare_text(c))   # doctest: +NORMALIZE_WHITESPACE
    rank  measured step ms  replayed step ms  error   compute ms  host gaps ms
    ----  ----------------  ----------------  ------  ----------  ------------
       0  2.000             1.900             -5.0 %  1.000       0.100
    step error over ranks: median 5.0 %, worst 5.0 %
    <BLANKLINE>
    collective  bytes      calls  measured min us  measured median us  simulated us  error    plan
    ----------  ---------  -----  ---------------  ------------------  ------------  -------  --------------------
    allreduce   4,000,000      3  100.0            200.0               110.0         +10.0 %  nccl ring Simple 8ch
    """
    ranks = table(["rank", "measured step ms", "replayed step ms", "error", "compute ms",
                   "host gaps ms"],
                  [(r["rank"], f"{r['measured'] * 1e3:.3f}", f"{r['replayed'] * 1e3:.3f}",
                    _pct(r["error"]), f"{r['compute'] * 1e3:.3f}",
                    f"{r['host_gaps'] * 1e3:.3f}") for r in checked["ranks"]])
    s = checked["steps"]
    ranks += (f"\nstep error over ranks: median {100 * s['median_error']:.1f} %, "
              f"worst {100 * s['worst_error']:.1f} %")
    colls = table(["collective", "bytes", "calls", "measured min us", "measured median us",
                   "simulated us", "error", "plan"],
                  [(c["kind"], f"{c['bytes']:,.0f}", c["calls"], f"{c['measured_min'] * 1e6:.1f}",
                    f"{c['measured_median'] * 1e6:.1f}", f"{c['simulated'] * 1e6:.1f}",
                    _pct(c["error"]), c["plan"]) for c in checked["collectives"]])
    return ranks + "\n\n" + colls
