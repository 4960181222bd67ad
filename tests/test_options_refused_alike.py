"""A paradigm option out of range is refused alike by ``--set``, a sweep config and the API.

One check per option (:func:`workloads.option_ranges.check_option`): the CLI refuses
``--set KEY=VALUE`` in one line before any recording, a sweep config before its first
point (not as an error row), and the paradigm's ``run`` with the same words. Momentum
follows the heavy-ball stability condition 0 <= beta < 1 (Polyak 1964).
"""

import pytest

import workloads
from netsim.errors import NetsimError
from studies.cli.parser import main
from studies.sweep.config import check_config
from workloads.errors import WorkloadError

BAD = [  # paradigm, option, value, the message (the option's range, the value)
    ("ps-sync", "servers", "0", "servers must be an integer >= 1, got 0"),
    ("allreduce", "segments", "-3", "segments must be an integer >= 1, got -3"),
    ("ps-sync", "lr", "nan", "lr must be a finite number > 0, got nan"),
    ("ps-sync", "momentum", "2", "momentum must be a number in [0, 1), got 2"),
    ("single", "momentum", "1", "momentum must be a number in [0, 1), got 1"),
    ("single", "momentum", "-0.5", "momentum must be a number in [0, 1), got -0.5"),
    ("admm", "rho", "0", "rho must be a finite number > 0, got 0"),
    ("slimdp", "alpha", "0", "alpha must be a number in (0, 1], got 0"),
    ("ps-async", "n_push", "0", "n_push must be an integer >= 1, got 0"),
    ("model-averaging", "period", "0", "period must be an integer >= 1, got 0"),
]


def _yaml_value(text):
    if text == "nan":
        return float("nan")
    return float(text) if "." in text else int(text)


@pytest.mark.parametrize("name,key,value,message", BAD)
def test_cli_refuses_before_any_recording(name, key, value, message, capsys, monkeypatch):
    import studies.scaling.paradigm as ps

    monkeypatch.setattr(ps, "base_recording", _started)
    assert main(["scale", name, "-P", "2", "--set", f"{key}={value}", "--png", "/tmp/x.png"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("netsim: error: " + message.rsplit(", got", 1)[0])


@pytest.mark.parametrize("name,key,value,message", BAD)
def test_sweep_config_refuses_before_the_first_point(name, key, value, message):
    raw = {"topologies": ["star"], "paradigms": [name], "P": [2],
           "options": {name: {key: _yaml_value(value)}}}
    with pytest.raises(NetsimError) as e:
        check_config(raw)
    assert message.rsplit(", got", 1)[0] in str(e.value)


@pytest.mark.parametrize("name,key,value,message", BAD)
def test_the_paradigm_refuses_with_the_same_words(name, key, value, message):
    with pytest.raises(WorkloadError) as e:
        workloads.record(name, dataset="iris", workers=2, epochs=1, **{key: _yaml_value(value)})
    assert message.rsplit(", got", 1)[0] in str(e.value)


def test_momentum_just_below_one_is_accepted():
    r = workloads.record("single", dataset="iris", workers=1, epochs=1, momentum=0.99)
    assert r.iterations > 0


def _started(*args, **kwargs):
    raise AssertionError("the recording started")


@pytest.mark.parametrize("name, key, value, known", [
    ("allreduce", "collective", "foo", "known collectives: ring, mst, be, lp"),
    ("ringtmp", "partition", "blah", "known partitions: layer, neuron"),
    ("ps-partitioned", "partition", "blah", "known partitions: metis, random"),
])
def test_a_text_option_out_of_its_choices_is_refused_alike(name, key, value, known, capsys):
    message = f"unknown {key} {value!r}; {known}"
    raw = {"topologies": ["star"], "paradigms": [name], "P": [2], "options": {name: {key: value}}}
    with pytest.raises(NetsimError, match=message):
        check_config(raw)  # before the first point: not an error row
    with pytest.raises(WorkloadError, match=message):
        workloads.record(name, dataset="iris", workers=2, epochs=1, **{key: value})
    assert main(["record", name, "--set", f"{key}={value}"]) == 2
    assert capsys.readouterr().err.strip() == f"netsim: error: {message}"


# Options bounded by the run itself (workloads.option_ranges.RUN_BOUNDS). Iris has 150
# samples (Fisher 1936), 120 of them for training (the 20 % test split); with P workers a
# shard holds ceil(120 / P) samples and an epoch is ceil(shard / batch_size) steps
# (workloads.training.worker_batches). At P = 2, batch 8: 60 samples, 8 steps an epoch.
RUN_BAD = [  # paradigm, option, the largest value the run takes, the count named, epochs
    ("dgc", "warmup_epochs", 3, "epochs = 3", 3),
    ("dgc", "lr_warmup_epochs", 3, "epochs = 3", 3),
    ("ps-sync", "batch_size", 120, "samples = 120", 1),
    ("model-averaging", "period", 16, "steps = 16", 2),        # 2 epochs x 8 steps
    ("ps-async", "n_fetch", 16, "steps = 16", 2),
    ("ps-async", "n_push", 16, "steps = 16", 2),
    ("ps-async", "ssp", 15, "steps - 1 = 15", 2),               # a bound of 16 never waits
    ("admm", "local_steps", 16, "steps = 16", 2),
    ("slimdp", "q", 16, "steps = 16", 2),
]


@pytest.mark.parametrize("name,key,limit,count,epochs", RUN_BAD)
def test_an_option_past_the_run_is_refused_by_record_before_training(
        name, key, limit, count, epochs, capsys, monkeypatch):
    import studies.cli.commands.record as command

    monkeypatch.setattr(command, "record", _started)
    _refused_past_the_limit(["record", name, "--workers", "2", "--epochs", str(epochs), "-q"],
                            key, limit, count, capsys)


def _refused_past_the_limit(argv, key, limit, count, capsys):
    """``argv --set key=limit+1`` is refused in one line naming ``count``; ``limit`` goes on
    to the recording (which the test has replaced by one raising AssertionError)."""
    assert main(argv + ["--set", f"{key}={limit + 1}"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        f"netsim: error: {key} must be at most {count} of this run, got {limit + 1}: "), err
    with pytest.raises(AssertionError, match="the recording started"):  # the limit goes on
        main(argv + ["--set", f"{key}={limit}"])


@pytest.mark.parametrize("name,key,limit,count,epochs", RUN_BAD)
def test_an_option_past_the_run_is_refused_by_a_sweep_config(name, key, limit, count, epochs):
    raw = {"topologies": ["star"], "paradigms": [name], "P": [2], "epochs": epochs,
           "options": {name: {key: limit + 1}}}
    with pytest.raises(NetsimError) as e:
        check_config(raw)
    assert f"at P = 2: {key} must be at most {count} of this run" in str(e.value)
    raw["options"][name][key] = limit
    check_config(raw)


def test_a_sweep_is_checked_at_its_largest_p():
    # At P = 4 a shard is 30 samples, 4 steps an epoch: period 5 fits P = 2 (8 steps), not 4.
    raw = {"topologies": ["star"], "paradigms": ["model-averaging"], "P": [2, 4],
           "options": {"model-averaging": {"period": 5}}}
    with pytest.raises(NetsimError, match=r"at P = 4: period must be at most steps = 4 "):
        check_config(raw)


def test_a_default_past_a_short_run_is_not_refused():
    # DGC's default 4 warm-up epochs in a 1-epoch run are its documented default, not input.
    from workloads.registry import check_run_options

    check_run_options("dgc", epochs=1)
    with pytest.raises(WorkloadError, match="warmup_epochs must be at most epochs = 1"):
        check_run_options("dgc", epochs=1, warmup_epochs=4)


def test_the_step_count_is_the_recorded_iterations():
    from workloads.plan.measure import steps_per_epoch

    for workers, batch_size, epochs in ((2, 8, 2), (3, 7, 1), (4, 50, 3)):
        rec = workloads.record("model-averaging", workers=workers, epochs=epochs,
                               batch_size=batch_size)
        assert rec.iterations == epochs * steps_per_epoch(120, workers, batch_size)


# `netsim scale PARADIGM` stands for a run of its own: one epoch, or as many as hold its
# window (studies.scaling.windows). On Iris at the study's base of 4 workers a shard is 30 samples,
# 4 steps an epoch at batch 8. The default window is 3 iterations (1 epoch) unless a period
# or a warm-up asks for more: DGC's sparsity warm-up reaches 0.999 in its 5th epoch
# (density 4^-5 < 0.001, Lin et al. 2018), so its window is iterations 16-18 of a 5-epoch run.
SCALE_BAD = [  # paradigm, option, the largest value the run takes, the count named, extra flags
    ("ps-async", "ssp", 3, "steps - 1 = 3", []),
    ("admm", "local_steps", 4, "steps = 4", []),
    ("ps-sync", "batch_size", 120, "samples = 120", []),
    ("ps-partitioned", "batch_size", 120, "samples = 120", []),  # recorded at every P
    ("dgc", "warmup_epochs", 5, "epochs = 5", []),
    ("dgc", "lr_warmup_epochs", 5, "epochs = 5", []),
    ("model-averaging", "period", 4, "steps = 4", ["--iterations", "4"]),
]


@pytest.mark.parametrize("name,key,limit,count,extra", SCALE_BAD)
def test_an_option_past_the_run_is_refused_by_scale_before_recording(
        name, key, limit, count, extra, capsys, monkeypatch, tmp_path):
    import studies.scaling.paradigm as ps

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(ps, "base_recording", _started)
    _refused_past_the_limit(["scale", name, "-P", "2,4", "--dataset", "iris", "-q"] + extra,
                            key, limit, count, capsys)


def test_scale_bounds_a_period_by_the_run_its_window_needs(monkeypatch, tmp_path):
    # A period of 100 steps gets a window of one whole period, 100 iterations: a run of 25
    # epochs of 4 steps, which the period fits (a 1-epoch bound would refuse it).
    import studies.scaling.paradigm as ps
    from studies.scaling.study_run import run_epochs

    assert run_epochs("model-averaging", {"period": 100}, dataset="iris") == 25
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(ps, "base_recording", _started)
    with pytest.raises(AssertionError, match="the recording started"):
        main(["scale", "model-averaging", "-P", "2,4", "--dataset", "iris", "-q",
              "--set", "period=100"])


def test_the_study_records_the_run_it_is_bounded_by():
    # Slim-DP (not alike) records again for its window: q = 10 is a window of 10 iterations,
    # 3 epochs of 4 steps, which run_epochs foresees.
    from studies.scaling.traces import base_recording
    from studies.scaling.study_run import run_epochs

    rec = base_recording("slimdp", dataset="iris", iterations=10, q=10)
    assert rec.num_iterations == 3 * 4
    assert run_epochs("slimdp", {"q": 10}, dataset="iris") == 3


@pytest.mark.parametrize("flag, value, count", [("--period", 9, "steps = 8"),
                                                ("--staleness", 8, "steps - 1 = 7")])
def test_schemes_bounds_period_and_staleness_by_its_longest_run(capsys, monkeypatch, tmp_path,
                                                                  flag, value, count):
    # --max-epochs 2 on Iris at 4 workers: 2 x ceil(30 / 8) = 8 steps (as for record).
    import studies.claims.schemes as schemes

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(schemes, "study", _started)
    argv = ["schemes", "--dataset", "iris", "--max-epochs", "2", "-q", "--png", "x.png"]
    assert main(argv + [flag, str(value)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"netsim: error: {flag} {value}: ") and f"{count} of this run" in err
    with pytest.raises(AssertionError, match="the recording started"):
        main(argv + [flag, str(value - 1)])

