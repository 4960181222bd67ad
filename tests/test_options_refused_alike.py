"""A paradigm option out of range is refused alike by ``--set``, a sweep config and the API.

One check per option (:func:`workloads.option_ranges.check_option`): the CLI refuses
``--set KEY=VALUE`` in one line before any recording, a sweep config before its first
point (not as an error row), and the paradigm's ``run`` with the same words. Momentum
follows the heavy-ball stability condition 0 <= beta < 1 (Polyak 1964).
"""

import pytest

import workloads
from netsim.errors import NetsimError
from studies.cli import main
from studies.sweep_config import check_config
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
    import studies.paradigm_scaling as ps

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
    import studies.commands.record as command

    monkeypatch.setattr(command, "record", _started)
    argv = ["record", name, "--workers", "2", "--epochs", str(epochs), "-q"]
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
    from workloads.paradigms import check_run_options

    check_run_options("dgc", epochs=1)
    with pytest.raises(WorkloadError, match="warmup_epochs must be at most epochs = 1"):
        check_run_options("dgc", epochs=1, warmup_epochs=4)


def test_the_step_count_is_the_recorded_iterations():
    from workloads.plan import steps_per_epoch

    for workers, batch_size, epochs in ((2, 8, 2), (3, 7, 1), (4, 50, 3)):
        rec = workloads.record("model-averaging", workers=workers, epochs=epochs,
                               batch_size=batch_size)
        assert rec.iterations == epochs * steps_per_epoch(120, workers, batch_size)
