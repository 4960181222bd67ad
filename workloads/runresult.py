"""What every paradigm's ``run`` returns: :class:`RunResult`, built by :func:`run_result`.

:func:`run_result` attaches the trace metadata every paradigm shares, checks the
paradigm's own byte and message totals against its trace, and flags a run whose
loss became non-finite (``diverged``, with a
:class:`workloads.errors.DivergenceWarning`). :mod:`workloads.recorder`
re-exports all of it.
"""

import math
import warnings
from dataclasses import dataclass, field

from netsim.comm.library import mpich_wire
from netsim.trace.core import Trace

from workloads import mlp
from workloads.errors import DivergenceWarning

__all__ = ["V100_FP32_FLOPS", "RunResult", "run_result"]

#: The default ``device_flops`` of recorded traces: the FP32 throughput of an NVIDIA Tesla
#: V100 (SXM2), 15.7 TFLOP/s; every paradigm takes ``device_flops=`` to override it. The
#: datasheet figure's home, with its source, is ``topologies.devices.DEVICES["V100"].fp32``;
#: ``workloads`` may not import ``topologies``, so the figure is repeated here and
#: tests/test_models.py (``test_device_presets``) holds the two equal.
V100_FP32_FLOPS = 15.7e12


@dataclass
class RunResult:
    """What every paradigm's ``run`` returns.

    Attributes
    ----------
    paradigm : str
        CLI name of the paradigm, e.g. ``"ps-sync"``.
    trace : netsim.Trace
        Every message and compute op of the run; ``trace.metadata`` says how it
        was produced (paradigm, dataset, workers, servers, layers, hyper,
        accuracy, seed, device_flops, ...).
    accuracy : float
        Test accuracy of the final model on the held-out split.
    total_bytes : int
        Bytes sent, from the paradigm's own payload accounting; equals the
        bytes of the trace's messages with its collective ops expanded by MPICH
        (``netsim.comm.library.expand(trace, None, library="mpich")``; up to float
        rounding when a collective generator cuts a buffer into fractional-byte
        chunks, e.g. 524 bytes over 3 ranks).
    messages : int
        Messages sent; equals the same expansion's ``num_messages``.
    iterations : int
        Training iterations (steps or rounds) recorded.
    dropped_fraction : float or None
        For paradigms that drop, filter or sparsify: fraction of values not sent.
    extra : dict
        Paradigm-specific numbers (e.g. staleness, test loss).
    diverged : bool
        True when the training loss (or the final test loss) became non-finite:
        the run diverged and its accuracy means nothing (a
        :class:`workloads.errors.DivergenceWarning` was issued).
    diverged_at : int or None
        The first iteration with a non-finite training loss (the last iteration
        when only the final test loss was non-finite), else None.

    Examples
    --------
    >>> from workloads import record
    >>> r = record("single", epochs=1)
    >>> r.paradigm, r.messages, r.total_bytes, r.iterations == r.trace.num_iterations
    ('single', 0, 0, True)
    """

    paradigm: str
    trace: Trace
    accuracy: float
    total_bytes: int
    messages: int
    iterations: int
    dropped_fraction: float | None = None
    extra: dict = field(default_factory=dict)
    diverged: bool = False
    diverged_at: int | None = None

    def summary(self):
        """A one-line, human-readable summary.

        Examples
        --------
        >>> from netsim import TraceBuilder
        >>> RunResult("demo", TraceBuilder(1).build(), 0.9, 0, 0, 1).summary()
        'demo: accuracy 0.900, 0 bytes in 0 messages, 1 iterations'
        """
        s = (f"{self.paradigm}: accuracy {self.accuracy:.3f}, {self.total_bytes} bytes in "
             f"{self.messages} messages, {self.iterations} iterations")
        if self.dropped_fraction is not None:
            s += f", {self.dropped_fraction:.1%} of values not sent"
        if self.diverged:
            s += f", DIVERGED at iteration {self.diverged_at}"
        return s


def _exact(x):
    """An int when the byte count is whole up to float rounding (collective generators
    may cut a buffer into fractional-byte chunks whose float sum is off by an ulp)."""
    x = float(x)
    r = round(x)
    return int(r) if abs(x - r) <= 1e-9 * max(1.0, abs(x)) else x


def run_result(paradigm, trace, setup, accuracy, total_bytes, messages, iterations, hyper,
               servers=0, dropped_fraction=None, extra=None, roles=None, metadata=None,
               diverged_at=None):
    """The :class:`RunResult` of a run, its trace derived from ``trace`` with the run's metadata.

    The trace metadata gets: ``paradigm``, ``dataset``, ``workers``, ``servers``,
    ``ranks``, ``roles`` (``"worker"``/``"server"`` per rank), ``layers``,
    ``hyper`` (the paradigm's hyper-parameters), ``accuracy``, ``seed``,
    ``iterations``, ``total_bytes``, ``messages``, ``bytes_per_value`` (4) and
    ``device_flops`` (FLOP/s, from ``hyper["device_flops"]`` if present), then the
    paradigm's own ``metadata`` entries.

    Parameters
    ----------
    paradigm : str
        CLI name of the paradigm.
    trace : Trace
        The run's trace.
    setup : workloads.training.Setup
    accuracy : float
        Test accuracy.
    total_bytes : float
        Bytes sent, from the run's own accounting.
    messages : int
        Messages sent, likewise.
    iterations : int
        Iterations recorded.
    hyper : dict
        The paradigm's hyper-parameters.
    servers : int
        Server (or master) ranks after the workers.
    dropped_fraction : float, optional
        Share of values not sent.
    extra : dict, optional
        Paradigm-specific numbers.
    roles : list of str, optional
        Role of each rank.
    metadata : dict, optional
        More metadata.
    diverged_at : int, optional
        The first iteration whose training loss was not finite
        (:func:`workloads.training.first_nonfinite`). A run with one, or whose
        ``extra["test_loss"]`` is not finite, is flagged ``diverged`` (also in
        the trace's metadata) with a :class:`workloads.errors.DivergenceWarning`
        naming the paradigm and the iteration.

    Raises
    ------
    RuntimeError
        If ``total_bytes`` or ``messages`` differs from the trace's totals
        (bytes beyond float rounding): a recording bug, never bad input.

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(2); _ = b.message(0, 1, 8)
    >>> from workloads.training import prepare
    >>> s = prepare("iris", 2, seed=0)
    >>> r = run_result("demo", b.build(), s, accuracy=1.0, total_bytes=8, messages=1,
    ...                iterations=1, hyper={})
    >>> r.trace.metadata["paradigm"], r.trace.metadata["workers"], r.total_bytes
    ('demo', 2, 8)
    """
    wire = mpich_wire(trace)
    if (not math.isclose(wire.total_bytes, total_bytes, rel_tol=1e-12, abs_tol=1e-9)
            or wire.num_messages != messages):
        raise RuntimeError(f"{paradigm}: own accounting ({total_bytes} bytes, {messages} messages) "
                           f"differs from the trace ({wire.total_bytes} bytes, "
                           f"{wire.num_messages} messages, collectives expanded by MPICH)")
    hyper = {k: (list(v) if isinstance(v, tuple) else v) for k, v in dict(hyper).items()}
    rate = hyper.get("device_flops", V100_FP32_FLOPS)
    test_loss = (extra or {}).get("test_loss")
    if diverged_at is None and test_loss is not None and not math.isfinite(float(test_loss)):
        diverged_at = max(int(iterations) - 1, 0)
    if diverged_at is not None:
        warnings.warn(DivergenceWarning(
            f"{paradigm} diverged: non-finite loss at iteration {diverged_at} of {iterations} "
            f"(test loss {test_loss}); lower lr (now {hyper.get('lr')}) or check the options"),
            stacklevel=3)
    workers = trace.ranks - servers
    trace = trace.with_metadata(**{
        "paradigm": paradigm,
        "dataset": setup.dataset,
        "workers": int(workers),
        "servers": int(servers),
        "ranks": int(trace.ranks),
        "roles": list(roles) if roles is not None else ["worker"] * workers + ["server"] * servers,
        "layers": [int(w) for w in setup.layers],
        "hyper": hyper,
        "accuracy": float(accuracy),
        "seed": setup.seed,
        "iterations": int(iterations),
        "total_bytes": _exact(total_bytes),
        "messages": int(messages),
        "bytes_per_value": mlp.BYTES_PER_VALUE,
        "device_flops": float(rate),
        "diverged": diverged_at is not None,
        **(metadata or {}),
    })
    return RunResult(paradigm, trace, float(accuracy), _exact(total_bytes), int(messages),
                     int(iterations), dropped_fraction, dict(extra or {}),
                     diverged_at is not None, diverged_at)
