"""Transformer training on a GPU cluster: time per iteration, MFU and its losses against P, and
the fastest (TP, PP, DP) layout.

:func:`study` puts a model (:mod:`workloads.transformer.flops`) under a fixed
tensor and pipeline degree on ``P`` GPUs of a topology (data parallelism takes
the rest) and reports, per P, the closed form of
:func:`workloads.transformer.closed.closed_form` (compute, bubble, exposed
communication per parallelism), the tokens per second and the model FLOPs
utilisation (MFU: the model's FLOPs without recomputation, ``72 B s l h^2 (1
+ s/(6h) + V/(12 l h))``, over the time and the peak, as Chowdhery et al. 2022,
PaLM, Appendix B define it), and with ``simulate`` the replay of the trace on
the topology, with the link that was saturated longest. :func:`sweep` ranks
every layout of P GPUs by the closed form.

Each GPU computes at ``efficiency`` times its dense FP16 peak
(:func:`topologies.devices.device_flops` of the topology's GPU model); the
default efficiency is the one taken from Narayanan et al.'s Table 1 row
:data:`studies.validation.megatron.REFERENCE` under the same FLOPs-only rule
(:func:`default_efficiency`; the layers' memory traffic,
:mod:`workloads.transformer.compute`, is not in this study yet). Links:
the alpha-beta (:func:`netsim.costmodel.alpha_beta`) of the first
tensor-parallel group, of the first pipeline hop and of the first data-parallel
pair as placed (ranks on GPUs in graph order). Each record carries the memory
per GPU of :func:`workloads.transformer.memory.memory_per_gpu`; the sweep can
leave out what does not fit.

With experts (``moe``, :mod:`workloads.transformer.moe`) and an expert-parallel
degree ``ep``, the all-to-alls cost the alpha-beta of the first
expert-parallel group as placed and the expert gradients that of the ends
of the first expert-data-parallel group; the record's ``ep_comm`` is their exposed time, the
MFU counts the router and the ``top_k`` experts in the model's FLOPs, and the
sweep also runs over ``ep``.
"""

import math


import networkx as nx
import numpy as np

from netsim import simulate as replay
from netsim.comm.alone import FusedNotAlone
from netsim.comm.mpich import local_order
from netsim.comm.priced import NcclPrices
from netsim.costmodel import alpha_beta
from netsim.network.compiled import as_network
from netsim.checks import check_callable, check_int, check_real
from netsim.errors import NetsimError, TopologyError
from netsim.network.automorphism import odometers, strides
from netsim.network.symmetry import SymmetryError
from netsim.trace.perturb import perturb
from netsim.units import format_bytes, format_time
from topologies.devices import device_flops, device_gemm
from workloads.errors import WorkloadError
from workloads.transformer.layout import Layout, ep_group, expert_dp_group, layout
from workloads.transformer.iteration import schedule, shard_shift, shift
from workloads.transformer.closed import closed_form
from workloads.transformer.flops import Config, iteration_flops
from workloads.transformer.fused import NotFusable
from workloads.transformer.moe import iteration_flops_delta, plan as moe_plan

from studies.memory import available_memory
from studies.scaling.fit import need
from studies.scaling.traces import check_workers
from studies.scaling.gaps import slower, why
from studies.validation.megatron import REFERENCE, ROWS, efficiency_from

__all__ = ["gpus_of", "machines_of", "peak_of", "gemm_of", "links_of", "hop_of", "ring_of",
           "dp_rails", "price_of",
           "default_efficiency", "check_arguments", "point", "replicas_of", "full_replay_ops",
           "FullReplayRefused", "check_full_replay", "replay_point", "study", "sweep",
           "sweep_layouts", "plot"]


def gpus_of(G):
    """The GPU nodes of ``G`` in graph order (where ranks are placed)."""
    return [n for n, k in G.nodes(data="kind") if k == "gpu"]


def machines_of(G, nodes):
    """The machine (the ``node`` attribute, 0 without one) of each of ``nodes``.

    Examples
    --------
    >>> from topologies import gpu_cluster
    >>> machines_of(gpu_cluster("dgx_h100", 2), ["gpu0", "gpu7", "gpu8"])
    [0, 0, 1]
    """
    return [G.nodes[v].get("node", 0) for v in nodes]


def peak_of(G, precision="fp16", device=None):
    """Dense peak FLOP/s of the GPUs of ``G`` (their ``model`` attribute), or of ``device``.

    ``device`` (a :data:`topologies.devices.DEVICES` name) overrides what the
    graph's GPU nodes say.

    Raises
    ------
    NetsimError
        For a graph without GPUs or with GPUs of no known model, or an unknown ``device``.

    Examples
    --------
    >>> from topologies import dgx_h100
    >>> peak_of(dgx_h100()) / 1e12, peak_of(dgx_h100(), device="A100") / 1e12
    (989.5, 312.0)
    """
    if device is not None:
        return device_flops(device, "fp16" if precision in ("fp16", "bf16") else precision)
    gpus = gpus_of(G)
    if not gpus:
        raise NetsimError("the topology has no gpu nodes: a transformer's training runs on GPUs "
                          "(try --topology gpu_cluster:machine=dgx_h100, dgx_h100:nodes=2)")
    model = G.nodes[gpus[0]].get("model")
    if model is None:
        raise NetsimError("the topology's GPUs name no model; give --device")
    return device_flops(model, "fp16" if precision in ("fp16", "bf16") else precision)


def gemm_of(G):
    """The GEMM time model of the GPUs of ``G`` (:func:`topologies.devices.device_gemm`).

    Raises
    ------
    NetsimError
        For a graph without GPUs, GPUs of no model, or a model with no GEMM
        benchmark row.

    Examples
    --------
    >>> from topologies import dgx_a100
    >>> gemm_of(dgx_a100()).sms
    108
    """
    gpus = gpus_of(G)
    model = G.nodes[gpus[0]].get("model") if gpus else None
    if model is None:
        raise NetsimError("compute='gemm' needs GPUs of a named model (try "
                          "--topology gpu_cluster:machine=dgx_h100)")
    return device_gemm(model)


def links_of(G, L, ep=1, library="auto"):
    """``{"tp": (alpha, beta), "pp": ..., "dp": ..., "ep": ..., "edp": ...}`` of ``L`` on ``G``.

    ``pp``: a pipeline hop as the replay moves it (:func:`hop_of`); ``dp``: the first
    and last replica of the first data-parallel group (its
    ring's slowest hop when the group leaves a machine; with ``tp < 8`` on
    8-GPU machines, replicas 0 and 1 share a machine even when the group spans
    several, and their NVLink would stand for the whole ring); ``ep``: the
    first expert-parallel group of expert-parallel degree
    ``ep``; ``edp``: the first and last member of the first
    expert-data-parallel group (replicas ``0`` and ``dp - ep``: its ring's
    slowest hop when the group leaves a machine).

    Where NCCL runs the data-parallel ring (``library`` ``"auto"`` or ``"nccl"``) and it
    leaves a machine, its bytes per second are those of the NIC rails it stripes over
    (:func:`dp_rails`): NCCL's rings cross machines one channel per NIC, each through
    the NIC of its own GPU (NCCL v2.30.7-1 ``search.cc``, ``connect.cc``
    ``connectRings``), so a group with ``g`` members in each DGX H100 moves its ring at
    ``g`` NICs' rate. MPICH's ring (``library="mpich"``) goes through one NIC.

    Examples
    --------
    >>> from topologies import dgx_h100
    >>> from workloads.transformer.layout import Layout
    >>> ab = links_of(dgx_h100(), Layout(8, 1, 1))
    >>> ab["tp"][0] > 0, ab["pp"], ab["dp"]
    (True, (0.0, 0.0), (0.0, 0.0))
    """
    nodes = gpus_of(G)
    if len(nodes) < L.world:
        raise NetsimError(f"the topology has {len(nodes)} GPUs for {L.world} ranks")
    net = as_network(G)   # compiled once: its routes serve every price below

    def pair(a, b):
        return alpha_beta(net, placement=[nodes[a], nodes[b]])

    dp = (0.0, 0.0)
    if L.dp > 1:
        alpha, beta = pair(0, L.rank(0, L.dp - 1, 0))
        rails = dp_rails(G, [nodes[r] for r in L.dp_group(0, 0)]) if library != "mpich" else 1
        dp = (alpha, beta / rails)
    return {"tp": alpha_beta(net, placement=nodes[:L.tp]) if L.tp > 1 else (0.0, 0.0),
            "pp": hop_of(net, L, nodes),
            "dp": dp,
            "ep": (alpha_beta(net, placement=[nodes[r] for r in ep_group(L, ep, 0, 0, 0)])
                   if ep > 1 else (0.0, 0.0)),
            "edp": pair(0, L.rank(0, L.dp - ep, 0)) if L.dp > ep else (0.0, 0.0)}


def hop_of(G, L, nodes=None):
    """``(alpha, beta)`` of a pipeline hop when every shard of every replica of a stage
    sends its activation at once, as the schedule's ranks do in step.

    The hops from stage 0 to stage 1 are routed as the replay routes messages; a link
    direction that ``c`` of them cross gives each ``1/c`` of its bandwidth (their
    max-min fair share: the hops start together with the same bytes), so ``beta`` is
    the most seconds per byte of any hop and ``alpha`` the longest path latency.
    Without contention it is the alpha-beta of one hop (:func:`netsim.costmodel.alpha_beta`);
    on a DGX H100 cluster each GPU's hop leaves through its own NIC (the graph's ``rail``,
    :mod:`netsim.network.compiled`), so a TP 8 stage's eight hops run at a NIC's full rate;
    where GPUs share a NIC (DGX-1: two GPUs a NIC) their hops share it.

    Parameters
    ----------
    G : networkx.Graph or netsim.network.compiled.Network
        The graph the replay runs on (under NCCL the effective one, :func:`price_of`), or
        its compiled network (whose route cache is then kept).
    L : workloads.transformer.layout.Layout
    nodes : list, optional
        The node of each rank (default :func:`gpus_of`).

    Examples
    --------
    >>> from topologies import gpu_cluster
    >>> from workloads.transformer.layout import Layout
    >>> G = gpu_cluster("dgx_h100", 2)
    >>> a, b = hop_of(G, Layout(8, 2, 1)); a, 1 / b   # one hop per NIC: its 50 GB/s
    (1.6e-06, 50000000000.0)
    >>> hop_of(G, Layout(1, 2, 1)) == alpha_beta(G, placement=["gpu0", "gpu1"])
    True
    """
    if L.pp == 1:
        return 0.0, 0.0
    pairs = [(L.rank(0, r, k), L.rank(1, r, k)) for r in range(L.dp) for k in range(L.tp)]
    return _at_once(G, pairs, nodes)


def ring_of(G, L, cp, nodes=None):
    """``(alpha, beta)`` of a context-parallel ring's step when every rank of the first stage
    sends its keys and values to the next of its ring at once, as the rings' ranks do in step.

    ``L`` is the layout of the ``dp cp`` replicas (:mod:`workloads.transformer.context.ring`); the
    messages are routed and share their links as in :func:`hop_of` (``beta`` the slowest
    message's seconds per byte, ``alpha`` the longest path latency); (0, 0) without context
    parallelism.

    Examples
    --------
    >>> from topologies import gpu_cluster
    >>> from workloads.transformer.layout import Layout
    >>> G = gpu_cluster("dgx_h100", 2)
    >>> a, b = ring_of(G, Layout(8, 1, 2), 2); 1 / b   # each ring hop through its GPU's NIC
    50000000000.0
    """
    if cp == 1:
        return 0.0, 0.0
    pairs = [(L.rank(0, r, k), L.rank(0, r - r % cp + (r + 1) % cp, k))
             for r in range(L.dp) for k in range(L.tp)]
    return _at_once(G, pairs, nodes)


def _at_once(G, pairs, nodes=None):
    """``(alpha, beta)`` of the slowest of the messages between rank ``pairs`` sent at once."""
    nodes = gpus_of(G) if nodes is None else nodes
    net = as_network(G)
    src = np.array([net.node_of(nodes[a]) for a, _ in pairs], np.int64)
    dst = np.array([net.node_of(nodes[b]) for _, b in pairs], np.int64)
    _, links, lat = net.routes(src, dst)
    used = links[links < net.num_links]
    share = np.concatenate([net.bandwidth / np.maximum(np.bincount(used, minlength=net.num_links),
                                                       1), [np.inf]])
    return float(lat.max()), float(1.0 / share[links].min())


def dp_rails(G, members):
    """NIC rails an NCCL ring among ``members`` (gpu nodes) stripes over across machines.

    NCCL gives a ring one channel per NIC a machine's members reach, each leaving the
    machine through its own NIC rail; the other data-parallel groups of the layout use
    the machine's other NICs at the same time. So a group gets its members' share of the
    machine's NICs: ``g x nics / gpus`` for ``g`` members on a machine of ``gpus`` GPUs
    and ``nics`` NICs (the fewest over its machines), at least 1; 1 when the group
    stays in one machine (the ring never reaches a NIC).

    Examples
    --------
    >>> from topologies import dgx_h100
    >>> two = dgx_h100(nodes=2)
    >>> dp_rails(two, [f"gpu{i}" for i in range(16)]), dp_rails(two, ["gpu0", "gpu8"])
    (8.0, 1.0)
    """
    machine = machines_of(G, members)
    if len(set(machine)) < 2:
        return 1
    gpus, nics = {}, {}
    for n, d in G.nodes(data=True):
        if d.get("kind") in ("gpu", "nic"):
            count = gpus if d["kind"] == "gpu" else nics
            count[d.get("node", 0)] = count.get(d.get("node", 0), 0) + 1
    return max(1.0, min(machine.count(m) * nics.get(m, 0) / gpus[m] for m in set(machine)))


def price_of(G, L, ep=1, library="auto", prices=None):
    """How the replay prices ``L``'s collectives on ``G``: ``(price, effective graph)``.

    Where the library resolves to NCCL (``"auto"`` with every rank on a gpu node, as
    :func:`point` places them, or ``"nccl"``: :func:`netsim.comm.library.choose`),
    ``price(group, op, nbytes)`` is the seconds of NCCL's plan of the call on the
    first group of ``group`` (``"tp"``, ``"dp"``, ``"ep"``, ``"edp"``) replayed alone
    on the links NCCL counts on (:class:`netsim.comm.priced.NcclPrices`, whose cache
    ``prices`` a sweep shares), and the effective graph is the one the replay runs
    everything on, messages included (:func:`netsim.comm.nccl.hardware.effective_graph`;
    None when the layout has no collective, so the replay runs on ``G``). With
    ``library="mpich"`` (or ``"gloo"``): ``(None, None)``, MPICH's rings on
    :func:`links_of`.

    Examples
    --------
    >>> from topologies import dgx_h100
    >>> from workloads.transformer.layout import Layout
    >>> price, E = price_of(dgx_h100(), Layout(8, 1, 1))
    >>> 0 < price("tp", "allreduce", 2**26) < 1e-3, E is not None
    (True, True)
    >>> price_of(dgx_h100(), Layout(8, 1, 1), library="mpich")
    (None, None)
    """
    if library not in ("auto", "nccl"):
        return None, None
    nodes = gpus_of(G)
    if len(nodes) < L.world:
        raise NetsimError(f"the topology has {len(nodes)} GPUs for {L.world} ranks")
    prices = NcclPrices(G) if prices is None else prices
    groups = {"tp": L.tp_group(0, 0), "dp": L.dp_group(0, 0), "ep": ep_group(L, ep, 0, 0, 0),
              "edp": expert_dp_group(L, ep, 0, 0, 0)}
    groups = {k: [nodes[r] for r in v] for k, v in groups.items()}

    def price(group, op, nbytes):
        return prices.seconds(groups[group], op, nbytes)

    widest = max(groups.values(), key=len)
    return price, prices.graph(widest) if len(widest) > 1 else None


def default_efficiency():
    """The efficiency taken from Narayanan et al.'s Table 1 under the FLOPs-only rule.

    The rule this study's closed form uses (:mod:`studies.validation.megatron`, ``rule="flops"``).

    Examples
    --------
    >>> round(default_efficiency(), 3)
    0.572
    """
    return efficiency_from(ROWS[REFERENCE], rule="flops")


def check_arguments(c, G=..., efficiency=..., L=...):
    """Refuse, before any work, a model, graph, efficiency or layout of the wrong kind.

    :func:`point`, :func:`study` and :func:`sweep` check their arguments with it first,
    so that a wrong one is named rather than failing deep inside (``'str' object has no
    attribute 'precision'``). An argument left out (``...``) is not checked.

    Raises
    ------
    WorkloadError
        ``c`` not a :class:`workloads.transformer.flops.Config`, ``L`` not a
        :class:`workloads.transformer.layout.Layout`, ``efficiency`` not in (0, 1].
    TopologyError
        ``G`` not a networkx graph.

    Examples
    --------
    >>> check_arguments("gpt3-13b")
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: c must be a transformer Config (workloads.transformer.flops.get_config('gpt3-13b')), got str 'gpt3-13b'
    >>> from workloads.transformer.flops import get_config
    >>> check_arguments(get_config("gpt3-13b"), efficiency=1.5)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: efficiency must be a number in (0, 1], got 1.5
    """
    if not isinstance(c, Config):
        raise WorkloadError(f"c must be a transformer Config (workloads.transformer.flops."
                            f"get_config('gpt3-13b')), got {type(c).__name__} {c!r:.40}")
    if L is not ... and not isinstance(L, Layout):
        raise WorkloadError(f"L must be a Layout (workloads.transformer.layout.layout(tp, pp, "
                            f"dp)), got {type(L).__name__} {L!r:.40}")
    if G is not ... and not isinstance(G, nx.Graph):
        raise TopologyError(f"G must be a networkx graph (a topologies builder's), got "
                            f"{type(G).__name__} {G!r:.40}")
    if efficiency is not ...:
        check_real(efficiency, "efficiency", 0, 1, strict=(True, False), error=WorkloadError)


def point(c, L, G, efficiency, pipeline="1f1b", recompute="full", sequence_parallel=False,
          simulate=False, library="auto", chunks=1, zero=0, fsdp=False, moe=None, ep=1,
          first_stage_layers=None, last_stage_layers=None, device=None, compute="flops",
          prices=None, progress=None, notice=None, perturbation=None, tp_overlap=False,
          param_gather="after", grad_element=None, bucket_bytes=None, memory_bandwidth=None,
          gemm=None, stage_buckets="every", cp=1):
    """One layout on one topology: a record of the closed form (and the replay).

    ``L`` is the ``tp x pp x dp`` layout; ``cp`` context parallelism
    (:mod:`workloads.transformer.context.ring`), ``tp cp pp dp`` GPUs: its rings' messages cost
    :func:`ring_of`'s alpha-beta, the gradient buckets are priced over the ``dp cp`` ranks
    that reduce them, and the record has ``cp`` and ``cp_comm`` (the rings' exposed time).

    The closed form prices each collective as the replay runs it (:func:`price_of`:
    NCCL's plan of the call alone on GPU nodes, MPICH's ring with ``library="mpich"``);
    ``prices`` is a :class:`netsim.comm.priced.NcclPrices` of ``G`` to share between
    the points of a sweep. ``simulate`` (a bool, or a test of the closed form's record,
    as a sweep's memory limit) also replays the layout; then ``why`` says why the replay
    differs from the closed form: which class of calls or hops took longer than alone
    (:mod:`studies.scaling.gaps`), beside ``saturated_link``; the replay is
    :func:`replay_point`'s (``progress``: its :func:`netsim.simulate` progress hook;
    ``notice``: told the CPU estimate of a replay of every replica before it starts;
    ``perturbation``: :func:`netsim.trace.perturb.perturb`'s options for the replay).
    ``device`` names the GPU model whose peak the study uses
    instead of the one the topology's GPU nodes name (:func:`peak_of`).

    ``zero`` and ``fsdp`` shard the data parallelism
    (:mod:`workloads.transformer.zero`) and its memory; ``moe`` and ``ep`` add
    experts (:mod:`workloads.transformer.moe`); ``first_stage_layers`` and
    ``last_stage_layers`` split the layers unevenly over the stages
    (:func:`workloads.transformer.stages.stage_layers`). ``compute="gemm"``
    times each block from its GEMMs' shapes on the topology's GPU model
    (:func:`gemm_of`, :mod:`workloads.transformer.gemm`) and ``efficiency``
    is not used; the record's ``compute_rule`` says so (``gemm``: a
    :class:`netsim.costmodel.gemm.GemmDevice` to use instead of :func:`gemm_of`'s,
    e.g. with another calibration). ``memory_bandwidth`` adds each layer's memory
    traffic (:mod:`workloads.transformer.compute`). ``tp_overlap`` runs the
    tensor-parallel collectives beside the compute (Megatron-LM's ``--tp-comm-overlap``,
    :mod:`workloads.transformer.overlaps.tp`); ``param_gather="overlap"`` gathers
    ZeRO-1/2's parameters under the first forward (Megatron-LM's
    ``--overlap-param-gather``, :mod:`workloads.transformer.overlaps.param_gather`);
    ``grad_element`` (bytes per gradient value reduced), ``bucket_bytes`` (the
    gradient buckets' size) and ``stage_buckets`` (which stages fill buckets) are
    :func:`workloads.transformer.iteration.schedule`'s.

    Examples
    --------
    >>> from topologies import dgx_h100
    >>> from workloads.transformer.flops import get_config
    >>> c = get_config("gpt3-1.3b", global_batch=64)
    >>> r = point(c, layout(8, 1, 1), dgx_h100(), 0.5)
    >>> 0 < r["mfu"] < 0.5, r["bubble"]
    (True, 0.0)
    >>> g = point(c, layout(8, 1, 1), dgx_h100(), 0.5, compute="gemm")
    >>> g["compute_rule"], g["mfu"] < r["mfu"]
    ('gemm', True)
    """
    check_arguments(c, G, efficiency, L)
    peak = peak_of(G, c.precision, device)
    rate = efficiency * peak
    kw = dict(pipeline=pipeline, recompute=recompute, sequence_parallel=sequence_parallel,
              chunks=chunks, first_stage_layers=first_stage_layers,
              last_stage_layers=last_stage_layers)
    if cp > 1:
        kw["cp"] = cp
    R = L._replace(dp=L.dp * cp)   # the ranks: dp cp replicas (workloads.transformer.context.ring)
    shard = dict(zero=zero, fsdp=fsdp) if moe is None else dict(zero=zero, fsdp=fsdp, moe=moe,
                                                                 ep=ep)
    if compute not in ("flops", "gemm"):
        raise NetsimError(f"unknown compute {compute!r}; known: flops, gemm")
    if compute == "gemm":
        shard.update(compute="gemm", device=gemm_of(G) if gemm is None else gemm)
    if tp_overlap:
        shard["tp_overlap"] = True
    if param_gather != "after":
        shard["param_gather"] = param_gather
    if stage_buckets != "every":
        shard["stage_buckets"] = stage_buckets
    shard.update((k, v) for k, v in (("grad_element", grad_element),
                                     ("bucket_bytes", bucket_bytes),
                                     ("memory_bandwidth", memory_bandwidth)) if v is not None)
    if moe is not None:   # the expert groups are priced below: ep is checked against dp first
        moe_plan(c, L, moe, ep, sequence_parallel)
    prices = NcclPrices(G) if prices is None else prices
    price, E = price_of(G, R, ep, library, prices)
    links = links_of(G, R, ep, library)
    if E is not None:   # the hops run on the graph the NCCL calls run on (compiled once)
        links["pp"] = hop_of(prices.network(), R, gpus_of(G))
    links["cp"] = ring_of(prices.network() if E is not None else G, R, cp, gpus_of(G))
    f = closed_form(c, L.tp, L.pp, L.dp, device_flops=rate, links=links, price=price, **kw,
                    **shard)
    rec = {"P": R.world, "tp": L.tp, "pp": L.pp, "dp": L.dp, "microbatches": f["microbatches"],
           "time": f["time"], "compute": f["compute"], "bubble": f["bubble"],
           "tp_comm": f["tp"], "pp_comm": f["pp"], "dp_comm": f["dp"]}
    if moe is not None:
        rec.update(ep=ep, ep_comm=f["ep"])
    if cp > 1:
        rec.update(cp=cp, cp_comm=f["cp"])
    if compute == "gemm":
        rec["compute_rule"] = "gemm"
    rec["memory"] = need(c, L, zero=zero, fsdp=fsdp, **kw,
                         **({} if moe is None else dict(moe=moe, ep=ep)))["total"]
    rec["tokens_per_s"] = c.global_batch * c.seq / f["time"]
    model = iteration_flops(c, "none") + (0 if moe is None else
                                          iteration_flops_delta(c, moe, "none"))
    rec["mfu"] = model / (R.world * peak * f["time"])
    rec["simulated"], rec["saturated_link"], rec["why"] = None, None, None
    if simulate(rec) if callable(simulate) else simulate:
        r, rec["replicas_simulated"], rec["shards_simulated"], t = replay_point(
            c, L, G, rate, library, progress, prices, notice, perturbation, **kw, **shard)
        rec["tp_fused"] = bool(t.metadata.get("fused_tp"))
        hops = {k: links[k] for k, n in (("pp", L.pp), ("cp", cp)) if n > 1}
        rec["why"] = why(slower(t, r, G, gpus_of(G)[:R.world], prices, hops), f["time"],
                         r.makespan)
        rec["simulated"] = r.makespan
        rec["mfu_simulated"] = model / (R.world * peak * r.makespan)
        top = r.bottlenecks(1)
        rec["saturated_link"] = (f"{top[0]['link']} ({top[0]['saturated'] / r.makespan:.0%})"
                                 if top and top[0]["saturated"] > 0 else None)
    return rec


def replicas_of(L, G):
    """The fewest data-parallel replicas of ``L`` that fill whole machines of ``G``
    (``lcm(tp, GPUs per machine) / tp``), or ``dp`` when that does not divide it.

    Examples
    --------
    >>> from topologies import gpu_cluster
    >>> G = gpu_cluster("dgx_h100", 4)
    >>> replicas_of(layout(8, 1, 4), G), replicas_of(layout(2, 1, 16), G), replicas_of(layout(1, 1, 4), G)
    (1, 4, 4)
    """
    machine = machines_of(G, gpus_of(G)[:L.world])
    per = sum(1 for m in machine if m == machine[0])
    k = math.lcm(L.tp, per) // L.tp
    return k if L.dp % k == 0 else L.dp


#: Peak bytes and CPU seconds of a transformer replay per op it expands to, every replica
#: simulated: gpt3-175b TP 8 PP 16 at P = 1,024 on DGX H100 clusters (B = 512), 2,862,624
#: ops after expansion (2,786,576 in the trace; :func:`full_replay_ops` counts the same),
#: 1.63 GB peak and 27 s of CPU in all (benchmarks/transformer_phases.py --all-replicas,
#: 2026-12-07, load average about 10).
FULL_REPLAY_BYTES_PER_OP = 1.63e9 / 2_862_624
FULL_REPLAY_SECONDS_PER_OP = 27.1 / 2_862_624


def full_replay_ops(t, dp, k, G, placement, prices):
    """The ops a replay of every replica expands to, from the trace ``t`` of ``k`` of the
    ``dp`` replicas: its ops inside the replicas ``dp / k`` times, and each call spanning the
    replicas (the trace holds it once) once. A call inside one machine whose links no other
    group's call uses there (no other group has two members on the machine) is one op, as it
    runs alone (:mod:`netsim.comm.alone`); any other call counts its NCCL plan's flows and
    the two ops the expansion adds to them (a call kept as one op only while it meets
    nothing in time, :func:`netsim.comm.alone.shared_in_time`, at the most the replays
    expand it to).
    ``prices`` plans as the replay does, so the plans are made once.

    Examples
    --------
    >>> from topologies import gpu_cluster
    >>> from workloads.transformer.flops import get_config
    >>> c = get_config("gpt3-1.3b", global_batch=16)
    >>> G = gpu_cluster("dgx_h100", 2); placement = gpus_of(G)
    >>> t = schedule(c, 8, 1, 2, device_flops=1e14, replicas=1)
    >>> full = schedule(c, 8, 1, 2, device_flops=1e14)
    >>> est = full_replay_ops(t, 2, 1, G, placement, NcclPrices(G))
    >>> est == full_replay_ops(full, 2, 2, G, placement, NcclPrices(G))
    True
    """
    machine = np.array(machines_of(G, placement), dtype=object)
    colls = t.is_collective
    home = np.zeros(t.ranks, bool)
    home[t.rank[~colls]] = True
    ops = int((~colls).sum()) * dp // k
    inside = {}   # machine -> the member sets with two or more members on it
    for j in np.unique(t.spec[colls]).tolist():
        group = t.specs.row(int(j)).group
        on = machine[list(group)].tolist()
        for m in {m for m in on if on.count(m) > 1}:
            inside.setdefault(m, set()).add(frozenset(group))
    for i in np.flatnonzero(colls).tolist():
        spec = t.specs.row(int(t.spec[i]))
        group = list(spec.group)
        each = dp // k if home[group].all() else 1
        where = set(machine[group].tolist())
        if not t.size[i] or len(group) < 2 or (
                len(where) == 1 and inside[where.pop()] == {frozenset(group)}):
            ops += each
            continue
        nodes = [placement[r] for r in local_order(spec)]   # as the library plans it
        # an expanded call is its flows and two ops of its own (netsim.comm.library)
        ops += each * (len(prices.plan(nodes, spec.op, int(t.size[i]), spec.algorithm).flows) + 2)
    return ops


class FullReplayRefused(NetsimError):
    """A replay of every replica that would not fit in memory (:func:`check_full_replay`)."""


def check_full_replay(ops, why, limit=None):
    """Refuse a replay of every replica whose ``ops`` expanded ops would not fit in memory;
    else its CPU seconds by the same measurement.

    Raises
    ------
    FullReplayRefused
        With the estimate of memory and time, and ``why`` the replicas are not simulated once.

    Examples
    --------
    >>> round(check_full_replay(10**6, "a test", limit=16e9), 2)
    9.47
    >>> check_full_replay(10**9, "a test", limit=16e9)
    Traceback (most recent call last):
    ...
    studies.scaling.transformer.FullReplayRefused: the replay of every replica of a test would take about 569 GB and 9.47e+03 s of CPU (1,000,000,000 ops after expansion at 569 B and 9.5 us each, benchmarks/transformer_phases.py); 16 GB are available
    """
    limit = available_memory() if limit is None else limit
    need, cpu = ops * FULL_REPLAY_BYTES_PER_OP, ops * FULL_REPLAY_SECONDS_PER_OP
    if limit is not None and need > limit:
        raise FullReplayRefused(f"the replay of every replica of {why} would take about "
                                f"{format_bytes(need)} and {format_time(cpu)} of CPU "
                                f"({ops:,} ops after expansion at "
                                f"{FULL_REPLAY_BYTES_PER_OP:.0f} B and "
                                f"{FULL_REPLAY_SECONDS_PER_OP * 1e6:.1f} us each, "
                                f"benchmarks/transformer_phases.py); "
                                f"{format_bytes(limit)} are available")
    return cpu


def replay_point(c, L, G, rate, library="auto", progress=None, prices=None, notice=None,
                 perturbation=None, **kwargs):
    """The replay of one iteration of layout ``L``: its Result, the replicas and the
    shards of each tensor-parallel group simulated, and the trace replayed (theirs).

    Two symmetries are tried, each exact (:mod:`netsim.network.symmetry`), before the
    replay of every rank:

    * data-parallel replicas on alike machines, simulated once per copy
      (:func:`workloads.transformer.iteration.schedule` with ``replicas=``, replayed
      with ``symmetry=``): the fewest replicas that fill whole machines
      (``lcm(tp, GPUs per machine) / tp``), the others' work the same shifted. It
      fails where NCCL's plan of a data-parallel call is a tree rooted at one replica
      (as at 128 machines), or the machines differ.
    * the shards of each tensor-parallel group, simulated once (``shards=1``): a stage's
      shards do the same work, and a cycle through a machine's GPUs that is an
      automorphism of the graph (:func:`netsim.network.automorphism.odometers`: on a
      DGX H100, GPU pairs on four PCIe switches) moves each shard's GPU, NIC and rail
      to the next one's. Every data-parallel group maps to another wholesale, so a
      tree needs no symmetry of its own. It fails where the machine has no such cycle
      or a plan of a tensor-parallel call does not map onto itself. Then a stride of
      shards is tried (:func:`netsim.network.automorphism.strides`: ``x -> x + s mod
      tp``, ``s`` shards of each group simulated, ``shards=s``): at TP 4 on DGX H100s,
      whose NCCL ring ``0, 1, 2, 3`` no cycle keeping the PCIe pairs maps onto itself,
      the stride 2 swaps the pairs and maps it.

    With experts, context parallelism (``cp`` in ``kwargs``) or a perturbation every rank is
    replayed. Every NCCL call that runs
    alone on its links is replayed once (``collapse=True``). ``prices`` (the closed
    form's :class:`netsim.comm.priced.NcclPrices` of ``G``) plans the replay's calls too,
    each plan made once; ``progress`` is :func:`netsim.simulate`'s hook. A replay of every
    replica is priced first (:func:`full_replay_ops`, :func:`check_full_replay`): refused
    when it would not fit in memory, else ``notice(seconds, what)`` is called with its CPU
    estimate before it starts. ``perturbation`` (:func:`netsim.trace.perturb.perturb`'s
    ``straggler``, ``jitter``, ``seed``) slows the compute of the trace replayed: the
    replicas then differ, and every replica is replayed.

    Returns
    -------
    tuple
        ``(result, replicas simulated, shards simulated, trace)``.

    Examples
    --------
    >>> from topologies import gpu_cluster
    >>> from workloads.transformer.flops import get_config
    >>> c = get_config("gpt3-1.3b", global_batch=16)
    >>> r, k, s, _ = replay_point(c, layout(8, 1, 2), gpu_cluster("dgx_h100", 2), 1e14)
    >>> k, s, r.makespan > 0
    (1, 8, True)
    """
    cp = kwargs.get("cp", 1)
    placement = gpus_of(G)[:L.world * cp]
    prices = NcclPrices(G) if prices is None else prices
    k = replicas_of(L, G)
    nccl, seconds, t = library != "mpich", None, None
    fusable = nccl and not perturbation   # the schedule refuses the rest (NotFusable)

    def tp_seconds(op, ranks, nbytes):
        return prices.seconds([placement[x] for x in ranks], op, nbytes)

    def build(**kw):
        """The trace, its tensor-parallel chains fused where they may be."""
        nonlocal fusable
        if fusable:
            try:
                return schedule(c, L.tp, L.pp, L.dp, device_flops=rate, tp_seconds=tp_seconds,
                                **kw, **kwargs)
            except NotFusable:
                fusable = False
        return schedule(c, L.tp, L.pp, L.dp, device_flops=rate, **kw, **kwargs)

    def run(trace, sigma, simulated, **kw):
        """Replay ``trace`` (``simulated``: the replicas and shards it holds); a fused one
        whose calls do not run alone is written unfused (``kw``: :func:`build`'s)."""
        nonlocal fusable
        while True:
            try:
                r = replay(trace, G, placement=placement, library=library, collapse=True,
                           symmetry=sigma, progress=progress, planner=prices)
                return r, *simulated, trace
            except FusedNotAlone:
                fusable = False
                trace = build(**kw)

    if perturbation:
        why = "its perturbation makes the replicas differ"
    elif kwargs.get("moe") is not None:
        why = "experts' all-to-alls join the replicas"
    elif cp > 1:
        why = "context parallelism's rings join the replicas"
    else:
        why = "no fewer replicas fill whole machines alike"
        if k < L.dp:
            t = build(replicas=k)
            try:
                return run(t, shift(L.tp, L.pp, L.dp, k), (k, L.tp), replicas=k)
            except SymmetryError as exc:
                why = str(exc)
        if L.tp > 1 and nccl:
            traces = {}   # shards kept -> their trace
            for n, order in [(1, o) for o in odometers(L.tp)] + strides(L.tp):
                if n not in traces:
                    traces[n] = build(shards=n)
                try:
                    return run(traces[n], shard_shift(L.tp, L.pp, L.dp, order), (L.dp, n),
                               shards=n)
                except SymmetryError:
                    continue
        if t is not None:   # priced from the replicas' trace, before the whole
            seconds = check_full_replay(
                full_replay_ops(t, L.dp, k, G, placement, prices) if nccl
                else t.num_ops * L.dp // k, f"P = {L.world} ({why})")
    t = perturb(build(), **(perturbation or {}))
    if seconds is None:
        seconds = check_full_replay(full_replay_ops(t, L.dp, L.dp, G, placement, prices)
                                    if nccl else t.num_ops, f"P = {len(placement)} ({why})")
    if notice is not None:
        notice(seconds, f"the replay of every replica of P = {len(placement)} ({why})")
    return run(t, None, (L.dp, L.tp))


def study(c, tp, pp, workers, make_topology, efficiency=None, **kwargs):
    """:func:`point` at each P of ``workers`` (data parallelism the rest): a list of records.

    Raises
    ------
    WorkloadError
        For a P that ``tp * pp`` does not divide, or a model that does not fit the layout.

    Examples
    --------
    >>> from studies.registry import topology_factory
    >>> from workloads.transformer.flops import get_config
    >>> c = get_config("gpt3-13b", global_batch=512)
    >>> rs = study(c, 8, 4, [32, 64], topology_factory("gpu_cluster:machine=dgx_h100"), 0.5)
    >>> [r["dp"] for r in rs], rs[0]["time"] > rs[1]["time"]
    ([1, 2], True)
    """
    e = default_efficiency() if efficiency is None else efficiency
    check_arguments(c, efficiency=e)
    check_callable(make_topology, "make_topology", "make_topology(P) (a builder)",
                   error=TopologyError, optional=False)
    workers = check_workers(workers)
    return [point(c, layout(tp, pp, None, world=P, cp=kwargs.get("cp", 1)), make_topology(P),
                  e, **kwargs) for P in workers]


def sweep(c, P, G, efficiency=None, max_tp=8, memory=None, simulate=False, progress=None,
          notice=None, **kwargs):
    """Every layout of ``P`` GPUs the model splits over, fastest first.

    ``tp`` runs over the powers of two up to ``max_tp`` (one machine), ``pp``
    over the divisors of the layer count; ``dp`` is the rest and must divide
    the global batch in micro-batches. With experts (``moe=`` in ``kwargs``),
    ``ep`` runs over the common divisors of ``dp`` and the experts. With
    ``memory`` (bytes per GPU), the layouts needing more
    (:func:`workloads.transformer.memory.memory_per_gpu`) are left out.

    Without ``simulate`` the layouts are ranked by the closed form. With it each
    layout kept is also replayed (:func:`point` with ``simulate=True``, one
    :class:`~netsim.comm.priced.NcclPrices` for all, ``progress`` and ``notice`` as there;
    a layout left out by ``memory`` is not replayed) and
    ranked by the simulated time; a layout whose replay cannot run (its replicas
    have no symmetry and every replica would not fit in memory:
    :func:`check_full_replay`) keeps its closed form, ``simulated`` None and the
    reason in ``not_simulated``, and is ranked after the simulated ones.

    Examples
    --------
    >>> from topologies import gpu_cluster
    >>> from workloads.transformer.flops import get_config
    >>> best = sweep(get_config("gpt3-13b", global_batch=512), 16, gpu_cluster("dgx_h100", 2), 0.5)
    >>> best[0]["time"] <= best[-1]["time"], len({(r["tp"], r["pp"]) for r in best}) == len(best)
    (True, True)
    """
    e = default_efficiency() if efficiency is None else efficiency
    check_arguments(c, G, e)
    P = check_int(P, "P", error=WorkloadError)
    out, prices = [], NcclPrices(G)   # one cache of NCCL's prices for every layout
    def fits(rec):
        return memory is None or rec["memory"] <= memory

    hooks = dict(progress=progress, notice=notice, simulate=fits) if simulate else {}
    for tp, pp, dp in sweep_layouts(c, P, max_tp):
        for ep in _expert_degrees(dp, kwargs.get("moe")):
            L = layout(tp, pp, dp)
            try:
                rec = point(c, L, G, e, **kwargs, **ep, prices=prices, **hooks)
            except WorkloadError:   # e.g. the interleaved schedule's chunks do not fit pp
                continue
            except FullReplayRefused as exc:   # with its estimate; its closed form again
                rec = {**point(c, L, G, e, **kwargs, **ep, prices=prices),
                       "not_simulated": str(exc)}
            if fits(rec):
                out.append(rec)
    if not out:
        raise NetsimError(f"no layout of {P} GPUs fits the model"
                          + (f" in {memory / 1e9:g} GB per GPU" if memory else ""))
    if simulate:
        return sorted(out, key=lambda r: (r["simulated"] is None, r["simulated"] or r["time"]))
    return sorted(out, key=lambda r: r["time"])


def sweep_layouts(c, P, max_tp=8):
    """The ``(tp, pp, dp)`` layouts of ``P`` GPUs that :func:`sweep` tries, in its order.

    ``tp`` runs over the powers of two up to ``max_tp`` and divides the heads, the
    key/value heads, the MLP's width and the vocabulary, ``pp`` over the divisors of the layer count; ``dp`` is the rest and must
    divide the global batch in micro-batches.

    Examples
    --------
    >>> from workloads.transformer.flops import get_config
    >>> sweep_layouts(get_config("gpt3-13b", global_batch=16), 16, max_tp=2)[:3]
    [(1, 1, 16), (1, 2, 8), (1, 4, 4)]
    """
    return [(tp, pp, P // (tp * pp))
            for tp in (1 << k for k in range(int(np.log2(max_tp)) + 1))
            for pp in range(1, c.layers + 1)
            if not (c.layers % pp or P % (tp * pp) or c.heads % tp or c.vocab % tp
                    or c.kv % tp or c.ffn % tp
                    or c.global_batch % (c.micro_batch * (P // (tp * pp))))]


def _expert_degrees(dp, moe):
    """The ``ep`` options of a sweep: none without experts, else each divisor of both."""
    if moe is None:
        return [{}]
    g = math.gcd(dp, moe.experts)
    return [{"ep": k} for k in range(1, g + 1) if g % k == 0]


_PARTS = (("compute", "compute"), ("bubble", "bubble"), ("tp_comm", "exposed TP"),
          ("pp_comm", "exposed PP"), ("dp_comm", "exposed DP"))


def plot(records, out, title=""):
    """Time per iteration split into its terms, one bar per record, with MFU; a PNG to ``out``.

    Examples
    --------
    >>> import io
    >>> from studies.registry import topology_factory
    >>> from workloads.transformer.flops import get_config
    >>> rs = study(get_config("gpt3-13b", global_batch=512), 8, 4, [64, 128],
    ...            topology_factory("gpu_cluster:machine=dgx_h100"), 0.5)
    >>> buf = io.BytesIO(); plot(rs, buf); buf.getvalue()[:4]
    b'\x89PNG'
    """
    from matplotlib.figure import Figure  # no pyplot: the caller's backend stays as it is

    labels = [f"P={r['P']}\n{r['tp']}x{r['pp']}x{r['dp']}" for r in records]
    x = np.arange(len(records))
    fig = Figure(figsize=(10, 4.2))
    ax, mfu = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
    bottom = np.zeros(len(records))
    for key, name in _PARTS:
        v = np.array([r[key] for r in records])
        ax.bar(x, v, bottom=bottom, label=name)
        bottom += v
    ax.set_xticks(x, labels, fontsize=8)
    ax.set_ylabel("time per iteration (s)")
    ax.set_xlabel("P, tp x pp x dp")
    ax.legend(fontsize=8, loc="upper right")
    mfu.plot(x, [100 * r["mfu"] for r in records], "o-")
    mfu.set_xticks(x, labels, fontsize=8)
    mfu.set_ylabel("MFU (%)")
    mfu.set_ylim(0, 100)
    mfu.set_xlabel("P, tp x pp x dp")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(out, format="png", dpi=100)
