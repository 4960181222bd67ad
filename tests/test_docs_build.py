"""The documentation builds with Sphinx, every warning an error, as the README says.

The pages are copied to a temporary directory first, so the build (and the API stubs that
autosummary writes next to the pages) never touches the checkout; the packages are imported
from this checkout through PYTHONPATH.
"""

import html
import os
import re
import shutil
import subprocess
import sys

import pytest

from doc_pages import DOCS, ROOT
from test_docs_tutorial import PAGE as TUTORIAL, commands, steps

pytest.importorskip("sphinx")
pytest.importorskip("myst_parser")
pytest.importorskip("numpydoc")
pytest.importorskip("furo")
pytest.importorskip("latex2mathml")

HOWTO = ("record-and-replay", "replay-a-profile", "scale", "transformer-layout", "nccl",
         "validate-a-claim", "sweep", "draw-a-topology", "timeline", "chakra")


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
    # Every page of the four kinds (tutorial, how-to guides, reference, background) and the
    # development page, each group page of the API reference and a page per module (the
    # engine's among them), the CLI's own help text, the images the pages show, and math
    # rendered as MathML (no MathJax: the pages read offline).
    for page in ("index", "tutorial", "getting-started", "development", "cli", "api/index",
                 "model", "gpu", "traces", "transformer", "studies", "claims", "validation",
                 "benchmarks", "engine-design"):
        assert (out / f"{page}.html").exists(), page
    for page in HOWTO:
        assert (out / "howto" / f"{page}.html").exists(), page
    for group in (src / "api").glob("*.md"):
        assert (out / "api" / f"{group.stem}.html").exists(), group.stem
    # The built tutorial shows exactly the commands that tests/test_docs_tutorial.py runs from
    # its source: every netsim line of its code boxes, in order.
    boxes = re.findall(r"<pre>(.*?)</pre>", (out / "tutorial.html").read_text(), re.S)
    shown = [" ".join(line.split()) for box in boxes
             for line in html.unescape(re.sub(r"<[^>]+>", "", box)).replace("\\\n", " ")
             .splitlines() if line.strip().startswith("netsim ")]
    run = [" ".join(argv) for kind, body in steps(TUTORIAL.read_text()) if kind == "sh"
           for argv in commands(body) if argv[0] == "netsim"]
    assert shown and [" ".join(c.split("#")[0].split()) for c in shown] == run, (shown, run)
    engine = (out / "api" / "generated" / "netsim.engine.replay.html").read_text()
    assert "small_event" in engine and "SimPy orders the events" in engine
    assert "usage: netsim replay" in (out / "cli.html").read_text()
    for image in ("schemes.png", "tutorial_time_vs_p.png", "transformer_scaling.png"):
        assert (out / "_images" / image).exists(), image
    model = (out / "model.html").read_text()
    scripts = re.findall(r"<script[^>]*src=\"([^\"]*)\"", model)
    assert "<math" in model and scripts and not [s for s in scripts if "mathjax" in s.lower()]
    # the navigation's four sections, in order, and the index links every page of each
    index = (out / "index.html").read_text()
    captions = [index.index(f'<span class="caption-text">{c}</span>')
                for c in ("Tutorial", "How-to guides", "Reference", "Background")]
    assert captions == sorted(captions)
    for page in ("tutorial", "cli", "model", "validation") + tuple(f"howto/{h}" for h in HOWTO):
        assert f'href="{page}.html"' in index, page
