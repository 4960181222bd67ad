"""Shared pytest configuration: slow tests run only with --runslow; long tests run first."""

import pytest
from hypothesis import HealthCheck, settings

# A bounded profile for CI and a long one on demand: HYPOTHESIS_PROFILE=extended pytest ...
# No example database (database=None): a failing example saved by one run (say the extended
# profile) would otherwise be replayed first by every later plain run from .hypothesis/ in the
# checkout. Hypothesis prints a failing example's reproduction (@reproduce_failure) instead.
settings.register_profile("ci", max_examples=60, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("extended", max_examples=10_000, deadline=None, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci")


def one_line_error(capsys, argv, *needles):
    """Run the CLI: exit status 2, one stderr line "netsim: error: ..." holding every needle."""
    from studies.cli.parser import main

    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("netsim: error:"), err
    for needle in needles:
        assert needle in err, err
    return err


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="run slow tests")


def pytest_configure(config):
    import os

    profile = os.environ.get("HYPOTHESIS_PROFILE")
    if profile:
        settings.load_profile(profile)


def pytest_collection_modifyitems(config, items):
    # Tests marked `long` (tens of seconds alone) go to the front of the queue: the parallel
    # workers (pytest-xdist) then take them first and share the many short tests afterwards,
    # instead of one worker ending the run alone on a long test collected late.
    items.sort(key=lambda item: item.get_closest_marker("long") is None)  # stable sort
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
