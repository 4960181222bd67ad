"""Whether a transformer layout fits in a GPU's memory: the need per GPU against the GPU's own.

The need is :func:`workloads.transformer.memory.memory_per_gpu` on the fullest pipeline stage,
split into weights, gradients, optimizer state and activations; the GPU's memory is its
datasheet's (:func:`topologies.devices.gpu_memory`) for the model the topology's GPU nodes
name, or for ``--device``, or a number given. :func:`check_memory` refuses a layout whose need
is larger, naming the constraint: a point that cannot run on the GPU is not reported as if it
could. The need leaves out temporary buffers, the communication library's buffers and
fragmentation (:mod:`workloads.transformer.memory`): a layout let through may still not fit,
one refused cannot.
"""

from netsim.errors import NetsimError
from netsim.units import format_bytes
from topologies.devices import gpu_memory
from workloads.transformer.memory import memory_per_gpu

__all__ = ["OutOfMemory", "need", "capacity_of", "check_memory"]


class OutOfMemory(NetsimError):
    """A layout whose memory per GPU exceeds the GPU's (:func:`check_memory`)."""


def need(c, L, pipeline="1f1b", recompute="full", sequence_parallel=False, chunks=1, zero=0,
         fsdp=False, moe=None, ep=1, first_stage_layers=None, last_stage_layers=None, cp=1):
    """Bytes per GPU of layout ``L`` (tp, pp, dp) of model ``c``, by part.

    :func:`workloads.transformer.memory.memory_per_gpu` with FSDP counted as ZeRO-3:
    ``weights``, ``gradients``, ``optimizer``, ``states`` (their sum), ``activations`` and
    ``total``.

    Examples
    --------
    >>> from workloads.transformer.flops import get_config
    >>> from workloads.transformer.layout import Layout
    >>> n = need(get_config("gpt3-175b", global_batch=8), Layout(1, 1, 8))
    >>> round(n["weights"] / 1e9), round(n["optimizer"] / 1e9)
    (349, 2095)
    """
    return memory_per_gpu(c, L.tp, L.pp, L.dp, pipeline=pipeline, recompute=recompute,
                          sequence_parallel=sequence_parallel, chunks=chunks,
                          zero=3 if fsdp else zero, moe=moe, ep=ep,
                          first_stage_layers=first_stage_layers,
                          last_stage_layers=last_stage_layers, cp=cp)


def capacity_of(G, device=None):
    """Bytes of memory of one GPU of ``G`` (its GPU nodes' ``model``), or of ``device``,
    and how to name it: ``(bytes, name)``.

    Raises
    ------
    NetsimError
        For a graph without GPUs, GPUs of no model, or a model with no memory figure
        (:data:`topologies.devices.GPU_MEMORY`).

    Examples
    --------
    >>> from topologies import dgx_h100
    >>> capacity_of(dgx_h100())
    (85899345920.0, 'an H100 (80 GiB, its datasheet)')
    >>> capacity_of(dgx_h100(), device="H200")[1]
    'an H200 (141 GiB, its datasheet)'
    """
    model = device
    if device is None:
        gpus = [m for k, m in G.nodes(data="model") if G.nodes[k].get("kind") == "gpu"]
        if not gpus:
            raise NetsimError("the topology has no gpu nodes: a transformer's training runs "
                              "on GPUs (try --topology gpu_cluster:machine=dgx_h100)")
        model = gpus[0]
        if model is None:
            raise NetsimError("the topology's GPUs name no model, whose memory the check "
                              "needs; give --device or --memory")
    size = gpu_memory(model)
    article = "an" if model[:1].upper() in "AEFHILMNORSX" else "a"
    return size, f"{article} {model} ({size / 2**30:g} GiB, its datasheet)"


def check_memory(c, L, capacity, name, what=None, **kwargs):
    """Refuse layout ``L`` of model ``c`` where one GPU would need more than ``capacity`` bytes.

    ``kwargs`` are :func:`need`'s options; ``name`` says whose memory ``capacity`` is and
    ``what`` the point (default the layout). Returns the need (:func:`need`) when it fits.

    Raises
    ------
    OutOfMemory
        One line: the need, by part, and the memory it exceeds.

    Examples
    --------
    >>> from workloads.transformer.flops import get_config
    >>> from workloads.transformer.layout import Layout
    >>> c = get_config("gpt3-175b", global_batch=8)
    >>> check_memory(c, Layout(8, 16, 1), 80 * 2**30, "an H100")["total"] < 80 * 2**30
    True
    >>> check_memory(c, Layout(1, 1, 8), 80 * 2**30, "an H100")
    Traceback (most recent call last):
    ...
    studies.scaling.fit.OutOfMemory: the model at tp 1 x pp 1 x dp 8 needs 2.8 TB per GPU (weights 349 GB, gradients 349 GB, optimizer state 2.1 TB, activations 7.7 GB) and an H100 holds 85.9 GB: it does not fit
    """
    n = need(c, L, **kwargs)
    if n["total"] > capacity:
        cp = kwargs.get("cp", 1)
        where = what or (f"the model at tp {L.tp} x pp {L.pp} x dp {L.dp}"
                         + (f" x cp {cp}" if cp > 1 else ""))
        raise OutOfMemory(f"{where} needs {format_bytes(n['total'])} per GPU (weights "
                          f"{format_bytes(n['weights'])}, gradients "
                          f"{format_bytes(n['gradients'])}, optimizer state "
                          f"{format_bytes(n['optimizer'])}, activations "
                          f"{format_bytes(n['activations'])}) and {name} holds "
                          f"{format_bytes(capacity)}: it does not fit")
    return n
