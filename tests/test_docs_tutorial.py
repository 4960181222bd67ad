"""Every command of the tutorial (docs/tutorial.md) runs, and prints and writes what the page says.

The page is read block by block, in order, and replayed in one empty directory as a reader
would: ``pycon`` blocks run as doctests in one namespace (their output must match), every
``netsim ...`` line of a ``sh`` block runs as a command (``python -m studies.cli.entry``, the
console script's module, with this checkout's packages) and must exit 0, a ``text`` block right
after a ``sh`` block is that block's last command's output (each line of it, ``...`` lines
skipped, must appear in the output in order, whitespace aside), and every file an option names
(``--png``, ``-o``) or the text says was written (``wrote FILE``) must exist afterwards. The
page's figure must be the picture its command draws (same size, nearly the same pixels).

The install line (``pip install .`` in a fresh virtualenv) is not rerun here: it is the first
part of the README's set-up command, which CI runs as it is; this test checks that it is that
line.
"""

import doctest
import os
import re
import shlex
import subprocess
import sys

import pytest

from doc_pages import DOCS, ROOT

PAGE = DOCS / "tutorial.md"
FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", re.M | re.S)
FIGURE = re.compile(r"!\[[^\]]*\]\(([^)]+\.png)\)", re.S)
INSTALL = "python3 -m venv .venv && . .venv/bin/activate && pip install ."


def steps(text):
    """The page's code blocks and figures as (kind, body) in page order."""
    found = [(m.start(), m.group(1), m.group(2)) for m in FENCE.finditer(text)]
    found += [(m.start(), "figure", m.group(1)) for m in FIGURE.finditer(text)]
    return [(kind, body) for _, kind, body in sorted(found)]


def commands(code):
    """The command lines of a shell block: continuations joined, comments dropped."""
    return [words for words in (shlex.split(line, comments=True)
                                for line in code.replace("\\\n", " ").splitlines()) if words]


def written(argv, output):
    """The files a command names as its outputs, and those its output says it wrote."""
    files = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("--png", "-o", "--csv")]
    return files + re.findall(r"wrote (\S+?\.\w+)\b", output)


def lines_in_order(expected, output):
    """Each line of ``expected`` (``...`` lines skipped) appears in ``output``, in order.
    Returns the first line that does not, or None."""
    got = [" ".join(line.split()) for line in output.splitlines()]
    at = 0
    for line in expected.splitlines():
        want = " ".join(line.split())
        if not want or want == "...":
            continue
        while at < len(got) and got[at] != want:
            at += 1
        if at == len(got):
            return line
        at += 1
    return None


def test_lines_in_order_finds_a_missing_or_reordered_line():
    out = "a  1\nb 2\nc 3\n"
    assert lines_in_order("a 1\n...\nc   3\n", out) is None
    assert lines_in_order("c 3\na 1\n", out) == "a 1"
    assert lines_in_order("b 9\n", out) == "b 9"


def test_steps_reads_blocks_and_figures_in_page_order():
    text = ("x\n```sh\nnetsim demo\n```\n\n```text\nout\n```\n![a\nb](f.png)\n"
            "```pycon\n>>> 1\n1\n```\n")
    assert steps(text) == [("sh", "netsim demo\n"), ("text", "out\n"), ("figure", "f.png"),
                           ("pycon", ">>> 1\n1\n")]


def _run(argv, cwd):
    env = dict(os.environ, COLUMNS="100")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    env.pop("MPLBACKEND", None)
    return subprocess.run([sys.executable, "-m", "studies.cli.entry"] + argv[1:], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def _same_picture(a, b):
    from matplotlib.image import imread

    x, y = imread(a), imread(b)
    return x.shape == y.shape and float(abs(x - y).mean()) < 0.01


@pytest.mark.long  # about 10 s: five netsim processes, two of them scaling studies
def test_every_tutorial_command_runs_as_the_page_says(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the reader's empty directory: pycon files land here too
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    globs, report, ran, last = {}, [], [], None
    for i, (kind, body) in enumerate(steps(PAGE.read_text())):
        if kind == "pycon":
            test = parser.get_doctest(body, globs, f"tutorial block {i + 1}", str(PAGE), 0)
            runner.run(test, out=report.append, clear_globs=False)
            globs.update(test.globs)  # DocTest copies its globals: later blocks see these names
            assert runner.failures == 0, "".join(report)
            ran.append("pycon")
        elif kind == "sh" and "pip install" in body:
            assert body.strip() == INSTALL
            assert INSTALL in (ROOT / "README.md").read_text()
        elif kind == "sh":
            for argv in commands(body):
                assert argv[0] == "netsim", f"the tutorial runs netsim commands only: {argv}"
                run = _run(argv, tmp_path)
                assert run.returncode == 0, (argv, run.stdout[-2000:], run.stderr[-2000:])
                for f in written(argv, run.stdout + run.stderr):
                    assert (tmp_path / f).is_file(), (argv, f)
                last = (argv, run.stdout + run.stderr)
                ran.append(argv[1])
        elif kind == "text":
            assert last is not None, "an output block with no command before it"
            missing = lines_in_order(body, last[1])
            assert missing is None, (last[0], missing, last[1])
        elif kind == "figure":
            drawn = [f for f in written(*last) if f.endswith(".png")]
            assert drawn, f"the figure {body} follows no command that draws one"
            assert _same_picture(tmp_path / drawn[0], DOCS / body), (body, drawn[0])
    assert ran.count("pycon") >= 3 and {"demo", "replay", "collective", "scale"} <= set(ran)
