"""Imports point down only: studies -> (workloads, topologies) -> netsim.

Every ``.py`` file of the four packages is parsed with ``ast``: module-level
imports, imports inside functions (lazy imports) and the imports of every
doctest example (``>>> import ...`` / ``>>> from ... import ...``, read with
:class:`doctest.DocTestParser` from every string literal, as doctest reads
them) count. A file of package A may not import package B when B is in
``FORBIDDEN[A]``.
"""

import ast
import doctest
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = ("netsim", "topologies", "workloads", "studies")
FORBIDDEN = {
    "netsim": {"topologies", "workloads", "studies"},
    "topologies": {"workloads", "studies"},
    "workloads": {"topologies", "studies"},
    "studies": set(),
}


def _imports(tree, module):
    """``(line, imported module)`` of every import statement of a parsed source."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the importing module's package
                base = module.split(".")[: len(module.split(".")) - node.level]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            yield node.lineno, name


def _doctest_imports(tree, module):
    """``(line, imported module)`` of the imports in the doctest examples of every string."""
    parser = doctest.DocTestParser()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and ">>>" in node.value):
            continue
        for example in parser.get_examples(node.value):
            try:
                sub = ast.parse(example.source)
            except SyntaxError:
                continue
            for _, name in _imports(sub, module):
                yield node.lineno + example.lineno, name


def violations(path, root):
    """Imports of the file ``path`` (under ``root``) that point up or across.

    Returns a list of ``"file:line: A imports B"``.
    """
    rel = path.relative_to(root)
    parts = list(rel.with_suffix("").parts)
    package_module = parts[-1] == "__init__"
    if package_module:
        parts = parts[:-1]
    # A package's __init__ resolves `from . import x` against itself, a module against its parent.
    module = ".".join(parts + (["__init__"] if package_module else []))
    owner = parts[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for line, name in list(_imports(tree, module)) + list(_doctest_imports(tree, module)):
        target = name.split(".")[0]
        if target in FORBIDDEN.get(owner, ()):
            found.append(f"{rel}:{line}: {owner} imports {name}")
    return found


def _files(root):
    return sorted(f for pkg in PACKAGES if (root / pkg).is_dir()
                  for f in (root / pkg).rglob("*.py"))


def test_every_package_exists():
    assert [p for p in PACKAGES if not (ROOT / p).is_dir()] == []


def test_no_import_points_up_or_across():
    files = _files(ROOT)
    assert len(files) > 40  # the walk found the packages
    bad = [v for f in files for v in violations(f, ROOT)]
    assert bad == []


@pytest.mark.parametrize("package, source, expected", [
    ("netsim", "import topologies\n", "netsim imports topologies"),
    ("netsim", "def f():\n    from workloads.models import MODELS\n",
     "netsim imports workloads.models"),
    ("netsim", 'def f():\n    """Doc.\n\n    >>> from studies.cli.parser import main\n    """\n',
     "netsim imports studies.cli.parser"),
    ("netsim", '"""Doc.\n\n>>> x = 1; import topologies.specs as s\n"""\n',
     "netsim imports topologies.specs"),
    ("workloads", "from topologies import star\n", "workloads imports topologies"),
    ("topologies", "import workloads\n", "topologies imports workloads"),
    ("workloads", "from studies import registry\n", "workloads imports studies"),
    ("topologies", "def f():\n    import studies.cli.parser\n", "topologies imports studies.cli.parser"),
])
def test_the_checker_catches_a_bad_import(tmp_path, package, source, expected):
    (tmp_path / package).mkdir()
    path = tmp_path / package / "bad.py"
    path.write_text(source)
    found = violations(path, tmp_path)
    assert len(found) == 1 and found[0].endswith(expected), found


@pytest.mark.parametrize("package, source", [
    ("studies", "import netsim, topologies, workloads\nfrom . import registry\n"),
    ("workloads", "from netsim.trace.core import Trace\nfrom . import models\n"),
    ("netsim", "from .trace import Trace\nfrom . import units\n"
               '"""\n>>> import networkx as nx\n"""\n'),
    ("topologies", '"""topologies imports workloads? No: this is prose, not an import."""\n'),
])
def test_the_checker_allows_imports_that_point_down(tmp_path, package, source):
    (tmp_path / package).mkdir()
    path = tmp_path / package / "good.py"
    path.write_text(source)
    assert violations(path, tmp_path) == []


def test_relative_imports_resolve_to_their_package(tmp_path):
    # `from .. import x` in netsim/sub/m.py is netsim.x: allowed; the checker must not
    # misread it as a top-level name.
    (tmp_path / "netsim" / "sub").mkdir(parents=True)
    path = tmp_path / "netsim" / "sub" / "m.py"
    path.write_text("from .. import trace\nfrom ..errors import NetsimError\n")
    assert violations(path, tmp_path) == []
