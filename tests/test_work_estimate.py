"""The one up-front estimate counts the topology and the replay's time, not the trace alone.

``netsim scale ps-sync -P 1048576`` holds 4.3e6 ops, which fit in memory, but its routes are
2^20 Dijkstra searches over a star of 2^20 hosts: refused at once with the figure, and
``--force`` goes on. The topology's size is counted from the builder at two small rank counts
(checked against the graph itself); the time is each count the replay will make times its
unit cost from benchmarks/README.md (the counts checked against the built traces; unit tests
count, they do not time).
"""

import math
import tracemalloc

import pytest

from conftest import one_line_error
from studies.scaling.trace_size import (BUILD_SECONDS, MESSAGE_SECONDS, PAIR_SECONDS, ROUTE_SECONDS,
                                SMALL_MESSAGE_SECONDS, TIME_LIMIT, check_fits, check_ops,
                                replay_seconds, topology_size, unequal_paths)
from topologies import fat_tree, star, two_tier


class _WorkStarted(BaseException):
    pass


def _peak(run):
    """``run()``'s result and the most memory it held at once (tracemalloc): a graph built
    on the way would show there. Unit tests count; they do not time."""
    tracemalloc.start()
    try:
        out = run()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return out, peak


def _million_host_star_bytes():
    # the bytes a star of 2^20 hosts would take, extended from graphs built at 64 and 128
    # hosts (within 2x of the graph's own, test_topology_size_is_the_graphs_own)
    return topology_size("star", 2**20)["bytes"]


@pytest.mark.parametrize("make, spec", [(star, "star"), (lambda n: two_tier(n, per_rack=4),
                                                         "two_tier:per_rack=4")])
def test_topology_size_is_the_graphs_own(make, spec):
    tracemalloc.start()
    G = make(4096)
    used = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    for topology in (make, spec):
        size = topology_size(topology, 4096)
        assert size["elements"] == G.number_of_nodes() + G.number_of_edges()  # affine in n
        assert 0.5 * used <= size["bytes"] <= 2 * used


def test_a_star_of_a_million_hosts_is_counted_without_building_it():
    size, peak = _peak(lambda: topology_size("star", 2**20))
    assert size["elements"] == 2 * 2**20 + 1  # 2^20 hosts and links, one switch
    assert peak < size["bytes"] / 4           # never held: the star was not built


def test_the_routing_term_counts_one_search_per_source_over_the_graph():
    # Each of P hosts of a star to the next: P searches, each over the star's 2P + 1 elements
    # (the CPU per step is benchmarks/README.md's; unit tests count, they do not time).
    P = 2048
    G = star(P)
    estimate = replay_seconds(0, P, G.number_of_nodes() + G.number_of_edges())
    assert estimate == P * (2 * P + 1) * ROUTE_SECONDS
    assert replay_seconds(0, P, 2 * P + 1, passes=2) == 2 * estimate


def test_pairs_and_fan_in_dependencies_match_the_generated_traces():
    # studies.scaling.trace_size.pair_count and fan_in_dependencies against the schedules themselves.
    import inspect

    from netsim.analysis.collectives import NAMED_SCHEDULES
    from studies.scaling.trace_size import fan_in_dependencies, pair_count

    for name, gen in NAMED_SCHEDULES.items():
        takes_k = "segments" in inspect.signature(gen).parameters
        for P in (1, 2, 3, 5, 6, 8, 12, 17, 33):
            kw = {"segments": 3} if takes_k else {}
            if name == "ps":
                kw["servers"] = 2
            t = gen(P, 1e6, **kw)
            sent = t.peer >= 0
            pairs = len(set(zip(t.rank[sent].tolist(), t.peer[sent].tolist())))
            assert pair_count(name, P, servers=2) == pairs, (name, P)
            if name == "ps":
                assert fan_in_dependencies(name, P, servers=2) == len(t.dep_idx), P
            else:  # a few per message, within the per-message figure
                assert fan_in_dependencies(name, P) == 0
                bound = (2 + math.log2(P) / 2) * max(t.num_messages, 1)
                assert len(t.dep_idx) <= bound, (name, P)


def test_the_estimate_counts_what_the_collective_command_replays():
    # The figures the estimate multiplies are the built trace's own counts.
    from netsim.analysis.collectives import NAMED_SCHEDULES
    from studies.scaling.trace_size import (DEP_SECONDS, MESSAGE_SECONDS, PAIR_SECONDS,
                                    SMALL_MESSAGE_SECONDS, BUILD_SECONDS)

    for name, P, k, small in (("ps", 64, 1, False), ("alltoall", 40, 1, False),
                              ("lp", 8, 50, True), ("lp", 16, 50, False)):
        t = NAMED_SCHEDULES[name](P, 1e6, **({"segments": k} if name == "lp" else {}))
        out = check_fits(name, P, segments=k, topology="star")
        sent = t.peer >= 0
        pairs = len(set(zip(t.rank[sent].tolist(), t.peer[sent].tolist())))
        deps = len(t.dep_idx) if name == "ps" else 0
        elements = out["topology"]["elements"]
        expected = (t.num_messages * (SMALL_MESSAGE_SECONDS if small else MESSAGE_SECONDS)
                    + pairs * PAIR_SECONDS + deps * DEP_SECONDS
                    + t.ranks * elements * ROUTE_SECONDS + elements * BUILD_SECONDS)
        assert out["messages"] == t.num_messages
        assert out["seconds"] == pytest.approx(expected, rel=1e-12), name


def test_a_parameter_servers_dependencies_count_in_its_memory():
    # ps on P = 65536: 131072 messages, but 2^32 dependencies of 8 bytes, 34 GB
    out = check_fits("ps", 2**10, limit=10**12)
    assert out["bytes"] == 2 * 2**10 * 55 + 2**20 * 8
    with pytest.raises(Exception, match="would be"):
        check_fits("ps", 2**16, limit=16 * 2**30)


def test_ps_sync_at_a_million_workers_is_refused_before_any_simulation(capsys, monkeypatch,
                                                                      tmp_path):
    import studies.scaling.paradigm as ps

    def boom(*a, **k):
        raise AssertionError("simulated before the estimate refused it")
    monkeypatch.setattr(ps, "_point", boom)
    err, peak = _peak(lambda: one_line_error(
        capsys, ["scale", "ps-sync", "-P", "1048576", "--png", str(tmp_path / "s.png")],
        "ps-sync at P = 1048576", "s of CPU", f"over the {TIME_LIMIT:.0f} s", "1048577 sources",
        "--force"))
    assert peak < _million_host_star_bytes() / 4  # its star of 2^20 hosts was never built
    seconds = float(err.split("would take about ")[1].split()[0])
    assert seconds > TIME_LIMIT


def test_force_goes_on_past_the_estimate(monkeypatch, tmp_path):
    import studies.scaling.paradigm as ps
    from studies.cli.parser import main

    def started(source, workers, **k):
        if max(workers) == 2**20:
            raise _WorkStarted
        return real(source, workers, **k)
    real = ps.traces
    monkeypatch.setattr(ps, "traces", started)
    with pytest.raises(_WorkStarted):
        main(["scale", "ps-sync", "-P", "1048576", "--force", "--png", str(tmp_path / "s.png")])


def test_collectives_are_refused_for_time_where_the_trace_fits(capsys):
    # MST on 4e6 ranks: 4e6 messages (220 MB of columns) but 4e6 searches over 8e6 elements.
    assert check_fits("mst", 4_000_000)["bytes"] < 2**30
    one_line_error(capsys, ["collective", "mst", "-P", "4000000", "-n", "1MB"],
                   "mst on P = 4000000 would take about", "s of CPU", "--force")
    with pytest.raises(Exception, match="nodes and edges"):
        check_ops(10, "x", topology="star", ranks=10, limit=600)  # 550 B of trace fit, not a graph


def test_a_sweep_paradigm_point_too_large_is_refused_before_the_cluster(capsys, monkeypatch,
                                                                         tmp_path):
    import studies.cli.commands.sweep as command

    def boom(*a, **k):
        raise AssertionError("the sweep started")
    monkeypatch.setattr(command, "run_sweep", boom)
    config = tmp_path / "s.yaml"
    config.write_text("topologies: [star]\nparadigms: [ps-sync]\ndataset: iris\n"
                      "P: [2, 2000000]\n")
    one_line_error(capsys, ["sweep", str(config), "--threads"],
                   "ps-sync at P = 2000000 (grown from its recordings", "--force")


def test_a_sweep_config_with_a_huge_p_is_checked_without_building_its_topology(capsys,
                                                                                tmp_path):
    # The config check validates a topology spec on a small graph; the estimate refuses P.
    config = tmp_path / "s.yaml"
    config.write_text("topologies: [star]\ncollectives: [ring]\nbytes: [1MB]\n"
                      "P: [100000000000]\n")
    _, peak = _peak(lambda: one_line_error(
        capsys, ["sweep", str(config), "--threads", "-o", str(tmp_path / "s.csv")],
        "ring on P = 100000000000 would be", "--force"))
    assert peak < _million_host_star_bytes() / 4  # not even a far smaller star was built


def test_a_sweep_topology_file_with_a_bad_edge_is_refused_before_the_first_point(tmp_path):
    import json

    from netsim.errors import NetsimError
    from studies.sweep.config import check_config

    graph = tmp_path / "g.json"
    graph.write_text(json.dumps({"directed": False, "multigraph": False, "graph": {},
                                 "nodes": [{"id": "a", "kind": "host"}, {"id": "b", "kind": "host"}],
                                 "links": [{"source": "a", "target": "b", "bandwidth": -1e9,
                                            "latency": 1e-6}]}))
    with pytest.raises(NetsimError, match="has bandwidth -1000000000.0"):
        check_config({"topologies": [str(graph)], "collectives": ["ring"], "bytes": ["1MB"],
                      "P": [2]})


def test_a_topology_slow_to_build_is_priced_without_building_it():
    # dgx_h100:nodes=100000 fits in memory; its build is counted from the graphs at 8 and 16
    # machines (about 53 nodes and edges a machine), not built to be counted.
    from studies.registry import parse_topology
    from studies.scaling.trace_size import BUILD_SECONDS

    out, peak = _peak(lambda: check_fits("ring", 8, topology="dgx_h100:nodes=100000"))
    assert peak < out["topology"]["bytes"] / 4   # not built (a build would take about a minute)
    small = parse_topology("dgx_h100:nodes=64")
    per_machine = (small.number_of_nodes() + small.number_of_edges()) / 64
    # the graph holds 53 elements a machine and 17 besides (at 64 machines 1,353 nodes and
    # 2,056 edges = 53 x 64 + 17): a graph of a + b nodes elements, which the straight line
    # through the probes at 8 and 16 machines extends exactly (studies.registry._growth)
    assert small.number_of_nodes() + small.number_of_edges() == 53 * 64 + 17
    assert out["topology"]["elements"] == pytest.approx(53 * 100000 + 17, rel=1e-12)
    assert out["topology"]["elements"] <= 100000 * per_machine
    assert out["seconds"] >= out["topology"]["elements"] * BUILD_SECONDS
    with pytest.raises(Exception, match=r"their build at 17.4 us each.*--force"):
        check_ops(112, "ring on P = 8", topology="dgx_h100:nodes=100000", ranks=8,
                  time_limit=10)


@pytest.mark.parametrize("spec, graph, each", [
    ("fat_tree:k=16", lambda P: fat_tree(16), SMALL_MESSAGE_SECONDS),   # edge, pod, core: unequal
    ("star", star, MESSAGE_SECONDS),                                    # every path two links
])
def test_a_ring_on_unequal_paths_is_priced_a_few_messages_at_a_time(spec, graph, each):
    # ring_allreduce: 2 (P - 1) steps of P messages, P distinct (rank, rank + 1) pairs, one
    # route search per rank over the graph's nodes and edges, and the graph's build.
    P = 256
    G = graph(P)
    elements = G.number_of_nodes() + G.number_of_edges()
    expected = (2 * (P - 1) * P * each + P * PAIR_SECONDS + P * elements * ROUTE_SECONDS
                + elements * BUILD_SECONDS)
    assert check_fits("ring", P, topology=spec)["seconds"] == pytest.approx(expected, rel=1e-12)
    assert unequal_paths(G, P) == (each == SMALL_MESSAGE_SECONDS)


def test_a_small_event_instant_is_priced_by_the_flows_it_re_rates():
    from studies.scaling.trace_size import (COMPONENT_FLOW_SECONDS, SMALL_MESSAGE_SECONDS,
                                            replay_seconds)

    # 10^6 ops, no route steps: 16.7 us each alone, 16.7 + 1024 x 0.022 = 39.228 us each
    # with a component of 1024 flows; the batch path's messages take no component cost
    assert replay_seconds(10**6, 0, 0, small=True) == pytest.approx(16.7)
    assert replay_seconds(10**6, 0, 0, small=True, component=1024) == pytest.approx(39.228)
    assert replay_seconds(10**6, 0, 0, component=1024) == pytest.approx(2.9)
    assert (SMALL_MESSAGE_SECONDS, COMPONENT_FLOW_SECONDS) == (16.7e-6, 22e-9)


@pytest.mark.parametrize("paradigm, component", [
    ("allreduce", 64),   # its ring allreduces chain every rank's flows
    ("ps-sync", 0),      # pushes and pulls: no collective, a few flows an instant
])
def test_a_paradigm_with_collectives_is_priced_by_its_component(monkeypatch, tmp_path,
                                                                 paradigm, component):
    import studies.scaling.paradigm as ps
    from studies.cli.parser import main

    seen = []

    def recorded(*args, **kwargs):
        seen.append(kwargs.get("component"))
        raise _WorkStarted
    monkeypatch.setattr(ps, "check_ops", recorded)
    with pytest.raises(_WorkStarted):
        main(["scale", paradigm, "-P", "64", "--png", str(tmp_path / "s.png"), "-q"])
    assert seen == [component]
