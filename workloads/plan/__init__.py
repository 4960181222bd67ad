"""A paradigm's trace at any P: the statistics of a run, the frontier builder, phases, projection, closed form.

Modules
-------
closed      What every paradigm's alpha-beta closed form shares: roles, per-iteration terms.
frontier    The paradigms' trace builder: blocks of ops with per-rank frontiers.
measure     What every paradigm's ``measure`` and ``schedule`` share.
phases      What a paradigm declares about the iterations of its run: warm-up, stages, period.
projection  Project a trace recorded at a small P to any number of workers P.
"""
