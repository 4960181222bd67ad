"""Bad command lines a newcomer or an adversarial user tries: one line, exit 2, before any work.

Each case used to crash, run for minutes or be silently accepted (issue 18).
"""

import json

import pytest

from netsim import TraceBuilder, save_trace
from studies.cli.parser import main
from netsim.units import parse_workers
from conftest import one_line_error


@pytest.fixture
def trace_file(tmp_path):
    # 1 ms compute on rank 0, then 1.25 MB from rank 0 to rank 1.
    b = TraceBuilder(2)
    c = b.compute(0, seconds=1e-3)
    b.message(0, 1, 1.25e6, deps=[c])
    p = tmp_path / "t.npz"
    save_trace(b.build(), p)
    return str(p)


@pytest.mark.parametrize("argv", [
    ["record", "ps-sync", "--seed", "-1"],
    ["scale", "ps-sync", "--seed", "-1"],
    ["claims", "--seeds", "-1"],
])
def test_negative_seed_is_refused_before_any_work(capsys, argv, monkeypatch):
    # Any training or simulation started would fail this test: the checks come first.
    import studies.claims.reproduce
    import studies.cli.commands.record
    import studies.cli.commands.scale

    def boom(*a, **k):
        raise AssertionError("work started before the options were checked")
    monkeypatch.setattr(studies.claims.reproduce, "run_claim_seeds", boom)
    monkeypatch.setattr(studies.cli.commands.record, "record", boom)
    monkeypatch.setattr(studies.cli.commands.scale, "study", boom)
    one_line_error(capsys, argv, "--seed", "-1")


@pytest.mark.parametrize("argv, needle", [
    (["record", "single", "--epochs", "0"], "--epochs"),
    (["record", "single", "--workers", "0"], "workers must be >= 1"),
    (["collective", "ring", "-P", "4", "-n", "1MB", "--segments", "0"], "--segments"),
    (["collective", "ring", "-P", "4", "-n", "1MB", "--gamma", "-1"], "--gamma"),
    (["collective", "ps", "-P", "4", "-n", "1MB", "--servers", "0"], "--servers"),
    (["scale", "ps-sync", "--iterations", "0"], "--iterations"),
    (["scale", "ps-sync", "--device-flops", "0"], "--device-flops"),
])
def test_out_of_range_options(capsys, argv, needle):
    one_line_error(capsys, argv, needle)


def test_output_paths_are_checked_before_work(capsys, monkeypatch, tmp_path):
    import studies.cli.commands.record
    import studies.cli.commands.scale

    def boom(*a, **k):
        raise AssertionError("work started before the output path was checked")
    monkeypatch.setattr(studies.cli.commands.record, "record", boom)
    monkeypatch.setattr(studies.cli.commands.scale, "study", boom)
    monkeypatch.setattr(studies.cli.commands.scale, "scale", boom)
    bad = str(tmp_path / "missing" / "x")
    one_line_error(capsys, ["record", "single", "-o", bad + ".npz"], "cannot write", bad)
    one_line_error(capsys, ["scale", "ps-sync", "--png", bad + ".png"], "cannot write")
    one_line_error(capsys, ["scale", "-a", "ring", "-P", "2,4", "--csv", bad + ".csv"],
                   "cannot write")
    one_line_error(capsys, ["topology", "star:n=2", "--png", str(tmp_path)], "cannot write")
    assert list(tmp_path.iterdir()) == []  # the checks leave no file behind


def test_sweep_png_path_is_checked_before_simulating(capsys, tmp_path, monkeypatch):
    import studies.cli.commands.sweep

    def boom(*a, **k):
        raise AssertionError("the sweep ran before its png path was checked")
    monkeypatch.setattr(studies.cli.commands.sweep, "run_sweep", boom)
    cfg = tmp_path / "s.yaml"
    cfg.write_text(f"topologies: [star]\ncollectives: [ring]\nbytes: [1MB]\nP: [2]\n"
                   f"png: {tmp_path / 'no' / 's.png'}\n")
    one_line_error(capsys, ["sweep", str(cfg)], "cannot write", "s.png")


@pytest.mark.parametrize("spec, needle", [
    ("star:n=4,n=8", "option 'n' twice"),
    ("star:n=4,", "empty option"),
    ("star:n=4,,latency=1us", "empty option"),
    ("star:n=", "must be key=value"),
    ("star", "star needs n (e.g. star:n=8)"),
    ("two_tier:n=8", "two_tier needs per_rack"),
])
def test_topology_specs_silently_accepted_before(capsys, spec, needle):
    one_line_error(capsys, ["topology", spec, "--json"], needle)


@pytest.mark.parametrize("item, needle", [
    ("hidden=", "option hidden has an empty value"),
    ("hidden=32,", "option hidden takes comma-separated integers"),
])
def test_empty_paradigm_option_values(capsys, item, needle):
    one_line_error(capsys, ["record", "single", "--set", item], needle)


def test_negative_looking_bytes_reach_the_size_check(capsys):
    # argparse used to say "expected one argument" for -1MB; now the value itself is refused.
    one_line_error(capsys, ["collective", "ring", "-P", "4", "--bytes", "-1MB"],
                   "non-negative", "'-1MB'")
    one_line_error(capsys, ["scale", "-a", "ring", "-P", "2,4", "-n", "-1MB"], "'-1MB'")


def test_worker_range_rule():
    # A..B runs over powers of two; both ends must be powers of two (3..5 was silently [3]).
    assert parse_workers("1..8") == [1, 2, 4, 8]
    assert parse_workers("16..16") == [16]
    for text, needle in (("3..5", "3,4,5"), ("2..6", "6 is not one"), ("2,4,", "empty item")):
        with pytest.raises(Exception, match=needle):
            parse_workers(text)


def test_scale_range_with_non_power_end_is_refused(capsys):
    one_line_error(capsys, ["scale", "-a", "ring", "-P", "3..5"], "powers of two", "3,4,5")


def test_replay_sizes_a_builder_from_the_trace(trace_file, capsys):
    # star without n: sized to the trace's 2 ranks, as collective, scale and sweep do.
    assert main(["replay", trace_file, "--topology", "star:bandwidth=10Gbps,latency=1us",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["makespan"] == pytest.approx(1e-3 + 2e-6 + 1.25e6 / 1.25e9, rel=1e-9)


def test_topology_result_sizes_a_builder_from_the_trace(trace_file, tmp_path, capsys):
    assert main(["topology", "star", "--result", trace_file, "--png", str(tmp_path / "t.png"),
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["nodes"] == 3  # 2 hosts + the switch


def test_replay_placement(trace_file, capsys):
    # two_tier:n=4,per_rack=2: host0, host1 under tor0; host2, host3 under tor1; both tors to core.
    # Default placement (host0 -> host1): 2 hops at 10 Gbps. Placed on host0 and host2: 4 hops,
    # through the 2.5 Gbps uplinks: 1 ms + 4 us + 1.25e6 B / 3.125e8 B/s.
    spec = "two_tier:n=4,per_rack=2,bandwidth=10Gbps,uplink_bandwidth=2.5Gbps,latency=1us"
    assert main(["replay", trace_file, "--topology", spec, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["makespan"] == pytest.approx(
        1e-3 + 2e-6 + 1.25e6 / 1.25e9, rel=1e-9)
    assert main(["replay", trace_file, "--topology", spec, "--placement", "host0,host2",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["makespan"] == pytest.approx(
        1e-3 + 4e-6 + 1.25e6 / 3.125e8, rel=1e-9)


@pytest.mark.parametrize("placement, needle", [
    ("host0,host9", "no node 'host9'"),
    ("host0,host0", "twice"),
    ("host0", "1 nodes for a trace of 2 ranks"),
    ("host0,switch", "node 'switch' is a switch, which runs no rank"),  # was replayed there
])
def test_bad_placements(trace_file, capsys, placement, needle):
    one_line_error(capsys, ["replay", trace_file, "--topology", "star:n=4",
                            "--placement", placement], needle)


@pytest.mark.parametrize("extra, needle", [
    ("dataset: digits\n", "dataset is set but no point uses it (the config has no paradigms)"),
    ("epochs: 3\n", "epochs is set but no point uses it"),
    ("hidden: [16]\n", "hidden is set but no point uses it"),
    ("options: {ring: {servers: 2}}\n", "option 'servers' of ring is used by no point"),
    ("options: {ring: {segments: 8}}\n", "option 'segments' of ring is used by no point"),
    ("options: {ps-sync: {servers: 2}}\n", "not in collectives or paradigms"),
])
def test_sweep_config_settings_no_point_uses(capsys, tmp_path, extra, needle):
    cfg = tmp_path / "s.yaml"
    cfg.write_text("topologies: [star]\ncollectives: [ring]\nbytes: [1MB]\nP: [2]\n" + extra)
    one_line_error(capsys, ["sweep", str(cfg)], needle)


def test_sweep_config_bytes_without_collectives(capsys, tmp_path):
    cfg = tmp_path / "s.yaml"
    cfg.write_text("topologies: [star]\nparadigms: [single]\nbytes: [1MB]\nP: [2]\n")
    one_line_error(capsys, ["sweep", str(cfg)], "bytes is set but no point uses it")


def test_hypothesis_database_stays_out_of_the_checkout():
    # A failing example saved by the extended profile must not make the plain run fail.
    from hypothesis import settings

    for name in ("ci", "extended"):
        assert settings.get_profile(name).database is None


def test_message_counts_match_the_generated_traces():
    # The closed forms of studies.scaling.trace_size against the schedules themselves, powers of two
    # and folded P alike.
    import inspect

    from netsim.analysis.collectives import NAMED_SCHEDULES
    from studies.scaling.trace_size import message_count

    for name, gen in NAMED_SCHEDULES.items():
        takes_k = "segments" in inspect.signature(gen).parameters
        for P in (1, 2, 3, 5, 6, 8, 12, 17):
            kw = {"segments": 3} if takes_k else {}
            if name == "ps":
                kw["servers"] = 2
            t = gen(P, 1e6, **kw)
            assert message_count(name, P, segments=3, servers=2) == t.num_messages, (name, P)


def test_bytes_per_op_from_the_column_dtypes():
    from netsim import TraceBuilder
    from studies.scaling.trace_size import bytes_per_op

    b = TraceBuilder(2)
    for _ in range(1000):
        b.message(0, 1, 1.0, deps=[])
    t = b.build()
    cols = ("kind", "rank", "peer", "size", "duration", "flops", "iteration", "tag", "dep_ptr")
    per_op = sum(getattr(t, c).nbytes for c in cols) / 1000
    assert bytes_per_op(deps=0) == pytest.approx(per_op, rel=1e-2)  # dep_ptr has n + 1 rows


def test_collective_too_big_for_memory_is_refused_at_once(capsys, monkeypatch):
    import studies.cli.commands.collective as command

    def boom(*a, **k):
        raise AssertionError("the trace was built before its size was checked")
    monkeypatch.setattr(command, "compare", boom)
    monkeypatch.setattr(command, "topology_factory", boom)
    # 2 P (P - 1) = 7,999,996,000,000 messages at 55 B each: 440 TB.
    one_line_error(capsys, ["collective", "ring", "-P", "2000000", "--bytes", "1MB"],
                   "8e+12 messages", "440 TB", "available", "--force")


def test_collective_force_skips_the_size_check(capsys, monkeypatch):
    import studies.scaling.trace_size

    # A limit of 1 byte would refuse even P = 4; --force goes ahead.
    monkeypatch.setattr(studies.scaling.trace_size, "available_memory", lambda: 1)
    one_line_error(capsys, ["collective", "ring", "-P", "4", "-n", "1MB"], "24 messages")
    assert main(["collective", "ring", "-P", "4", "-n", "1MB", "--force", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["messages"] == 24


def test_topology_list_names_every_builder_and_its_options(capsys):
    from studies.registry import TOPOLOGIES

    assert main(["topology", "--list"]) == 0
    out = capsys.readouterr().out
    for name in TOPOLOGIES:
        assert out.count(f"\n{name}") + out.startswith(name) >= 1, name
    assert "star: n (required), bandwidth=10 Gbps, latency=1 us" in out
    assert "two_tier: n (required), per_rack (required)" in out


def test_topology_warns_about_disconnected_ranks_and_missing_attributes(tmp_path, capsys):
    # Two hosts with no path between them, edges without latency, nodes without kind.
    import networkx as nx

    from netsim.formats.graphio import write_topology

    G = nx.Graph()
    G.add_edge("a", "s1", bandwidth=1e9)
    G.add_edge("b", "s2", bandwidth=1e9, latency=1e-6)
    path = tmp_path / "split.json"
    write_topology(G, path)
    assert main(["topology", str(path), "--png", str(tmp_path / "t.png"), "--json"]) == 0
    captured = capsys.readouterr()
    warnings = json.loads(captured.out)["warnings"]
    assert warnings == [
        "no node carries a kind: ranks go on the 4 degree-1 nodes (a, s1, b, s2); "
        "give each node a kind to choose",
        "1 of 2 edges carry no latency: taken as 0 s",
        "ranks cannot all reach each other: 2 disconnected groups of compute nodes "
        "(e.g. a and b); a replay refuses this topology"]
    assert captured.err.count("netsim: warning:") == 3


def test_help_lists_what_a_newcomer_needs(capsys):
    from studies.cli.parser import build_parser

    sub = build_parser()._subparsers._group_actions[0].choices
    from studies.registry import COLLECTIVES

    collective = " ".join(sub["collective"].format_help().split())
    assert "collective algorithm: " + ", ".join(COLLECTIVES) in collective  # every one, no "..."
    record = sub["record"].format_help()
    assert "single 1" in record and "ps-sync 4" in record
    scale = " ".join(sub["scale"].format_help().split())
    assert "limit column names the link" in scale and "15.7e12" in scale
    assert "powers of two" in scale
    topology = " ".join(sub["topology"].format_help().split())
    assert "--list" in topology and "bandwidth (bytes/s" in topology and "kind" in topology
    replay = " ".join(sub["replay"].format_help().split())
    assert "device_flops metadata" in replay and "--placement" in replay
