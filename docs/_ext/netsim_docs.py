"""netsim's Sphinx extension: the CLI reference's directive, numpydoc's citations kept, and the
API pages kept out of the navigation tree.

``.. netsim-help:: replay`` (in Markdown, a ```` ```{netsim-help} replay ```` block) becomes
the literal help of ``netsim replay`` as the parser in :mod:`studies.cli.parser` prints it at 100
columns, so the reference cannot drift from the options.

Citations: numpydoc makes every docstring's citations unique by renaming them with a hash
of the docstring's object (``[2]`` -> ``[R3f...-2]``), so ten functions of a module can each
have their own ``[1]``; it names them back for display after reading. But a function that
cites its *module's* list ("Thakur et al. [2]_", as netsim's cost models do) then points at
nothing. conf.py turns numpydoc's renaming off (``numpydoc_citation_re``) and
:func:`rename_citations` does it here, module-aware: a label the docstring defines gets its
object's hash, a label it only cites gets its module's, when the module defines it.

Navigation: the API reference lists its modules in autosummary tables (``docs/api/*.md``, one
page per group), whose ``:toctree:`` makes autosummary write a page per module. Those tables'
hidden toctrees are removed once a page is read (:func:`drop_api_toctrees`), and the module
pages are orphans (``_templates/autosummary/module.rst``): the theme draws the whole site's
navigation on every page, and with some 180 module pages in it that drawing cost more than the
rest of the build (the sidebar stops at the group pages, which link to every module). So that a
reader still knows where a module page sits, :func:`add_breadcrumb` puts "API reference >
<group>" at its top, the group read from the autosummary tables of ``docs/api/*.md``.
"""

import hashlib
import re
import sys

import os

from docutils import nodes
from docutils.parsers.rst import Directive


class HelpDirective(Directive):
    required_arguments = 1

    def run(self):
        os.environ["COLUMNS"] = "100"  # argparse wraps at the terminal width
        from studies.cli.parser import build_parser

        text = _subparser(build_parser(), self.arguments[0]).format_help()
        block = nodes.literal_block(text, text)
        block["language"] = "text"
        return [block]


def _subparser(parser, word):
    for action in parser._actions:
        choices = getattr(action, "choices", None)
        if isinstance(choices, dict) and word in choices:
            return choices[word]
    raise ValueError(f"netsim has no command {word!r}")


_DEFINED = re.compile(r"^\s*\.\. +\[([\w-]+)\]", re.M)


def _prefix(name):
    """numpydoc's prefix for the citations of object ``name`` (``R`` + a hash)."""
    from numpydoc.numpydoc import HASH_LEN

    return "R" + hashlib.sha256(name.encode("utf8")).hexdigest()[:HASH_LEN]


def _module_of(name):
    """The longest prefix of dotted ``name`` that is an imported module."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        if ".".join(parts[:i]) in sys.modules:
            return ".".join(parts[:i])
    return name


def rename_citations(app, what, name, obj, options, lines):
    """Rename the citations of one docstring, in place (see the module docstring)."""
    own = set(_DEFINED.findall("\n".join(lines)))
    module = _module_of(name)
    doc = (sys.modules[module].__doc__ or "") if module in sys.modules else ""
    modules = set(_DEFINED.findall(doc)) - own if what != "module" else set()
    renames = {label: _prefix(name) for label in own}
    renames.update({label: _prefix(module) for label in modules})
    for i, line in enumerate(lines):
        for label, prefix in renames.items():
            line = line.replace(f"[{label}]_", f"[{prefix}-{label}]_")
            if label in own:
                line = line.replace(f".. [{label}]", f".. [{prefix}-{label}]")
        lines[i] = line


def drop_api_toctrees(app, doctree):
    """Remove the hidden toctrees of autosummary tables (see the module docstring)."""
    from sphinx.ext.autosummary import autosummary_toc

    for node in list(doctree.findall(autosummary_toc)):
        node.parent.remove(node)


_AUTOSUMMARY = re.compile(r"^\.\. autosummary::\n((?:[ \t]+.*\n|\n)*)", re.M)


def _groups(srcdir):
    """Module -> (group page, group title), from the API group pages' autosummary tables."""
    out = {}
    for page in sorted((srcdir / "api").glob("*.md")):
        text = page.read_text()
        title = next((line[2:].strip() for line in text.splitlines() if line.startswith("# ")),
                     page.stem)
        for m in _AUTOSUMMARY.finditer(text):
            for line in m.group(1).splitlines():
                word = line.strip()
                if word and not word.startswith(":"):
                    out[word] = (page.stem, title)
    return out


def add_breadcrumb(app, doctree):
    """Put "API reference > <group>" at the top of a module's API page."""
    docname = app.env.docname
    if not docname.startswith("api/generated/"):
        return
    if not hasattr(app.env, "netsim_api_groups"):
        import pathlib

        app.env.netsim_api_groups = _groups(pathlib.Path(app.srcdir))
    group = app.env.netsim_api_groups.get(docname.rsplit("/", 1)[1])
    section = next(iter(doctree.findall(nodes.section)), None)
    if group is None or section is None:
        return
    crumb = nodes.paragraph("", "", classes=["netsim-breadcrumb"])
    crumb += nodes.reference("", "API reference", refuri="../index.html", internal=True)
    crumb += nodes.Text(" › ")
    crumb += nodes.reference("", group[1], refuri=f"../{group[0]}.html", internal=True)
    section.insert(0, crumb)


def setup(app):
    app.setup_extension("numpydoc")
    app.setup_extension("sphinx.ext.autosummary")
    # before the toctree collector (priority 500) notes the toctrees of the page
    app.connect("doctree-read", drop_api_toctrees, priority=400)
    app.connect("doctree-read", add_breadcrumb)
    app.connect("autodoc-process-docstring", rename_citations)
    app.add_directive("netsim-help", HelpDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
