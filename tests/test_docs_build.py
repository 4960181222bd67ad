"""The documentation builds with Sphinx, every warning an error, as the README says.

The pages are copied to a temporary directory first, so the build (and the API stubs that
autosummary writes next to the pages) never touches the checkout; the packages are imported
from this checkout through PYTHONPATH.
"""

import os
import shutil
import subprocess
import sys

import pytest

from doc_pages import DOCS, ROOT

pytest.importorskip("sphinx")
pytest.importorskip("myst_parser")
pytest.importorskip("numpydoc")


@pytest.mark.long
def test_docs_build_with_warnings_as_errors(tmp_path):
    src, out = tmp_path / "docs", tmp_path / "html"
    shutil.copytree(DOCS, src, ignore=shutil.ignore_patterns("_build", "generated"))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    run = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b",
                          "html", str(src), str(out)],
                         capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stderr.strip() == "", run.stderr  # -q: nothing but warnings would print
    # Every page, an API page per module (the engine's among them), the CLI's own help text
    # and the image the studies page shows.
    for page in ("index", "getting-started", "model", "gpu", "traces", "studies", "claims",
                 "validation", "cli", "benchmarks", "api/index"):
        assert (out / f"{page}.html").exists(), page
    engine = (out / "api" / "generated" / "netsim.engine.replay.html").read_text()
    assert "small_event" in engine and "SimPy orders the events" in engine
    assert "usage: netsim replay" in (out / "cli.html").read_text()
    assert (out / "_images" / "schemes.png").exists()
