"""Jobs in worker processes (studies.parallel.run_jobs): the same results in any number of
processes, every job's progress, and a failing job raised as it is."""

import statistics

import pytest

from netsim.errors import NetsimError
from studies.parallel import run_jobs


def test_results_do_not_depend_on_the_processes():
    work = [(("mean", i), statistics.fmean, {"data": range(i + 1)}) for i in range(7)]
    seen = []
    out = run_jobs(work, 3, progress=lambda done, total: seen.append((done, total)))
    assert out == run_jobs(work, 1) == {("mean", i): i / 2 for i in range(7)}
    assert seen == [(k, 7) for k in range(1, 8)]  # one call per finished job, in any order


def test_a_failing_job_is_raised_as_it_is():
    work = [("ok", pow, {"base": 2, "exp": 3}), ("bad", statistics.fmean, {"data": []}),
            ("ok2", pow, {"base": 3, "exp": 2})]
    with pytest.raises(statistics.StatisticsError, match="at least one data point"):
        run_jobs(work, 2)
    with pytest.raises(NetsimError, match="processes must be an integer >= 1"):
        run_jobs(work, 0)
    assert run_jobs([], 2) == {}
