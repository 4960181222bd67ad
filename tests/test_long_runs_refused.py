"""Counts chosen by an option are priced before any work: unit cost x count (studies.scaling.run_length).

The work each would start is replaced by a stub: a refusal must come first, in one line with
the figure and --force; with --force the work starts.
"""

import pytest

from conftest import one_line_error
from studies.scaling.run_length import EPOCH_SECONDS, SAMPLES, SEED_SECONDS, WEIGHT_SECONDS, check_training
from studies.scaling.trace_size import TIME_LIMIT


class _WorkStarted(BaseException):
    pass


def _stub(*a, **k):
    raise _WorkStarted


@pytest.fixture
def no_work(monkeypatch):
    import studies.claims.reproduce as claims
    import studies.cli.commands.record as record
    import studies.cli.commands.scale as scale
    import studies.cli.commands.overlap as overlap
    import studies.cli.commands.sweep as sweep

    monkeypatch.setattr(record, "record", _stub)
    monkeypatch.setattr(scale, "study", _stub)
    monkeypatch.setattr(sweep, "run_sweep", _stub)
    monkeypatch.setattr(sweep, "check_sweep_point", _stub)
    monkeypatch.setattr(claims, "run_claim_seeds", _stub)
    monkeypatch.setattr(overlap, "overlap_study", _stub)


@pytest.mark.parametrize("argv, needle", [
    (["record", "ps-sync", "--epochs", "100000000"], "epochs 100000000 would take at least"),
    (["record", "ps-sync", "--set", "epochs=100000000"], "epochs 100000000 would take at least"),
    (["record", "ringtmp", "--set", "hidden=100000,100000"], "over the"),
    (["record", "ps-sync", "--set", "hidden=100000000", "--epochs", "100"], "8e+08 parameters"),
    # The memory of the run's models: 4 workers hold 4 x 4 + 2 = 18 copies of 8e+08 float64
    # parameters (4e8 + 1e8 + 3e8 weights, 1e8 + 3 biases): 115 GB. It was checked at 2 copies
    # (12.8 GB), passed on a 24 GB machine and was killed by the kernel after 70 s.
    (["record", "ps-sync", "--set", "hidden=100000000"], "115 GB in 18 copies"),
    (["scale", "ps-sync", "-P", "2,4", "--iterations", "100000000"], "--iterations 100000000"),
    (["claims", "--seeds", "0..1000"], "--seeds 0..1000 would take at least"),
    (["claims", "--seeds", "0..100000000"], "over the 100000 accepted"),
    (["overlap", "--workers", "2..1048576"], "overlap at P = "),
])
def test_a_long_run_is_refused_before_it_starts(argv, needle, no_work, capsys, tmp_path,
                                                monkeypatch):
    monkeypatch.chdir(tmp_path)
    one_line_error(capsys, argv, needle)


@pytest.mark.parametrize("argv", [
    ["record", "ps-sync", "--epochs", "100000000", "--force"],
    ["claims", "--seeds", "0..1000", "--force"],
    ["scale", "ps-sync", "-P", "2,4", "--iterations", "100000000", "--force"],
])
def test_force_goes_on(argv, no_work, tmp_path, monkeypatch):
    from studies.cli.parser import main

    monkeypatch.chdir(tmp_path)
    with pytest.raises(_WorkStarted):
        main(argv)


def test_a_sweep_of_long_epochs_is_refused_before_its_first_point(no_work, capsys, tmp_path):
    config = tmp_path / "e.yaml"
    config.write_text("topologies: [star]\nparadigms: [ps-sync]\nP: [2, 4]\nepochs: 100000000\n")
    one_line_error(capsys, ["sweep", str(config), "-o", str(tmp_path / "e.csv")],
                   "epochs 100000000 over 2 runs")


def test_the_estimate_is_count_times_unit():
    # the boundary: exactly TIME_LIMIT passes, one more epoch does not
    epochs = int(TIME_LIMIT / EPOCH_SECONDS)
    check_training({"epochs": epochs})
    with pytest.raises(Exception, match=f"epochs {epochs + 1} would take"):
        check_training({"epochs": epochs + 1})
    # a wide model: 4 x 1000 + 1000 x 3 = 7000 weights x 150 samples x 0.8 ns
    assert 7000 * SAMPLES * WEIGHT_SECONDS < EPOCH_SECONDS   # the epoch floor decides
    assert SEED_SECONDS * 5 < TIME_LIMIT                      # the default five seeds pass


def test_lp_segments_of_a_paradigm_are_counted_as_messages(no_work, capsys, tmp_path,
                                                           monkeypatch):
    # allreduce over LP with k = 1e8 segments: at least 2 (4 - 1) 1e8 messages an epoch,
    # over allreduce's default run of 30 epochs (workloads.PARADIGMS) 1.8e10; one epoch 6e8
    monkeypatch.chdir(tmp_path)
    one_line_error(capsys, ["record", "allreduce", "--set", "collective=lp",
                            "--set", "segments=100000000"], "1.8e+10 messages", "--force")
    one_line_error(capsys, ["record", "allreduce", "--set", "collective=lp", "--epochs", "1",
                            "--set", "segments=100000000"], "6e+08 messages", "--force")


def test_an_allocation_that_fails_is_one_line(monkeypatch, capsys):
    import studies.cli.commands.record as record

    def huge(*a, **k):
        raise MemoryError("Unable to allocate 47.7 GiB for an array")
    monkeypatch.setattr(record, "record", huge)
    one_line_error(capsys, ["record", "single", "--epochs", "1"], "out of memory: Unable")


def test_schemes_prices_its_worst_case_epochs(no_work, capsys, tmp_path, monkeypatch):
    # A combination trains 1, 2, ... E epochs afresh until the target: E (E + 1) / 2 epochs
    # each, 6 combinations offered; --target 1 --max-epochs 100000000 ran until killed.
    from workloads.paradigms.schemes import combinations

    import studies.claims.schemes as schemes

    monkeypatch.setattr(schemes, "study", _stub)
    monkeypatch.chdir(tmp_path)
    offered = sum(1 for _, _, why in combinations() if not why)
    E = 10**8
    err = one_line_error(capsys, ["schemes", "--target", "1", "--max-epochs", str(E)],
                         f"{offered} combinations x 1 + 2 + ... + {E} epochs", "--force")
    assert f"{offered * E * (E + 1) // 2:.3g} epochs at 1.8 ms each" in err
    largest = int((2 * TIME_LIMIT / EPOCH_SECONDS / offered) ** 0.5) - 1  # E (E+1)/2 under it
    for argv in (["schemes", "--max-epochs", str(largest)],
                 ["schemes", "--max-epochs", str(E), "--force"]):
        with pytest.raises(_WorkStarted):
            from studies.cli.parser import main

            main(argv)


def test_a_sweep_grid_is_priced_over_all_its_collective_points(no_work, capsys, tmp_path):
    # 2,998 ring allreduces at P = 2..2999 on a star passed each point's check and ran until
    # killed: together they are sum 2 P (P - 1) messages (Patarasuk & Yuan's ring).
    config = tmp_path / "g.yaml"
    config.write_text("topologies: [star]\ncollectives: [ring]\nbytes: [1MB]\nP: "
                      + str(list(range(2, 3000))) + "\n")
    total = sum(2 * P * (P - 1) for P in range(2, 3000))
    err = one_line_error(capsys, ["sweep", str(config), "-o", str(tmp_path / "g.csv")],
                         "the sweep's 2998 collective points on star would take")
    assert f"{total:.2g} messages" in err, err
    config.write_text("topologies: [star]\ncollectives: [ring]\nbytes: [1MB]\nP: [2, 4, 8]\n")
    from studies.cli.parser import main

    with pytest.raises(_WorkStarted):  # a small grid goes on
        main(["sweep", str(config), "-o", str(tmp_path / "g.csv")])


@pytest.mark.parametrize("argv, iterations", [
    # model averaging's window is one whole period H; Downpour's lcm(n_fetch, n_push)
    (["scale", "model-averaging", "-P", "2,4", "--set", "period=10000000"], 10**7),
    (["scale", "ps-async", "-P", "2,4", "--set", "n_fetch=99991", "--set", "n_push=99989"],
     99991 * 99989),  # two primes: lcm = product
])
def test_a_window_that_options_make_long_is_priced_as_iterations(argv, iterations, no_work,
                                                                  capsys, tmp_path, monkeypatch):
    import studies.scaling.paradigm as ps

    monkeypatch.setattr(ps, "base_recording", _stub)
    monkeypatch.chdir(tmp_path)
    err = one_line_error(capsys, argv, f"the window of {iterations} iterations in whole periods",
                         "--force")
    assert f"would take at least {iterations * EPOCH_SECONDS:.3g} s of CPU" in err

