"""studies: composition on top of the core, the paradigms and the hardware.

The only package that imports all three below it (``netsim``, ``workloads``,
``topologies``): it turns names into builders and paradigms (one read-only
registry, :mod:`studies.registry`), runs the scaling studies, sweeps and the
seed papers' claims, formats the text reports, and holds the ``netsim``
command line (:mod:`studies.cli`, one module per command in
:mod:`studies.commands`).

Modules
-------
registry          names -> topology builders, paradigms, collectives, models (read-only)
options           command-line values: worker ranges, typed paradigm options
report            plain-text tables and the text reports of results, studies and claims
paradigm_traces   a paradigm's trace at each P: recorded or projected, any window of its run
windows           the window of a run a study measures, from the paradigm's declared phases
closed_forms      the alpha-beta closed form of one iteration of a paradigm's trace
paradigm_scaling  a paradigm's time per iteration against P, its saturation point and fits
claims            the seed papers' claims reproduced: PASS or FAIL
sweep_config      a sweep's grid: the config file, its checks and points
sweep             running a sweep on Dask to one resumable CSV, and its picture
console           what every command shares: progress bars, notes, files
cli               ``main()``, the entry point of the ``netsim`` console script
commands          one module per ``netsim`` subcommand

Examples
--------
>>> from studies.registry import REGISTRY
>>> sorted(REGISTRY)
['collectives', 'models', 'paradigms', 'topologies']
"""
