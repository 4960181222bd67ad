"""Math rendered at build time as MathML, so the pages need no script and no network.

MyST's ``dollarmath`` and ``amsmath`` turn ``$...$``, ``$$...$$`` and ``\\begin{align}``
blocks into docutils math nodes; Sphinx would hand them to MathJax, loaded from a CDN at
reading time, which an offline reader (or a screenshot taken without network) never gets.
This extension registers an HTML math renderer, ``mathml``, that converts each node's LaTeX
with `latex2mathml <https://pypi.org/project/latex2mathml/>`_ while the page is written:
browsers render MathML Core themselves (Chromium from version 109, Firefox and Safari long
before). A formula latex2mathml cannot read fails the build, naming the formula, rather than
showing raw LaTeX.
"""

from docutils import nodes
from sphinx.errors import ExtensionError

_cache = {}


def _mathml(latex, display):
    key = (latex, display)
    if key not in _cache:
        from latex2mathml.converter import convert

        try:
            _cache[key] = convert(latex, display=display)
        except Exception as e:  # latex2mathml raises its own types for unknown commands
            raise ExtensionError(f"latex2mathml cannot convert {latex!r}: {e}") from e
    return _cache[key]


def visit_math(self, node):
    self.body.append(f'<span class="math notranslate">{_mathml(node.astext(), "inline")}</span>')
    raise nodes.SkipNode


def visit_math_block(self, node):
    latex = node.astext()
    number = node.get("number")
    label = f'<span class="eqno">({number})</span>' if number else ""
    ident = f' id="{node["ids"][0]}"' if node.get("ids") else ""
    self.body.append(f'<div class="math notranslate"{ident}>{label}'
                     f'{_mathml(latex, "block")}</div>\n')
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer("mathml", (visit_math, None), (visit_math_block, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
