"""Run netsim's exported Chakra traces in ASTRA-sim's analytical backend and compare makespans.

    python tests/astra_sim/astra.py BIN_DIR [OUT_DIR] [--json FILE]

BIN_DIR holds ``AstraSim_Analytical_Congestion_Unaware`` (and ``..._Aware`` if built) from
``tests/astra_sim/build.sh``. Three traces, the acceptance set of the Chakra export: netsim's
ring allreduce (8 ranks, 64 MB, point-to-point messages), a recorded parameter-server run
(``workloads.paradigms.ps_sync``, 4 workers and a server) and an imported PyTorch profile (HTA's A100
DDP rank 0, step 5, two ranks). Each is exported with ``netsim.formats.chakra.save_chakra``, run in
ASTRA-sim on a switch of as many NPUs as the trace has ranks, and replayed by netsim on
``topologies.star`` with the same link bandwidth and latency.

The network is the same on both sides: every NPU has one link of ``BANDWIDTH`` to a switch,
``LATENCY`` per link. ASTRA-sim's analytical Switch charges a message 2 hops of latency plus
size / bandwidth (``congestion_unaware/basic-topology/Switch.cpp``: ``compute_hops_count``
is 2; ``BasicTopology::compute_communication_delay``); netsim's star path is host - switch -
host, two edges. ASTRA-sim reads bandwidth in GB/s with GB = 2**30 bytes
(``common/NetworkFunction.cpp``: ``bw_GBps_to_Bpns``) and latency in ns, so the YAML carries
``BANDWIDTH / 2**30`` and ``LATENCY * 1e9``.

What is not the same, and so is reported but not held to 1 %: ASTRA-sim replays a compute
node for its ``duration_micros``, an integer (an imported kernel's 3.872 us becomes 4 us), and
for 1 ns when it has none (the parameter server's ops are FLOPs: ``num_ops``, which only its
roofline mode reads, and that mode needs a ``tensor_size`` netsim does not know); netsim
replays the FLOPs at ``NEGLIGIBLE_FLOPS``. ASTRA-sim runs a collective with its own ring
(``system.json``) and a broadcast as a 1 ns placeholder (``Workload::issue_coll_comm``:
"TODO: implement broadcast"); netsim with MPICH's schedules. Two rules of ASTRA-sim's own
set its parameter-server figure and its congestion-aware figures apart from netsim's:
an NPU has one communication node in flight, receives excepted
(``workload/HardwareResource.cc``: ``is_available``), so a server's pulls go one after another;
and the congestion-aware links store and forward a whole message (``congestion_aware/network/
Link.cpp``: each link takes latency + size / bandwidth before the next starts), where netsim's
fluid flow crosses both links at once. ``tests/test_astra_sim.py`` checks both rules' closed
forms.
"""

import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

import netsim  # noqa: E402
from netsim.formats.chakra import save_chakra  # noqa: E402
from netsim.comm.collectives import ring_allreduce  # noqa: E402
from netsim.units import parse_bandwidth, parse_time  # noqa: E402

BANDWIDTH = parse_bandwidth("100Gbps")   # bytes/s, 100 Gigabit Ethernet
LATENCY = parse_time("1us")              # s per link
GIB = 2 ** 30                            # ASTRA-sim's "GB" (NetworkFunction.cpp)
NEGLIGIBLE_FLOPS = 1e18                  # FLOP/s: compute far below a nanosecond, as ASTRA-sim's 1 ns
KINETO = os.path.join(HERE, "..", "data", "kineto", "hta_a100_ddp_rank0.json.gz")
BINARIES = {"unaware": "AstraSim_Analytical_Congestion_Unaware",
            "aware": "AstraSim_Analytical_Congestion_Aware"}
FINISHED = re.compile(r"sys\[(\d+)\] finished, (\d+) cycles")


def traces():
    """The three traces of the acceptance set, by name (a dict of name -> netsim Trace)."""
    from netsim.formats.kineto.load import load_kineto
    from workloads.paradigms import ps_sync

    return {"ring allreduce 8 x 64 MB": ring_allreduce(8, 64e6),
            "parameter server (ps-sync)": ps_sync.run(epochs=1).trace,
            "imported profile (HTA A100 DDP)": load_kineto(KINETO, symmetric=True, steps=[5])}


def network_yaml(npus):
    """ASTRA-sim's analytical network file: one switch of ``npus`` NPUs, netsim's link."""
    return (f"topology: [ Switch ]\nnpus_count: [ {npus} ]\n"
            f"bandwidth: [ {BANDWIDTH / GIB!r} ]  # GB/s of 2**30 bytes = {BANDWIDTH:g} bytes/s\n"
            f"latency: [ {LATENCY * 1e9!r} ]  # ns per link\n")


def run_astra(binary, trace, workdir):
    """Export ``trace`` to ``workdir``, run ``binary`` on it, return each rank's finish (s).

    Raises RuntimeError naming the command and its output when ASTRA-sim exits non-zero or
    a rank does not report "sys[r] finished".
    """
    os.makedirs(workdir, exist_ok=True)
    et = os.path.join(workdir, "et")
    save_chakra(trace, et)
    net = os.path.join(workdir, "network.yml")
    with open(net, "w") as f:
        f.write(network_yaml(trace.ranks))
    cmd = [binary, f"--workload-configuration={et}/chakra",
           f"--system-configuration={HERE}/system.json",
           f"--remote-memory-configuration={HERE}/remote_memory.json",
           f"--network-configuration={net}",
           f"--logging-folder={os.path.join(workdir, 'log')}"]
    groups = os.path.join(et, "chakra.comm_group.json")
    if os.path.exists(groups):
        cmd.append(f"--comm-group-configuration={groups}")
    p = subprocess.run(cmd, capture_output=True, text=True)
    out = p.stdout + p.stderr
    finished = {int(r): int(t) * 1e-9 for r, t in FINISHED.findall(out)}
    if p.returncode != 0 or sorted(finished) != list(range(trace.ranks)):
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}, finished ranks "
                           f"{sorted(finished)} of {trace.ranks}\n{out[-3000:]}")
    return [finished[r] for r in range(trace.ranks)]


def netsim_makespan(trace):
    """netsim's makespan (s) of ``trace`` on a star of its ranks with the same links."""
    from topologies import star

    G = star(trace.ranks, bandwidth=BANDWIDTH, latency=LATENCY)
    return netsim.simulate(trace, G, device_flops=NEGLIGIBLE_FLOPS, library="mpich").makespan


def compare(bin_dir, out_dir):
    """Run every trace in every ASTRA-sim binary found in ``bin_dir``; rows of makespans."""
    rows = []
    for name, trace in traces().items():
        row = {"trace": name, "ranks": trace.ranks, "ops": trace.num_ops,
               "netsim_s": netsim_makespan(trace)}
        for kind, exe in BINARIES.items():
            path = os.path.join(bin_dir, exe)
            if os.path.exists(path):
                work = os.path.join(out_dir, re.sub(r"\W+", "_", name).strip("_"), kind)
                row[f"astra_{kind}_s"] = max(run_astra(path, trace, work))
                row[f"astra_{kind}_vs_netsim"] = row[f"astra_{kind}_s"] / row["netsim_s"] - 1
        rows.append(row)
    return rows


def main(argv):
    """Command line: print the rows as JSON, also to ``--json FILE`` if given."""
    args = list(argv)
    dest = None
    if "--json" in args:
        i = args.index("--json")
        dest = args[i + 1]
        del args[i:i + 2]
    if not args:
        sys.exit("usage: astra.py BIN_DIR [OUT_DIR] [--json FILE]")
    bin_dir = args[0]
    out_dir = args[1] if len(args) > 1 else "/tmp/netsim-astra-run"
    text = json.dumps(compare(bin_dir, out_dir), indent=1)
    print(text)
    if dest:
        with open(dest, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
