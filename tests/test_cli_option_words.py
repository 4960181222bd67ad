"""A bool paradigm option that also names modes: ps-sync's ``overlap`` from the command line."""

import json

from studies.cli.parser import main
from workloads import PARADIGMS
from workloads.overlap import OVERLAP


def test_ps_sync_declares_its_overlap_modes():
    assert PARADIGMS["ps-sync"].words == {"overlap": OVERLAP}
    assert not PARADIGMS["allreduce"].words  # its overlap default is already a mode (text)


def test_scale_ps_sync_takes_an_overlap_mode(capsys):
    argv = ["scale", "ps-sync", "-P", "2,4", "--iterations", "1", "--json", "--set"]
    assert main(argv + ["overlap=layerwise"]) == 0
    layer = json.loads(capsys.readouterr().out)
    assert main(argv + ["overlap=false"]) == 0
    none = json.loads(capsys.readouterr().out)
    # Layer-wise pieces leave during the backward pass, a shard after it: never slower.
    for a, b in zip(layer["records"], none["records"]):
        assert a["time"] <= b["time"] * (1 + 1e-9)
    assert any(a["time"] < b["time"] for a, b in zip(layer["records"], none["records"]))


def test_unknown_word_is_one_line_listing_the_modes(capsys):
    assert main(["scale", "ps-sync", "-P", "2,4", "--set", "overlap=sideways"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("netsim: error: option overlap takes true, false, none, layerwise, bucketed, "
                   "priority; got 'sideways'")
