"""What-if from an imported profile: faster or slower compute, host gaps kept or dropped.

An imported profile (:func:`netsim.formats.kineto.load.load_kineto`) holds each rank's
kernels as compute ops lasting their measured time, and the idle stream time
no other op explains as compute ops tagged ``idle`` (host time: kernel launch,
Python, data loading). :func:`whatif` changes them before a replay:

* ``compute_scale`` multiplies every kernel, memcpy and memset (every compute
  op not tagged ``idle``) by one factor: 0.5 is a device twice as fast on
  everything. A first-order rule: kernels bound by other limits (memory,
  launch latency) do not all speed up alike.
* ``host_gaps="drop"`` makes the host time zero (a host that keeps the GPU
  fed); ``"keep"`` (default) replays it as measured.

Collectives are untouched: the replay's library plans them on the graph.
"""

import numpy as np

from netsim.errors import TraceError
from netsim.trace.core import COMPUTE, HOST_GAP

__all__ = ["whatif"]


def whatif(trace, compute_scale=1.0, host_gaps="keep"):
    """The trace with its kernels scaled and its host gaps kept or dropped.

    Parameters
    ----------
    trace : Trace
    compute_scale : float
        Factor on every compute op not tagged ``idle`` (> 0).
    host_gaps : {"keep", "drop"}
        Keep the ``idle`` ops as measured, or make them last zero seconds.

    Returns
    -------
    Trace
        Metadata ``whatif``: the options, when any differs from the default.

    Raises
    ------
    TraceError
        For a factor that is not a finite number > 0 or an unknown ``host_gaps``.

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(1)
    >>> k = b.compute(0, seconds=2.0)
    >>> _ = b.compute(0, seconds=1.0, deps=[k], tag="idle")
    >>> whatif(b.build(), compute_scale=0.5, host_gaps="drop").duration.tolist()
    [1.0, 0.0]
    """
    if isinstance(compute_scale, bool) or not isinstance(compute_scale, (int, float)) or \
            not np.isfinite(compute_scale) or compute_scale <= 0:
        raise TraceError(f"compute scale must be a number > 0, got {compute_scale!r}")
    if host_gaps not in ("keep", "drop"):
        raise TraceError(f"host gaps must be 'keep' or 'drop', got {host_gaps!r}")
    if compute_scale == 1.0 and host_gaps == "keep":
        return trace
    comp = trace.kind == COMPUTE
    idle = comp & trace.tagged(HOST_GAP)
    duration = trace.duration.copy()
    duration[comp & ~idle] *= compute_scale
    if host_gaps == "drop":
        duration[idle] = 0.0
    flops = trace.flops.copy()
    flops[comp & ~idle] *= compute_scale     # FLOP-given ops last FLOPs / rate: same factor
    meta = {**trace.metadata, "whatif": {"compute_scale": float(compute_scale),
                                         "host_gaps": host_gaps}}
    return trace.replace(duration=duration, flops=flops, metadata=meta)
