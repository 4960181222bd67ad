"""Parameter sweeps: a grid's config file and its checks, run in parallel to one resumable CSV.

Modules
-------
config  A sweep's grid: its config file, the checks of it, and its points.
ranks   A sweep's stragglers checked against the ranks of every point, before the first point runs.
run     Parameter sweeps: a grid of topologies x collectives or paradigms x P x sizes, in parallel.
"""
