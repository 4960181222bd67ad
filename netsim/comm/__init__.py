"""Communication libraries: each collective op of a trace expanded into flows at replay (MPICH, gloo, NCCL).

Modules
-------
gloo         gloo's allreduce on host cores: the network's bytes, and the copies and sums a CPU makes.
library      Communication libraries chosen at replay: each collective op expanded into flows.
mpich        The MPICH library: a collective op expanded with :mod:`netsim.comm.collectives`' schedules.
collectives  Collective algorithms as traces: MPICH's schedules, written as dependency graphs.
nccl         A model of NCCL as a communication library: its tuning, its topology search and its plans.
"""
