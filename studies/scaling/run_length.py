"""Long runs chosen by a count option, refused before any work: work = unit cost x count.

``netsim record ps-sync --epochs 100000000``, a sweep config's ``epochs:``,
``netsim scale PARADIGM --iterations``, ``netsim claims --seeds 0..100000000`` and
a layer width ``--set hidden=100000000`` each choose how much work a command does
with one number. :func:`check_count` prices the count at the cheapest unit measured
(``benchmarks/README.md``, "The work estimate", long-run rows; an epoch of a wide model
at :data:`WEIGHT_SECONDS` per weight and sample) and refuses it above
:data:`studies.scaling.trace_size.TIME_LIMIT` of CPU, with the figure; ``--force`` goes on.
:func:`check_widths` refuses layer widths whose parameters alone exceed the memory
available (:func:`studies.memory.available_memory`).
"""

from netsim.errors import NetsimError
from netsim.units import format_bytes
from workloads.mlp import num_params

from studies.memory import available_memory
from studies.scaling.trace_size import TIME_LIMIT, check_ops

__all__ = ["EPOCH_SECONDS", "WEIGHT_SECONDS", "SAMPLES", "SEED_SECONDS", "PASS_SECONDS",
           "PASS_BYTES", "LAYER_SECONDS", "LAYER_BYTES", "check_count", "check_passes",
           "check_layers", "model_copies", "check_widths", "MEMBER_BYTES", "MEMBER_SECONDS",
           "check_members",
           "check_training"]

EPOCH_SECONDS = 1.8e-3
"""CPU seconds of one training epoch at its cheapest: ``single`` on Iris with 2 workers,
1.86 ms an epoch over 200 epochs (``benchmarks/README.md``, "The work estimate", row "one
epoch"); larger models, datasets and worker counts cost more, so a time from this figure
is a lower bound. Also the cost of one iteration of a projected paradigm at its
cheapest (an iteration is at most an epoch's work)."""

WEIGHT_SECONDS = 0.8e-9
"""CPU seconds per weight, per training sample, per epoch, at its cheapest: ``single`` on
Iris with hidden = 2000,2000 (4.0e6 weights) took 0.82 ns and hidden = 200000 1.9 ns
(``benchmarks/README.md``, "The work estimate", rows "one epoch of a wide model"). Iris
has 150 samples (:data:`SAMPLES`), the fewest of the datasets."""

SAMPLES = 150
"""Training samples of an epoch at the fewest: Iris's 150 (Fisher 1936; UCI Machine Learning
Repository), the smallest built-in dataset."""

SEED_SECONDS = 15.0
"""CPU seconds of one seed of ``netsim claims --quick``: the command with ``--seeds 0``
took 18.8 s of CPU, the process's start included (``benchmarks/README.md``, "The work
estimate", row "one claims seed"); 15 s is below it, a lower bound of a seed's cost
with or without ``--quick``."""


PASS_SECONDS = 1.3e-6
"""CPU seconds of one forward or backward pass of one micro-batch on one stage in a
transformer's closed form, whose pipeline timeline
(:func:`workloads.transformer.pipeline.timeline`) lists every pass: 1.30 us at 1f1b, p = 1,
m = 10^5; 1.98 us at p = 4; 2.18 us for GPipe at p = 8; 1.88 us interleaved (time.process_time,
2026-12, issue 48); the cheapest is taken."""

PASS_BYTES = 280
"""Bytes the closed form's pipeline timeline holds per pass (its orders and its dict of end
times): 280 B at 1f1b, p = 4, m = 10^4 and 308 B at m = 10^5 (tracemalloc's peak, 2026-12,
issue 48); the smaller is taken."""


LAYER_SECONDS = 2.1e-6
"""CPU seconds per layer of a transformer's model in the checks and the closed form of one
layout (each stage lists its layers' gradients, the closed form walks them for its buckets):
``netsim scale transformer -P 16 --global-batch 16 --topology gpu_cluster:machine=dgx_h100``
with ``--config gpt3-13b:layers=200000`` against ``layers=8``: 3.73 us a layer at pp 1,
2.11 us at pp 2 (time.process_time, 2026-12, issue 48); the cheaper is taken."""

LAYER_BYTES = 134
"""Bytes held per layer of the model by the same runs: 531 B at pp 1, 134 B at pp 2
(tracemalloc's peak); the smaller is taken."""


def check_layers(layers, layouts, what, limit=None, time_limit=TIME_LIMIT):
    """Refuse a transformer whose layer count alone would not fit or take too long.

    Parameters
    ----------
    layers : int
        The model's layers.
    layouts : int
        The layouts checked and computed (each walks every layer once more).
    what : str
        The option that chose the layers, for the message.
    limit : int, optional
        Bytes allowed (default :func:`studies.memory.available_memory`; None there: no check).
    time_limit : float, optional

    Returns
    -------
    float
        The estimated CPU seconds (:data:`LAYER_SECONDS` a layer a layout, and once more for
        the layouts' check).

    Examples
    --------
    >>> check_layers(40, 1, "--config gpt3-13b")   # 40 layers walked twice at 2.1 us
    0.000168
    >>> check_layers(10**9, 1, "--config gpt3-13b:layers=1000000000", limit=16e9)
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: --config gpt3-13b:layers=1000000000 would hold 1e+09 layers, 134 GB at 134 B each, over the 16 GB of memory available; use fewer layers, or --force to try anyway
    """
    _check_memory(layers, LAYER_BYTES, limit, f"{what} would hold {layers:.3g} layers",
                  "fewer layers")
    return check_count(layers * (layouts + 1), LAYER_SECONDS, what, "layer walk", time_limit)


def check_passes(passes, what, limit=None, time_limit=TIME_LIMIT, runs=1):
    """Refuse a transformer closed form whose pipeline timeline would not fit or take too long.

    Parameters
    ----------
    passes : int
        Forward and backward passes of micro-batches over the stages, 2 m v p, of the
        largest layout (memory) ...
    what : str
        The layout and the options that chose it, for the message.
    limit : int, optional
        Bytes allowed (default :func:`studies.memory.available_memory`; None there: no check).
    time_limit : float, optional
    runs : int, optional
        Times the closed form walks the passes (:func:`workloads.transformer.closed.timelines`);
        the time counts each, the memory one.

    Returns
    -------
    float
        The estimated CPU seconds (:data:`PASS_SECONDS` each pass of each run).

    Raises
    ------
    NetsimError
        Naming the passes, their bytes and the limit.

    Examples
    --------
    >>> check_passes(2 * 10**9, "tp 8 x pp 1 x dp 1, m = 1e+09", limit=2**34)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: tp 8 x pp 1 x dp 1, m = 1e+09 would list 2e+09 micro-batch passes in the closed form's pipeline timeline, 560 GB at 280 B each, over the 17.2 GB of memory available; ...
    """
    _check_memory(passes, PASS_BYTES, limit, f"{what} would list {passes:.3g} micro-batch "
                  f"passes in the closed form's pipeline timeline",
                  "a smaller --global-batch or a larger --micro-batch")
    return check_count(passes * runs, PASS_SECONDS, what, "micro-batch passe", time_limit)


def _check_memory(count, unit_bytes, limit, held, instead):
    """Refuse ``count`` items of ``unit_bytes`` each over ``limit`` bytes (default: the memory
    available); ``held`` says what holds them and ``instead`` what to give instead."""
    limit = available_memory() if limit is None else limit
    nbytes = count * unit_bytes
    if limit is not None and nbytes > limit:
        raise NetsimError(f"{held}, {format_bytes(nbytes)} at {unit_bytes} B each, over the "
                          f"{format_bytes(limit)} of memory available; use {instead}, or "
                          f"--force to try anyway")


def check_count(count, unit_seconds, what, unit, time_limit=TIME_LIMIT):
    """Refuse ``count`` units of ``unit_seconds`` each above ``time_limit`` CPU seconds.

    Parameters
    ----------
    count : int
    unit_seconds : float
    what : str
        The option and its value, for the message (``--epochs 100000000``).
    unit : str
        What one unit is (``epoch``).
    time_limit : float, optional

    Returns
    -------
    float
        The estimated CPU seconds.

    Raises
    ------
    NetsimError
        With the count, the unit's cost and the total.

    Examples
    --------
    >>> check_count(10, EPOCH_SECONDS, "--epochs 10", "epoch")
    0.018
    >>> check_count(10**8, EPOCH_SECONDS, "--epochs 100000000", "epoch")
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: --epochs 100000000 would take at least 1.8e+05 s of CPU (1e+08 epochs at 1.8 ms each, the cheapest measured in benchmarks/README.md), over the 3600 s allowed; use fewer, or --force to try anyway
    """
    seconds = count * unit_seconds
    if time_limit is not None and seconds > time_limit:
        raise NetsimError(
            f"{what} would take at least {seconds:.3g} s of CPU ({count:.3g} {unit}s at "
            f"{unit_seconds * 1e3:.3g} ms each, the cheapest measured in benchmarks/README.md), "
            f"over the {time_limit:.0f} s allowed; use fewer, or --force to try anyway")
    return seconds


MEMBER_BYTES = 164
"""Peak bytes per member of a collective's group in a projected trace
(:func:`netsim.trace.reproject.reproject`, written by ``netsim import kineto --ranks``): a
2-rank profile's one allreduce projected to 10^6 and 4 x 10^6 ranks peaked at 164 MB and
645 MB (``/usr/bin/time``, 2026-12-08): (645,336 - 164,396) kB over the 3 x 10^6 members
between them. ``benchmarks/README.md``, "The work estimate"."""

MEMBER_SECONDS = 2.46e-6
"""CPU seconds per member of a projected collective's group, from the same two runs (3.19 s
and 10.56 s of CPU: 7.37 s over 3 x 10^6 members)."""


def check_members(members, what, limit=None, time_limit=TIME_LIMIT):
    """Refuse a projection whose collectives' groups would not fit, or take over the hour.

    A projected collective over every rank holds each member in its group: a 2-rank profile
    projected to 10^8 ranks is one op (what :func:`studies.scaling.trace_size.check_ops`
    counts) but 10^8 members, 16.4 GB and about 4 minutes at :data:`MEMBER_BYTES` and
    :data:`MEMBER_SECONDS` each.

    Returns
    -------
    float
        The estimated CPU seconds.

    Examples
    --------
    >>> round(check_members(10**6, "a job", limit=10**9), 2)
    2.46
    >>> check_members(10**8, "the job at 100000000 ranks", limit=2**33)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: the job at 100000000 ranks would hold 1e+08 members in its collectives' groups, 16.4 GB at 164 B each, over the 8.59 GB ...
    """
    _check_memory(members, MEMBER_BYTES, limit, f"{what} would hold {members:.3g} members in "
                  f"its collectives' groups", "fewer --ranks")
    return check_count(members, MEMBER_SECONDS, what, "group member", time_limit)


def model_copies(workers):
    """Copies of the model a paradigm's run of ``workers`` workers holds at its peak, at most.

    Each worker holds up to four vectors of the model's size (its weights, its gradient, a
    momentum or ADMM's dual variable, and a copy received or averaged), and the server or
    coordinator two more: 4 workers + 2. Checked against the peaks measured on Iris with 4
    workers, one epoch, in copies of the weights (tracemalloc, 2026-11-26, issue 33's fifth
    round): single (one worker) 6.0, allreduce 8.9, ps-async 12.9, model-averaging 13.4,
    ps-sync and DGC 14.6, ADMM 17.4; the rule gives 6 and 18.

    Examples
    --------
    >>> model_copies(1), model_copies(4)
    (6, 18)
    """
    return 4 * max(int(workers), 1) + 2


_COPIES = ("models, gradients and optimiser state of the run's workers",
           "a model and its gradient")  # what the copies are, for the message


def check_widths(widths, what="hidden", limit=None, inputs=4, outputs=3, copies=2):
    """Refuse layer widths whose parameters alone would not fit in memory.

    The model is the paradigms' MLP from ``inputs`` features through ``widths`` to
    ``outputs`` classes (Iris, the smallest dataset: 4 features, 3 classes), its float64
    weights and biases counted by :func:`workloads.mlp.num_params`; each of ``copies``
    (:func:`model_copies` of a run; 2 by default, a model and its gradient) takes them all.

    Parameters
    ----------
    widths : sequence of int
    what : str, optional
        The option, for the message.
    limit : int, optional
        Bytes allowed (default :func:`studies.memory.available_memory`; None there: no check).
    inputs, outputs, copies : int, optional

    Returns
    -------
    int
        The parameters counted (0 for no widths).

    Raises
    ------
    NetsimError

    Examples
    --------
    Weights 4 x 64 + 64 x 64 + 64 x 3, biases 64 + 64 + 3:

    >>> check_widths((64, 64), limit=2**30)
    4675
    >>> check_widths((100000000,), limit=3e9)
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: hidden=100000000 would hold 8e+08 parameters, 12.8 GB in 2 copies (a model and its gradient), over the 3 GB of memory available; use narrower layers
    """
    widths = [int(w) for w in widths]
    if not widths:
        return 0
    weights = num_params((inputs, *widths, outputs))
    nbytes = 8 * weights * copies
    limit = available_memory() if limit is None else limit
    if limit is not None and nbytes > limit:
        raise NetsimError(
            f"{what}={','.join(map(str, widths))} would hold {weights:.3g} parameters, "
            f"{format_bytes(nbytes)} in {copies} copies ({_COPIES[copies == 2]}), over the "
            f"{format_bytes(limit)} of memory available; use narrower layers")
    return weights


def check_training(options, iterations=None, runs=1, workers=2):
    """A paradigm's ``epochs`` and ``hidden`` options and a projection's ``iterations`` checked.

    Parameters
    ----------
    options : dict
        Paradigm options (``epochs``, ``hidden``), as ``--set`` and a sweep give them.
    iterations : int, optional
        Iterations a scaling study projects at each P (``--iterations``).
    runs : int, optional
        Runs of ``epochs`` each (a sweep's paradigm points).
    workers : int, optional
        Workers of a run: its layer widths must fit :func:`model_copies` times in memory,
        and a pipelined allreduce of ``segments`` k sends at least 2 (workers - 1) k
        messages an epoch, whose trace must fit too (:func:`studies.scaling.trace_size.check_ops`).

    Returns
    -------
    float
        The CPU seconds priced: the epochs of every run and the iterations (0 when
        neither is chosen above one epoch of the default width).

    Raises
    ------
    NetsimError
        From :func:`check_count` or :func:`check_widths`.

    Examples
    --------
    Five epochs and ten iterations at :data:`EPOCH_SECONDS` each (64 x 64 parameters price
    below it):

    >>> round(check_training({"epochs": 5, "hidden": (64, 64)}, iterations=10), 6)
    0.027
    >>> check_training({"segments": 10**9}, workers=4)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: segments 1000000000 on 4 workers would be 6e+09 messages, a trace of 330 GB ...
    >>> check_training({"epochs": 1000, "hidden": (100000, 1000)})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: epochs 1000 of 1.01e+08 parameters would take at least 1.21e+04 s ...
    >>> check_training({"epochs": 10**6}, runs=40)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: epochs 1000000 over 40 runs would take at least 7.2e+04 s ...
    """
    hidden = options.get("hidden")
    weights = (check_widths([hidden] if isinstance(hidden, int) else hidden,
                            copies=model_copies(workers)) if hidden else 0)
    epoch = max(EPOCH_SECONDS, weights * SAMPLES * WEIGHT_SECONDS)
    epochs = int(options.get("epochs") or 1)
    seconds = 0.0
    if epochs > 1 or runs > 1 or epoch > EPOCH_SECONDS:
        what = (f"epochs {epochs}" + (f" over {runs} runs" if runs > 1 else "")
                + (f" of {weights:.3g} parameters" if weights else ""))
        seconds += check_count(epochs * runs, epoch, what, "epoch")
    if iterations:
        seconds += check_count(int(iterations), epoch, f"--iterations {iterations}", "iteration")
    segments = options.get("segments")
    if segments:
        check_ops(2 * max(int(workers) - 1, 1) * int(segments) * epochs * runs,
                  f"segments {segments} on {workers} workers", "messages", "fewer segments")
    return seconds
