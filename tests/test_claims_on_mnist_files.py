"""`netsim claims --data-path DIR`: the accuracy claims on MNIST's IDX files, and its refusal of a
directory without them. A fake tiny MNIST (a few hundred 28 x 28 images) keeps it to seconds."""

import os

import numpy as np
import pytest

from studies.claims import on_mnist
from studies.claims import reproduce as claims
from studies.claims.verdicts import VERDICTS, over_seeds
from studies.cli.parser import main
from workloads.datasets import write_idx



def _fake_mnist(directory, n_train=240, n_test=80, seed=0):
    """Four IDX files as MNIST's (magic 0x00000803 images, 0x00000801 labels): class c is a
    bright c-th band of rows, so a small model learns it in an epoch."""
    rng = np.random.default_rng(seed)
    for part, n in (("train", n_train), ("t10k", n_test)):
        y = np.arange(n, dtype=np.uint8) % 10
        X = rng.integers(0, 40, size=(n, 28, 28), dtype=np.uint8)
        for i, c in enumerate(y):
            X[i, 2 * c + 4:2 * c + 7] = 250
        write_idx(os.path.join(directory, f"{part}-images-idx3-ubyte"), X)
        write_idx(os.path.join(directory, f"{part}-labels-idx1-ubyte"), y)
    with open(os.path.join(directory, "train-images-idx3-ubyte"), "rb") as f:
        assert f.read(4) == b"\x00\x00\x08\x03"


TINY = {"dgc": {"hidden": (16,), "epochs": 2, "workers": 2},
        "ringtmp": {"workers": 2, "configs": (
            {"dataset": "mnist", "partition": "layer", "hidden": (8,), "epochs": 1},)},
        "slimdp": {"hidden": (16,), "epochs": 1, "workers": 2}}


def test_the_accuracy_claims_run_on_mnist_files(tmp_path):
    _fake_mnist(tmp_path)
    runs = on_mnist.run_on_mnist([0, 1], str(tmp_path), jobs=1, options=TINY)
    rows = over_seeds(runs)
    assert [r["claim"].split(":")[0].split("'")[0].split(" is ")[0] for r in rows] == [
        "DGC", "RingTMP", "Slim-DP"]
    for r in rows:
        assert r["setup"].startswith("mnist") or "MLP configuration" in r["setup"]
        assert r["verdict"] in VERDICTS and len(r["differences"]) == 2
        assert r["region"].startswith("not mapped: run on MNIST")


def test_netsim_claims_data_path_runs_them_on_mnist(tmp_path, monkeypatch, capsys):
    _fake_mnist(tmp_path)
    monkeypatch.setattr(on_mnist, "MNIST", TINY)
    seen = []

    def fake(seeds, quick=False, jobs=2, only=None, progress=None, log=None):
        seen.append(list(seeds))
        return {s: [{"claim": "bundled", "source": "s", "setup": "x", "measured": "m",
                     "threshold": ">= 0", "value": 0.1, "passed": True, "seconds": 0.1,
                     "verdict": "PASS", "region": "", "seed": s}] for s in seeds}
    monkeypatch.setattr(claims, "run_claim_seeds", fake)
    assert main(["claims", "--seeds", "0,1", "-j", "1", "--markdown",
                 "--data-path", str(tmp_path)]) == 0
    out = capsys.readouterr()
    assert seen == [[0, 1]]
    assert f"The accuracy claims on MNIST ({tmp_path}):" in out.out
    table = out.out.split("The accuracy claims on MNIST")[1]
    assert table.count("| mnist MLP") == 2 and "RingTMP is slightly less accurate" in table


@pytest.mark.parametrize("make", ["missing", "empty"])
def test_netsim_claims_refuses_a_data_path_without_mnist(tmp_path, capsys, make):
    path = tmp_path / "nothing" if make == "missing" else tmp_path
    assert main(["claims", "--seeds", "0", "--data-path", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("netsim: error: --data-path: ")
    assert str(path) in err[0]
