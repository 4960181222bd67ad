"""Sphinx configuration of netsim's documentation.

Build it from the repository root with ``sphinx-build -W -b html docs docs/_build/html``
(``-W``: a warning is an error; ``tests/test_docs_build.py`` runs the same build). Pages are
Markdown (MyST); the API reference is generated from the numpydoc docstrings of every
module (``_ext/netsim_docs.py``), and the CLI reference from the parser itself.
"""

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
if (HERE.parent / "netsim" / "__init__.py").exists():
    sys.path.insert(0, str(HERE.parent))  # the packages of this checkout, not an installed copy
sys.path.insert(0, str(HERE / "_ext"))

project = "netsim"
author = "netsim developers"
copyright = "netsim developers, MIT licence"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "netsim_docs",
    "netsim_mathml",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build"]
templates_path = ["_templates"]
root_doc = "index"

# Markdown: pipe tables, ```{directive}``` blocks, $...$ and $$...$$ math (dollarmath) and
# \begin{align} blocks (amsmath); headings get anchors so pages can link to sections
# (`page.md#anchor`).
myst_enable_extensions = ["colon_fence", "dollarmath", "amsmath"]
myst_heading_anchors = 3
# Math is converted to MathML while the pages are written (_ext/netsim_mathml.py): no
# MathJax, no script from a CDN, so formulas render offline.
html_math_renderer = "mathml"

# numpydoc renders Parameters / Returns / Examples; class members are documented by autodoc,
# so numpydoc's own member tables (which would need stub pages) are off.
numpydoc_show_class_members = False
numpydoc_xref_param_type = False
# numpydoc renames each docstring's citations to make them unique, which breaks a function's
# reference to its module's list ("Thakur et al. [2]_"); _ext/netsim_docs.py renames them
# instead, knowing the module (a regular expression that matches nothing turns numpydoc's off).
numpydoc_citation_re = "(?!)"
# A References section is a bibliography (numpydoc's convention): an entry need not be cited
# in the text, so an unreferenced citation there is no error. (A reference to a citation that
# does not exist still is: "citation not found".)
suppress_warnings = ["ref.citation", "ref.footnote"]
# One page per module (the template in _templates/autosummary), each object on the page of
# the module that defines it: a package's re-exports (its __all__) are not documented twice.
autosummary_generate = True
autodoc_default_options = {"members": True, "member-order": "bysource",
                           "ignore-module-all": True}
autodoc_typehints = "none"

# Furo: maintained, responsive (a drawer for the navigation on phones), light and dark, and
# plain HTML and CSS with little JavaScript, so it builds fast and reads offline.
html_theme = "furo"
html_title = "netsim"
html_static_path = ["_static"]
html_css_files = ["netsim.css"]
html_theme_options = {"navigation_with_keys": True}
