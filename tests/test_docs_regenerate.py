"""The one command that regenerates the documentation's generated tables and figures
(python -m studies.regenerate): it knows every marked block of docs/, and what it writes is
what the page holds."""

import shutil

import pytest

from studies import regenerate as R


def _page_blocks():
    # every page, in any folder of docs/ (a job names its page by its path under docs/)
    return {(page.relative_to(R.DOCS).as_posix(), name) for page in R.DOCS.rglob("*.md")
            if not {"_build", "generated"} & set(page.parts)
            for name in R.blocks_of(page.read_text())}


def test_every_marked_block_of_the_docs_has_one_job():
    filled = [(job.page, block) for job in R.JOBS.values() for block in job.blocks]
    assert len(filled) == len(set(filled))                      # no block filled twice
    # stragglers: computed by tests/test_async.py alone (said in JOBS's docstring).
    assert _page_blocks() - set(filled) == {("traces.md", "stragglers")}
    assert set(filled) <= _page_blocks()                        # no job writes a lost block


def test_every_figure_a_job_draws_is_shown_by_its_page():
    for job in R.JOBS.values():
        for fig in job.figures:
            assert (R.DOCS / fig).exists() and f"]({fig})" in (R.DOCS / job.page).read_text()


@pytest.mark.parametrize("job", ["asymptotic", "nccl", "gloo"])
def test_a_cheap_job_finds_its_page_up_to_date(job):
    lines = []
    assert R.run([job], check=True, out=lines.append) == []
    assert lines == [f"{job}: {R.JOBS[job].page} unchanged"]


def test_a_stale_block_is_rewritten_and_nothing_else(tmp_path):
    page = R.JOBS["asymptotic"].page
    shutil.copy(R.DOCS / page, tmp_path / page)
    original = (tmp_path / page).read_text()
    stale = R.replace_block(original, "asymptotic-table", "| stale |")
    assert stale != original
    (tmp_path / page).write_text(stale)
    assert R.run(["asymptotic"], check=True, docs=tmp_path, out=lambda s: None) == [
        "asymptotic-table"]
    assert (tmp_path / page).read_text() == stale                 # --check writes nothing
    assert R.run(["asymptotic"], docs=tmp_path, out=lambda s: None) == ["asymptotic-table"]
    assert (tmp_path / page).read_text() == original


def test_replace_block_needs_the_block():
    with pytest.raises(KeyError, match="no block 'x'"):
        R.replace_block("text", "x", "new")


def test_an_unknown_job_is_one_line_and_exit_2(capsys):
    assert R.main(["claim"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown job(s) claim" in err[0] and "claims" in err[0]
