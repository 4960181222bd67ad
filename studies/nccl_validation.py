"""netsim.nccl against published nccl-tests measurements: the machines, the errors, the table.

Every row of ``studies/data/nccl_measurements.csv`` (and of the hold-out file) names
a machine key; :func:`machine` builds that machine as a graph with
:mod:`topologies` (single machines, or :func:`topologies.gpu_cluster` for
several joined by NIC rails), :func:`predict` runs :func:`netsim.nccl.simulate`
on it with the row's op, size and, where the poster forced ``NCCL_ALGO``, that
algorithm, and :func:`table` prints the README table "Real GPU machines: NCCL".
Nothing here is fitted to a row: every number comes from ``topologies`` (which
cites its sources) or from NCCL's source (``netsim.nccl.tuning``).

Run ``python -m studies.nccl_validation`` to print the tables of both files, with
``--readme`` to rewrite them in README.md as well.
"""

import pathlib
import statistics

from netsim import nccl

from .nccl_report import measurements
from topologies import dgx1, dgx_a100, dgx_h100, gpu_cluster, pcie_box

__all__ = ["README", "BLOCKS", "MACHINES", "load", "machine", "predict", "validate", "table", "update_readme"]

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"

# Machine key of the measurement files -> (builder, its arguments, GPU model to set or None).
# The H20 boxes of NVIDIA/nccl#1244 are DGX H100-like (NVLink4 x18, NVSwitch gen3, 8
# ConnectX-7 NDR per node) with H20 GPUs (sm 90): dgx_h100 with the GPU model renamed.
# OCI BM.GPU4.8's 16 x 100 Gb/s RoCEv2 per node are modelled as the DGX A100's 8 rails
# at RoCE 200 Gb/s: the same bandwidth per machine, half the rails.
_BUILDS = {
    "dgx1_v100": (dgx1, {}, None),
    "a100_nvswitch": (dgx_a100, {}, None),
    "h100_nvswitch": (dgx_h100, {}, None),
    "pcie_4090": (pcie_box, {}, None),
    "p4dn_efa": (gpu_cluster, {"machine": "p4d"}, None),
    "h100_ndr": (gpu_cluster, {"machine": "dgx_h100"}, None),
    "h20_ndr": (gpu_cluster, {"machine": "dgx_h100"}, "H20"),
    "h20_nvswitch": (dgx_h100, {}, "H20"),
    "a100_roce": (gpu_cluster, {"machine": "dgx_a100", "nic": "RoCE-200G"}, None),
}
MACHINES = tuple(_BUILDS)


def machine(key, nodes=1):
    """The graph of one machine key of the measurement files, from :mod:`topologies`.

    Parameters
    ----------
    key : str
        One of :data:`MACHINES`.
    nodes : int, optional
        Machines (for the keys built with :func:`topologies.gpu_cluster`).

    Returns
    -------
    networkx.Graph

    Examples
    --------
    >>> G = machine("h100_ndr", 2)
    >>> kinds = [k for _, k in G.nodes(data="kind")]
    >>> kinds.count("gpu"), kinds.count("nic")
    (16, 16)
    """
    if key not in _BUILDS:
        raise KeyError(f"unknown machine key {key!r}; known: {', '.join(MACHINES)}")
    build, kwargs, model = _BUILDS[key]
    G = build(nodes=nodes, **kwargs) if build is gpu_cluster else build()
    if model:
        for n, kind in G.nodes(data="kind"):
            if kind == "gpu":
                G.nodes[n]["model"] = model
    return G


def load(name="nccl_measurements.csv"):
    """The rows of a measurement file of ``studies/data`` (:func:`studies.nccl_report.measurements`).

    Examples
    --------
    >>> len(load()), len(load("nccl_measurements_holdout.csv"))
    (24, 6)
    """
    return measurements(name)


def predict(row):
    """The simulated call for one row: a Result whose ``plan`` says what NCCL ran.

    Examples
    --------
    >>> r = predict(load()[4])          # DGX-1, 128 MiB allreduce
    >>> r.plan.algorithm, r.plan.channels
    ('ring', 6)
    """
    G = machine(row["machine"], int(row["nodes"]))
    gpus = [n for n, kind in G.nodes(data="kind") if kind == "gpu"][:int(row["gpus"])]
    algorithm = row["nccl_algo"] or None
    if row["op"] in ("alltoall", "sendrecv"):
        algorithm = None  # NCCL runs point-to-point whatever NCCL_ALGO says
    return nccl.simulate(G, row["op"], int(row["bytes"]), ranks=gpus, algorithm=algorithm)


def validate(rows):
    """Per row ``(row, result, error)``, with the median and worst absolute error.

    Examples
    --------
    >>> report, median, worst = validate(load()[:2])
    >>> len(report), median <= worst
    (2, True)
    """
    report = []
    for row in rows:
        res = predict(row)
        measured = float(row["time_us"]) * 1e-6
        report.append((row, res, (res.makespan - measured) / measured))
    errors = [abs(e) for _, _, e in report]
    return report, statistics.median(errors), max(errors)


def _source(url):
    if "github.com/" in url:
        parts = url.split("github.com/")[1].split("/")
        if len(parts) >= 4 and parts[2] in ("issues", "pull"):
            return f"{parts[0]}/{parts[1]}#{parts[3]}"
        return f"{parts[0]}/{parts[1]}"
    return url.split("//")[1].split("/")[0]


def table(rows):
    """The README table: source, machine, size, measured and predicted time, error, plan.

    Examples
    --------
    >>> print(table(load()[:1]).splitlines()[0])
    | machine | GPUs | size (B) | measured (us) | predicted (us) | error | NCCL plan | source |
    """
    report, median, worst = validate(rows)
    lines = ["| machine | GPUs | size (B) | measured (us) | predicted (us) | error | NCCL plan | source |",
             "|---|---|---|---|---|---|---|---|"]
    for row, res, err in report:
        p = res.plan
        forced = " (forced)" if row["nccl_algo"] else ""
        lines.append(f"| {row['machine']} | {row['gpus']} | {int(row['bytes'])} | "
                     f"{float(row['time_us']):.1f} | {res.makespan * 1e6:.1f} | {err:+.1%} | "
                     f"{p.algorithm}{forced}/{p.protocol}/{p.channels} | {_source(row['source_url'])} |")
    lines.append(f"\nmedian \\|error\\| {median:.1%}, worst {worst:.1%} over {len(report)} rows")
    return "\n".join(lines)


BLOCKS = (("nccl-table", "nccl_measurements.csv"),
           ("nccl-holdout-table", "nccl_measurements_holdout.csv"),
           ("nccl-ops-table", "nccl_measurements_ops.csv"),
           ("nccl-ops-holdout-table", "nccl_measurements_ops_holdout.csv"))


def update_readme(path):
    r"""Rewrite the two table blocks of the README at ``path`` with a fresh run.

    Parameters
    ----------
    path : str or pathlib.Path

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "README.md"
    >>> _ = p.write_text("<!-- nccl-table:start -->\nold\n<!-- nccl-table:end -->\n")
    >>> update_readme(p)
    >>> p.read_text().splitlines()[1].startswith("| machine |")
    True
    """
    path = pathlib.Path(path)
    text = path.read_text()
    for name, file in BLOCKS:
        start, end = f"<!-- {name}:start -->\n", f"\n<!-- {name}:end -->"
        if start in text:
            head, rest = text.split(start, 1)
            text = head + start + table(load(file)) + end + rest.split(end, 1)[1]
    path.write_text(text)


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--readme"]:
        update_readme(README)
    for name, file in BLOCKS:
        print(file)
        print(table(load(file)))
