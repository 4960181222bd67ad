"""The text of a replay checked against its profile (``netsim replay --compare``)."""

from studies.reports.text import table

__all__ = ["compare_text"]


def _pct(x):
    return "-" if x != x else f"{100 * x:+.1f} %"


def compare_text(checked):
    """Two tables: each recorded rank's step, measured and replayed; each collective class.

    Parameters
    ----------
    checked : dict
        From :func:`netsim.formats.kineto.measured.compare`.

    Returns
    -------
    str

    Examples
    --------
    >>> part = lambda *v: dict(zip(("span", "compute", "exposed_communication", "waiting",
    ...                              "host_gaps"), v))
    >>> c = {"ranks": [{"rank": 0, "measured": 2e-3, "replayed": 1.9e-3, "error": -0.05,
    ...                 "compute": 1e-3, "host_gaps": 1e-4,
    ...                 "split": {"measured": part(2e-3, 1e-3, 4e-4, None, 6e-4),
    ...                           "replayed": part(1.9e-3, 1e-3, 5e-4, 3e-4, 1e-4)}}],
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
    where each step goes, ms per step, measured / replayed (netsim.formats.kineto.step_split):
    rank  GPU span       compute        exposed comm   waiting    host gaps
    ----  -------------  -------------  -------------  ---------  -------------
       0  2.000 / 1.900  1.000 / 1.000  0.400 / 0.500  - / 0.300  0.600 / 0.100
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
    return ranks + _split_text(checked["ranks"]) + "\n\n" + colls


def _ms(x):
    return "-" if x is None else f"{x * 1e3:.3f}"


def _split_text(rows):
    """The table of each rank's step split, measured / replayed (empty if no row has one)."""
    rows = [r for r in rows if r.get("split")]
    if not rows:
        return ""
    parts = ("span", "compute", "exposed_communication", "waiting", "host_gaps")
    body = []
    for r in rows:
        m, p = r["split"]["measured"] or {}, r["split"]["replayed"] or {}
        body.append([r["rank"]] + [f"{_ms(m.get(k))} / {_ms(p.get(k))}" for k in parts])
    return ("\n\nwhere each step goes, ms per step, measured / replayed (netsim.formats.kineto.step_split):\n"
            + table(["rank", "GPU span", "compute", "exposed comm", "waiting", "host gaps"],
                    body))
