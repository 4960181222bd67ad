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
