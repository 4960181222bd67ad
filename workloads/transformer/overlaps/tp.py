"""Tensor-parallel communication overlapped with the GEMMs (Megatron-LM ``--tp-comm-overlap``).

With sequence parallelism every attention and MLP block starts with an allgather of
its input among the ``tp`` shards and ends with a reduce-scatter of its output
(Korthikanti et al. 2022, 4.2.2). Megatron-Core's ``tp_comm_overlap``
(``--tp-comm-overlap``; Megatron-LM core_r0.8.0 ``megatron/core/model_parallel_config.py``:
"allows overlapping of Linear layer execution with tensor parallel communication
collectives like AllGather/ReduceScatter ... wherever possible during the forward and the
backward pass", with ``tp_comm_overlap_ag``, ``tp_comm_overlap_rs``,
``tp_comm_bulk_dgrad`` and ``tp_comm_bulk_wgrad`` all on by default) hands them to
Transformer Engine's userbuffers, which split each linear layer's GEMM into chunks and
move one chunk while computing another (ring exchange for the allgather before the QKV
and first MLP GEMM, a pipelined reduce-scatter after the projection and the last MLP
GEMM; in the backward the same collectives beside the data- and weight-gradient GEMMs).
``megatron/training/arguments.py`` (core_r0.8.0) refuses it without sequence parallelism.

The model (``tp_overlap=True`` of :func:`workloads.transformer.iteration.schedule` and
:func:`workloads.transformer.closed.closed_form`): a block's collectives leave the
compute stream. The allgather starts when the block could, the reduce-scatter after it on
the same communication stream, the block's compute beside them, and the next block waits
for all three. A block thus takes ``max(compute, allgather + reduce-scatter)``
(:func:`block_time`). This is the most the overlap can hide: the chunk of the GEMM that
runs before the first (or after the last) piece of communication, the SMs that the
communication kernels take from the GEMM, and the rest of the block's work that is no
linear layer (the attention core, the norms) are not taken off. Not with experts or
ZeRO-3 (refused: their collectives are modelled on the compute stream).
"""

from workloads.errors import WorkloadError

__all__ = ["check_tp_overlap", "block_time", "exposed"]


def check_tp_overlap(tp_overlap, sequence_parallel, zero=0, fsdp=False, moe=None):
    """``tp_overlap`` as a bool, or WorkloadError for a combination that is not modelled.

    Examples
    --------
    >>> check_tp_overlap(True, True), check_tp_overlap(False, False)
    (True, False)
    >>> check_tp_overlap(True, False)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: tp_overlap needs sequence_parallel (Megatron-LM refuses --tp-comm-overlap without --sequence-parallel)
    """
    if not isinstance(tp_overlap, bool):
        raise WorkloadError(f"tp_overlap must be True or False, got {tp_overlap!r}")
    if not tp_overlap:
        return False
    if not sequence_parallel:
        raise WorkloadError("tp_overlap needs sequence_parallel (Megatron-LM refuses "
                            "--tp-comm-overlap without --sequence-parallel)")
    if zero == 3 or fsdp or moe is not None:
        raise WorkloadError("tp_overlap is not modelled with ZeRO-3, FSDP or experts")
    return True


def block_time(compute, comm):
    """Seconds of a block whose ``comm`` seconds of collectives run beside ``compute``.

    Examples
    --------
    >>> block_time(3.0, 1.0), block_time(1.0, 3.0)
    (3.0, 3.0)
    """
    return max(compute, comm)


def exposed(compute, comm):
    """The seconds ``comm`` adds to a block of ``compute`` seconds under the overlap.

    Examples
    --------
    >>> exposed(3.0, 1.0), exposed(1.0, 3.0)
    (0.0, 2.0)
    """
    return block_time(compute, comm) - compute
