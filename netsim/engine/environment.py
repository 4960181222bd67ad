"""The engine's event queue: a SimPy environment with the two operations the engine needs.

SimPy orders the replay's events (:mod:`netsim.engine.replay`); the engine asks its event
queue two things at every instant, thousands of times per second of CPU: whether anything
else is due at the current instant, and to run a callback with a value after a delay.
:class:`ReplayEnvironment` answers both as methods of a :class:`simpy.Environment`
subclass, as SimPy's own :class:`simpy.rt.RealtimeEnvironment` extends the environment it
subclasses. It is the one place in the engine that reads SimPy's private attributes
(``_queue``, ``_now``, ``_eid`` of the environment; ``_value``, ``_delay``, ``_ok`` of a
timeout): the rest of the engine uses these methods and SimPy's public interface
(``run``, ``now``, ``peek``, ``Event.value``).

Why private attributes at all: speed. The engine's small-event path spends about 10 us
per desynchronised message, three SimPy events; the public forms of the two operations
(``env.peek() > env.now``: two calls; ``simpy.Timeout(env, delay, value)`` then
``.callbacks.append(callback)``: ``Timeout.__init__`` calls ``env.schedule``) cost a few
percent of that. Both methods below do exactly what the public forms do, with the same
heap entries in the same order, so replays are bit-identical either way (the tests compare
them with ``tests/test_replay_environment.py``).

Written against SimPy 4.1.2 (``simpy/core.py``: ``Environment.__init__``, ``schedule``,
``peek``; ``simpy/events.py``: ``Timeout.__init__``, which itself inlines
``Event.__init__`` for speed). SimPy 4.0 has the same internals; a SimPy release that
changes them needs this module, and only this module, to follow.
"""

import heapq
import math

import simpy
from simpy.events import NORMAL

__all__ = ["Call", "ReplayEnvironment"]


class Call(simpy.Timeout):
    """A :class:`simpy.Timeout` made by :meth:`ReplayEnvironment.call_later`.

    Its ``value`` is a plain attribute, set when it is made (a timeout is triggered
    from its creation, so its value is always available): reading it costs a
    dictionary lookup instead of :attr:`simpy.Event.value`'s property call, which
    checks for a pending value (about 3 % of a desynchronised message).
    """

    value = None  # shadows Event.value's property: the instance's own attribute is read


class ReplayEnvironment(simpy.Environment):
    """A :class:`simpy.Environment` with the engine's two queue operations, inlined for speed.

    Examples
    --------
    >>> env = ReplayEnvironment()
    >>> seen = []
    >>> event = env.call_later(2.0, "due", lambda e: seen.append((env.now, e.value)))
    >>> env.later_than_now()
    True
    >>> env.run()
    >>> seen
    [(2.0, 'due')]
    """

    def later_than_now(self):
        """Whether the next scheduled event is later than now (True if none is scheduled).

        ``env.peek() > env.now``, without its two calls: the engine tests it at every
        instant to settle at once when nothing else is due at the same time.
        """
        queue = self._queue  # SimPy 4.1.2 Environment.peek, inlined
        return (queue[0][0] if queue else math.inf) > self._now

    def call_later(self, delay, value, callback):
        """Schedule a :class:`simpy.Timeout` of ``delay`` with ``value``, calling ``callback``.

        Returns the timeout, a :class:`Call`: ``simpy.Timeout(env, delay, value)`` with
        ``callback`` as its only callback, without its ``__init__`` and ``schedule`` calls
        (the same heap entry: time ``now + delay``, normal priority, the next event id).
        ``callback`` receives the event and reads its value as ``event.value``.

        Raises
        ------
        ValueError
            If ``delay`` is negative, as :class:`simpy.Timeout` does.
        """
        if delay < 0:
            raise ValueError(f"Negative delay {delay}")
        # SimPy 4.1.2 Timeout.__init__ and Environment.schedule, inlined.
        event = Call.__new__(Call)
        event.env = self
        event.callbacks = [callback]
        event._value = event.value = value
        event._delay = delay
        event._ok = True
        heapq.heappush(self._queue, (self._now + delay, NORMAL, next(self._eid), event))
        return event
