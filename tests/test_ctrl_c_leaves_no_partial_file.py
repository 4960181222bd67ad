"""A Ctrl-C while a command writes its output (a large graph's PNG drawn for seconds, the
demo's plot, an imported trace saved) is one line, exit 130, and leaves no file cut short
under the name asked for: each output is written to a temporary file beside it and renamed
onto it only once whole (netsim.formats.whole). A file that was there before stays as it was.
The SIGINT is sent from inside the writer, after it has written part of the file, so the
moment is the same on every run."""

import os
import signal
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# the writer patched writes half a file, then the process gets a real SIGINT
_HALF_THEN_SIGINT = """
import os, signal, sys, time
import {module} as target
def half(*args, **kwargs):
    f = {file}
    f.write(b"half a file" if "b" in getattr(f, "mode", "b") else "half a file")
    f.flush()
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(5)
target.{name} = half
from studies.cli.entry import main
sys.exit(main({argv!r}))
"""


def _run(tmp_path, module, name, file, argv):
    code = _HALF_THEN_SIGINT.format(module=module, name=name, file=file, argv=argv)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=180, cwd=tmp_path, env={**os.environ, "PYTHONPATH": ROOT},
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


@pytest.mark.parametrize("before", [None, b"an older picture"])
def test_topology_png_interrupted_while_drawn(tmp_path, before):
    png = tmp_path / "t.png"
    if before is not None:
        png.write_bytes(before)
    p = _run(tmp_path, "netsim.drawing.plot", "draw_topology", "kwargs['path']",
             ["topology", "star:n=4", "--png", str(png), "--quiet"])
    assert p.returncode == 130, p.stderr[-2000:]
    assert p.stderr == "netsim: interrupted\n"
    assert sorted(os.listdir(tmp_path)) == ([] if before is None else ["t.png"])
    if before is not None:
        assert png.read_bytes() == before


def test_demo_interrupted_while_its_plot_is_written(tmp_path):
    p = _run(tmp_path, "netsim.analysis.collectives", "plot_scale", "args[1]",
             ["demo", "--png", str(tmp_path / "d.png"), "--quiet"])
    assert p.returncode == 130, p.stderr[-2000:]
    assert p.stderr.endswith("netsim: interrupted\n") and p.stderr.count("\n") <= 2
    assert os.listdir(tmp_path) == []


def test_import_interrupted_while_the_trace_is_saved(tmp_path):
    from netsim import TraceBuilder
    from netsim.formats.chakra import save_chakra

    b = TraceBuilder(2)
    b.message(0, 1, 1e6)
    save_chakra(b.build(), str(tmp_path / "et"))
    out = tmp_path / "t.npz"
    p = _run(tmp_path, "netsim.formats.tracefile", "_write_npz", "args[0]",
             ["import", "chakra", str(tmp_path / "et"), "-o", str(out), "--quiet"])
    assert p.returncode == 130, p.stderr[-2000:]
    assert p.stderr == "netsim: interrupted\n"
    assert sorted(os.listdir(tmp_path)) == ["et"]
