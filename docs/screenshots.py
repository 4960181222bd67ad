"""Screenshots of the documentation in a real browser, to look at before a change of layout lands.

Run on demand (never in the test suite), from the repository root::

    python docs/screenshots.py                    # build the pages, shoot into /tmp/docs-shots
    python docs/screenshots.py --html BUILT_DIR   # shoot pages already built
    python docs/screenshots.py --out DIR

It builds the site as ``tests/test_docs_build.py`` does (a copy of ``docs/``, warnings as
errors), then runs headless Chromium (Debian's ``chromium`` package: ``apt-get install
chromium``) once per page and width, at 1280 pixels (a laptop) and 390 (a phone), each in a
fresh profile with no network features, and writes one PNG per shot. The pages are the index,
the tutorial (its display formula), a how-to guide, a background page with formulas and a
wide table, a page of wide validation tables, the engine's design page, an API group page and a module page, and, at
390 pixels, the index with the navigation drawer open (a copy of the page with the drawer's
toggle checked: a screenshot cannot click). A shot of a section is taken of a copy of its page
that starts there (:func:`from_section`). Open the PNGs and check that formulas render as
math, wide tables scroll inside their box and the navigation works on a phone.
"""

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent

#: (name, page under the built site, #fragment or "", window height) of each shot.
SHOTS = [
    ("index", "index.html", "", 1400),
    ("tutorial", "tutorial.html", "", 1600),
    ("tutorial-formula", "tutorial.html", "a-collective-and-its-closed-form", 1200),
    ("howto-profile", "howto/replay-a-profile.html", "", 1600),
    ("background-math-table", "studies.html", "sync-schemes-every-paradigm-s-closed-form", 1600),
    ("background-model", "model.html", "engine", 1400),
    ("validation-wide-table", "validation.html", "gloo-against-published-gloo-benchmark-runs",
     1400),
    ("background-engine-design", "engine-design.html", "", 1400),
    ("api-group", "api/engine.html", "", 1200),
    ("api-module", "api/generated/netsim.engine.replay.html", "", 1400),
]
WIDTHS = (1280, 390)
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--hide-scrollbars",
                  "--force-device-scale-factor=1", "--virtual-time-budget=5000",
                  "--run-all-compositor-stages-before-draw"]


def build(out):
    """Build the pages into ``out`` from a copy of ``docs/`` (as tests/test_docs_build.py)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = pathlib.Path(tmp) / "docs"
        shutil.copytree(HERE, src, ignore=shutil.ignore_patterns("_build", "generated"))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")]
                                                           if p])
        subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                        str(src), str(out)], check=True, env=env)


def drawer_open(html):
    """A copy of the index with the navigation drawer's toggle checked, beside the page."""
    page = html / "index.html"
    text = page.read_text()
    toggle = 'id="__navigation"'
    if toggle not in text:
        raise SystemExit(f"{page} has no navigation toggle ({toggle}): did the theme change?")
    copy = html / "index-nav-open.html"
    copy.write_text(text.replace(toggle, toggle + " checked", 1))
    return copy


def from_section(page, section):
    """A copy of ``page`` that starts at its section ``section`` (beside it, for its links).

    Headless Chromium's screenshot ignores a URL's #fragment (the window is captured before
    the scroll lands), so the copy hides everything of the page's body before that section
    instead: the header and the navigation stay, the section comes first.
    """
    text = page.read_text()
    if f'id="{section}"' not in text:
        raise SystemExit(f"{page} has no section {section!r}: did its heading change?")
    style = (f"<style>section:has(> section#{section}) > *:has(~ section#{section})"
             " { display: none; }</style>")
    copy = page.with_name(f"{page.stem}--{section}.html")
    copy.write_text(text.replace("</head>", style + "</head>", 1))
    return copy


def shoot(chromium, url, path, width, height):
    with tempfile.TemporaryDirectory() as profile:
        run = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                              f"--window-size={width},{height}", f"--screenshot={path}", url],
                             capture_output=True, text=True, timeout=120)
    if run.returncode != 0 or not path.exists():
        raise SystemExit(f"chromium failed on {url}: {run.stderr[-2000:]}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=pathlib.Path, help="a built site (default: build one)")
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("/tmp/docs-shots"))
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = parser.parse_args(argv)
    html = args.html
    if html is None:
        html = pathlib.Path(tempfile.mkdtemp(prefix="netsim-docs-")) / "html"
        build(html)
    html = html.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    shots = [(name, html / page, frag, width, height)
             for name, page, frag, height in SHOTS for width in WIDTHS]
    shots.append(("index-nav-open", drawer_open(html), "", 390, 1000))
    for name, page, frag, width, height in shots:
        url = (from_section(page, frag) if frag else page).as_uri()
        path = args.out / f"{name}-{width}.png"
        shoot(args.chromium, url, path, width, height)
        print(path)


if __name__ == "__main__":
    main()
