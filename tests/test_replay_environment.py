"""The engine's event queue (netsim.engine.environment.ReplayEnvironment) runs its calls as
SimPy would run one timeout per call: the same order, the same clock, the same answer to
"is anything else due now" (env.peek() > env.now), beside SimPy processes and events of
their own, and with run(until=...) stopping at the same place."""

import random

import pytest
import simpy

from netsim.engine.environment import ReplayEnvironment


def _cascade(env, schedule, seed=0, events=400, processes=0):
    """Run a cascade of calls with random delays (equal times included), each scheduling up
    to two more, beside ``processes`` SimPy processes waiting random timeouts (some of them
    scheduling calls too); the (who, time, value, next event later) sequence seen."""
    rnd = random.Random(seed)
    seen = []
    made = [0]

    def callback(value):
        seen.append(("call", env.now, value, env.peek() > env.now))
        for _ in range(rnd.choice((0, 1, 2, 2))):
            if made[0] < events:
                made[0] += 1
                schedule(env, rnd.choice((0.0, 0.0, 1e-3, 0.1 * rnd.random())), made[0], callback)

    def process(name):
        for step in range(40):
            yield env.timeout(rnd.choice((0.0, 1e-3, 0.05 * rnd.random())), step)
            seen.append((name, env.now, step, env.peek() > env.now))
            if rnd.random() < 0.3 and made[0] < events:
                made[0] += 1
                schedule(env, rnd.choice((0.0, 1e-3)), made[0], callback)

    for i in range(8):
        made[0] += 1
        schedule(env, rnd.choice((0.0, 1e-3)), made[0], callback)
    for i in range(processes):
        env.process(process(f"p{i}"))
    return seen


def _timeouts(env, delay, value, callback):
    """A call as one SimPy timeout, through SimPy's public interface."""
    simpy.Timeout(env, delay, value).callbacks.append(lambda event: callback(event.value))


def _calls(env, delay, value, callback):
    env.call_later(delay, value, callback)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("processes", [0, 3])
def test_calls_run_in_the_order_and_at_the_clock_of_one_timeout_each(seed, processes):
    runs = []
    for env, schedule in ((simpy.Environment(), _timeouts), (ReplayEnvironment(), _calls)):
        seen = _cascade(env, schedule, seed, processes=processes)
        env.run()
        runs.append(seen)
    public, calls = runs
    assert len(public) > 100 and sum(w == "call" for w, *_ in public) > 100
    assert public == calls


@pytest.mark.parametrize("seed", range(3))
def test_later_than_now_is_peek_later_than_now(seed):
    env = ReplayEnvironment()
    answers = []
    seen = _cascade(env, lambda e, d, v, c: e.call_later(
        d, v, lambda value: (answers.append(e.later_than_now()), c(value))), seed, processes=2)
    env.run()
    calls = [later for who, _, _, later in seen if who == "call"]
    assert len(calls) > 50 and answers == calls


@pytest.mark.parametrize("until", [0.01, 0.05, 0.2])
def test_run_until_stops_where_simpy_stops_and_resumes_alike(until):
    runs = []
    for env, schedule in ((simpy.Environment(), _timeouts), (ReplayEnvironment(), _calls)):
        seen = _cascade(env, schedule, seed=1, processes=2)
        env.run(until=until)
        first = (len(seen), env.now)
        env.run()
        runs.append((first, seen))
    assert runs[0] == runs[1]
    assert 0 < runs[0][0][0] < len(runs[0][1])  # it stopped part way


def test_a_whole_cascade_of_calls_is_one_simpy_event():
    env = ReplayEnvironment()
    seen = _cascade(env, _calls)
    env.step()  # the drainer: no SimPy event beside it, so it runs every call
    assert len(seen) > 100 and not env.calls
    with pytest.raises(simpy.core.EmptySchedule):
        env.step()


def test_a_call_made_before_the_first_runs_first():
    env = ReplayEnvironment()
    seen = []
    env.call_later(2.0, "b", seen.append)
    env.call_later(1.0, "a", seen.append)  # the drainer moves to the earlier call
    env.call_later(1.0, "a2", seen.append)
    assert env.peek() == 1.0 and len(env._queue) == 1
    env.run()
    assert seen == ["a", "a2", "b"] and env.now == 2.0


def test_calls_after_a_failing_call_still_run():
    env = ReplayEnvironment()
    seen = []

    def fail(value):
        raise RuntimeError(value)

    env.call_later(1.0, "boom", fail)
    env.call_later(2.0, "after", seen.append)
    with pytest.raises(RuntimeError, match="boom"):
        env.run()
    env.run()
    assert seen == ["after"] and env.now == 2.0


def test_call_later_refuses_a_negative_delay_as_simpy_does():
    with pytest.raises(ValueError, match="Negative delay -1"):
        ReplayEnvironment().call_later(-1, None, print)


def test_an_empty_queue_is_later_than_now():
    env = ReplayEnvironment()
    assert env.later_than_now() and env.peek() == float("inf")


def test_simpy_is_the_major_version_whose_internals_the_queue_inlines():
    # ReplayEnvironment inlines SimPy 4's Environment.schedule, step and peek.
    assert simpy.__version__.split(".")[0] == "4"
