"""Execute every notebook of notebooks/ and check the PNGs it promises exist and are non-empty.

Each figure must also show inline, under its cell (an ``image/png`` output), on the kernel's
own backend: no notebook selects one.

Each notebook lists the PNG files it writes (into its working directory) in its metadata,
``metadata["netsim"]["pngs"]``. The notebooks run on a kernel that is this very interpreter:
a kernelspec pointing at ``sys.executable`` is written to a temporary JUPYTER_PATH, so a
fresh virtualenv with ipykernel installed needs no registered kernel.
"""

import json
import os
import pathlib
import sys

import pytest

nbformat = pytest.importorskip("nbformat", reason="notebook tests need nbformat")
nbclient = pytest.importorskip("nbclient", reason="notebook tests need nbclient")
pytest.importorskip("ipykernel", reason="notebook tests need ipykernel")

NOTEBOOKS = sorted((pathlib.Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))
KERNEL = "netsim-tests"
TIME_LIMIT = 60  # seconds per notebook on two cores; each is written to take < 30 s


@pytest.fixture(scope="module")
def kernel_path(tmp_path_factory):
    root = tmp_path_factory.mktemp("jupyter")
    spec = root / "kernels" / KERNEL
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "netsim tests", "language": "python"}))
    return str(root)


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 4


@pytest.mark.long
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_and_writes_its_pngs(path, tmp_path, kernel_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_PATH", kernel_path + os.pathsep + os.environ.get("JUPYTER_PATH", ""))
    # The kernel picks its own backend (inline, as in Jupyter): figures must show under cells.
    monkeypatch.delenv("MPLBACKEND", raising=False)
    nb = nbformat.read(path, as_version=4)
    assert not any("matplotlib.use(" in c.source for c in nb.cells), \
        f"{path.name} selects a backend: its figures would not show in Jupyter"
    assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), \
        f"{path.name} has outputs committed"
    pngs = nb.metadata["netsim"]["pngs"]
    assert pngs, f"{path.name} declares no PNG"
    nbclient.NotebookClient(nb, kernel_name=KERNEL, timeout=TIME_LIMIT,
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    inline = sum("image/png" in out.get("data", {}) for c in nb.cells if c.cell_type == "code"
                 for out in c.outputs)
    assert inline >= len(pngs), f"{path.name} shows {inline} figures inline for {len(pngs)} PNGs"
    for name in pngs:
        png = tmp_path / name
        assert png.exists() and png.stat().st_size > 0, f"{path.name} did not write {name}"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
