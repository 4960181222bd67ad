"""The API reference lists every module of the four packages, each in exactly one group.

The groups are the pages of ``docs/api/`` (their autosummary tables are the one list of the
modules in each), so a module added to a package without a place in the reference fails here,
naming the module; one listed twice, or one that no longer exists, fails as well. Private
modules (a part starting with ``_``) and generated protobuf code (``*_pb2``) are not listed.
The modules are found from the files, without importing them.
"""

import re

from doc_pages import DOCS, ROOT

PACKAGES = ("netsim", "topologies", "workloads", "studies")
ENTRY = re.compile(r"^\.\. autosummary::\n((?:[ \t]+.*\n|\n)*)", re.M)


def modules():
    """Every public module of the packages, by dotted name."""
    out = set()
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if any(p.startswith("_") for p in parts) or parts[-1].endswith("_pb2"):
                continue
            out.add(".".join(parts))
    return out


def listed(text):
    """The modules an API page's autosummary tables list (options and blank lines skipped)."""
    names = []
    for m in ENTRY.finditer(text):
        for line in m.group(1).splitlines():
            word = line.strip()
            if word and not word.startswith(":"):
                names.append(word)
    return names


def groups():
    return {page.stem: listed(page.read_text()) for page in sorted((DOCS / "api").glob("*.md"))}


def test_listed_reads_an_autosummary_table():
    text = "# G\n\n```{eval-rst}\n.. autosummary::\n   :toctree: generated\n\n   a.b\n   c\n```\n"
    assert listed(text) == ["a.b", "c"]


def test_every_module_is_in_exactly_one_group():
    everywhere = [name for names in groups().values() for name in names]
    twice = sorted({n for n in everywhere if everywhere.count(n) > 1})
    assert not twice, f"listed in more than one group of docs/api/: {twice}"
    missing = sorted(modules() - set(everywhere))
    assert not missing, f"in no group of docs/api/ (add each to one page there): {missing}"
    gone = sorted(set(everywhere) - modules())
    assert not gone, f"listed in docs/api/ but not a module of the packages: {gone}"


def test_the_index_lists_every_group_and_the_internals_last():
    index = (DOCS / "api" / "index.md").read_text()
    toctree = re.findall(r"^([\w-]+)$", index, re.M)
    assert sorted(toctree) == sorted(g for g in groups() if g != "index")
    assert toctree[-1] == "internals"
