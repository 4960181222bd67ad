"""gloo's allreduce over TCP: the wire, and the copies and sums on the hosts' cores.

Expected times are closed forms: the bytes each rank's cores move, counted from
gloo's source (netsim/comm/gloo.py's docstring: 13 (P-1)/P n for ring_chunked,
9 (P-1) n for ring), over the cores' rate or the socket's memory, whichever is
lower; or the bytes on the wire over the link; plus the steps' latencies.
"""

import math

import networkx as nx
import pytest

import netsim
from netsim import TraceBuilder
from netsim.errors import TraceError
from netsim.comm.library import expand
from conftest import one_line_error


def _ring(P, bw=1e12, latency=0.0, **host):
    G = nx.Graph()
    for i in range(P):
        G.add_node(f"h{i}", kind="host", **host)
        G.add_edge(f"h{i}", "sw", bandwidth=bw, latency=latency)
    G.nodes["sw"]["kind"] = "switch"
    return G


def _allreduce(P, nbytes, algorithm=None):
    b = TraceBuilder(P)
    b.collective("allreduce", range(P), nbytes, algorithm=algorithm)
    return b.build()


@pytest.mark.parametrize("P", [2, 3, 5])
def test_ring_chunked_on_one_core_takes_thirteen_copies_of_its_share(P):
    n = 12e6
    r = netsim.simulate(_allreduce(P, n), _ring(P, core_bandwidth=8e9), library="gloo")
    assert r.makespan == pytest.approx(13 * (P - 1) / P * n / 8e9, rel=1e-12)


def test_ring_moves_nine_buffers_per_round_through_the_core():
    P, n = 3, 4e6
    r = netsim.simulate(_allreduce(P, n, "ring"), _ring(P, core_bandwidth=8e9), library="gloo")
    assert r.collectives["algorithm"][0] == "ring"
    assert r.makespan == pytest.approx(9 * (P - 1) * n / 8e9, rel=1e-12)


def test_more_cores_stop_at_the_sockets_memory():
    n, P = 10e6, 2
    host = 13 * (P - 1) / P * n
    two = netsim.simulate(_allreduce(P, n), _ring(P, core_bandwidth=10e9, cores=2,
                                                  memory_bandwidth=50e9), library="gloo")
    four = netsim.simulate(_allreduce(P, n), _ring(P, core_bandwidth=10e9, cores=8,
                                                   memory_bandwidth=25e9), library="gloo")
    assert two.makespan == pytest.approx(host / 20e9, rel=1e-12)
    assert four.makespan == pytest.approx(host / 25e9, rel=1e-12)


def test_a_slow_wire_sets_the_time_and_each_step_pays_its_latency():
    # 2 ranks, 1 us per link: one hop is 2 us; ring_chunked counts 4P = 8 steps.
    n, bw = 20e6, 1e9
    G = _ring(2, bw=bw, latency=1e-6, core_bandwidth=1e12)
    r = netsim.simulate(_allreduce(2, n), G, library="gloo")
    assert r.makespan == pytest.approx(7 * 2e-6 + 2e-6 + n / bw, rel=1e-12)


def test_hosts_without_cpu_figures_are_the_network_alone():
    G = _ring(2, bw=1e9)
    x = expand(_allreduce(2, 1e6), G, library="gloo")
    assert x.trace.num_messages == 2 and x.bound is None


def test_other_libraries_set_no_bound():
    G = _ring(2, bw=1e9, core_bandwidth=1e9)
    assert expand(_allreduce(2, 1e6), G, library="mpich").bound is None


def test_the_core_bound_is_one_per_process_flow():
    G = _ring(2, core_bandwidth=3e9, cores=2)
    x = expand(_allreduce(2, 1e6), G, library="gloo")
    assert sorted(x.bound[~(x.bound == math.inf)].tolist()) == [6e9, 6e9]


@pytest.mark.parametrize("host, needle", [
    ({"core_bandwidth": -1.0}, "core_bandwidth must be a number > 0"),
    ({"core_bandwidth": 1e9, "cores": 0}, "cores must be an integer >= 1"),
])
def test_bad_host_figures_are_named(host, needle):
    with pytest.raises(TraceError, match=needle):
        netsim.simulate(_allreduce(2, 1e6), _ring(2, **host), library="gloo")


def test_other_operations_are_refused_by_name():
    b = TraceBuilder(2)
    b.collective("allgather", [0, 1], 1e6)
    with pytest.raises(TraceError, match="op 0: the gloo model runs allreduce"):
        netsim.simulate(b.build(), _ring(2), library="gloo")


def test_cli_gloo_on_a_star_with_a_named_cpu(capsys):
    from studies.cli.parser import main

    assert main(["collective", "allreduce", "--library", "gloo", "-P", "2", "-n", "20MB",
                 "--topology", "star:bandwidth=40Gbps,mtu=1500,cpu=Xeon-E5-2620-v4"]) in (0, None)
    out = capsys.readouterr().out
    # 130 MB through one core at 11.1 GB/s (topologies.devices.HOST_CPUS) = 11.71 ms.
    assert "ring_chunked" in out and "11.7 ms" in out


def test_cli_gloo_json_record(capsys):
    import json

    from studies.cli.parser import main

    assert main(["collective", "allreduce", "--library", "gloo", "-P", "2", "-n", "20MB",
                 "--algorithm", "ring", "--json",
                 "--topology", "star:bandwidth=40Gbps,mtu=1500,cpu=Xeon-E5-2620-v4"]) in (0, None)
    rec = json.loads(capsys.readouterr().out)
    # ring, P = 2: 9 n = 180 MB through one core at 11.1 GB/s.
    assert rec["algorithm"] == "ring" and rec["time"] == pytest.approx(180e6 / 11.1e9, rel=1e-3)


@pytest.mark.parametrize("argv, needle", [
    (["collective", "allgather", "--library", "gloo", "-P", "2", "-n", "1MB"], "allreduce"),
    (["collective", "allreduce", "--library", "gloo", "-P", "2", "-n", "1MB",
      "--algorithm", "bcube"], "unknown gloo algorithm 'bcube'"),
    (["collective", "allreduce", "--library", "gloo", "-P", "2", "-n", "1MB",
      "--protocol", "LL"], "--protocol is not an option of --library gloo"),
    (["collective", "allreduce", "--library", "gloo", "-P", "2", "-n", "1MB",
      "--topology", "star:cpu=Pentium"], "unknown CPU part 'Pentium'"),
])
def test_cli_gloo_bad_input_is_one_line(capsys, argv, needle):
    one_line_error(capsys, argv, needle)


def test_a_recorded_cpu_trace_replays_with_its_host_work():
    # The stored gloo DDP recording (tests/data/kineto): each step waits for one allreduce of
    # the MLP's 37,960 parameter bytes, three steps. On a fast wire, one core at 1 GB/s adds
    # 6.5 n / 1e9 per call (ring_chunked, P = 2) and takes away the wire's n / 1e12.
    import os

    from netsim.formats.kineto.load import load_kineto

    data = os.path.join(os.path.dirname(__file__), "data", "kineto")
    trace = load_kineto([os.path.join(data, f"gloo_cpu_ddp_rank{r}.json.gz") for r in (0, 1)])
    n = 4 * (64 * 128 + 128 + 128 * 10 + 10)
    bare = netsim.simulate(trace, _ring(2, bw=1e12), library="gloo").makespan
    cores = netsim.simulate(trace, _ring(2, bw=1e12, core_bandwidth=1e9),
                            library="gloo").makespan
    assert cores - bare == pytest.approx(3 * (6.5 * n / 1e9 - n / 1e12), rel=1e-6)
