"""Inputs an adversarial user gives that were accepted, priced wrongly or answered with two
lines: each is one line `netsim: error: ...` and exit 2 before any work, or runs as it should.

Each expected message is the value given, named as the user gave it.
"""

import json

import pytest

from conftest import one_line_error


def _trace(tmp_path, name="t.npz"):
    # Two ranks, one 1 MB message: the smallest trace every command reads.
    from netsim import TraceBuilder, save_trace

    b = TraceBuilder(2)
    b.message(0, 1, 1e6)
    path = str(tmp_path / name)
    save_trace(b.build(), path)
    return path


# -- outputs ---------------------------------------------------------------------------------

def test_two_outputs_naming_one_file_are_refused(tmp_path, capsys):
    # The timeline was written, then the CSV over it (or the other way): one of the two lost.
    trace, out = _trace(tmp_path), str(tmp_path / "o.json")
    one_line_error(capsys, ["replay", trace, "--topology", "star", "--timeline", out, "--csv",
                            out], "--csv and --timeline both name", "o.json", "give two names")
    assert not (tmp_path / "o.json").exists()
    png = str(tmp_path / "s.png")
    one_line_error(capsys, ["scale", "-P", "2", "-n", "1MB", "--png", png, "--csv",
                            str(tmp_path / "." / "s.png")], "--csv and --png both name")
    one_line_error(capsys, ["overlap", "--csv", png, "--png", png], "--csv and --png both name")


# -- options ---------------------------------------------------------------------------------

@pytest.mark.parametrize("flag, value, key", [("--partition", "0", "partition_bytes"),
                                              ("--bucket", "0B", "bucket_bytes")])
def test_an_overlap_piece_of_no_bytes_is_refused_before_it_is_priced(capsys, flag, value, key):
    # It was priced first (a 0-byte piece: "about 15 min of CPU" on stderr), then refused.
    mode = "priority" if flag == "--partition" else "bucketed"
    err = one_line_error(capsys, ["overlap", "-P", "2", "--models", "resnet50", "--networks",
                                  "10GbE", "--modes", mode, flag, value],
                         f"{flag} {value}: {key} must be a finite number > 0, got 0.0")
    assert "about" not in err


@pytest.mark.parametrize("value", ["", " , "])
def test_algorithms_naming_none_are_refused_not_replaced_by_the_default(capsys, value):
    one_line_error(capsys, ["scale", "-P", "2", "-n", "1MB", "-a", value],
                   f"--algorithms {value!r} names none; give at least one")


@pytest.mark.parametrize("text, kind", [("servers=two", "an integer"),
                                        ("lr=fast", "a number"),
                                        ("hidden=32,", "comma-separated integers")])
def test_a_paradigm_option_of_the_wrong_type_names_the_type_in_words(capsys, text, kind):
    key, value = text.split("=")
    one_line_error(capsys, ["record", "ps-sync", "--epochs", "1", "--set", text],
                   f"option {key} takes {kind}, got {value!r}")


# -- topologies ------------------------------------------------------------------------------

@pytest.mark.parametrize("spec, needle", [
    ("dgx_h100:network=mesh", "dgx_h100: network must be one of rail, fat_tree, got 'mesh'"),
    ("mi300x:network=fat_tree", "mi300x: network='fat_tree' joins machines"),
    ("gb200_nvl72:network=fat_tree", "gb200_nvl72: network='fat_tree' joins machines"),
])
def test_a_network_option_of_one_machine_is_refused(capsys, spec, needle):
    # One machine (nodes=1, no nic) was built without reading `network`: any word passed.
    one_line_error(capsys, ["topology", spec, "--json"], needle)


def test_a_network_option_sized_to_several_machines_still_builds():
    # Sized to 16 ranks, dgx_h100 is two machines: their network is the fat tree asked for.
    from studies.registry import topology_factory

    G = topology_factory("dgx_h100:network=fat_tree")(16)
    assert sum(k == "gpu" for _, k in G.nodes(data="kind")) == 16
    assert "fat_tree" in G.graph["name"]


def test_a_graph_edge_without_bandwidth_is_one_line_without_the_latency_warning(tmp_path,
                                                                                 capsys):
    # The edge lacks latency too: its warning came first, then the error (two lines).
    g = tmp_path / "g.json"
    g.write_text(json.dumps({"directed": False, "multigraph": False, "graph": {},
                             "nodes": [{"id": 0}, {"id": 1}],
                             "links": [{"source": 0, "target": 1}]}))
    one_line_error(capsys, ["replay", _trace(tmp_path), "--topology", str(g)],
                   "edge (0, 1) has no 'bandwidth' attribute")


# -- trace folders ---------------------------------------------------------------------------

def test_a_chakra_folder_of_two_exports_is_refused(tmp_path, capsys):
    # chakra.0.et of one job and other.1.et of another made one 2-rank job silently.
    from netsim.formats.tracefile import load_trace
    from netsim.formats.chakra import save_chakra

    trace = load_trace(_trace(tmp_path))
    save_chakra(trace, tmp_path / "a", prefix="chakra")
    save_chakra(trace, tmp_path / "b", prefix="other")
    (tmp_path / "a" / "chakra.1.et").replace(tmp_path / "mixed.et")
    (tmp_path / "b" / "other.1.et").replace(tmp_path / "a" / "other.1.et")
    one_line_error(capsys, ["import", "chakra", str(tmp_path / "a"), "-o",
                            str(tmp_path / "c.npz")],
                   "files of 2 prefixes (chakra.0.et, other.1.et)", "one job's")


def test_a_missing_rank_file_names_the_command_line_flag(tmp_path, capsys):
    args = {"Collective name": "allreduce", "In msg nelems": 1000, "Out msg nelems": 1000,
            "dtype": "Float", "Group size": 2, "Process Group Name": "0",
            "Process Group Ranks": "[0, 1]", "stream": 20}
    (tmp_path / "rank0.json").write_text(json.dumps({
        "distributedInfo": {"rank": 0, "world_size": 2},
        "traceEvents": [{"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce", "ts": 5,
                         "dur": 50, "args": args}]}))
    one_line_error(capsys, ["import", "kineto", str(tmp_path / "rank0.json"), "-o",
                            str(tmp_path / "k.npz")],
                   "missing rank file for rank 1 of world size 2", "netsim import --symmetric")


# -- sweeps ----------------------------------------------------------------------------------

def test_a_sweep_output_that_is_not_text_is_one_line(tmp_path, capsys):
    pytest.importorskip("yaml")
    cfg = tmp_path / "s.yaml"
    cfg.write_text("topologies: [star]\ncollectives: [ring]\nbytes: [1MB]\nP: [2]\n")
    out = tmp_path / "s.csv"
    out.write_bytes(bytes(range(256)) * 4)   # a UnicodeDecodeError traceback, reading it
    one_line_error(capsys, ["sweep", str(cfg), "-o", str(out), "-j", "1", "--threads"],
                   f"{out} is not a sweep's CSV output (UnicodeDecodeError)")
    assert out.read_bytes() == bytes(range(256)) * 4


def test_a_sweep_starts_no_more_local_workers_than_points(tmp_path):
    # -j 100000 started 100000 workers for a grid of one point, and never got further.
    pytest.importorskip("distributed")
    from studies.sweep.config import check_config
    from studies.sweep.run import run_sweep

    config = check_config({"topologies": ["star"], "collectives": ["ring"], "bytes": ["1MB"],
                           "P": [2]})
    said = []
    summary = run_sweep(config, str(tmp_path / "s.csv"), jobs=100000, processes=False,
                        log=said.append)
    assert summary["ran"] == 1
    assert "a local cluster of 1 threads" in said[0]


def test_fine_priority_pieces_are_priced_at_the_priority_path_cost(capsys, monkeypatch):
    # 1kB pieces of resnet50: 102,237 pieces an iteration (each layer's floats in chunks of
    # 250), a ring allreduce each (4 messages at P = 2), 2 iterations: 817,896 messages at
    # 74 us (PRIORITY_MESSAGE_SECONDS) = 60.5 s, plus 204,474 pairs at 6.5 us = 1.33 s: about
    # 62 s, announced on any stderr. It was priced at 2.9 us a message (2.4 s) and ran 3 min.
    import studies.cli.commands.overlap as ov
    from studies.cli.parser import main

    assert ov.piece_count("resnet50", "priority", 25 * 2**20, 1e3) == 102237

    def study(*args, **kwargs):
        raise KeyboardInterrupt        # announced, then stopped before any replay
    monkeypatch.setattr(ov, "overlap_study", study)
    assert main(["overlap", "-P", "2", "--models", "resnet50", "--networks", "10GbE",
                 "--modes", "priority", "--partition", "1kB"]) == 130
    assert "overlap of 1 runs: about 62 s of CPU by the work estimate" in capsys.readouterr().err


def test_a_long_window_is_probed_over_a_few_iterations_before_its_estimate(capsys,
                                                                            monkeypatch):
    # n_push = 1e6: ps-async's window is one push period, 10^6 iterations. The probe traces
    # at P = 8 and 16 were built over all of them (minutes, silent) before P = 64 was priced.
    import studies.scaling.paradigm as sp

    asked, real = [], sp.traces

    def traces(source, workers, iterations=None, **kwargs):
        asked.append(iterations)
        return real(source, workers, iterations=iterations, **kwargs)
    monkeypatch.setattr(sp, "traces", traces)
    # 2.6e8 ops at P = 64: over the hour of CPU, or over the memory when less than 14.3 GB
    # is free (either refusal, whichever the machine meets first)
    one_line_error(capsys, ["scale", "ps-async", "-P", "2..64", "--set", "n_push=1000000"],
                   "ps-async at P = 64 (grown from its traces at P = 8, 16) would ",
                   "2.6e+08 ops", "or --force to try anyway")
    assert asked == [sp.PROBE_ITERATIONS]   # the probes only, over 16 iterations


def test_an_experiment_named_twice_is_refused(capsys):
    # `claims --only lp,lp` ran lp's claims twice over and printed each row twice.
    one_line_error(capsys, ["claims", "--only", "lp,lp"], "--only names lp twice; give each once")
