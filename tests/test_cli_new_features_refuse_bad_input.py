"""What an adversarial user tries on the newer features (transformer, gloo, TCP, profiles,
Chakra, sweeps): one line `netsim: error: ...` and exit 2 before any work, or the right answer.

Each expected message is the value given, named as the user gave it; where a number is
expected, the comment says how it was worked by hand.
"""

import json

import pytest

from conftest import one_line_error
from netsim.errors import TraceError
from netsim.formats.kineto import load_kineto


def _kernel_doc(info=None, ranks="[0, 1]", ph="X", size=2):
    # One allreduce kernel of 1000 floats on rank 0 of a 2-rank job.
    args = {"Collective name": "allreduce", "In msg nelems": 1000, "Out msg nelems": 1000,
            "dtype": "Float", "Group size": size, "Process Group Name": "0", "stream": 20}
    if ranks is not None:
        args["Process Group Ranks"] = ranks
    ev = {"cat": "kernel", "name": "ncclKernel_AllReduce", "ts": 5, "dur": 50, "args": args}
    if ph is not None:
        ev["ph"] = ph
    return {"distributedInfo": {"rank": 0, "world_size": 2} if info is None else info,
            "traceEvents": [ev]}


def _write(tmp_path, doc, name="rank0.json"):
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return str(p)


def test_dataset_options_that_are_not_a_mapping_are_refused(capsys):
    # --set can only give a number or text; dataset_options is a dict (sweep config / API).
    one_line_error(capsys, ["scale", "ps-partitioned", "-P", "2,4", "--set",
                            "dataset_options=5"],
                   "dataset_options must be a mapping", "got 5")


def test_dataset_options_not_a_mapping_from_python_is_a_workload_error():
    import workloads
    from workloads.errors import WorkloadError

    with pytest.raises(WorkloadError, match="dataset_options must be a mapping.*got 5"):
        workloads.record("ps-partitioned", workers=2, epochs=1, dataset_options=5)


def test_an_unknown_matplotlib_backend_is_refused_before_drawing(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("MPLBACKEND", "bogus")
    one_line_error(capsys, ["topology", "star:n=4", "--png", str(tmp_path / "t.png")],
                   "MPLBACKEND='bogus' is not a backend matplotlib knows")
    assert not (tmp_path / "t.png").exists()


@pytest.mark.parametrize("info, needle", [
    ("rank0", "distributedInfo must be an object, got 'rank0'"),
    ({"rank": 0, "world_size": 2, "pg_config": "all"}, "pg_config must be a list"),
    ({"rank": 0, "world_size": 2, "pg_config": [{"ranks": "0,1"}]}, "pg_config must be a list"),
])
def test_a_malformed_distributed_info_is_refused(tmp_path, capsys, info, needle):
    path = _write(tmp_path, _kernel_doc(info))
    with pytest.raises(TraceError, match=needle):
        load_kineto(path)
    one_line_error(capsys, ["import", "kineto", path, "-o", str(tmp_path / "t.npz")], needle)


@pytest.mark.parametrize("ranks", ["[0, x", "[0, 1.5]", "0 1", "[true, false]"])
def test_garbage_process_group_ranks_are_refused_not_dropped(tmp_path, ranks):
    # Group size 2 = world 2 used to stand in silently for an unreadable list.
    with pytest.raises(TraceError, match=r"event #0.*unreadable 'Process Group Ranks'"):
        load_kineto(_write(tmp_path, _kernel_doc(ranks=ranks)))


def test_an_event_without_its_phase_is_refused_not_dropped(tmp_path):
    with pytest.raises(TraceError, match=r"event #0 'ncclKernel_AllReduce' has no 'ph'"):
        load_kineto(_write(tmp_path, _kernel_doc(ph=None)))


def test_a_well_formed_profile_still_loads(tmp_path):
    # 1000 floats = 4000 bytes over ranks 0, 1.
    t = load_kineto(_write(tmp_path, _kernel_doc()), symmetric=True)
    assert t.metadata["collectives"][0]["bytes"] == 4000.0


def _no_topology_built(monkeypatch):
    import studies.cli.commands.scale_transformer as st

    def boom(*a, **k):
        raise AssertionError("a topology was built before the checks")
    monkeypatch.setattr(st, "topology_factory", boom)


def test_a_global_batch_whose_timeline_does_not_fit_is_refused_before_any_graph(
        capsys, monkeypatch):
    # tp 8 on P = 8: dp 1, m = 1e9 micro-batches of 1; the 1f1b timeline lists a forward and
    # a backward pass of each on the one stage: 2e9 passes x 280 B = 560 GB.
    _no_topology_built(monkeypatch)
    monkeypatch.setattr("studies.scaling.run_length.available_memory", lambda: 2**34)
    one_line_error(capsys, ["scale", "transformer", "-P", "8", "--topology", "dgx_h100",
                            "--global-batch", "1000000000"],
                   "m = 1000000000 micro-batches", "2e+09 micro-batch passes", "560 GB")


def test_a_layout_that_does_not_divide_the_batch_is_refused_before_a_million_gpus(
        capsys, monkeypatch):
    # P = 2^20 at tp 8: dp = 131072 does not divide the default global batch of 512.
    _no_topology_built(monkeypatch)
    one_line_error(capsys, ["scale", "transformer", "-P", "1048576", "--topology",
                            "gpu_cluster:machine=dgx_h100"],
                   "global batch 512 is not a multiple of micro-batch 1 x dp 131072")


def test_a_sweep_with_no_layout_is_refused_before_its_topology(capsys, monkeypatch):
    # gpt3-13b has 40 layers: pp <= 40, tp <= 8, so dp >= 2^20 / 320 > 512 never divides 512.
    _no_topology_built(monkeypatch)
    one_line_error(capsys, ["scale", "transformer", "-P", "1048576", "--sweep", "--topology",
                            "gpu_cluster:machine=dgx_h100"], "no layout of 1048576 GPUs")


def test_a_million_gpu_topology_is_refused_with_its_estimate_before_any_build(capsys,
                                                                              monkeypatch):
    # A layout that divides (tp 8, dp 131072, m = 8). The closed form routes its pipeline
    # hops over the 2^20-GPU graph: route searches from 2^20 sources over its ~7e6 nodes and
    # edges at 17.4 ns a step, about 1.3e5 s with the build, over the hour allowed: refused
    # in one line, nothing built.
    import studies.cli.commands.scale_transformer as st

    monkeypatch.setattr(st, "topology_factory", lambda spec: pytest.fail("built"))
    one_line_error(capsys, ["scale", "transformer", "-P", "1048576", "--global-batch",
                            "1048576", "--topology", "gpu_cluster:machine=dgx_h100"],
                   "of P = 1048576 would take about", "route searches from 1048576 sources",
                   "--force to try anyway")


def test_gloo_is_priced_like_mpich_before_its_topology(capsys, monkeypatch):
    # At least MPICH's ring allreduce: 2 P (P - 1) = 2 x 2e6 x 1999999 ~ 8e12 messages,
    # 55 B each: 440 TB.
    import studies.cli.commands.collective_gloo as cg

    monkeypatch.setattr(cg, "topology_factory", lambda spec: pytest.fail("built"))
    one_line_error(capsys, ["collective", "allreduce", "--library", "gloo", "-P", "2000000",
                            "-n", "1MB"], "8e+12 messages", "440 TB")


def test_overlap_prices_its_pieces_before_any_run(capsys, monkeypatch):
    # A 1-byte partition is one float32 value a piece (at least one value): bert-large's
    # 335e6 parameters are 3.35e8 pieces an iteration, each a ring allreduce of 2 P (P - 1)
    # = 4 messages at P = 2, over 2 iterations: 2.68e9 messages.
    import studies.cli.commands.overlap as ov

    monkeypatch.setattr(ov, "overlap_study", lambda **k: pytest.fail("ran"))
    monkeypatch.setattr("studies.scaling.trace_size.available_memory", lambda: 2**34)
    one_line_error(capsys, ["overlap", "--partition", "1B"], "3.35e+08 pieces",
                   "2.68e+09 messages")
    # bert-large's priority mode at 4 MB: 346 pieces; 1e6 iterations x 346 x 4 = 1.38e9.
    one_line_error(capsys, ["overlap", "--iterations", "1000000"], "346 pieces",
                   "1.38e+09 messages")


def test_overlap_without_none_prints_no_nan_speed_up(capsys):
    from studies.cli.parser import main

    argv = ["overlap", "--modes", "bucketed", "--models", "resnet50", "--networks", "10GbE",
            "-P", "2", "--iterations", "1"]
    assert main(argv + ["--json"]) == 0
    rec, = json.loads(capsys.readouterr().out)
    assert rec["speedup"] is None            # valid JSON: no NaN
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "nan" not in out and out.splitlines()[-1].split()[-1] == "-"


def _two_rank_trace(path):
    from netsim import TraceBuilder, save_trace

    b = TraceBuilder(2)
    b.message(0, 1, 1e6)
    save_trace(b.build(), path)
    return str(path)


@pytest.mark.parametrize("flag", ["--csv", "--timeline"])
def test_replay_refuses_to_write_over_its_trace(capsys, tmp_path, flag):
    t = _two_rank_trace(tmp_path / "t.json")
    before = open(t).read()
    # another spelling of the same file is the same file
    one_line_error(capsys, ["replay", t, "--topology", "star", flag,
                            str(tmp_path / "." / "t.json")], f"{flag} ", "is the input", t)
    assert open(t).read() == before


def test_replay_refuses_to_write_over_its_topology_file(capsys, tmp_path):
    import networkx as nx
    from netsim.formats.graphio import write_topology

    t = _two_rank_trace(tmp_path / "t.npz")
    g = tmp_path / "g.json"
    G = nx.Graph()
    G.add_edge(0, 1, bandwidth=1e9, latency=1e-6)
    write_topology(G, g)
    one_line_error(capsys, ["replay", t, "--topology", str(g), "--csv", str(g)], "is the input")


def test_import_refuses_an_output_inside_the_folder_it_reads(capsys, tmp_path):
    from studies.cli.parser import main

    import shutil

    prof = tmp_path / "prof"
    prof.mkdir()
    shutil.copy(_write(tmp_path, _kernel_doc()), prof / "rank0.json")
    one_line_error(capsys, ["import", "kineto", str(prof), "-o", str(prof / "t.json")],
                   "lies in the input folder")
    one_line_error(capsys, ["import", "kineto", str(prof / "rank0.json"), "-o",
                            str(prof / "rank0.json")], "is the input")
    # a .npz is no profile: the next import of the folder would not read it
    assert main(["import", "kineto", str(prof), "-o", str(prof / "job.npz"), "--symmetric",
                 "-q"]) == 0


def test_scale_and_sweep_refuse_to_write_over_what_they_read(capsys, tmp_path):
    t = _two_rank_trace(tmp_path / "t.npz")
    one_line_error(capsys, ["scale", t, "-P", "2,4", "--csv", t], "--csv", "is the input")
    cfg = tmp_path / "s.yaml"
    cfg.write_text("topologies: [star]\ncollectives: [ring]\nbytes: [1MB]\nP: [2]\n")
    one_line_error(capsys, ["sweep", str(cfg), "-o", str(cfg)], "is the input")


def test_a_second_smaller_export_into_the_same_folder_is_refused(capsys, tmp_path):
    from netsim import save_trace
    from netsim.comm.collectives import ring_allreduce

    save_trace(ring_allreduce(8, 4e6), tmp_path / "r8.npz")
    save_trace(ring_allreduce(4, 4e6), tmp_path / "r4.npz")
    et = str(tmp_path / "et")
    from studies.cli.parser import main

    assert main(["export", "chakra", str(tmp_path / "r8.npz"), "-o", et, "-q"]) == 0
    # ranks 4..7 of the first export would stay beside the second's 0..3
    one_line_error(capsys, ["export", "chakra", str(tmp_path / "r4.npz"), "-o", et],
                   "holds 4 chakra files of ranks this 4-rank trace lacks (chakra.4.et")
    assert main(["export", "chakra", str(tmp_path / "r8.npz"), "-o", et, "-q"]) == 0  # same job
    assert main(["export", "chakra", str(tmp_path / "r4.npz"), "-o", et, "--prefix", "b",
                 "-q"]) == 0


_T = ["scale", "transformer", "-P", "8", "--topology", "dgx_h100"]


@pytest.mark.parametrize("extra, needle", [
    # read as a topology spec is: each key once, no stray comma
    (["--config", "gpt3-13b:layers=8,layers=16"], "gives option 'layers' twice"),
    (["--config", "gpt3-13b:layers=8,"], "has an empty option (a stray comma?)"),
    (["--config", "gpt3-13b:colour=red"],
     "--config gpt3-13b has no option 'colour'; options: layers, hidden"),
    (["--config", "gpt3-13b:layers=eight"], "option layers takes an integer, got 'eight'"),
    # neither the config's batch nor the option's wins silently, at any value
    (["--config", "gpt3-13b:global_batch=1024", "--global-batch", "256"],
     "--config gives global_batch=1024 and --global-batch is given too"),
    (["--config", "gpt3-13b:global_batch=1024", "--global-batch", "512"], "--global-batch"),
    (["--config", "gpt3-13b:micro_batch=2", "--micro-batch", "1"], "--micro-batch"),
    # expert options need --experts, as --ep does, even at their defaults
    (["--top-k", "1"], "--top-k 1 needs --experts"),
    (["--top-k", "2"], "--top-k 2 needs --experts"),
    (["--capacity-factor", "1.0"], "--capacity-factor 1.0 needs --experts"),
    (["--moe-every", "2"], "--moe-every 2 needs --experts"),
    (["--ep", "1"], "--ep 1 needs --experts"),
])
def test_transformer_config_and_expert_options_are_refused(capsys, extra, needle):
    one_line_error(capsys, _T + extra, needle)


@pytest.mark.parametrize("argv, needle", [
    # at its default value a transformer option is still given, and not for ps-sync
    (["scale", "ps-sync", "-P", "2", "--tp", "8"], "--tp applies to PARADIGM transformer"),
    (["scale", "ps-sync", "-P", "2", "--global-batch", "512"], "--global-batch applies"),
    (["scale", "-a", "ring", "-P", "2", "--pipeline", "1f1b"], "--pipeline applies"),
])
def test_an_option_of_another_mode_at_its_default_is_refused(capsys, argv, needle):
    one_line_error(capsys, argv, needle)


@pytest.mark.parametrize("spec, needle", [
    ("gpu_cluster:nodes=2", "gpu_cluster:machine=dgx_h100,nodes=2"),  # a machine it builds
    ("star:n=4,cores=0", "star: cores must be an integer >= 1, got 0"),
    ("star:n=4,cores=4", "star: cores=4 applies with cpu="),
    ("star:n=4,n=8", "gives option 'n' twice"),
    ("star:n=4,", "stray comma"),
])
def test_topology_specs_are_refused_with_a_valid_suggestion(capsys, spec, needle):
    one_line_error(capsys, ["topology", spec], needle)


def test_the_suggested_gpu_cluster_builds():
    from studies.registry import topology_factory

    assert topology_factory("gpu_cluster:machine=dgx_h100,nodes=2")(16).number_of_nodes() > 16


@pytest.mark.parametrize("argv, needle", [
    # ps-sync's overlap defaults to True (layer-wise): no bucket to size
    (["scale", "ps-sync", "-P", "2", "--set", "bucket_bytes=1MB"],
     "bucket_bytes applies with overlap=bucketed, not overlap=True (the default)"),
    (["record", "allreduce", "--set", "overlap=layerwise", "--set", "bucket_bytes=1MB"],
     "bucket_bytes applies with overlap=bucketed, not overlap='layerwise'"),
    # allreduce's collective defaults to ring, which has no segments
    (["scale", "allreduce", "-P", "2", "--set", "segments=8"],
     "segments applies with collective=lp, not collective='ring' (the default)"),
    (["record", "allreduce", "--set", "collective=mst", "--set", "segments=8"],
     "not collective='mst'"),
    # a byte option takes units as every byte option does: the unit's own refusal
    (["scale", "ps-sync", "-P", "2", "--set", "partition_bytes=1kQ"], "option partition_bytes:"),
])
def test_paradigm_options_that_change_nothing_or_lack_units_are_refused(capsys, argv, needle):
    one_line_error(capsys, argv, needle)


def test_byte_options_take_units_in_set_and_sweep_configs():
    from studies.cli.options import paradigm_options
    from studies.sweep.config import _paradigm_values
    from workloads import PARADIGMS

    # 1kB = 1000 bytes; 4MiB = 4 x 2^20 = 4194304 bytes
    assert paradigm_options("ps-sync", PARADIGMS["ps-sync"], ["partition_bytes=1kB"]) == {
        "partition_bytes": 1000.0}
    assert paradigm_options("allreduce", PARADIGMS["allreduce"], [
        "overlap=bucketed", "bucket_bytes=4MiB"])["bucket_bytes"] == 4194304.0
    assert _paradigm_values("allreduce", {"collective": "lp", "segments": 8}) == {
        "collective": "lp", "segments": 8}
    with pytest.raises(Exception, match="segments applies with collective=lp"):
        _paradigm_values("allreduce", {"segments": 8})


def test_nccl_tests_json_names_the_doubling_it_used(capsys):
    from studies.cli.parser import main

    # --sizes 1KB..4KB doubles by default: 1000, 2000, 4000 bytes, step_factor 2 (not null)
    assert main(["collective", "allreduce", "--library", "nccl", "-P", "8", "--sizes",
                 "1KB..4KB", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["config"]["step_factor"] == 2
    assert [r["size"] for r in doc["results"]] == [1000, 2000, 4000]
    assert main(["collective", "allreduce", "--library", "nccl", "-P", "8", "--sizes",
                 "1KB..16KB", "--factor", "4", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["config"]["step_factor"] == 4
    assert [r["size"] for r in doc["results"]] == [1000, 4000, 16000]


@pytest.mark.parametrize("make, size", [
    # 4000 B over 8192 ranks: a ring's chunk is 4000 / 8192 = 0.488 B
    ("ring_allreduce", "0.488"),
    ("ring_allgather", "0.488"),   # judgment call: a sub-byte all-gather is refused too
])
def test_sub_byte_ring_chunks_are_refused_at_the_first_step(make, size):
    import netsim.comm.collectives as coll

    with pytest.raises(TraceError, match=rf"on 8192 ranks of 4000 bytes would send messages "
                                         rf"of {size} bytes"):
        getattr(coll, make)(8192, 4000.0)


def test_a_profile_projected_to_sub_byte_chunks_is_refused_before_its_expansion(
        capsys, tmp_path):
    from studies.cli.parser import main

    # 1000 floats = 4000 B allreduced by 2 ranks, projected to 8192: 0.488 B ring chunks,
    # refused at the schedule's first step (it held 22 GB when refused once whole).
    prof = tmp_path / "prof"
    prof.mkdir()
    for r in (0, 1):
        doc = _kernel_doc({"rank": r, "world_size": 2})
        (prof / f"rank{r}.json").write_text(json.dumps(doc))
    assert main(["import", "kineto", str(prof), "-o", str(tmp_path / "k.npz"), "-q"]) == 0
    one_line_error(capsys, ["replay", str(tmp_path / "k.npz"), "--ranks", "8192", "--topology",
                            "star"], "ring_allreduce on 8192 ranks of 4000 bytes",
                   "0.488 bytes")


def test_long_accepted_work_is_announced_even_off_a_terminal(capsys, monkeypatch):
    # n_push = 1e6 makes ps-async's window 1e6 iterations in whole push periods, priced at
    # 1.8 ms each (studies.scaling.run_length.EPOCH_SECONDS): 1800 s = 30 min, before it runs.
    import studies.cli.commands.scale as sc
    from studies.cli.parser import main

    def study(*a, expect=None, **k):
        expect(0.0)                     # the study announces once its own checks pass
        raise KeyboardInterrupt         # and stops here: nothing runs
    monkeypatch.setattr(sc, "study", study)
    assert main(["scale", "ps-async", "-P", "2", "--set", "n_push=1000000"]) == 130
    err = capsys.readouterr().err
    assert "ps-async at P = 2: about 30 min of CPU by the work estimate" in err
    assert main(["scale", "ps-async", "-P", "2", "--set", "n_push=1000000", "-q"]) == 130
    assert "about 30 min" not in capsys.readouterr().err


@pytest.mark.parametrize("mtu, nbytes, want", [
    # A star of 2 hosts, 1.25e9 B/s lines, 1 us per link, payload efficiency e = MSS / (MSS +
    # 90), 90 bytes of headers, framing and gap per frame (RFC 791, 9293, 7323; Ethernet). A
    # message of n bytes below the MSS is one segment of n bytes: its path latency 2 us, the
    # store-and-forward of that one frame, (n + 90) / B, on the hop that is not the
    # bottleneck, and the fluid transfer of n bytes at e B.
    # MTU 9000, MSS 8948: 2 + 1090 / 1.25e3 + 1000 / (0.990042 x 1.25e3) us
    (9000, 1000.0, 2e-6 + 1090 / 1.25e9 + 1000 / (8948 / 9038 * 1.25e9)),  # 3.6800 us
    # MTU 1500, MSS 1448: 2 + 0.872 + 1000 / (0.941482 x 1.25e3) us
    (1500, 1000.0, 2e-6 + 1090 / 1.25e9 + 1000 / (1448 / 1538 * 1.25e9)),  # 3.7217 us
    (9000, 0.0, 2e-6),  # no bytes, no segment: the path latency alone
    (1500, 0.0, 2e-6),
])
def test_tcp_first_segment_is_the_message_when_it_is_smaller(mtu, nbytes, want):
    # Was 10.04 and 4.08 us for 1000 bytes, 9.23 and 3.23 us for none: the first segment was
    # charged as a full MSS whatever the message's size.
    from netsim import TraceBuilder, simulate
    from topologies import star

    G = star(2, bandwidth=1.25e9, latency=1e-6, mtu=mtu)
    b = TraceBuilder(2)
    b.message(0, 1, nbytes)
    assert G.edges["host0", "switch"]["efficiency"] == pytest.approx((mtu - 52) / (mtu + 38))
    assert simulate(b.build(), G, transport="tcp").makespan == pytest.approx(want, rel=1e-9)


# -- judgment calls (docs/cli.md, "Judgment calls") -------------------------------------------

def test_a_yaml_scalar_where_a_list_is_documented_is_a_list_of_one(tmp_path, capsys):
    from studies.cli.parser import main

    cfg = tmp_path / "s.yaml"
    cfg.write_text("topologies: star\ncollectives: ring\nbytes: 1MB\nP: 4\n")
    assert main(["sweep", str(cfg), "-o", str(tmp_path / "s.csv"), "-q"]) == 0
    rows = (tmp_path / "s.csv").read_text().splitlines()
    assert len(rows) == 2   # the header and the one point: ring, 1 MB, P = 4, star


def test_gloo_on_gpus_is_refused(capsys):
    one_line_error(capsys, ["collective", "allreduce", "--library", "gloo", "-P", "8", "-n",
                            "1MB", "--topology", "dgx_h100"],
                   "library 'gloo' runs on hosts' cores; rank 0 sits on a 'gpu' node")


def test_compare_with_ranks_is_refused(capsys, tmp_path):
    t = _two_rank_trace(tmp_path / "t.npz")
    one_line_error(capsys, ["replay", t, "--compare", "--ranks", "4", "--topology", "star"],
                   "--compare", "--ranks")


@pytest.mark.parametrize("extra, needle", [
    (["--force"], "--force applies with --ranks"),   # as import kineto refuses it
    (["--timeline-format", "perfetto"], "--timeline-format applies with --timeline"),
])
def test_replay_options_that_need_another_are_refused_without_it(capsys, tmp_path, extra,
                                                                  needle):
    t = _two_rank_trace(tmp_path / "t.npz")
    one_line_error(capsys, ["replay", t, "--topology", "star", *extra], needle)


def test_an_nccl_call_on_a_huge_cluster_is_refused_with_its_estimate(capsys, monkeypatch):
    # nodes=100000 DGX H100: 800,000 GPUs (8 a machine, counted on probes of 8 and 16
    # machines), a route search from each over the graph's ~4.2e6 nodes and edges at
    # 17.4 ns a step: about 5.9e4 s, over the hour allowed; nothing built.
    import studies.cli.commands.collective as col

    monkeypatch.setattr(col, "topology_factory", lambda spec: pytest.fail("built"))
    monkeypatch.setattr(col, "parse_topology", lambda spec: pytest.fail("built"))
    one_line_error(capsys, ["collective", "allreduce", "--library", "nccl", "-n", "1MB",
                            "--topology", "gpu_cluster:machine=dgx_h100,nodes=100000"],
                   "route searches from 800000 sources", "--force to try anyway")
