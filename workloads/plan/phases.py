"""What a paradigm declares about the iterations of its run: warm-up, stages, period.

A study reports time per iteration over a window of the run; which window
represents the run depends on the paradigm, and each paradigm says it with a
``phases(trace)`` function in its own module, returning :class:`Phases`
(paradigms without one have :func:`uniform`: every iteration alike). The
declaration is in iterations of the *recorded run*, the same at every P
(schedules map the run's iteration ``i`` to the same training progress at every
P, see :class:`workloads.plan.measure.Plan`), so a study reads it once, from the recording.

======================== ============================================= ===========
paradigm                 declaration                                   alike
======================== ============================================= ===========
dgc                      warm-up: ``warmup_epochs`` recorded epochs,   yes
                         one stage per epoch (its sparsity)
pf                       warm-up: the filter settling, ``1 / (1 -      no
                         momentum)`` steps (the momentum's time
                         constant)
slimdp                   period ``q`` (explore every q steps)          no
model-averaging          period ``H`` (``period``)                     yes
ps-async                 period ``lcm(n_fetch, n_push)``               yes
any other                none                                          yes
======================== ============================================= ===========

*Alike* says whether the schedule gives every period after the warm-up (and
every iteration of a warm-up stage) the same ops: then a few whole periods
represent the steady state, and a few iterations each warm-up stage. A paradigm
that replays its recording's per-iteration statistics (PF's and Slim-DP's
filtered and sampled traffic, which drifts as training converges) is not
alike: its run has no steady state, and the window that represents it is the
whole recorded run.

Examples
--------
>>> Phases(warmup=180, stages=(0, 45, 90, 135)).steady_start
180
>>> Phases(period=4).steady_start, Phases(warmup=5, period=4).steady_start
(0, 8)
"""

import math
from typing import NamedTuple

__all__ = ["Phases", "uniform"]


class Phases(NamedTuple):
    """A paradigm's declaration of its run's phases, in iterations of the recorded run.

    Attributes
    ----------
    warmup : int
        Iterations ``0 .. warmup - 1`` differ from the rest by the paradigm's
        design (DGC's warm-up epochs, PF's filter settling); 0: none.
    period : int
        Iterations of one period: the pattern repeats every ``period``
        iterations, counted from iteration 0 (model averaging's H); 1: every
        iteration alike.
    stages : tuple of int
        First iteration of each stage of the warm-up (ascending, from 0), its
        iterations alike within a stage (DGC: one stage per epoch); ``()``: one
        stage.
    alike : bool
        Whether every period after the warm-up, and every iteration of a
        warm-up stage, has the same ops (see the module docstring).
    what : str
        The declaration in a few words, for reports.

    Examples
    --------
    >>> p = Phases(period=4, what="averaging every H = 4 steps")
    >>> p.warmup, p.period, p.alike
    (0, 4, True)
    """

    warmup: int = 0
    period: int = 1
    stages: tuple = ()
    alike: bool = True
    what: str = ""

    @property
    def steady_start(self):
        """First iteration of the steady state: the warm-up's end, up to a whole period.

        Examples
        --------
        >>> Phases(warmup=10, period=4).steady_start
        12
        """
        return math.ceil(self.warmup / self.period) * self.period

    def stage_bounds(self):
        """``(start, stop)`` of each warm-up stage; none without a warm-up.

        Examples
        --------
        >>> Phases(warmup=8, stages=(0, 4)).stage_bounds()
        [(0, 4), (4, 8)]
        >>> Phases(warmup=3).stage_bounds(), Phases().stage_bounds()
        ([(0, 3)], [])
        """
        if self.warmup <= 0:
            return []
        starts = [s for s in (self.stages or (0,)) if s < self.warmup]
        return list(zip(starts, starts[1:] + [self.warmup]))


def uniform(trace):
    """The declaration of a paradigm whose iterations are all alike: no warm-up, period 1.

    Parameters
    ----------
    trace : netsim.Trace
        A recording of the paradigm (not read).

    Returns
    -------
    Phases

    Examples
    --------
    >>> uniform(None)
    Phases(warmup=0, period=1, stages=(), alike=True, what='')
    """
    return Phases()
