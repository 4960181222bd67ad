"""`netsim record` from the command line: traces out, one-line errors in."""

import json
import os

import numpy as np
import pytest

from netsim import load_trace
from studies.cli.parser import main


def test_record_writes_a_trace_that_replays(tmp_path, capsys):
    out = tmp_path / "ps.npz"
    assert main(["record", "ps-sync", "--workers", "4", "--epochs", "2", "--seed", "3",
                 "--set", "servers=2", "-o", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    trace = load_trace(out)
    assert summary["bytes"] == trace.total_bytes and summary["messages"] == trace.num_messages
    assert trace.metadata["paradigm"] == "ps-sync" and trace.ranks == 6
    # star without n is sized to the trace's 6 ranks (issue 18): the same result as star:n=6.
    assert main(["replay", str(out), "--topology", "star", "--json"]) == 0
    sized = json.loads(capsys.readouterr().out)
    assert main(["replay", str(out), "--topology", "star:n=6", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == sized


def test_record_list_names_every_paradigm(capsys):
    assert main(["record", "--list"]) == 0
    out = capsys.readouterr().out
    for name in ("single", "ps-sync", "ps-async", "allreduce", "model-averaging", "admm",
                 "ringtmp", "pf", "slimdp", "dgc", "ps-partitioned"):
        assert f"{name}:" in out


def write_idx(path, array):
    codes = {np.dtype(np.uint8): 0x08}
    with open(path, "wb") as f:
        f.write(bytes([0, 0, codes[array.dtype], array.ndim]))
        for d in array.shape:
            f.write(int(d).to_bytes(4, "big"))
        f.write(array.tobytes())


@pytest.mark.parametrize("argv, needle", [
    (["record", "gossip"], "unknown paradigm 'gossip'"),
    (["record", "ps-sync", "--dataset", "cifar"], "unknown dataset 'cifar'"),
    (["record", "ps-sync", "--workers", "0"], "workers must be >= 1"),
    (["record", "ringtmp", "--workers", "4", "--set", "hidden=16"], "leaves"),
    (["record", "ringtmp", "--workers", "8", "--set", "partition=neuron"], "neuron"),
    (["record", "pf", "--set", "tau0=-0.1"], "tau0"),
    (["record", "ps-sync", "--set", "colour=red"], "ps-sync options are"),
    (["record", "ps-sync", "--dataset", "mnist", "--set", "data_path=/nonexistent"], "not found"),
])
def test_bad_record_input_one_line_exit_2(capsys, argv, needle):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("netsim: error:") and needle in err[0], err


def test_corrupt_idx_file_one_line_exit_2(tmp_path, capsys):
    d = tmp_path / "mnist"
    d.mkdir()
    for part, n in (("train", 20), ("t10k", 10)):
        write_idx(d / f"{part}-images-idx3-ubyte", np.zeros((n, 28, 28), np.uint8))
        write_idx(d / f"{part}-labels-idx1-ubyte", np.arange(n, dtype=np.uint8) % 10)
    with open(d / "train-images-idx3-ubyte", "r+b") as f:  # truncate the pixel data
        f.truncate(100)
    assert main(["record", "single", "--dataset", "mnist", "--epochs", "1",
                 "--set", f"data_path={d}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "train-images-idx3-ubyte" in err[0], err
    os.remove(d / "t10k-labels-idx1-ubyte")
    assert main(["record", "single", "--dataset", "mnist", "--set", f"data_path={d}"]) == 2
