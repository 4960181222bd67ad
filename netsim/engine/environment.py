"""The engine's event queue: its own heap of timed calls, run inside SimPy's event loop.

SimPy orders the replay's events (:mod:`netsim.engine.replay`); the engine asks its event
queue two things at every instant, hundreds of thousands of times per second of CPU:
whether anything else is due at the current instant, and to run a callback with a value
after a delay. :class:`ReplayEnvironment` answers both as methods of a
:class:`simpy.Environment` subclass, as SimPy's own :class:`simpy.rt.RealtimeEnvironment`
extends the environment it subclasses.

The calls the engine schedules (an op's wait ends, a flow's predicted end, a settle step)
are not SimPy events: each is an entry ``(time, id, callback, value)`` of the
environment's own heap, ``calls``, whose time and id are exactly those of the
:class:`simpy.Timeout` it stands for (``now + delay`` and the environment's next event
id). SimPy's queue holds one event for them all, the *drainer*, at the time and id of the
first call. When SimPy runs it, it runs every call in order, setting the clock to each
one's time, until a SimPy event of the queue would come first by SimPy's own order (time,
priority, id); then it leaves the drainer in SimPy's queue at the next call's place and
returns. So every call and every SimPy event run in the order SimPy would run them if
each call were its own timeout, a process waiting on SimPy events sees the same clock, and
``run(until=...)`` stops at the same place; but a call costs a heap entry of a tuple
instead of a :class:`simpy.Timeout` object and a step of SimPy's loop. A replay has no
SimPy events but the drainer, so a whole replay is one SimPy event.

Why at all: speed. On desynchronised traffic a message is three instants, each one a
call; SimPy's timeout object and step cost about 0.3 us each of a message's 10 us
(``benchmarks/README.md``). ``tests/test_replay_environment.py`` runs random cascades of
calls both ways (this queue and one SimPy timeout per call) and compares the order, the
clock and ``later_than_now`` event by event.

It is the one place in the engine that reads SimPy's private attributes (``_queue``,
``_now``, ``_eid`` of the environment; ``_value``, ``_ok`` of an event), written against
SimPy 4.1.2 (``simpy/core.py``: ``Environment.__init__``, ``schedule``, ``step``,
``peek``; ``simpy/events.py``: ``Event.__init__``, ``Timeout.__init__``). SimPy 4.0 has
the same internals; a SimPy release that changes them needs this module, and only this
module, to follow.
"""

import heapq
import math

import simpy
from simpy.events import NORMAL

__all__ = ["ReplayEnvironment"]


class ReplayEnvironment(simpy.Environment):
    """A :class:`simpy.Environment` with the engine's own queue of timed calls.

    Attributes
    ----------
    calls : list
        The heap of pending calls, ``(time, id, callback, value)``: SimPy's heap entry of
        the timeout each stands for, its priority (always normal) left out.
    ids : iterator of int
        The event ids SimPy's events and the calls share. A callback running in the drain
        may push ``(env.now + delay, next(env.ids), callback, value)`` onto ``calls``
        itself, with ``delay >= 0``: what :meth:`call_later` pushes, without its checks.

    Examples
    --------
    >>> env = ReplayEnvironment()
    >>> seen = []
    >>> env.call_later(2.0, "due", lambda value: seen.append((env.now, value)))
    >>> env.later_than_now(), env.peek()
    (True, 2.0)
    >>> env.run()
    >>> seen
    [(2.0, 'due')]
    """

    def __init__(self, initial_time=0):
        super().__init__(initial_time)
        self.calls = []
        self.ids = self._eid
        self._draining = False   # the drainer is running: it sees every new call itself
        self._drainer = None     # the drainer's event in SimPy's queue, if any
        self._drainer_at = None  # and its place, (time, id)

    def later_than_now(self):
        """Whether the next call or SimPy event is later than now (True if there is none).

        ``env.peek() > env.now``, without its calls: the engine tests it at every
        instant to settle at once when nothing else is due at the same time.
        """
        now, calls, queue = self._now, self.calls, self._queue
        if calls and calls[0][0] <= now:
            return False
        return (queue[0][0] if queue else math.inf) > now

    def peek(self):
        """The time of the next call or SimPy event (inf if there is none)."""
        first = self.calls[0][0] if self.calls else math.inf
        return min(first, super().peek())

    def call_later(self, delay, value, callback):
        """Call ``callback(value)`` after ``delay``, as a :class:`simpy.Timeout` of ``delay``
        with that callback would (its time ``now + delay``, normal priority, the next
        event id).

        Raises
        ------
        ValueError
            If ``delay`` is negative, as :class:`simpy.Timeout` does.
        """
        if delay < 0:
            raise ValueError(f"Negative delay {delay}")
        call = (self._now + delay, next(self._eid), callback, value)
        heapq.heappush(self.calls, call)
        if not self._draining and (self._drainer_at is None or call[:2] < self._drainer_at):
            self._place_drainer(call)

    def _place_drainer(self, call):
        """Put the drainer in SimPy's queue at ``call``'s place, removing it from an earlier one."""
        queue = self._queue
        if self._drainer is not None:  # (only outside the drainer, e.g. before a run)
            queue.remove(next(e for e in queue if e[3] is self._drainer))
            heapq.heapify(queue)
        event = simpy.Event(self)
        event._ok, event._value = True, None
        event.callbacks.append(self._drain)
        self._drainer, self._drainer_at = event, call[:2]
        heapq.heappush(queue, (call[0], NORMAL, call[1], event))

    def _drain(self, _event):
        """The drainer: run the calls in order until a SimPy event comes first."""
        self._drainer = self._drainer_at = None
        self._draining = True
        calls, queue, heappop = self.calls, self._queue, heapq.heappop
        try:
            while calls:
                call = calls[0]
                if queue and queue[0][:3] < (call[0], NORMAL, call[1]):
                    self._place_drainer(call)  # a SimPy event comes first: run it
                    return
                self._now, _, callback, value = heappop(calls)
                callback(value)
        finally:
            self._draining = False
            if calls and self._drainer is None:  # a callback raised: the rest stays runnable
                self._place_drainer(calls[0])
