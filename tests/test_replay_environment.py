"""The engine's event queue (netsim.engine.environment.ReplayEnvironment) does what SimPy's
public interface does: call_later is simpy.Timeout plus its callback, event for event in the
same order, and later_than_now is env.peek() > env.now."""

import random

import pytest
import simpy

from netsim.engine.environment import ReplayEnvironment


def _run(schedule, seed=0, events=400):
    """The (time, value, next event later) sequence of a cascade of timeouts with random
    delays, equal times included, each callback scheduling up to two more (most two)."""
    env = ReplayEnvironment()
    rnd = random.Random(seed)
    seen = []
    made = [0]

    def callback(event):
        seen.append((env.now, event.value, env.peek() > env.now, env.later_than_now()))
        for _ in range(rnd.choice((0, 1, 2, 2))):
            if made[0] < events:
                made[0] += 1
                schedule(env, rnd.choice((0.0, 0.0, 1e-3, 0.1 * rnd.random())), made[0], callback)

    for i in range(8):
        made[0] += 1
        schedule(env, rnd.choice((0.0, 1e-3)), made[0], callback)
    env.run()
    return seen


def _public(env, delay, value, callback):
    simpy.Timeout(env, delay, value).callbacks.append(callback)


def _inlined(env, delay, value, callback):
    env.call_later(delay, value, callback)


@pytest.mark.parametrize("seed", range(5))
def test_call_later_runs_the_events_simpy_timeout_runs_in_the_same_order(seed):
    public, inlined = _run(_public, seed), _run(_inlined, seed)
    assert len(public) > 100
    assert public == inlined
    assert all(peek == later for _, _, peek, later in inlined)


def test_call_later_makes_a_triggered_timeout_with_its_value():
    env = ReplayEnvironment()
    event = env.call_later(1.5, ("t", [1]), lambda e: None)
    assert isinstance(event, simpy.Timeout)
    assert event.triggered and event.ok and event.value == ("t", [1])
    assert env.peek() == 1.5 and env.later_than_now()


def test_call_later_refuses_a_negative_delay_as_simpy_does():
    with pytest.raises(ValueError, match="Negative delay -1"):
        ReplayEnvironment().call_later(-1, None, print)


def test_an_empty_queue_is_later_than_now():
    assert ReplayEnvironment().later_than_now()


def test_simpy_is_the_major_version_whose_internals_the_queue_inlines():
    # ReplayEnvironment inlines SimPy 4's Environment.schedule / peek and Timeout.__init__.
    assert simpy.__version__.split(".")[0] == "4"
