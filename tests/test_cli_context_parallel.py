"""`netsim scale transformer --cp N`: context parallelism at each P, its rings' exposed time a
column of its own, and the bad degrees refused in one line before any work."""

import json

import pytest
from conftest import one_line_error

from studies.cli.parser import main
from studies.scaling.fit import need
from workloads.transformer.flops import get_config
from workloads.transformer.layout import Layout

BASE = ["scale", "transformer", "--topology", "gpu_cluster:machine=dgx_h100", "--config",
        "gpt3-13b:layers=4,seq=8192", "--global-batch", "16", "--tp", "8"]


def _records(capsys, argv):
    assert main(argv + ["--json"]) == 0
    return json.loads(capsys.readouterr().out)["records"]


def test_cp_splits_each_sequence_and_adds_its_rings_term(capsys):
    with_cp = _records(capsys, BASE + ["--cp", "2", "-P", "32,64"])
    without = _records(capsys, BASE + ["-P", "16,32"])
    c = get_config("gpt3-13b", layers=4, seq=8192, global_batch=16)
    for r, o in zip(with_cp, without):
        assert r["P"] == r["tp"] * r["cp"] * r["pp"] * r["dp"] == 2 * o["P"]
        assert (r["dp"], r["microbatches"]) == (o["dp"], o["microbatches"])
        assert r["time"] == pytest.approx(r["compute"] + r["bubble"] + r["tp_comm"]
                                          + r["pp_comm"] + r["dp_comm"] + r["cp_comm"],
                                          rel=1e-12)
        # half the tokens per GPU: half the compute, half the activations, the same states
        assert r["compute"] == pytest.approx(o["compute"] / 2, rel=1e-12)
        n = need(c, Layout(8, 1, r["dp"]), cp=2)
        assert r["memory"] == n["total"]
        assert n["activations"] == need(c, Layout(8, 1, r["dp"]))["activations"] / 2


def test_cp_in_the_table_and_the_help(capsys):
    assert main(BASE + ["--cp", "2", "-P", "32"]) == 0
    out = capsys.readouterr().out
    assert " cp " in out.splitlines()[0] and "context parallelism over 2 GPUs" in out
    with pytest.raises(SystemExit):
        main(["scale", "--help"])
    assert "--cp CP" in capsys.readouterr().out


@pytest.mark.parametrize("extra, words", [
    (["--cp", "3", "-P", "48"], "sequence 8192 does not split over cp 3"),
    (["--cp", "2", "-P", "24"], "24 ranks do not divide into tp 8 x pp 1 x cp 2"),
    (["--cp", "0", "-P", "16"], "--cp must be an integer >= 1"),
    (["--cp", "2", "-P", "32", "--fsdp"], "with ZeRO-3 or FSDP is not modelled"),
])
def test_bad_context_parallelism_is_one_line(capsys, extra, words):
    one_line_error(capsys, BASE + extra, words)


def test_cp_with_the_sweep_is_refused(capsys):
    one_line_error(capsys, BASE[:8] + ["--cp", "2", "-P", "32", "--sweep"],
                   "--cp applies without --sweep")
