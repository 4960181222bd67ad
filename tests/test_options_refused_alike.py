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
