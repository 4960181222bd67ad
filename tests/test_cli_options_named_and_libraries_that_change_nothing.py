"""A library named for a trace with no collective is refused (it would change nothing), and
an NCCL call's refusal names the option it came from, not the internal trace's "op 0"."""

import pytest

from conftest import one_line_error
from netsim import TraceBuilder
from netsim.comm.library import check_applies
from netsim.errors import TraceError


def _messages_only():
    b = TraceBuilder(2)
    b.message(0, 1, 100)
    return b.build()


@pytest.mark.parametrize("library", ["mpich", "nccl", "gloo"])
def test_a_library_for_a_trace_of_messages_only_is_refused(library):
    with pytest.raises(TraceError, match=rf"^library '{library}' expands collectives and "
                                         r"x has none \(its messages are point-to-point\)"):
        check_applies(library, _messages_only(), "x")
    assert check_applies("auto", _messages_only()) == "auto"


def test_a_library_for_a_trace_with_a_collective_passes():
    b = TraceBuilder(2)
    b.collective("allreduce", [0, 1], 1000)
    assert check_applies("nccl", b.build()) == "nccl"


@pytest.mark.parametrize("paradigm, library", [
    ("ps-sync", "nccl"),          # pushes and pulls: point-to-point messages only
    ("ps-sync", "mpich"),
    ("ps-partitioned", "gloo"),   # recorded at every P: checked on its first trace
])
def test_scale_refuses_a_library_for_a_paradigm_without_collectives(capsys, paradigm,
                                                                    library):
    one_line_error(capsys, ["scale", paradigm, "-P", "2,4", "--library", library],
                   f"library '{library}' expands collectives and {paradigm}'s trace has none")


def test_scale_keeps_a_library_for_the_allreduce_paradigm(capsys, tmp_path):
    from studies.cli.parser import main

    assert main(["scale", "allreduce", "-P", "2,4", "--library", "mpich", "--png",
                 str(tmp_path / "s.png"), "-q"]) == 0
    assert "collectives (library mpich): mpich ring at P = 2, 4" in capsys.readouterr().out


def test_replay_refuses_a_library_for_a_trace_of_messages(capsys, tmp_path):
    from netsim import save_trace

    save_trace(_messages_only(), tmp_path / "t.npz")
    one_line_error(capsys, ["replay", str(tmp_path / "t.npz"), "--topology", "star",
                            "--library", "nccl"], "library 'nccl' expands collectives")


@pytest.mark.parametrize("argv, message", [
    (["collective", "allreduce", "--library", "nccl", "-P", "8", "-n", "1MB", "--algorithm",
      "p2p"],
     "netsim: error: --algorithm p2p: algorithm 'p2p' is for alltoall and sendrecv, not "
     "allreduce\n"),
    (["collective", "alltoall", "--library", "nccl", "-P", "8", "-n", "1MB", "--algorithm",
      "ring"],
     "netsim: error: --algorithm ring: alltoall runs as point-to-point sends (algorithm "
     "'p2p'), not 'ring'\n"),
    (["collective", "allreduce", "--library", "nccl", "-P", "8", "-n", "1MB", "--algorithm",
      "bogus"],
     "netsim: error: unknown --algorithm 'bogus'; known: ring, tree, nvls, nvls_tree, "
     "collnet_chain, pat, p2p\n"),
    # DGX-1's V100s have no NVSwitch: the model's refusal, named by the option
    (["collective", "allreduce", "--library", "nccl", "-n", "1MB", "--algorithm", "nvls",
      "--topology", "dgx1"],
     "netsim: error: --algorithm nvls: nvls needs an NVSwitch with nvls=True (gen3, sm >= 90) "
     "on every machine; this graph has none\n"),
])
def test_an_nccl_refusal_names_the_option_not_op_0(capsys, argv, message):
    from studies.cli.parser import main

    assert main(argv) == 2
    assert capsys.readouterr().err == message


@pytest.mark.parametrize("argv, message", [
    # a study's own traces: no "op 8:" of a trace the user never wrote
    (["scale", "allreduce", "-P", "2,4", "--library", "nccl"],
     "netsim: error: library 'nccl' needs every member on a gpu node; rank 0 sits on a 'host' "
     "node\n"),
    (["scale", "allreduce", "-P", "8,16", "--library", "gloo", "--topology", "dgx_h100"],
     "netsim: error: library 'gloo' runs on hosts' cores; rank 0 sits on a 'gpu' node (use "
     "library 'nccl' there)\n"),
])
def test_a_library_off_its_nodes_is_refused_without_an_op_number(capsys, argv, message):
    from studies.cli.parser import main

    assert main(argv) == 2
    assert capsys.readouterr().err == message


def test_overlap_refuses_nccl_on_its_star_of_hosts_before_recording(capsys, monkeypatch):
    import workloads

    monkeypatch.setattr(workloads, "record", lambda *a, **k: pytest.fail("recorded"))
    one_line_error(capsys, ["overlap", "--library", "nccl"],
                   "library 'nccl' needs every member on a gpu node")


@pytest.mark.parametrize("spec, message", [
    # the example adds n=8 to mtu=10, which no Ethernet carries: the builder's refusal follows
    ("star:mtu=10", "topology star needs n (e.g. star:n=8); with it, star: mtu 10 is not a "
                    "TCP/IPv4-over-Ethernet MTU (MTU must be an integer >= 53, got 10)"),
    ("gpu_cluster:machine=bogus", "topology gpu_cluster needs nodes (e.g. gpu_cluster:nodes=8); "
                                  "with it, gpu_cluster: machine must be one of"),
    # valid options given: the example keeps them and builds
    ("star:bandwidth=10Gbps", "topology star needs n (e.g. star:n=8,bandwidth=10Gbps)"),
    # a unit's refusal names the option it was given for
    ("star:n=4,latency=-1", "star: latency=-1: time must be a finite non-negative number, "
                            "got '-1'"),
])
def test_a_topology_spec_refusal_suggests_only_what_builds(capsys, spec, message):
    one_line_error(capsys, ["topology", spec], message)


def test_the_suggestion_with_valid_options_builds():
    from studies.registry import parse_topology

    assert parse_topology("star:n=8,bandwidth=10Gbps").number_of_nodes() == 9


@pytest.mark.parametrize("extra, message", [
    (["--algorithm", "ring"], "--algorithm applies to kineto profiles, not to chakra"),
    (["--steps", "0..1", "--force"], "--steps, --force apply to kineto profiles, not to chakra"),
])
def test_import_chakra_refuses_kineto_options_even_at_their_default(capsys, tmp_path, extra,
                                                                    message):
    from netsim.formats.chakra import save_chakra

    save_chakra(_messages_only(), str(tmp_path / "et"))
    one_line_error(capsys, ["import", "chakra", str(tmp_path / "et"), "-o",
                            str(tmp_path / "t.npz"), *extra], message)


def test_export_refuses_an_output_folder_that_is_its_trace(capsys, tmp_path):
    from netsim import save_trace

    t = str(tmp_path / "t.json")
    save_trace(_messages_only(), t)
    before = open(t).read()
    one_line_error(capsys, ["export", "chakra", t, "-o", t], f"-o {t} is the input")
    assert open(t).read() == before


def test_import_prices_a_projected_groups_members_before_projecting(capsys, tmp_path,
                                                                  monkeypatch):
    # A 2-rank profile of one allreduce projected to 10^8 ranks is one op, which passed the
    # op count, but its group holds 10^8 members: 10^8 x 164 B = 16.4 GB (it held 6.5 GB
    # after 43 s when stopped), over 8.59 GB here; nothing projected.
    import json

    import netsim.trace.reproject as rp

    from tests.test_cli_new_features_refuse_bad_input import _kernel_doc

    prof = tmp_path / "prof"
    prof.mkdir()
    for r in (0, 1):
        (prof / f"rank{r}.json").write_text(json.dumps(_kernel_doc({"rank": r,
                                                                     "world_size": 2})))
    monkeypatch.setattr(rp, "reproject", lambda *a, **k: pytest.fail("projected"))
    monkeypatch.setattr("studies.scaling.run_length.available_memory", lambda: 2**33)
    one_line_error(capsys, ["import", "kineto", str(prof), "--ranks", "100000000", "-o",
                            str(tmp_path / "t.npz")],
                   "the job at 100000000 ranks would hold 1e+08 members in its collectives' "
                   "groups, 16.4 GB at 164 B each, over the 8.59 GB")
