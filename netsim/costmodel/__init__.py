"""Closed forms of the collectives of :mod:`netsim.comm.collectives`, the alpha-beta of a topology,
and a GEMM's time from its shape (:mod:`netsim.costmodel.gemm`).

Every collective of :mod:`netsim.comm.collectives` has a function of the same name
here giving its time in the alpha-beta-gamma model (Hockney 1994): a message
of ``n`` bytes alone on its path takes ``alpha + n * beta``, and reducing ``n``
received bytes takes ``n * gamma``.

Exactness
---------
Each formula is the exact time of the schedule the generator builds, replayed
by the fluid engine on a non-blocking star of identical links (``alpha`` = two
link latencies, ``beta`` = 1 / link bandwidth). Where the textbook formula
(Thakur, Rabenseifner & Gropp 2005) assumes something the generated schedule
does differently -- non-power-of-two fold and unfold, the linear-pipeline
count of segments, several messages sharing one host link -- the docstring
gives the exact formula of the schedule and says how it differs.

``P`` is the number of ranks, ``nbytes`` (n) the message size as each
generator defines it, ``p'`` = 2**floor(log2 P), ``rem`` = P - p' and
``L`` = log2 p'.

References
----------
.. [1] R. W. Hockney, "The communication challenge for MPP: Intel Paragon and
   Meiko CS-2", Parallel Computing 20(3), 389-398, 1994.
.. [2] R. Thakur, R. Rabenseifner and W. Gropp, "Optimization of collective
   communication operations in MPICH", Int. J. High Performance Computing
   Applications 19(1), 49-66, 2005.
.. [3] P. Patarasuk and X. Yuan, "Bandwidth optimal all-reduce algorithms for
   clusters of workstations", J. Parallel Distrib. Comput. 69(2), 117-124, 2009.
.. [4] Y. Zhao, L. Wang, W. Wu, G. Bosilca, R. Vuduc, J. Ye, W. Tang and Z. Xu,
   "Efficient communications in training large scale neural networks",
   arXiv:1611.04255, 2016.
"""

from netsim.costmodel.allreduce import (alltoall, ps_push_pull, rabenseifner_allreduce,
                        recursive_doubling_allgather, recursive_doubling_allreduce,
                        recursive_halving_reduce_scatter, ring_allgather, ring_allreduce,
                        ring_reduce_scatter)
from netsim.costmodel.alphabeta import hockney, patarasuk_yuan_bound
from netsim.costmodel.gemm import (GemmDevice, calibrate, gemm_device, gemm_seconds,
                                    quantisation)
from netsim.costmodel.rooted import (be_broadcast, binomial_broadcast, binomial_reduce, linear_pipeline,
                     optimal_segments, pipeline_allreduce, pipeline_broadcast, pipeline_reduce)
from netsim.costmodel.topology import alpha_beta, busiest_link, contention_bound, link_loads

__all__ = [
    "hockney",
    "binomial_broadcast",
    "binomial_reduce",
    "pipeline_broadcast",
    "pipeline_reduce",
    "pipeline_allreduce",
    "linear_pipeline",
    "optimal_segments",
    "be_broadcast",
    "recursive_doubling_allreduce",
    "rabenseifner_allreduce",
    "ring_allreduce",
    "ring_allgather",
    "ring_reduce_scatter",
    "recursive_doubling_allgather",
    "recursive_halving_reduce_scatter",
    "alltoall",
    "ps_push_pull",
    "patarasuk_yuan_bound",
    "alpha_beta",
    "link_loads",
    "contention_bound",
    "busiest_link",
    "GemmDevice",
    "gemm_device",
    "gemm_seconds",
    "quantisation",
    "calibrate",
]
