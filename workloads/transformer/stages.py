"""What one pipeline stage of a tensor-parallel transformer holds: layers, FLOPs, gradient buckets.

Shared by the trace (:func:`workloads.transformer.iteration.schedule`) and its closed form
(:func:`workloads.transformer.closed.closed_form`), so that both count the same
work. Layers are split evenly over the ``pp`` stages (Megatron-LM requires
``layers % pp == 0``), or unevenly as Megatron-LM's
``--decoder-first-pipeline-num-layers`` and ``--decoder-last-pipeline-num-layers``
split them (:func:`stage_layers`); every tensor-parallel shard of a stage does ``1/tp`` of
each matrix multiplication (Narayanan et al. SC'21, section 2.3) and holds
``1/tp`` of each split weight (:func:`shard_parameters`). Stage 0 holds the
embeddings (the word embedding split by vocabulary, ``V h / tp``, and the
position embedding whole, ``s h``); with ``pp > 1`` the last stage holds a copy
of the word embedding's shard for the logit layer (Megatron ties them), and
untied its own logit layer at any ``pp`` (:func:`embedding_shard`). The data-parallel gradient
allreduce goes in buckets in the order the backward pass completes gradients
(last layer first), each closed once it holds at least ``bucket_bytes``, as
PyTorch DDP's ``Reducer`` fills them (``bucket_cap_mb`` = 25 MiB by default,
:data:`workloads.overlap.DDP_BUCKET_BYTES`); with ``stage_buckets="first"`` only the first
stage does, every later one reducing its gradients in one bucket, as Megatron-Core
(:func:`stage_bucket_bytes`).
"""

import math
from typing import NamedTuple

from netsim.checks import check_int, check_real

from workloads.transformer import pipeline as _pipeline
from workloads.errors import WorkloadError
from workloads.transformer.layout import layout
from workloads.transformer.context.ring import check_cp
from workloads.transformer.flops import (RECOMPUTE, attention_core_forward_flops,
                                         attention_forward_flops,
                                         layer_parameter_split, logit_forward_flops,
                                         mlp_forward_flops)

__all__ = ["bucket_members", "Stage", "stage", "stage_layers", "check_fit", "check_options",
           "check", "buckets", "STAGE_BUCKETS", "stage_bucket_bytes", "shard_parameters",
           "embedding_shard"]

#: Which pipeline stages fill gradient buckets of ``bucket_bytes`` (:func:`stage_bucket_bytes`).
STAGE_BUCKETS = ("every", "first")


class Stage(NamedTuple):
    """One stage's share of the model, per tensor-parallel shard and per micro-batch.

    ``layers``: the model's layer indices on this stage. ``attention`` and
    ``mlp``: forward FLOPs of one layer's blocks; ``logit``: forward FLOPs of
    the logit layer (0 off the last stage). ``grads``: parameters per gradient
    source in the order the backward pass completes them, as ``(source,
    parameters)`` with source ``"logit"``, a layer index or ``"embedding"``.
    ``core``: forward FLOPs of one layer's attention core that selective
    recomputation runs again before the layer's backward (0 otherwise).
    """

    index: int
    layers: tuple
    attention: float
    mlp: float
    logit: float
    grads: tuple
    core: float = 0.0


def shard_parameters(c, tp):
    """Parameters of one layer on one tensor-parallel shard: ``(12 h^2 + 7 h)/tp + 6 h``.

    Megatron-LM splits the QKV (``3 h^2 + 3 h``), output projection (``h^2``)
    and MLP (``4 h^2 + 4 h`` and ``4 h^2``) weights over the shards and keeps the
    two layer norms (``4 h``) and the two biases added after an allreduce
    (``2 h``) whole on every shard (``megatron/core/tensor_parallel/layers.py``:
    ``ColumnParallelLinear`` splits its bias, ``RowParallelLinear`` does not);
    at ``tp = 1`` the layer's ``12 h^2 + 13 h``. Other shapes split as
    :func:`workloads.transformer.flops.layer_parameter_split` says.

    Examples
    --------
    >>> from workloads.transformer.flops import config, layer_parameters
    >>> c = config(1, 64, 4, 8, 0)
    >>> shard_parameters(c, 1) == layer_parameters(c), shard_parameters(c, 2)
    (True, 25184)
    """
    split, whole = layer_parameter_split(c)
    return split // tp + whole


def embedding_shard(c, tp, first, last):
    """Embedding parameters a shard of a stage holds: ``(first stage's, last stage's)``.

    The first stage: the word embedding split by vocabulary, ``V h / tp``, and
    learned position embeddings whole, ``s h``. The last: the logit layer's
    ``V h / tp``, a copy of the word embedding's shard when they are tied and
    ``pp > 1`` (Megatron ties them), its own weights when untied; with one stage
    and tied weights, nothing more.

    Examples
    --------
    >>> from workloads.transformer.flops import config
    >>> c = config(2, 8, 2, 4, 16)
    >>> embedding_shard(c, 2, True, False), embedding_shard(c, 2, False, True)
    ((96, 0), (0, 64))
    >>> embedding_shard(c._replace(tied=False, position="rope"), 2, True, True)
    (64, 64)
    """
    head = (c.vocab // tp + c.seq * (c.position == "learned")) * c.hidden if first else 0
    tail = c.vocab * c.hidden // tp if last and c.vocab and (not first or not c.tied) else 0
    return head, tail


def stage_layers(layers, pp, first_stage_layers=None, last_stage_layers=None):
    """How many layers each of ``pp`` stages holds: evenly, or Megatron-LM's uneven split.

    Given ``first_stage_layers`` and/or ``last_stage_layers`` (Megatron-LM's
    ``--decoder-first-pipeline-num-layers`` and ``--decoder-last-pipeline-num-layers``,
    ``megatron/training/arguments.py``), those stages hold that many and the
    remaining layers split evenly over the stages between, at least one each, or
    none when no stage is left between (the "Uneven PP" check of
    ``TransformerConfig.__post_init__``, ``megatron/core/transformer/transformer_config.py``,
    Megatron-LM core_v0.15.0rc7-2333-gd98e8a6).

    Raises
    ------
    WorkloadError
        Naming the constraint the split breaks.

    Examples
    --------
    >>> stage_layers(8, 4), stage_layers(126, 16, 7, 7)
    ((2, 2, 2, 2), (7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7))
    >>> stage_layers(126, 16, 6, 6)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: 114 layers left for 14 middle pipeline stages do not split evenly over them (first_stage_layers 6, last_stage_layers 6)
    """
    if first_stage_layers is None and last_stage_layers is None:
        if layers % pp:
            raise WorkloadError(f"{layers} layers do not split over {pp} pipeline stages")
        return (layers // pp,) * pp
    ends, rest, middle = {}, layers, pp
    for name, n in (("first_stage_layers", first_stage_layers),
                    ("last_stage_layers", last_stage_layers)):
        if n is not None:
            ends[name] = check_int(n, name, error=WorkloadError)
            rest, middle = rest - ends[name], middle - 1
    given = ", ".join(f"{k} {v}" for k, v in ends.items())
    if middle < 0:
        raise WorkloadError(f"first and last stage layers need pp >= 2, got pp {pp}")
    if rest < 0:
        raise WorkloadError(f"{given} exceed the model's {layers} layers")
    if bool(rest) != bool(middle) or (middle and rest % middle):
        raise WorkloadError(f"{rest} layers left for {middle} middle pipeline stages do not "
                            f"split evenly over them ({given})")
    return ((ends.get("first_stage_layers"),) * ("first_stage_layers" in ends)
            + (rest // middle if middle else 0,) * middle
            + (ends.get("last_stage_layers"),) * ("last_stage_layers" in ends))


def check_fit(c, L, first_stage_layers=None, last_stage_layers=None):
    """Raise :class:`WorkloadError` unless the model splits over the layout ``L``.

    Its layers over the stages (:func:`stage_layers`), its heads, key/value heads,
    MLP width and vocabulary over the tensor-parallel shards, its global batch
    over the replicas' micro-batches.

    Examples
    --------
    >>> from workloads.transformer.flops import config
    >>> from workloads.transformer.layout import Layout
    >>> check_fit(config(3, 8, 2, 4, 0), Layout(1, 2, 1))
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: 3 layers do not split over 2 pipeline stages
    """
    stage_layers(c.layers, L.pp, first_stage_layers, last_stage_layers)
    if c.heads % L.tp:
        raise WorkloadError(f"{c.heads} heads do not split over tp {L.tp}")
    if c.kv % L.tp:
        raise WorkloadError(f"{c.kv} key/value heads (kv_heads) do not split over tp {L.tp}")
    if c.ffn % L.tp:
        raise WorkloadError(f"the MLP's width ffn_hidden {c.ffn} does not split over tp {L.tp}")
    if c.vocab % L.tp:
        raise WorkloadError(f"vocabulary {c.vocab} does not split over tp {L.tp} (pad it)")
    if c.global_batch % (c.micro_batch * L.dp):
        raise WorkloadError(f"global batch {c.global_batch} is not a multiple of micro-batch "
                            f"{c.micro_batch} x dp {L.dp}")


def stage(c, L, index, first_stage_layers=None, last_stage_layers=None, cp=1):
    """Stage ``index`` of model ``c`` under layout ``L``: a :class:`Stage`.

    ``first_stage_layers`` and ``last_stage_layers``: an uneven split (:func:`stage_layers`).
    ``cp``: context parallelism, each rank's FLOPs ``1/cp``
    (:mod:`workloads.transformer.context.ring`); the parameters stay.

    Examples
    --------
    >>> from workloads.transformer.flops import config
    >>> from workloads.transformer.layout import Layout
    >>> s = stage(config(4, 8, 2, 4, 16), Layout(2, 2, 1), 1)
    >>> s.layers, s.grads[0], s.grads[1]   # logit copy 16*8/2, layer 3: (12*64+7*8)/2 + 6*8
    ((2, 3), ('logit', 64), (3, 460))
    >>> stage(config(5, 8, 2, 4, 16), Layout(1, 3, 1), 1, 1, 2).layers
    (1, 2)
    """
    check_fit(c, L, first_stage_layers, last_stage_layers)
    counts = stage_layers(c.layers, L.pp, first_stage_layers, last_stage_layers)
    start = sum(counts[:index])
    layers = tuple(range(start, start + counts[index]))
    last, first = index == L.pp - 1, index == 0
    head, tail = embedding_shard(c, L.tp, first, last)
    grads = [("logit", tail)] if tail else []
    grads += [(k, shard_parameters(c, L.tp)) for k in reversed(layers)]
    if first and c.vocab:
        grads.append(("embedding", head))
    n = L.tp * cp
    return Stage(index, layers, attention_forward_flops(c) / n, mlp_forward_flops(c) / n,
                 logit_forward_flops(c) / n if last else 0.0, tuple(grads))


def buckets(grads, element, bucket_bytes):
    """Group gradient sources into buckets of at least ``bucket_bytes`` (the last may be less).

    Parameters
    ----------
    grads : sequence of (source, parameters)
        In the order the backward pass completes them (:attr:`Stage.grads`).
    element : int
        Bytes per gradient value.
    bucket_bytes : float
        A bucket closes once it holds at least this many bytes.

    Returns
    -------
    list of (last source, bytes)
        Each bucket's last source (the one whose gradient completes it) and size.

    Examples
    --------
    >>> buckets([("a", 10), ("b", 10), ("c", 30), ("d", 5)], 4, 60)
    [('b', 80), ('c', 120), ('d', 20)]
    """
    return [(sources[-1], size) for sources, size in bucket_members(grads, element, bucket_bytes)]


def stage_bucket_bytes(bucket_bytes, pp, stage_buckets="every", chunks=1):
    """Each pipeline stage's gradient bucket size: a list of ``pp`` sizes in bytes.

    ``"every"``: ``bucket_bytes`` on every stage. ``"first"``: on the first stage only;
    every later stage reduces its gradients in one bucket (``math.inf``: it closes with
    the stage's last gradient, after its last backward), as Megatron-Core's DDP does
    (NVIDIA/Megatron-LM ``megatron/core/distributed/distributed_data_parallel.py`` at
    f2e5db402c, July 2024, core_r0.8.0's code: "Turn off bucketing if we are on a
    pipeline stage that is not the first (since data-parallel communication on these
    stages is not on the critical path)", ``bucket_size = None`` when the pipeline rank
    is above 0).

    Raises
    ------
    WorkloadError
        For an unknown choice, or ``"first"`` with several chunks per stage
        (Megatron-Core then also reduces every model chunk after the first in one
        bucket, ``disable_bucketing`` in ``megatron/training/training.py``: not modelled).

    Examples
    --------
    >>> stage_bucket_bytes(40e6, 3), stage_bucket_bytes(40e6, 3, "first")
    ([40000000.0, 40000000.0, 40000000.0], [40000000.0, inf, inf])
    >>> buckets([("a", 10), ("b", 10)], 4, stage_bucket_bytes(40, 2, "first")[1])
    [('b', 80)]
    >>> stage_bucket_bytes(40e6, 2, "first", chunks=2)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: stage_buckets='first' with 2 chunks per stage is not modelled (Megatron-Core reduces every chunk after the first in one bucket too)
    """
    if stage_buckets not in STAGE_BUCKETS:
        raise WorkloadError(f"unknown stage_buckets {stage_buckets!r}; known: "
                            f"{', '.join(STAGE_BUCKETS)}")
    if stage_buckets == "first" and chunks > 1:
        raise WorkloadError(f"stage_buckets='first' with {chunks} chunks per stage is not "
                            "modelled (Megatron-Core reduces every chunk after the first in one "
                            "bucket too)")
    size = float(bucket_bytes)
    return [size if stage_buckets == "every" or s == 0 else math.inf for s in range(pp)]


def bucket_members(grads, element, bucket_bytes):
    """:func:`buckets` with every source of each bucket: a list of (sources, bytes).

    Examples
    --------
    >>> bucket_members([("a", 10), ("b", 10), ("c", 30), ("d", 5)], 4, 60)
    [(('a', 'b'), 80), (('c',), 120), (('d',), 20)]
    """
    out, size, members = [], 0, []
    for k, (source, params) in enumerate(grads):
        size += params * element
        members.append(source)
        if size >= bucket_bytes or k == len(grads) - 1:
            out.append((tuple(members), size))
            size, members = 0, []
    return out


def check_options(c, tp, pp, dp, pipeline, recompute, bucket_bytes, iterations, chunks=1,
                  first_stage_layers=None, last_stage_layers=None, cp=1):
    """:func:`check`'s checks without its stages (whose layers it would list): the Layout
    (of ``tp x pp x dp``; ``cp`` is checked against the sequence,
    :func:`workloads.transformer.context.ring.check_cp`).

    Examples
    --------
    >>> from workloads.transformer.flops import config
    >>> check_options(config(4, 8, 2, 4, 0), 1, 2, 1, "gpipe", "none", 1e6, 1).pp
    2
    >>> check_options(config(4, 8, 2, 4, 0, global_batch=2), 1, 2, 1, "interleaved", "none",
    ...               1e6, 1, 2, 1)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: first/last stage layers need the 1f1b or gpipe schedule (uneven interleaved stages are not modelled)
    """
    L = layout(tp, pp, dp)
    if recompute not in RECOMPUTE:
        raise WorkloadError(f"unknown recompute {recompute!r}; known: {', '.join(RECOMPUTE)}")
    check_real(bucket_bytes, "bucket_bytes", lo=0, strict=True, error=WorkloadError)
    check_int(iterations, "iterations", error=WorkloadError)
    uneven = (first_stage_layers, last_stage_layers)
    check_fit(c, L, *uneven)
    check_cp(c, cp)
    _pipeline.check_chunks(pipeline, L.pp, c.global_batch // (c.micro_batch * L.dp), chunks)
    if uneven != (None, None) and pipeline == "interleaved":
        raise WorkloadError("first/last stage layers need the 1f1b or gpipe schedule "
                            "(uneven interleaved stages are not modelled)")
    return L


def check(c, tp, pp, dp, pipeline, recompute, bucket_bytes, iterations, chunks=1,
          first_stage_layers=None, last_stage_layers=None, cp=1):
    """Check a schedule's options; its :class:`~workloads.transformer.layout.Layout` and stages.

    ``first_stage_layers`` and ``last_stage_layers`` split the layers unevenly
    (:func:`stage_layers`), under GPipe or 1F1B (one chunk per stage). With context
    parallelism over ``cp`` ranks the layout is that of ``dp cp`` replicas, Megatron's rank
    order (:mod:`workloads.transformer.context.ring`), and each rank's FLOPs are ``1/cp``.

    Returns
    -------
    L : workloads.transformer.layout.Layout
    stages : list of list of Stage
        ``stages[s][k]``: chunk ``k`` of stage ``s``, virtual stage ``k pp + s``
        of ``pp * chunks`` (one chunk but for the interleaved schedule).

    Raises
    ------
    WorkloadError
        For a bad degree, schedule, chunk count, recomputation, bucket size or
        iteration count, or a model that does not split over the layout, or an
        uneven split under the interleaved schedule.

    Examples
    --------
    >>> from workloads.transformer.flops import config
    >>> L, stages = check(config(4, 8, 2, 4, 0), 1, 2, 1, "gpipe", "none", 1e6, 1)
    >>> L.world, [s[0].layers for s in stages]
    (2, [(0, 1), (2, 3)])
    >>> L, stages = check(config(4, 8, 2, 4, 0, global_batch=2), 1, 2, 1, "interleaved",
    ...                   "none", 1e6, 1, chunks=2)
    >>> [[k.layers for k in s] for s in stages]
    [[(0,), (2,)], [(1,), (3,)]]
    """
    L = check_options(c, tp, pp, dp, pipeline, recompute, bucket_bytes, iterations, chunks,
                      first_stage_layers, last_stage_layers, cp)
    uneven = (first_stage_layers, last_stage_layers)
    if uneven != (None, None):
        stages = [[stage(c, L, s, *uneven, cp=cp)] for s in range(L.pp)]
    else:
        virtual = L._replace(pp=L.pp * chunks)
        stages = [[stage(c, virtual, k * L.pp + s, cp=cp) for k in range(chunks)]
                  for s in range(L.pp)]
    if recompute == "selective":
        core = attention_core_forward_flops(c) / (L.tp * cp)
        stages = [[st._replace(core=core) for st in row] for row in stages]
    return L._replace(dp=L.dp * cp), stages
