"""studies: composition on top of the core, the paradigms and the hardware.

The only package that imports all three below it (``netsim``, ``workloads``,
``topologies``): it turns names into builders and paradigms (one read-only
registry, :mod:`studies.registry`), runs the scaling studies, sweeps and the
seed papers' claims, formats the text reports, and holds the ``netsim``
command line (:mod:`studies.cli.parser`, one module per command in
:mod:`studies.cli.commands`).

Modules
-------
registry          names -> topology builders, paradigms, collectives, models (read-only)
options           command-line values: worker ranges, typed paradigm options
report            plain-text tables and the text reports of results, studies and claims
paradigm_traces   a paradigm's trace at each P: recorded or projected, any window of its run
windows           the window of a run a study measures, from the paradigm's declared phases
study_run         the run a scaling study stands for; paradigm options bounded by it
closed_forms      the alpha-beta closed form of one iteration of a paradigm's trace
paradigm_scaling  a paradigm's time per iteration against P, its saturation point and fits
claims            the seed papers' claims reproduced: PASS or FAIL
sweep_config      a sweep's grid: the config file, its checks and points
sweep             running a sweep on Dask to one resumable CSV, and its picture
console           what every command shares: progress bars, notes, files
cli               ``main()`` and its parser: the whole command line
entry             the ``netsim`` console script: ``cli.main`` interruptible from its first instant
commands          one module per ``netsim`` subcommand

Examples
--------
>>> from studies.registry import REGISTRY
>>> sorted(REGISTRY)
['collectives', 'models', 'paradigms', 'topologies']
"""

import sys as _sys

if "--multiprocessing-fork" in getattr(_sys, "orig_argv", ()):
    # A worker process spawned by multiprocessing (a Dask sweep's) imports this package first,
    # to load the parent's main module, before any of its own code. A terminal's Ctrl-C
    # reaches it too: ignore it here, as early as it can be, and leave stopping to the parent
    # (studies.parallel.ctrl_c_deferred), which prints the one line; else every worker prints
    # a traceback of its own. SIG_IGN does not survive a Python start (a handler would not
    # survive exec), hence here and not inherited.
    import signal as _signal

    _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
