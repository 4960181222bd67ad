"""A Ctrl-C at any moment of any command is one line, `netsim: interrupted`, and exit 130."""

import json
import os
import signal
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Sends SIGINT to itself while `import numpy` runs inside the import of the command line, the
# first ~0.4 s of every command, which printed a KeyboardInterrupt traceback.
_DURING_IMPORT = """
import builtins, os, signal, sys
real = builtins.__import__
def spy(name, *args, **kwargs):
    if name == "numpy":
        builtins.__import__ = real
        os.kill(os.getpid(), signal.SIGINT)
    return real(name, *args, **kwargs)
builtins.__import__ = spy
from studies.cli.entry import main
sys.exit(main(["collective", "ring", "-P", "4", "-n", "1MB"]))
"""


def _run(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": ROOT},
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def test_ctrl_c_while_the_command_line_is_imported():
    p = _run(_DURING_IMPORT)
    assert p.returncode == 130, p.stderr
    assert p.stderr == "netsim: interrupted\n"
    assert p.stdout == ""


def test_ctrl_c_while_python_m_studies_cli_imports():
    # `python -m studies.cli.parser` runs the module as __main__: its own imports (numpy among them)
    # ran before main() and a Ctrl-C there printed a traceback.
    code = _DURING_IMPORT.replace(
        "from studies.cli.entry import main\nsys.exit(main([\"collective\", \"ring\", \"-P\", "
        "\"4\", \"-n\", \"1MB\"]))",
        "import runpy\nsys.argv = [\"studies.cli.parser\", \"collective\", \"ring\", \"-P\", \"4\", "
        "\"-n\", \"1MB\"]\nrunpy.run_module(\"studies.cli.parser\", run_name=\"__main__\", "
        "alter_sys=True)")
    assert "runpy" in code
    p = _run(code)
    assert p.returncode == 130, p.stderr
    assert p.stderr == "netsim: interrupted\n"
    assert p.stdout == ""


def test_python_m_studies_cli_runs_a_command():
    p = subprocess.run([sys.executable, "-m", "studies.cli.parser", "collective", "ring", "-P", "2",
                        "-n", "1MB", "--json"], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": ROOT})
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["algorithm"] == "ring"
    p = subprocess.run([sys.executable, "-m", "studies.cli.parser", "collective", "ring", "-P", "2",
                        "-n", "-1MB"], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": ROOT})
    assert p.returncode == 2 and p.stderr.startswith("netsim: error: ")
    assert len(p.stderr.splitlines()) == 1


def test_ctrl_c_while_the_parser_is_built(monkeypatch, capsys):
    from studies.cli import parser as cli

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["collective", "ring", "-P", "2", "-n", "1MB"]) == 130
    assert capsys.readouterr().err == "netsim: interrupted\n"


def test_ctrl_c_while_workers_start_is_noted_then_raised():
    # SIGINT to the process group while the Dask cluster starts: it was set to "ignore" then,
    # so the whole grid ran and exited 0. Noted now, raised once the cluster is up.
    from studies.parallel import ctrl_c_deferred

    with pytest.raises(KeyboardInterrupt):
        with ctrl_c_deferred():
            os.kill(os.getpid(), signal.SIGINT)  # not raised here: noted
            noted_inside = True
    assert noted_inside
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_sweep_interrupted_during_cluster_start_prints_one_line(tmp_path):
    pytest.importorskip("distributed")
    pytest.importorskip("yaml")
    cfg = tmp_path / "s.yaml"
    cfg.write_text("topologies: [star]\ncollectives: [ring]\nbytes: [1MB, 2MB, 3MB]\n"
                   "P: [64, 100, 120, 127, 128]\n")
    # Deterministic: SIGINT to the whole group just as the LocalCluster is being built.
    code = f"""
import os, signal, sys
import distributed
real = distributed.LocalCluster
def start(*args, **kwargs):
    os.killpg(os.getpgid(0), signal.SIGINT)
    return real(*args, **kwargs)
distributed.LocalCluster = start
from studies.cli.entry import main
sys.exit(main(["sweep", {str(cfg)!r}, "-j", "2", "-o", {str(tmp_path / "out.csv")!r}]))
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=180, env={**os.environ, "PYTHONPATH": ROOT}, cwd=tmp_path,
                       start_new_session=True,
                       preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert p.returncode == 130, p.stderr[-2000:]
    assert p.stderr == "netsim: interrupted\n", p.stderr[-2000:]
    assert not (tmp_path / "out.png").exists()  # stopped before the grid ran


# A Ctrl-C while the interpreter tears its modules down, after the command returned: Python
# has put SIGINT back to its default action by then (_PySignal_Fini), so it killed the
# process with no word (status -2 to subprocess) whenever the teardown was slow, as after
# `netsim scale transformer --sweep`. An object whose teardown sends SIGINT stands for that
# moment, deterministically.
_DURING_TEARDOWN = """
import os, signal, sys
class Late:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
late = Late()   # a global of __main__: deleted with the modules, after SIGINT's reset
sys.argv = ["netsim", "collective", "ring", "-P", "2", "-n", "-1MB"]
from studies.cli.entry import main
sys.exit(main())
"""


def test_ctrl_c_while_the_interpreter_tears_down_keeps_the_status():
    p = _run(_DURING_TEARDOWN)
    # the command's own status and its one line: the process ended before the teardown
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("netsim: error: ") and len(p.stderr.splitlines()) == 1
