"""An option that the others make change nothing is refused, in one line, before any work.

Also the option pairs of `netsim scale transformer` that once ended in a traceback (an expert
degree that does not divide the data parallelism) and the library that cannot run where the
ranks sit (gloo on GPUs, whichever command asks for it).
"""

import pytest
from conftest import one_line_error

from netsim import TraceBuilder, TraceError, simulate
from topologies import dgx_h100

# 16 GPUs on two DGX H100 at the default tp 8: dp = 2 (16 / 8); 4 layers keep it quick.
BASE = ["scale", "transformer", "-P", "16", "--topology", "gpu_cluster:machine=dgx_h100",
        "--config", "gpt3-13b:layers=4", "--global-batch", "16", "-q"]


@pytest.mark.parametrize("extra, words", [
    # --sweep ranks every (tp, pp, dp) layout and every ep of the largest P itself
    (["--sweep", "--tp", "8"], "--tp applies without --sweep (the sweep tries every tp"),
    (["--sweep", "--pp", "1"], "--pp applies without --sweep (the sweep tries every pp"),
    (["--sweep", "--experts", "8", "--sequence-parallel", "--ep", "2"],
     "--ep applies without --sweep (the sweep tries every ep"),
    # --compute gemm times each block from its GEMMs: an efficiency would be dropped
    (["--compute", "gemm", "--efficiency", "0.5"],
     "--efficiency applies with --compute flops"),
    # with tp 1 there is no tensor-parallel collective to split or overlap
    (["--tp", "1", "--sequence-parallel"],
     "--sequence-parallel splits the tensor-parallel collectives; with --tp 1 there are none"),
    (["--tp", "1", "--sequence-parallel", "--tp-overlap"], "with --tp 1 there are none"),
])
def test_transformer_option_that_would_change_nothing_is_refused(capsys, extra, words):
    one_line_error(capsys, BASE + extra, words)


@pytest.mark.parametrize("ep", ["3", "4"])
def test_expert_degree_not_dividing_the_data_parallelism_is_one_line(capsys, ep):
    # dp = 16 / 8 = 2: neither 3 nor 4 divides it (the expert groups were indexed past the
    # ranks before: an IndexError)
    one_line_error(capsys, BASE + ["--experts", "8", "--sequence-parallel", "--ep", ep],
                   f"ep {ep} does not divide dp 2")


def test_the_options_still_run_where_they_act(capsys):
    from studies.cli.parser import main

    assert main(BASE + ["--compute", "flops", "--efficiency", "0.5"]) == 0
    assert "efficiency 0.500 of the dense FP16 peak (given)" in capsys.readouterr().out
    assert main(BASE + ["--sweep", "--sequence-parallel"]) == 0   # tp 1 among the layouts
    capsys.readouterr()


def test_gloo_on_gpu_nodes_is_refused_by_the_library():
    # the gloo model puts its copies and sums on the members' host cores; a GPU has none
    b = TraceBuilder(2)
    b.collective("allreduce", [0, 1], 1e6)
    with pytest.raises(TraceError, match="library 'gloo' runs on hosts' cores; rank 0 sits "
                                         "on a 'gpu' node"):
        simulate(b.build(), dgx_h100(), library="gloo")


@pytest.mark.parametrize("argv", [
    ["scale", "allreduce", "-P", "4", "--library", "gloo", "--topology", "dgx_h100"],
    BASE + ["--simulate", "--library", "gloo"],
])
def test_gloo_on_gpus_is_refused_in_every_command(capsys, argv):
    one_line_error(capsys, argv, "library 'gloo' runs on hosts' cores")


def test_mpich_replay_is_not_called_nccl_in_the_report(capsys):
    from studies.cli.parser import main

    assert main(BASE + ["--simulate", "--library", "mpich"]) == 0
    out = capsys.readouterr().out
    assert "NCCL calls alone" not in out and "mpich's schedules as messages" in out


@pytest.mark.parametrize("extra", [["--straggler", "0:1e300x"], ["--jitter", "uniform:1e300,1e301"]])
def test_a_factor_that_overflows_the_compute_is_one_line(capsys, extra):
    # each op's FLOPs (6.44e10 for a block of this model) times 1e300 is past the largest
    # float (1.8e308); numpy's overflow warning came as a second line before
    one_line_error(capsys, BASE + ["--simulate"] + extra, "makes compute op 0 hold more than "
                                                          "the largest float")
