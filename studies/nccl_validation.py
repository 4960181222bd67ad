"""netsim.nccl against published nccl-tests measurements: the machines, the errors, the table.

Every row of ``tests/data/nccl_measurements.csv`` (and of the hold-out file) names
a machine key; :func:`machine` builds that machine as a graph from
:mod:`topologies` (single machines) or from the same link tables (several
machines joined by NIC rails), :func:`predict` runs :func:`netsim.nccl.simulate`
on it with the row's op, size and, where the poster forced ``NCCL_ALGO``, that
algorithm, and :func:`table` prints the README table "Real GPU machines: NCCL".
Nothing here is fitted to a row: every number comes from ``topologies`` (which
cites its sources) or from NCCL's source (``netsim.nccl.tuning``).

Run ``python -m studies.nccl_validation`` to print the tables of both files.
"""

import csv
import pathlib
import statistics

import networkx as nx

from netsim import nccl
from topologies import dgx1, dgx_a100, dgx_h100, pcie_tree
from topologies.links import technology
from topologies.specs import NVLINK, NVLINK_LATENCY, NVLINK_LINKS_PER_GPU, PCIE_LATENCY, PCIE_X16

__all__ = ["DATA", "MACHINES", "load", "machine", "predict", "validate", "table"]

DATA = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data"

# Several machines joined by NIC rails: (GPU model, NVLink generation, NVSwitch with NVLS,
# PCIe generation of the GPU/NIC switches, NIC technology, NICs per machine).
# p4d/p4dn: 8 A100, 4 x 100 Gb/s EFA (AWS EC2 P4 instance page); DGX H100: 8 ConnectX-7
# NDR (DGX H100 user guide); H20 boxes as in NVIDIA/nccl#1244 (8 CX7 NDR per node);
# OCI BM.GPU4.8: 8 A100, 16 x 100 Gb/s RoCEv2 (OCI GPU shapes documentation).
_CLUSTERS = {
    "p4dn_efa": ("A100", "NVLink3", False, "gen4", "EFA", 4),
    "h100_ndr": ("H100", "NVLink4", True, "gen5", "NDR", 8),
    "h20_ndr": ("H20", "NVLink4", True, "gen5", "NDR", 8),
    "a100_roce": ("A100", "NVLink3", False, "gen4", "RoCE-100G", 16),
}
MACHINES = ("dgx1_v100", "a100_nvswitch", "h100_nvswitch", "pcie_4090", *_CLUSTERS)


def _pcie_4090():
    """8 RTX 4090 on PCIe gen4 under two AMD EPYC sockets, P2P off (the stock driver).

    Each GPU has its own x16 path to its socket; the socket link is given NCCL's
    own figure for an AMD CPU-to-CPU link (topo.h ``AMD_BW``, 16 GB/s), since no
    public per-direction figure for GPU traffic over xGMI was found.
    """
    G = pcie_tree(gpus_per_switch=1, switches_per_socket=4, sockets=2, gen="gen4")
    G.edges["cpu0", "cpu1"]["bandwidth"] = nccl.tuning.CPU_LINK_BW["amd"] * 1e9
    for n, kind in G.nodes(data="kind"):
        if kind == "gpu":
            G.nodes[n].update(model="RTX4090", p2p=False)
        if kind == "cpu":
            G.nodes[n]["vendor"] = "amd"
    return G


def _cluster(key, nodes):
    """``nodes`` NVSwitch machines, each NIC on its GPU's PCIe switch, one switch per rail."""
    model, nvlink, nvls, gen, nic, n_nics = _CLUSTERS[key]
    links = NVLINK_LINKS_PER_GPU["H100" if model == "H20" else model]
    tech = technology(nic)
    G = nx.Graph(name=f"{key} x{nodes}")
    for m in range(nodes):
        G.add_nodes_from((f"m{m}g{i}" for i in range(8)), kind="gpu", model=model, node=m)
    for m in range(nodes):
        sw = f"m{m}nvswitch"
        G.add_node(sw, kind="nvswitch", nvls=nvls)
        for i in range(8):
            G.add_edge(f"m{m}g{i}", sw, bandwidth=links * NVLINK[nvlink],
                       latency=NVLINK_LATENCY, links=links, technology=nvlink)
        per_switch = max(1, 8 // n_nics)
        for i in range(8 // per_switch):
            pci = f"m{m}pcie{i}"
            G.add_node(pci, kind="pcie_switch")
            for g in range(i * per_switch, (i + 1) * per_switch):
                G.add_edge(f"m{m}g{g}", pci, bandwidth=PCIE_X16[gen], latency=PCIE_LATENCY)
        for k in range(n_nics):
            G.add_node(f"m{m}nic{k}", kind="nic")
            pci = f"m{m}pcie{k * (8 // per_switch) // n_nics}"
            G.add_edge(f"m{m}nic{k}", pci, bandwidth=PCIE_X16[gen], latency=PCIE_LATENCY)
            G.add_node(f"rail{k}", kind="switch")
            G.add_edge(f"m{m}nic{k}", f"rail{k}", bandwidth=tech.bandwidth,
                       latency=tech.latency, technology=tech.name)
    return G


def machine(key, nodes=1):
    """The graph of one machine key of the measurement files.

    Parameters
    ----------
    key : str
        One of :data:`MACHINES`.
    nodes : int, optional
        Machines (for the multi-node keys).

    Returns
    -------
    networkx.Graph

    Examples
    --------
    >>> G = machine("h100_ndr", 2)
    >>> sum(k == "gpu" for _, k in G.nodes(data="kind")), sum(k == "nic" for _, k in G.nodes(data="kind"))
    (16, 16)
    """
    if key in _CLUSTERS:
        return _cluster(key, nodes)
    if key == "dgx1_v100":
        return dgx1()
    if key == "a100_nvswitch":
        return dgx_a100()
    if key == "h100_nvswitch":
        G = dgx_h100()
        G.nodes["nvswitch0"]["nvls"] = technology("NVSwitch3").in_network_reduction
        return G
    if key == "pcie_4090":
        return _pcie_4090()
    raise KeyError(f"unknown machine key {key!r}; known: {', '.join(MACHINES)}")


def load(name="nccl_measurements.csv"):
    """The rows of a measurement file, as dicts of strings.

    Examples
    --------
    >>> len(load()), len(load("nccl_measurements_holdout.csv"))
    (24, 6)
    """
    with open(DATA / name, newline="") as f:
        return list(csv.DictReader(f))


def predict(row):
    """The simulated call for one row: a Result whose ``plan`` says what NCCL ran.

    Examples
    --------
    >>> r = predict(load()[4])          # DGX-1, 128 MiB allreduce
    >>> r.plan.algorithm, r.plan.channels
    ('ring', 6)
    """
    G = machine(row["machine"], int(row["nodes"]))
    return nccl.simulate(G, row["op"], int(row["bytes"]), algorithm=row["nccl_algo"] or None)


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


if __name__ == "__main__":
    for name in ("nccl_measurements.csv", "nccl_measurements_holdout.csv"):
        print(name)
        print(table(load(name)))
