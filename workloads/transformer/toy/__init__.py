"""A toy transformer trained for real in numpy, recording what it sends: dense layers and experts.

Modules
-------
dense  A toy transformer trained for real under TP x PP x DP in numpy, recording what it sends.
moe    The toy transformer's mixture-of-experts layers, trained for real under expert parallelism.

:func:`run` and :func:`init` are :mod:`workloads.transformer.toy.dense`'s.
"""

from workloads.transformer.toy.dense import init, run

__all__ = ["init", "run"]
