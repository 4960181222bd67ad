"""Regenerate every generated table and figure of the documentation: one command.

::

    python -m studies.regenerate              # every job: rewrite the blocks, redraw the figures
    python -m studies.regenerate ringtmp nccl # only these jobs
    python -m studies.regenerate --check      # write nothing; exit 1 if a block would change
    python -m studies.regenerate --list       # the jobs, their blocks and figures

A generated table sits in a page of ``docs/`` between ``<!-- name:start -->`` and
``<!-- name:end -->``; the tests recompute it and compare (``tests/doc_pages.py``).
Each :data:`JOBS` entry runs one study once and returns the text of the blocks it
fills (and draws its figures into ``docs/``): the same functions the pages name
and the tests call, so a regenerated page is what its test checks. Tables that
come from training runs (claims, RingTMP, schemes) are checked by their tests
within a tolerance, since a float32 run may round differently under another BLAS;
``--check`` compares them exactly, so it may report such a table on another
machine where its test passes. The whole run takes several minutes (the claims
over five seeds and the RingTMP comparison are the long ones).

Examples
--------
>>> sorted(JOBS)[:3]
['asymptotic', 'claims', 'gloo']
>>> replace_block("a\\n<!-- t:start -->\\nold\\n<!-- t:end -->\\nb", "t", "new")
'a\\n<!-- t:start -->\\nnew\\n<!-- t:end -->\\nb'
"""

import argparse
import pathlib
import re
import sys
from types import MappingProxyType
from typing import Callable, NamedTuple

__all__ = ["DOCS", "Job", "JOBS", "blocks_of", "replace_block", "run", "main"]

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"
"""The documentation's source directory."""


class Job(NamedTuple):
    """One study that fills blocks of one page (and draws figures into ``docs/``)."""

    page: str                 # the page under docs/
    blocks: tuple             # the marker names it fills, in its output order
    figures: tuple            # files under docs/ it draws (with draw=True)
    make: Callable            # make(docs, draw) -> {block name: text}
    what: str                 # one line for --list


def replace_block(text, name, new):
    """``text`` with the body of block ``name`` replaced by ``new``.

    Raises
    ------
    KeyError
        If ``text`` has no such block.
    """
    m = _pattern(name).search(text)
    if not m:
        raise KeyError(f"no block {name!r}")
    return text[:m.start(2)] + new + text[m.end(2):]


def _pattern(name):
    """A block's start marker, its body (group 2) and its end marker."""
    return re.compile(rf"(<!-- {re.escape(name)}:start -->\n)(.*?)(\n<!-- {re.escape(name)}:end -->)",
                      re.S)


def _body(text, name):
    m = _pattern(name).search(text)
    return m.group(2) if m else None


def blocks_of(text):
    """The marker names of the blocks of a page, in order.

    Examples
    --------
    >>> blocks_of("<!-- a:start -->\\nx\\n<!-- a:end -->\\n<!-- b:start -->\\n<!-- b:end -->")
    ['a', 'b']
    """
    return re.findall(r"^<!-- ([\w-]+):start -->$", text, re.M)


def _asymptotic(docs, draw):
    from studies.scaling.closed_forms import asymptotic_table

    return {"asymptotic-table": asymptotic_table()}


def _gpu_scaling(docs, draw):
    from studies.scaling import library as ls

    c = dict(ls.CASE)
    studies = ls.compare(c.pop("source"), c.pop("workers"), c.pop("topology"), **c)
    if draw:
        ls.plot(studies, docs / "gpu_scaling.png", title="BSP-SGD, ResNet-50 on H100, 1-8 DGX "
                "H100: NCCL (auto) vs MPICH ring")
    return {"gpu-scaling-table": ls.format_table(studies)}


def _overlap(docs, draw):
    from studies.scaling.overlap import format_speedups, overlap_study

    return {"overlap-table": format_speedups(overlap_study())}


def _ringtmp(docs, draw):
    from studies.claims import ringtmp_vs_ps

    return {"ringtmp-table": ringtmp_vs_ps.format_table(ringtmp_vs_ps.compare())}


def _tcp_startup(docs, draw):
    from studies.claims.tcp_startup import format_startup, startup_rows

    return {"tcp-startup-table": format_startup(startup_rows(sizes=[1e6, 100e6],
                                                             workers=[4, 64]))}


def _megatron(docs, draw):
    from studies.validation.megatron import markdown, predictions, sensitivity
    if draw:
        from studies.cli.parser import main as cli
        cli(["scale", "transformer", "--config", "gpt3-13b", "--tp", "8", "--pp", "4",
             "--topology", "gpu_cluster:machine=dgx_h100", "-P", "64..1024",
             "--png", str(docs / "transformer_scaling.png")])
    return {"megatron-table": markdown(predictions()), "megatron-sensitivity": sensitivity(),
            "megatron-table-flops": markdown(predictions(rule="flops")),
            "megatron-sensitivity-flops": sensitivity("flops"),
            "megatron-table-gemm": markdown(predictions(rule="gemm"))}


def _transformer_layouts(docs, draw):
    from studies.validation import transformer_layouts as v
    from studies.validation import transformer_layouts_noise as noise
    from studies.validation.transformer_layouts_report import markdown, summary_text

    if draw:   # the replays take minutes: stored beside the data, which --check compares
        v.save(v.predictions())
        noise.save({name: noise.setting_sensitivity(name) for name in noise.ALTERNATIVES})
    rows, preds = v.load(), v.cached()
    return {"layouts-table": markdown(rows, preds), "layouts-summary": summary_text(rows, preds),
            "layouts-noise": noise.markdown(noise.within_reading(rows, preds), noise.cached())}


def _schemes(docs, draw):
    from studies.claims import schemes

    rows = schemes.study()
    if draw:
        schemes.plot(rows, docs / "schemes.png")
    return {"schemes-table": schemes.format_table(rows, schemes.TARGET)}


def _claims(docs, draw):
    from studies.claims.regions import format_region
    from studies.claims.verdicts import format_claims_over_seeds, over_seeds
    from studies.claims.reproduce import run_claim_seeds

    seeds = [0, 1, 2, 3, 4]
    rows = over_seeds(run_claim_seeds(seeds, quick=True))
    regions = []
    for r in rows:
        reg = r.get("region")
        if isinstance(reg, dict) and reg not in regions:
            regions.append(reg)
    return {"claims-table": format_claims_over_seeds(rows, seeds, markdown=True),
            "claims-regions": "```\n" + "\n\n".join(map(format_region, regions)) + "\n```"}


def _nccl(docs, draw):
    from studies.validation import nccl as v

    reports = v.validated()  # each row predicted once for the tables, the summary and the figure
    out = {name: v.table(v.load(file), reports[file]) for name, file in v.BLOCKS}
    out["nccl-summary"] = v.summary(reports)
    out["nccl-machines"] = v.by_machine(reports)
    if draw:
        v.plot(docs / v.FIGURE, reports=reports)
    return out


def _gloo(docs, draw):
    from studies.validation import gloo as g

    return {"gloo-table": g.table(g.load())}


def _nccl_blocks():
    from studies.validation.nccl import BLOCKS

    return tuple(name for name, _ in BLOCKS) + ("nccl-summary", "nccl-machines")


JOBS = MappingProxyType({
    "asymptotic": Job("studies.md", ("asymptotic-table",), (), _asymptotic,
                      "each paradigm's ASYMPTOTIC cost (studies.scaling.closed_forms), seconds"),
    "gpu-scaling": Job("studies.md", ("gpu-scaling-table",), ("gpu_scaling.png",), _gpu_scaling,
                       "NCCL vs MPICH ring on 1-8 DGX H100 (studies.scaling.library)"),
    "overlap": Job("studies.md", ("overlap-table",), (), _overlap,
                   "overlap modes' speed-ups (studies.scaling.overlap), about 20 s"),
    "ringtmp": Job("studies.md", ("ringtmp-table",), (), _ringtmp,
                   "RingTMP vs ps-sync vs single over 5 seeds (studies.claims.ringtmp_vs_ps), minutes"),
    "tcp-startup": Job("studies.md", ("tcp-startup-table",), (), _tcp_startup,
                       "ring and PS over TCP vs fluid (studies.claims.tcp_startup), about 10 s"),
    "schemes": Job("studies.md", ("schemes-table",), ("schemes.png",), _schemes,
                   "schemes x architectures to 0.92 accuracy (studies.claims.schemes), about 10 s"),
    "megatron": Job("transformer.md", ("megatron-table", "megatron-sensitivity",
                                       "megatron-table-flops", "megatron-sensitivity-flops",
                                       "megatron-table-gemm"),
                    ("transformer_scaling.png",), _megatron,
                    "Narayanan et al. SC'21 Table 1 against the transformer closed form "
                    "(studies.validation.megatron), seconds"),
    "transformer-layouts": Job("transformer.md", ("layouts-table", "layouts-summary",
                                                  "layouts-noise"), (),
                               _transformer_layouts,
                               "published runs where the layout matters against the simulation "
                               "(studies.validation.transformer_layouts), minutes; --check reads "
                               "the stored predictions"),
    "claims": Job("claims.md", ("claims-table", "claims-regions"), (), _claims,
                  "netsim claims --seeds 0..4 --quick --markdown, about a minute or more"),
    "nccl": Job("validation.md", _nccl_blocks(), ("nccl_validation.png",), _nccl,
                "NCCL model against published nccl-tests rows (studies.validation.nccl)"),
    "gloo": Job("validation.md", ("gloo-table",), (), _gloo,
                "gloo model against published gloo benchmark rows (studies.validation.gloo)"),
})
"""Job name -> :class:`Job`, in the order :func:`run` runs them (read-only).

The one marked block of ``docs/`` no job fills is ``stragglers`` (``docs/traces.md``):
its rows are computed only by ``tests/test_async.py``, which prints nothing to paste.
"""


def run(names=None, check=False, docs=DOCS, out=print):
    """Run the jobs ``names`` (all if None); rewrite their blocks, or with ``check`` compare.

    Parameters
    ----------
    names : sequence of str, optional
        Keys of :data:`JOBS`.
    check : bool
        Write nothing (no page, no figure); report each block that differs.
    docs : pathlib.Path
        The documentation's source directory.
    out : callable
        Where the one-line reports go.

    Returns
    -------
    list of str
        The blocks that differed from the page (rewritten unless ``check``).

    Raises
    ------
    KeyError
        For an unknown job name (listing the known ones).

    Examples
    --------
    >>> run(["asymptotic"], check=True, out=lambda line: None)
    []
    """
    names = list(JOBS) if names is None else list(names)
    unknown = [n for n in names if n not in JOBS]
    if unknown:
        raise KeyError(f"unknown job(s) {', '.join(unknown)}; known: {', '.join(JOBS)}")
    docs = pathlib.Path(docs)
    changed = []
    for name in names:
        job = JOBS[name]
        path = docs / job.page
        text = path.read_text()
        fresh = job.make(docs, not check)
        new = text
        for block in job.blocks:
            if _body(text, block) != fresh[block]:
                changed.append(block)
            new = replace_block(new, block, fresh[block])
        if new != text and not check:
            path.write_text(new)
        out(f"{name}: {job.page} " + ("unchanged" if new == text else
                                      "differs" if check else "rewritten")
            + (f"; drew {', '.join(job.figures)}" if job.figures and not check else ""))
    return changed


def main(argv=None):
    """The command line: ``python -m studies.regenerate [--check] [--list] [JOB ...]``.

    Examples
    --------
    >>> main(["--list"])  # doctest: +ELLIPSIS
    asymptotic: docs/studies.md [asymptotic-table] ...
    0
    """
    p = argparse.ArgumentParser(prog="python -m studies.regenerate",
                                description="Regenerate the generated tables and figures of docs/.")
    p.add_argument("jobs", nargs="*", help=f"jobs to run (default all): {', '.join(JOBS)}")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 if a block would change")
    p.add_argument("--list", action="store_true", help="list the jobs and exit")
    args = p.parse_args(argv)
    if args.list:
        for name, job in JOBS.items():
            figs = f" + {', '.join(job.figures)}" if job.figures else ""
            print(f"{name}: docs/{job.page} [{', '.join(job.blocks)}]{figs}  {job.what}")
        return 0
    try:
        changed = run(args.jobs or None, check=args.check)
    except KeyError as exc:
        print(f"regenerate: error: {exc.args[0]}", file=sys.stderr)
        return 2
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
