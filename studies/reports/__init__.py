"""Plain-text reports: aligned tables, replay and study reports, NCCL runs in nccl-tests' layout.

Modules
-------
nccl        NCCL-library runs for ``netsim collective --library nccl``: size sweeps, tables, plots, measurements.
nccl_tests  nccl-tests' output layout for ``netsim collective --library nccl``: its table and its JSON.
text        Plain-text reports: aligned tables, and the reports of a replay, a study and the claims.
"""
