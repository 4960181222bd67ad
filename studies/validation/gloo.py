"""netsim's gloo model against published gloo benchmark runs: the machines, the errors, the table.

Every row of ``studies/data/gloo_measurements.csv`` is one line of gloo's own
benchmark (``gloo/benchmark``) posted in public, with the machine it ran on:
NIC speed, CPU part, cores per process, algorithm and size. :func:`machine`
builds it as :func:`topologies.star` with the NIC's IEEE 802.3 rate, TCP/IPv4
framing at the row's MTU and the CPU part's host figures
(:data:`topologies.devices.HOST_CPUS`); :func:`predict` replays the call with
:mod:`netsim.comm.gloo`; :func:`table` prints the validation page's gloo table.
Nothing is fitted to a row. A row whose ``problem`` column holds its source's
words (the source presents the number as below expectation) is shown, not
counted, by the inclusion rule of ``studies/data/nccl_measurements.md``.
"""

import statistics

from netsim import TraceBuilder, simulate
from topologies import star
from topologies.links import ETHERNET

from studies.reports.nccl import measurements

__all__ = ["FILE", "load", "machine", "predict", "validate", "table"]

FILE = "gloo_measurements.csv"
"""The published gloo rows (package data of :mod:`studies`)."""


def load():
    """The rows of :data:`FILE`, as dicts of strings.

    Examples
    --------
    >>> [r["algorithm"] for r in load()]
    ['ring_chunked']
    """
    return measurements(FILE)


def machine(row):
    """The row's machines: one host per rank on a star of the NIC's rate, with its CPU.

    Examples
    --------
    >>> G = machine(load()[0])
    >>> G.nodes["host0"]["core_bandwidth"] / 1e9, G.edges["host0", "switch"]["mtu"]
    (11.1, 1500)
    """
    return star(int(row["ranks"]), bandwidth=ETHERNET[row["nic"]], mtu=int(row["mtu"]),
                cpu=row["cpu"], cores=int(row["cores"]))


def predict(row):
    """The replayed call of one row (a :class:`~netsim.result.Result`).

    Examples
    --------
    >>> round(predict(load()[0]).makespan * 1e3, 2)
    11.73
    """
    P = int(row["ranks"])
    b = TraceBuilder(P)
    b.collective(row["op"], range(P), float(row["bytes"]),
                 algorithm="ring" if row["algorithm"] == "ring" else None)
    return simulate(b.build(), machine(row), library="gloo")


def validate(rows):
    """Per row ``(row, result, error)`` with error = (predicted - measured) / measured.

    Examples
    --------
    >>> [f"{e:+.1%}" for _, _, e in validate(load())]
    ['-32.0%']
    """
    out = []
    for row in rows:
        res = predict(row)
        measured = float(row["time_us"]) * 1e-6
        out.append((row, res, (res.makespan - measured) / measured))
    return out


def table(rows):
    """The validation page's gloo table, and which rows are counted.

    Examples
    --------
    >>> print(table(load()).splitlines()[0])
    | CPU | cores | NIC | ranks | algorithm | size (B) | measured (us) | predicted (us) | error | counted | source |
    """
    lines = ["| CPU | cores | NIC | ranks | algorithm | size (B) | measured (us) | predicted (us) "
             "| error | counted | source |", "|---" * 11 + "|"]
    report = validate(rows)
    for row, res, err in report:
        source = row["source_url"].split("github.com/")[-1].replace("/issues/", "#")
        lines.append(f"| {row['cpu']} | {row['cores']} | {row['nic']} | {row['ranks']} | "
                     f"{row['algorithm']} | {row['bytes']} | {float(row['time_us']):.0f} "
                     f"({row['statistic']}) | {res.makespan * 1e6:.0f} | {err:+.1%} | "
                     f"{'no (reported)' if row['problem'] else 'yes'} | {source} |")
    counted = [abs(e) for row, _, e in report if not row["problem"]]
    lines.append("\n" + (f"counted: median \\|error\\| {statistics.median(counted):.1%} over "
                         f"{len(counted)} rows" if counted else "counted: none")
                 + f"; shown: {len(report)} rows")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(load()))
