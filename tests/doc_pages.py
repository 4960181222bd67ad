"""The documentation pages the tests read: marked blocks and Markdown tables.

A block is the text between ``<!-- name:start -->`` and ``<!-- name:end -->`` in a page of
``docs/`` (the README is the front page and holds none); the tests regenerate what a block
shows and compare.
"""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def block(page, name):
    """The text of block ``name`` in ``docs/<page>`` (without its markers)."""
    text = (DOCS / page).read_text()
    m = re.search(rf"<!-- {name}:start -->\n(.*?)\n<!-- {name}:end -->", text, re.S)
    assert m, f"docs/{page} has no {name} block"
    return m.group(1)


def cells(table):
    """A Markdown table's header line and its rows (separator dropped) as stripped cells."""
    lines = table.splitlines()
    return lines[0], [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:]]
