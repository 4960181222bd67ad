"""What an adversarial user tries: one line `netsim: error: ...` and exit 2, before any work.

Repeated options, endless ranges, channel counts past NCCL's, traces too big for the memory
(collectives, scale, replay and import at many ranks, sweep points), bad sweep configs.
"""

import pytest

import netsim
from conftest import one_line_error
from netsim.comm.library import mpich_wire
from netsim.comm.nccl.search import MAX_CHANNELS
from netsim.trace.reproject import reproject
from studies.cli.parser import main
from studies.scaling.trace_size import check_ops, message_count, projection_ops
from test_reproject import _profile

GIB = 2**30


@pytest.mark.parametrize("argv, needle", [
    (["collective", "ring", "-P", "4", "-n", "1MB", "--topology", "star", "--topology", "ring"],
     "argument --topology: given twice"),
    (["collective", "ring", "-P", "4", "-n", "1MB", "--bytes", "2MB"],
     "argument --bytes/-n: given twice"),
    (["collective", "ring", "-P", "4", "-P", "8", "-n", "1MB"], "given twice"),
    (["scale", "ps-sync", "--set", "lr=0.1", "--set", "lr=0.2"], "--set lr= given twice"),
])
def test_repeated_options_are_refused(capsys, argv, needle):
    one_line_error(capsys, argv, needle)


def test_an_option_given_once_still_parses():
    from studies.cli.parser import build_parser

    args = build_parser().parse_args(["collective", "ring", "-P", "4", "-n", "1MB"])
    assert (args.workers, args.bytes) == (4, "1MB")
    assert not [k for k in vars(args) if k.startswith("_")]  # no bookkeeping left behind


@pytest.mark.parametrize("sizes", ["0..8", "0B..1KB", "0.5..8"])
def test_a_size_range_from_below_one_byte_is_refused(capsys, sizes):
    # 0 doubled stays 0: the range never ended and grew memory at ~110 MB/s.
    one_line_error(capsys, ["collective", "allreduce", "--library", "nccl", "--sizes", sizes],
                   "sizes must be >= 1 byte")


def test_channels_past_nccls_maxchannels_are_refused(capsys):
    # NCCL v2.30.7-1 (the release the model follows) src/include/device.h: MAXCHANNELS 64.
    assert MAX_CHANNELS == 64
    one_line_error(capsys, ["collective", "allreduce", "--library", "nccl", "-n", "1MB",
                            "--channels", "65"], "--channels must be an integer in 1..64, got 65")
    one_line_error(capsys, ["collective", "allreduce", "--library", "nccl", "-n", "1MB",
                            "--channels", "10000"], "in 1..64")


def test_nccl_model_refuses_channels_past_maxchannels():
    from netsim.nccl import simulate
    from topologies.machines import dgx_h100

    with pytest.raises(netsim.NetsimError, match=r"channels must be an integer in 1\.\.64"):
        simulate(dgx_h100(), "allreduce", 2**20, channels=65)


def test_trace_size_message_is_in_plain_numbers(capsys):
    err = one_line_error(capsys, ["collective", "ring", "-P", "8", "-n", "7"], "0.875")
    assert "np.float64" not in err


def test_scale_refuses_a_p_whose_trace_does_not_fit(capsys, tmp_path):
    # Ring allreduce at P = 2^22: 2 P (P - 1) = 3.5e13 messages, petabytes of columns.
    one_line_error(capsys, ["scale", "-P", "4194304", "--png", str(tmp_path / "s.png")],
                   "ring on P = 4194304 would be 3.52e+13 messages", "--force")
    assert not (tmp_path / "s.png").exists()


def test_scale_refuses_a_paradigm_whose_trace_does_not_fit(capsys, tmp_path):
    # The allreduce paradigm's ring grows as 2 P (P - 1) messages: at P = 2^22 3.5e13,
    # petabytes of columns; the estimate, grown at the exponent seen at P = 8 and 16 (1.87),
    # is within a factor 2 of it.
    err = one_line_error(capsys, ["scale", "allreduce", "-P", "4194304", "--dataset", "iris",
                                  "--png", str(tmp_path / "s.png")],
                         "allreduce at P = 4194304 (grown from its traces at P = 8, 16) would be",
                         "--force")
    ops = float(err.split(" would be ")[1].split()[0])
    assert 0.5 <= ops / (2 * 4194304 * 4194303) <= 2
    assert not (tmp_path / "s.png").exists()


def test_grown_ops_follows_the_counts_of_real_paradigm_traces():
    # Independent of the estimate: the traces themselves at P = 32 and 64, against the
    # power law grown from P = 8 and 16 (a ring allreduce paradigm: P (P - 1) terms beside
    # linear ones, so the exponent seen at 8 and 16 is a little low, 1.87).
    from studies.scaling.traces import traces
    from studies.scaling.trace_size import PROBE, grown_ops
    ts = traces("allreduce", list(PROBE) + [32, 64], iterations=1, dataset="iris")
    counts = [projection_ops(t, t.ranks) for t in ts]
    for P, true in zip((32, 64), counts[2:]):
        assert 0.8 * true <= grown_ops(counts[:2], P) <= 1.5 * true


def test_projection_ops_counts_what_reproject_and_the_library_make(tmp_path):
    # Independent of the formula: the projected trace itself, and MPICH's expansion of it.
    from netsim.formats.kineto.load import load_kineto

    small = load_kineto(_profile(tmp_path, "r0.json", 0, 2), symmetric=True)
    for ranks in (3, 8, 13):
        big = reproject(small, ranks)
        assert projection_ops(small, ranks, expanded=False) == big.num_ops
        wire = mpich_wire(big)
        assert projection_ops(small, ranks) == big.num_ops + wire.num_messages
        assert wire.num_messages == message_count("ring", ranks)  # one ring allreduce: 2 P (P-1)


def test_replay_and_import_refuse_a_million_ranks(capsys, tmp_path):
    src = _profile(tmp_path, "r0.json", 0, 2)
    small = tmp_path / "small.npz"
    assert main(["import", "kineto", src, "--symmetric", "-o", str(small), "-q"]) == 0
    capsys.readouterr()
    one_line_error(capsys, ["replay", str(small), "--ranks", "1000000", "--topology", "star"],
                   "the replay at 1000000 ranks would be", "--force")
    # The written trace alone: 3 compute ops per rank, 3e6 ops, fits; 10^9 ranks does not.
    one_line_error(capsys, ["import", "kineto", src, "--symmetric", "--ranks", "1000000000",
                            "-o", str(tmp_path / "big.npz")], "the job at 1000000000 ranks")
    assert not (tmp_path / "big.npz").exists()
    one_line_error(capsys, ["import", "kineto", src, "--symmetric", "--force", "-o",
                            str(tmp_path / "x.npz")], "--force applies with --ranks")


def test_check_ops_refuses_over_the_limit_with_the_figure():
    assert check_ops(100, "x", limit=10**6)["bytes"] == 100 * 55
    with pytest.raises(netsim.NetsimError, match=r"x would be 1e\+06 ops, a trace of 55 MB"):
        check_ops(10**6, "x", limit=10**6)


def test_sweep_refuses_a_point_too_big_before_the_cluster(capsys, tmp_path):
    pytest.importorskip("yaml")
    cfg = tmp_path / "big.yaml"
    cfg.write_text("topologies: [star]\ncollectives: [mst, ring]\nbytes: [1MB]\n"
                   "P: [2, 2000000]\n")
    one_line_error(capsys, ["sweep", str(cfg)], "ring on P = 2000000 would be 8e+12 messages")
    assert not (tmp_path / "big.csv").exists()


@pytest.mark.parametrize("text, needle", [
    ("topologies: [star]\ncollectives: [ring]\nbytes: [1MB]\nP: [2]\nP: [4]\n",
     "line 5: key 'P' given twice"),
    ("topologies: [star]\ncollectives: [ps]\nbytes: [1MB]\nP: [2]\n"
     "options: {ps: {servers: two}}\n", "options of ps: servers must be an integer >= 1, got 'two'"),
    ("topologies: [star]\ncollectives: [ps]\nbytes: [1MB]\nP: [2]\noptions: {ps: {servers: 0}}\n",
     "servers must be an integer >= 1, got 0"),
    ("topologies: [star]\ncollectives: [lp]\nbytes: [1MB]\nP: [2]\n"
     "options: {lp: {segments: -3}}\n", "segments must be an integer >= 1, got -3"),
    ("topologies: [star]\ncollectives: [ring]\nbytes: [1MB]\nP: [2]\n"
     "options: {ring: {gamma: .nan}}\n", "gamma must be a finite number >= 0, got nan"),
    ("topologies: [star]\nparadigms: [ps-sync]\nP: [2]\noptions: {ps-sync: {lr: .nan}}\n",
     "options of ps-sync: lr must be a finite number > 0, got nan"),
    ("topologies: [star]\nparadigms: [ps-sync]\nP: [2]\noptions: {ps-sync: {servers: two}}\n",
     "option servers takes an integer, got 'two'"),
])
def test_bad_sweep_configs_are_refused_before_the_first_point(capsys, tmp_path, text, needle):
    pytest.importorskip("yaml")
    cfg = tmp_path / "s.yaml"
    cfg.write_text(text)
    one_line_error(capsys, ["sweep", str(cfg)], needle)
    assert not (tmp_path / "s.csv").exists()


def test_a_binary_sweep_config_is_refused(capsys, tmp_path):
    pytest.importorskip("yaml")
    cfg = tmp_path / "s.yaml"
    cfg.write_bytes(bytes(range(256)))
    one_line_error(capsys, ["sweep", str(cfg)], "not a text file")


@pytest.mark.parametrize("prefix", ["../../x", "", ".hidden", "a/b", "/tmp/x", "a\nb", "a\tb"])
def test_export_prefix_that_leaves_the_directory_is_refused(capsys, tmp_path, prefix):
    from netsim import TraceBuilder, save_trace

    b = TraceBuilder(2)
    b.message(0, 1, 1e6)
    save_trace(b.build(), tmp_path / "t.npz")
    out = tmp_path / "deep" / "et"
    one_line_error(capsys, ["export", "chakra", str(tmp_path / "t.npz"), "-o", str(out),
                            "--prefix", prefix], "prefix must be a plain file name")
    written = [p for p in tmp_path.rglob("*") if p.suffix == ".et"]
    assert written == [] and not out.exists()


def test_nccl_png_that_cannot_be_written_is_refused_before_the_table(capsys, tmp_path):
    for png in ("/proc/x.png", str(tmp_path)):  # not writable; a directory
        one_line_error(capsys, ["collective", "allreduce", "--library", "nccl", "-n", "1MB",
                                "--png", png], f"cannot write {png}")
        assert capsys.readouterr().out == ""


def test_nccl_png_is_written_where_named(capsys, tmp_path):
    # A name without .png was written as NAME.png while "wrote NAME" was reported; such a
    # name is refused now, and a .png name (any case) is written exactly there.
    png = tmp_path / "busbw.PNG"
    assert main(["collective", "allreduce", "--library", "nccl", "-n", "1MB",
                 "--png", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote {png}" in capsys.readouterr().err


PNG_COMMANDS = [
    ["collective", "allreduce", "--library", "nccl", "-n", "1MB"],
    ["scale", "-a", "ring", "-P", "2,4", "-n", "1MB"],
    ["topology", "star:n=4"],
    ["demo"],
    ["overlap", "--workers", "2"],
    ["schemes"],
    ["claims", "--quick", "--seeds", "0"],
]


@pytest.mark.parametrize("argv", PNG_COMMANDS, ids=lambda argv: argv[0])
@pytest.mark.parametrize("name", ["x.txt", "busbw", "x.png.txt", "x.pn"])
def test_a_png_name_without_png_is_refused_before_work(capsys, tmp_path, argv, name):
    # The picture would be a PNG under a name that says otherwise: refused in the same line
    # as an unwritable path, nothing printed on stdout and no file left behind.
    png = tmp_path / name
    one_line_error(capsys, argv + ["--png", str(png)],
                   f"cannot write {png}: a picture is a PNG, its file name must end in .png")
    assert capsys.readouterr().out == ""
    assert list(tmp_path.iterdir()) == []


def test_a_sweep_png_without_png_is_refused_before_work(capsys, tmp_path):
    config = tmp_path / "s.yaml"
    grid = "topologies: [star]\ncollectives: [ring]\nP: [2]\nbytes: [1MB]\n"
    config.write_text(grid)
    one_line_error(capsys, ["sweep", str(config), "-o", str(tmp_path / "r.csv"),
                            "--png", str(tmp_path / "plot.txt")],
                   "a picture is a PNG, its file name must end in .png")
    config.write_text(grid + f"png: {tmp_path}/p.jpg\n")
    one_line_error(capsys, ["sweep", str(config), "-o", str(tmp_path / "r.csv")],
                   f"cannot write {tmp_path}/p.jpg")
    # also when --png stands in for it: the config's bad value was accepted unread
    one_line_error(capsys, ["sweep", str(config), "-o", str(tmp_path / "r.csv"), "--png",
                            str(tmp_path / "ok.png")], f"png: cannot write {tmp_path}/p.jpg")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml"]


@pytest.mark.parametrize("argv, needle", [
    (["record", "--list", "--epochs", "3"], "--list lists every paradigm; it takes no --epochs"),
    (["record", "--list", "--set", "lr=0.1"], "it takes no --set"),
    (["record", "--list", "-o", "t.npz"], "it takes no --output"),
    (["record", "--list", "--force"], "it takes no --force"),
    (["record", "ps-sync", "--list"], "it takes no PARADIGM"),
    (["record", "--list", "--dataset", "digits"], "it takes no --dataset"),
    (["topology", "--list", "--png", "x.png"], "--list lists every builder; it takes no --png"),
    (["topology", "--list", "--metric", "bytes"], "it takes no --metric"),
    (["topology", "--list", "--json"], "it takes no --json"),
])
def test_list_with_an_option_it_ignores_is_refused(capsys, monkeypatch, tmp_path, argv, needle):
    monkeypatch.chdir(tmp_path)
    one_line_error(capsys, argv, needle)
    assert capsys.readouterr().out == "" and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv", [["record", "--list", "-q"], ["topology", "--list", "-q"]])
def test_list_alone_still_lists(capsys, argv):
    assert main(argv) == 0
    assert len(capsys.readouterr().out.splitlines()) > 5


@pytest.mark.parametrize("argv, needle", [
    (["collective", "ring", "-P", "4", "-n", "1MB", "--segments", "4"],
     "--segments applies to the LP family"),
    (["collective", "ring", "-P", "4", "-n", "1MB", "--servers", "2"], "--servers applies to ps"),
    (["collective", "allreduce", "--library", "nccl", "-n", "1MB", "--factor", "4"],
     "--factor applies to a --sizes LO..HI range"),
    (["collective", "allreduce", "--library", "nccl", "--sizes", "1KB,2KB", "--factor", "4"],
     "--factor applies to a --sizes LO..HI range"),
    (["collective", "ring", "-P", "4", "-n", "1MB", "--factor", "4"], "--factor needs --library"),
    (["scale", "-a", "ring", "-P", "2,4", "--model", "resnet50"],
     "--model applies to a PARADIGM's scaling"),
    (["scale", "-a", "ring", "-P", "2,4", "--set", "servers=2"], "--set applies to a PARADIGM"),
    (["topology", "star", "--list"], "--list lists every builder; it takes no NAME"),
    (["claims", "--markdown", "--json"], "give --markdown or --json, not both"),
    (["overlap", "--modes", ","], "--modes ',' names none"),
    (["overlap", "--modes", "none", "--partition", "1MB"],
     "--partition applies to the priority mode"),
    (["overlap", "--modes", "none,priority", "--bucket", "1MB"],
     "--bucket applies to the bucketed mode"),
    # netsim scale has three modes: collectives (--algorithms), a PARADIGM, and transformer;
    # an option of one was accepted and ignored by the others.
    (["scale", "-a", "ring", "-P", "2,4", "-k", "4"],
     "--segments applies to the LP family (lp, lp_reduce, lp_allreduce), not ring"),
    (["scale", "ps-sync", "-P", "2,4", "-n", "1MB"],
     "--bytes applies to collectives (--algorithms), not to ps-sync"),
    (["scale", "ps-sync", "-P", "2,4", "-k", "3"],
     "--segments applies to collectives (--algorithms), not to ps-sync"),
    (["scale", "ps-sync", "-P", "2,4", "--logy"],
     "--logy applies to collectives (--algorithms), not to ps-sync"),
    (["scale", "ps-sync", "-P", "2,4", "--tp", "4"],
     "--tp applies to PARADIGM transformer, not to ps-sync"),
    (["scale", "-a", "ring", "-P", "2,4", "--sweep"],
     "--sweep applies to PARADIGM transformer, not to collectives (--algorithms)"),
    (["scale", "transformer", "-P", "64", "--model", "resnet50"],
     "--model applies to a PARADIGM's scaling, not to PARADIGM transformer"),
    (["scale", "transformer", "-P", "64", "-n", "1MB"],
     "--bytes applies to collectives (--algorithms), not to PARADIGM transformer"),
    (["scale", "transformer", "-P", "64", "--transport", "tcp"],
     "--transport applies to collectives (--algorithms) or a PARADIGM's scaling, not to "
     "PARADIGM transformer"),
    (["scale", "transformer", "-P", "64", "--library", "nccl"], "--library applies with --simulate"),
    (["scale", "transformer", "-P", "64", "--memory", "80GB", "--no-memory-check"],
     "--memory sets the memory --no-memory-check would not check"),
    (["scale", "transformer", "-P", "64", "--sweep", "--no-memory-check"],
     "--no-memory-check applies without --sweep"),
    (["scale", "t.npz", "-P", "2,4", "--dataset", "iris"],
     "--dataset applies to a PARADIGM's recordings, not to the trace file t.npz"),
    (["scale", "t.npz", "-P", "2,4", "--seed", "3"],
     "--seed applies to a PARADIGM's recordings, not to the trace file t.npz"),
    (["scale", "ps-sync", "-P", "2,4", "--set", "epochs=2"],
     "--set epochs= does not apply to a scaling study"),  # was a TypeError traceback
    (["scale", "ps-sync", "-P", "2,4", "--set", "seed=2"], "--set seed= is --seed"),
    (["record", "ps-sync", "--epochs", "3", "--set", "epochs=5"],
     "--epochs and --set epochs= both given; give one"),  # --set kept 5 silently
    (["record", "ps-sync", "--seed", "1", "--set", "seed=2"],
     "--seed and --set seed= both given; give one"),
    (["overlap", "--models", "resnet50,resnet50", "-P", "2"],
     "--models names resnet50 twice; give each once"),
])
def test_options_that_do_not_apply_are_refused(capsys, argv, needle, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    one_line_error(capsys, argv, needle)
    assert list(tmp_path.iterdir()) == []


def test_scale_transformer_takes_its_own_options(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert main(["scale", "transformer", "-P", "64", "--topology",
                 "gpu_cluster:machine=dgx_h100", "--sweep", "--memory", "80GB", "--json",
                 "-q"]) == 0
    assert '"records"' in capsys.readouterr().out


def _trace(tmp_path):
    from netsim import TraceBuilder, save_trace

    b = TraceBuilder(2)
    b.compute(0, seconds=1e-3)
    b.message(0, 1, 1e6)
    save_trace(b.build(), tmp_path / "t.npz")
    return str(tmp_path / "t.npz")


@pytest.mark.parametrize("extra, needle", [
    (["--seed", "5"], "--seed applies with --jitter or a p=P:Kx --straggler"),
    (["--seed", "5", "--straggler", "0:2x"], "--seed applies with --jitter"),  # no draw
    (["--timeline", "x.txt"], "--timeline x.txt: a Chrome trace is JSON; its file name must end"),
    (["--host-gaps", "drop"], "has no host gaps to drop"),  # a recorded trace: a no-op
])
def test_replay_options_that_change_nothing_are_refused(capsys, monkeypatch, tmp_path, extra,
                                                         needle):
    path = _trace(tmp_path)
    monkeypatch.chdir(tmp_path)
    one_line_error(capsys, ["replay", path, "--topology", "star"] + extra, needle)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.npz"]


def test_replay_seed_with_a_draw_is_taken(capsys, tmp_path):
    path = _trace(tmp_path)
    assert main(["replay", path, "--topology", "star", "--seed", "5", "--jitter",
                 "lognormal:0.1", "-q"]) == 0


@pytest.mark.parametrize("argv", [
    ["record", "ps-sync", "-o", "run.txt"],
    ["import", "chakra", "et", "-o", "run.csv"],
])
def test_a_trace_name_without_a_format_is_refused_before_the_work(capsys, monkeypatch, tmp_path,
                                                                    argv):
    # record trained for 2 s and then refused the name; import read every file first.
    import studies.cli.commands.record as record
    import netsim.formats.chakra

    def started(*args, **kwargs):
        raise AssertionError("the work started")
    monkeypatch.setattr(record, "record", started)
    monkeypatch.setattr(netsim.formats.chakra, "load_chakra", started)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "et").mkdir()
    one_line_error(capsys, argv, f"unknown trace format for {argv[-1]!r}: use .json or .npz")
    assert [p.name for p in tmp_path.iterdir()] == ["et"]


def test_ecmp_seed_without_hash_is_refused(capsys, tmp_path):
    from netsim import TraceBuilder, save_trace

    b = TraceBuilder(2)
    b.message(0, 1, 1e6)
    save_trace(b.build(), tmp_path / "t.npz")
    one_line_error(capsys, ["replay", str(tmp_path / "t.npz"), "--topology", "star",
                            "--ecmp-seed", "3"], "--ecmp-seed applies with --ecmp hash")


def test_a_shape_option_without_a_default_takes_a_list():
    # ringtmp's hidden defaults to None: hidden=256,256 was refused as "must be an integer".
    from studies.cli.options import paradigm_options
    from workloads import PARADIGMS

    assert PARADIGMS["ringtmp"].options["hidden"][0] is None
    assert paradigm_options("ringtmp", PARADIGMS["ringtmp"], ["hidden=256,256"]) == {
        "hidden": (256, 256)}


def test_a_ringtmp_model_too_shallow_for_the_ring_is_refused_before_the_data_loads(
        capsys, monkeypatch):
    # --set hidden=256,256 is 3 dense layers (input-256-256-output): a layer-wise partition
    # over 4 ring nodes leaves one without a layer, which the layer count alone decides.
    import workloads.paradigms.ringtmp

    def loaded(*args, **kwargs):
        raise AssertionError("the data was loaded before the refusal")
    monkeypatch.setattr(workloads.paradigms.ringtmp, "prepare", loaded)
    one_line_error(capsys, ["scale", "ringtmp", "--set", "hidden=256,256", "-P", "2,4"],
                   "layer-wise partition of 3 dense layers over 4 ring nodes")


def test_a_topology_too_large_to_read_is_not_drawn_by_default(tmp_path, monkeypatch, capsys):
    # star:n=2500 has 2501 nodes, over DRAW_NODES: the default picture is skipped with one note
    # (the drawing would take seconds and show no readable label), the description still prints.
    from studies.cli.commands.topology import DEFAULT_PNG, DRAW_NODES

    assert 2501 > DRAW_NODES
    monkeypatch.chdir(tmp_path)
    assert main(["topology", "star:n=2500", "--json"]) == 0
    out, err = capsys.readouterr()
    assert '"nodes": 2501' in out
    assert err.startswith("not drawn: 2501 nodes") and "--png" in err, err
    assert err.count("\n") == 1
    assert not (tmp_path / DEFAULT_PNG).exists()


@pytest.mark.parametrize("extra, needle", [
    (["--timeout", "-1"], "--timeout applies with --scheduler"),   # ignored without one
    (["--scheduler", "notaurl"], "--scheduler 'notaurl' is not a scheduler's address"),
    (["--scheduler", "tcp://127.0.0.1:8786", "--threads"], "--threads starts a local cluster"),
    (["--scheduler", "tcp://127.0.0.1:8786", "-j", "2"], "--jobs starts a local cluster"),
    (["--scheduler", "tcp://127.0.0.1:8786", "--timeout", "nan"],
     "--timeout must be a finite number > 0, got nan"),
])
def test_sweep_cluster_options_are_refused_where_they_do_not_apply(capsys, tmp_path, extra,
                                                                    needle):
    config = tmp_path / "s.yaml"
    config.write_text("topologies: [star]\ncollectives: [ring]\nP: [2]\nbytes: [1MB]\n")
    one_line_error(capsys, ["sweep", str(config), "-o", str(tmp_path / "r.csv")] + extra, needle)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml"]



def test_no_command_lists_them_and_says_so_in_one_line(capsys):
    assert main([]) == 2
    out, err = capsys.readouterr()
    assert "collective" in out and "sweep" in out   # the help, as before
    assert err == ("netsim: error: give a COMMAND: replay, topology, record, collective, scale, "
                   "overlap, claims, schemes, demo, sweep, import, export\n")


@pytest.mark.parametrize("argv", [
    ["replay", "TRACE", "--topology", "star", "--csv", ""],
    ["overlap", "--csv", " "],
    ["scale", "-a", "ring", "-P", "2,4", "-n", "1MB", "--csv", ""],
])
def test_an_empty_output_name_is_named_so(capsys, tmp_path, argv):
    # open("") fails with "No such file or directory", which said "cannot write : No such ..."
    import os

    trace = tmp_path / "t.npz"
    b = netsim.TraceBuilder(2)
    b.message(0, 1, 1e6)
    netsim.save_trace(b.build(), trace)
    argv = [str(trace) if a == "TRACE" else a for a in argv]
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        one_line_error(capsys, argv, "the file name is empty")
    finally:
        os.chdir(cwd)
