"""Published transformer training runs whose layout changes the answer, against the simulation.

Narayanan et al.'s Table 1 (:mod:`studies.validation.megatron`) is weak scaling at
nearly constant throughput per GPU, so a constant predicts it as well as the model
does. This validation takes published runs where the layout, the schedule, the
recomputation or the scale changes the measured throughput
(``studies/data/transformer_layouts.csv``, its sources in
``studies/data/transformer_layouts.md``): Megatron-Core's H100 weak-scaling table and
its strong-scaling figure (a 177B GPT at a fixed batch on 96 to 4608 GPUs),
torchtitan's Llama runs (FSDP, FSDP + TP) on H100 and A100, and IBM's fms-fsdp Llama 2
runs (FSDP) on A100 and H100.

For each row the prediction is the time per iteration of the replay of the trace
(:func:`studies.scaling.transformer.point` with ``simulate=True``, the closed form
beside it) on the row's cluster (:func:`cluster`: ``gpu_cluster:machine=dgx_a100`` or
``dgx_h100``, or the machines of the network a source prints) with the row's GPU count. Each block's compute is its GEMMs' times from their shapes
(``compute="gemm"``, :mod:`workloads.transformer.gemm`: the datasheet peak, the SMs'
tile and wave quantisation, the HBM roofline) plus the layer's memory traffic at the
GPU's HBM bandwidth (:mod:`workloads.transformer.compute`, :data:`HBM`), with ONE
efficiency ``eta`` per GPU type (:func:`efficiencies`), each taken from one named
run (:data:`CALIBRATION`): the A100's from Narayanan et al.'s Table 1 145.6B row
(:data:`studies.validation.megatron.REFERENCE`, not in this set), the H100's from
the Megatron-Core table's GPT-3-sized row (``mcore-177b``: TP 8, PP 6, DP 48, all
three parallelisms, as the A100's reference), which is then left out of every error
and ranking. Each row runs its framework's mechanisms as its configuration turns
them on (:func:`options`): Megatron-Core's TP communication overlap
(``--tp-comm-overlap``) and its distributed optimizer's overlapped parameter
allgather (``--overlap-param-gather``), its gradient buckets and fp32 gradient
reduction; torchtitan's FSDP2 reducing gradients in fp32; fms-fsdp's FSDP1 in bf16.

The null model runs every row at its GPU's calibration run's throughput per unit of
peak (:func:`null_share`: the A100's 148 of 312 TFLOP/s, the H100's the
``mcore-177b`` row's 432.8 of 989.5), counting the FLOPs of the row's own
recomputation (:func:`workloads.transformer.flops.iteration_flops`).

Within each group of rows (a table or a figure of one source), the rows are ranked by
model FLOPs per GPU-second (the model's FLOPs without recomputation, as each source
counts its throughput); :func:`summary` gives Spearman's rank correlation of the
predicted against the measured ranking and whether the predicted fastest is the
measured fastest.

Predictions take minutes to compute, so :func:`predictions` is run by
``python -m studies.regenerate transformer-layouts``, which stores them in
``studies/data/transformer_layouts_predicted.csv`` (:func:`cached`) and the table of
``docs/transformer.md`` (:func:`markdown`); a test recomputes the table from the two
files and a few rows end to end.
"""

import csv
import pathlib

from scipy.optimize import brentq

from studies.registry import topology_factory
from studies.scaling.transformer import gpus_of, peak_of, point
from studies.validation.megatron import PEAK, REFERENCE, ROWS, efficiency_from
from netsim import simulate as replay
from netsim.comm.priced import NcclPrices
from topologies.devices import device_flops, device_gemm, hbm_bandwidth
from workloads.transformer.flops import config, iteration_flops
from workloads.transformer.iteration import schedule
from workloads.transformer.layout import layout

__all__ = ["DATA", "PREDICTED", "NULL_SHARE", "HBM", "CALIBRATION", "load", "model",
           "measured_time", "model_rate", "null_share", "null_time", "options", "gemm_of",
           "cluster", "efficiencies", "predict", "predictions", "save", "cached"]

_HERE = pathlib.Path(__file__).resolve().parent.parent / "data"
#: The measurements: one published run per line (sources in ``transformer_layouts.md``).
DATA = _HERE / "transformer_layouts.csv"
#: The predictions of every row, stored by :func:`save` (recomputed by :func:`predictions`).
PREDICTED = _HERE / "transformer_layouts_predicted.csv"
#: The null model's throughput per unit of peak on an A100: Narayanan et al.'s Table 1 calibration
#: row (:data:`studies.validation.megatron.REFERENCE`, 148 TFLOP/s) over the A100's peak.
NULL_SHARE = ROWS[REFERENCE].tflops * 1e12 / PEAK
#: Bytes/s of each GPU model's memory, for the layers' memory traffic: the A100 80 GB SXM's
#: 2,039 GB/s (every A100 row: "A100 80 GB"), the H100 SXM's 3.35 TB/s
#: (:func:`topologies.devices.hbm_bandwidth`, the datasheets).
HBM = {"A100": hbm_bandwidth("A100-80GB"), "H100": hbm_bandwidth("H100")}
#: The run each GPU model's one efficiency is taken from: the A100's is Narayanan et al.'s
#: Table 1 145.6B row (:data:`studies.validation.megatron.REFERENCE`, outside this set), the
#: H100's a row of this set, which the errors and rankings then leave out.
CALIBRATION = {"A100": "Narayanan et al. Table 1 145.6B", "H100": "mcore-177b"}

_INT = ("gpus", "layers", "hidden", "heads", "vocab", "seq", "micro_batch", "global_batch", "tp",
        "pp", "dp", "chunks", "zero")
_BOOL = ("bias", "tied", "fsdp", "sequence_parallel", "tp_comm_overlap", "overlap_param_gather")
_FIELDS = ("id", "method", "closed", "simulated", "predicted", "null", "efficiency",
           "note")


def load(path=DATA):
    """The rows of ``path``: a list of dicts with typed fields.

    Examples
    --------
    >>> rows = load()
    >>> len(rows) >= 25, {r["gpu"] for r in rows} == {"A100", "H100"}
    (True, True)
    >>> all(r["tp"] * r["pp"] * r["dp"] == r["gpus"] for r in rows)
    True
    """
    out = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            r = dict(r)
            for k in _INT:
                r[k] = int(r[k])
            for k in _BOOL:
                r[k] = r[k] == "true"
            r["kv_heads"] = int(r["kv_heads"]) if r["kv_heads"] else None
            r["ffn_hidden"] = int(r["ffn_hidden"]) if r["ffn_hidden"] else None
            r["measured"] = float(r["measured"])
            r["groups"] = tuple(r["group"].split(";"))
            out.append(r)
    return out


def model(row):
    """The :class:`workloads.transformer.flops.Config` of a row (bf16).

    Examples
    --------
    >>> c = model(load()[0])
    >>> c.layers, c.hidden, c.seq, c.precision
    (24, 2048, 4096, 'bf16')
    """
    return config(row["layers"], row["hidden"], row["heads"], row["seq"], row["vocab"],
                  micro_batch=row["micro_batch"], global_batch=row["global_batch"],
                  precision="bf16", ffn_hidden=row["ffn_hidden"], mlp=row["mlp"],
                  kv_heads=row["kv_heads"], bias=row["bias"], norm=row["norm"],
                  position=row["position"], tied=row["tied"])


def measured_time(row):
    """The measured seconds per iteration of a row, from its tokens/s or TFLOP/s per GPU.

    TFLOP/s per GPU are converted with the model's FLOPs without recomputation (Megatron-LM's
    ``num_floating_point_operations``, equal to Narayanan et al.'s Eq. 3 without the
    recomputed forward for these GPT shapes).

    Examples
    --------
    >>> r = next(r for r in load() if r["id"] == "tt-h100-8b-fsdp8")
    >>> round(measured_time(r), 3)   # 16 sequences of 8192 tokens at 6667 tokens/s on 8 GPUs
    2.457
    """
    if row["unit"] == "tokens/s/GPU":
        return row["global_batch"] * row["seq"] / (row["measured"] * row["gpus"])
    if row["unit"] == "TFLOP/s/GPU":
        return iteration_flops(model(row), "none") / (row["gpus"] * row["measured"] * 1e12)
    raise ValueError(f"unknown unit {row['unit']!r} of row {row['id']}")


def model_rate(row, seconds):
    """Model FLOPs (no recomputation) per GPU-second at ``seconds`` per iteration.

    Examples
    --------
    >>> r = load()[0]
    >>> round(model_rate(r, measured_time(r)) / 1e12, 1)
    408.8
    """
    return iteration_flops(model(row), "none") / (row["gpus"] * seconds)


def _row(ident):
    return next(r for r in load() if r["id"] == ident)


def null_share(gpu):
    """The null model's throughput per unit of peak on ``gpu``: its calibration run's.

    The run of :data:`CALIBRATION`: the A100's Table 1 row at its 148 TFLOP/s (Eq. 3 FLOPs,
    recomputation counted) of 312 (:data:`NULL_SHARE`); the H100's row ``mcore-177b``
    at its FLOPs (with the row's own recomputation, none) over its measured time.

    Examples
    --------
    >>> round(null_share("A100"), 4), round(null_share("H100"), 4)   # 432.8 / 989.5
    (0.4744, 0.4374)
    """
    if gpu == "A100":
        return NULL_SHARE
    r = _row(CALIBRATION[gpu])
    return (iteration_flops(model(r), r["recompute"])
            / (r["gpus"] * measured_time(r) * device_flops(gpu, "fp16")))


def null_time(row):
    """The null model's seconds per iteration: the row's FLOPs at :func:`null_share` of its peak.

    Examples
    --------
    >>> r = load()[0]
    >>> round(model_rate(r, null_time(r)) / 1e12, 1)   # the H100's 432.8 TFLOP/s
    432.8
    """
    c = model(row)
    return iteration_flops(c, row["recompute"]) / (row["gpus"] * null_share(row["gpu"])
                                                   * device_flops(row["gpu"], "fp16"))


def options(row):
    """The keyword arguments of :func:`studies.scaling.transformer.point` for a row.

    The layout's, plus what the row's framework does with them:

    * ``megatron-core`` (the README's H100 runs, Megatron-Core r0.8.0): the flags the README
      names, ``--tp-comm-overlap`` (``tp_overlap``, where the row has tensor parallelism)
      and ``--overlap-param-gather`` (``param_gather="overlap"``); gradients accumulated
      and reduced in fp32 under bf16 (``megatron/training/arguments.py``:
      ``accumulate_allreduce_grads_in_fp32 = True`` with ``--bf16``), in buckets of
      ``max(40e6, 1e6 dp)`` of them (``megatron/core/distributed/distributed_data_parallel.py``,
      the default ``bucket_size`` with ``--overlap-grad-reduce``) on the first pipeline
      stage only, every later stage in one bucket (``stage_buckets="first"``: the same
      file sets ``bucket_size = None`` when the pipeline rank is above 0;
      :func:`workloads.transformer.stages.stage_bucket_bytes`). Files at f2e5db402c, the
      README commit that published the table.
    * ``torchtitan``: FSDP2 with ``MixedPrecisionPolicy(param_dtype=bfloat16,
      reduce_dtype=float32)`` (``torchtitan/parallelisms/parallelize_llama.py`` at
      504e7641d; ``--training.mixed_precision_reduce`` "float32" in
      ``torchtitan/config_manager.py`` at 9dec370): the gradients' reduce-scatters in fp32.
    * ``fms-fsdp`` (foundation-model-stack/fms-fsdp at 5e522b4, the README's table): FSDP1
      ``FullyShardedDataParallel(sharding_strategy=FULL_SHARD, limit_all_gathers=True)``
      (``main_training.py``) with ``MixedPrecision(param_dtype=bfloat16,
      reduce_dtype=bfloat16)`` (``fms_fsdp/policies/mixed_precision.py`` ``bfSixteen``):
      the gradients' reduce-scatters in bf16 (``grad_element=2``).

    Examples
    --------
    >>> o = options(load()[1])   # Megatron-Core, TP 2, DP 48
    >>> o["tp_overlap"], o["param_gather"], o["grad_element"], o["bucket_bytes"] / 1e6
    (True, 'overlap', 4, 192.0)
    >>> o["stage_buckets"]
    'first'
    """
    out = dict(pipeline="interleaved" if row["chunks"] > 1 else "1f1b", chunks=row["chunks"],
               recompute=row["recompute"], sequence_parallel=row["sequence_parallel"],
               zero=row["zero"], fsdp=row["fsdp"], tp_overlap=row["tp_comm_overlap"],
               param_gather="overlap" if row["overlap_param_gather"] else "after",
               grad_element=4)
    if row["framework"] == "megatron-core":
        out.update(bucket_bytes=4 * max(40e6, 1e6 * row["dp"]), stage_buckets="first")
    elif row["framework"] == "fms-fsdp":
        out.update(grad_element=2)
    elif row["framework"] != "torchtitan":
        raise ValueError(f"unknown framework {row['framework']!r} of row {row['id']}")
    return out


def cluster(row):
    """The graph a row runs on: its ``cluster`` (a registry name) with its GPU count.

    DGX A100 and DGX H100 machines for the rows whose sources name NVIDIA's clusters or say
    nothing of the network; the fms-fsdp rows' machines have the inter-node bandwidth their
    README prints (``transformer_layouts.md``).

    Examples
    --------
    >>> r = next(r for r in load() if r["id"] == "fms-a100-llama2-70b")
    >>> r["cluster"], cluster(r).graph["name"].startswith("gpu_cluster")
    ('gpu_cluster:machine=p4d', True)
    """
    return topology_factory(row["cluster"])(row["gpus"])


def gemm_of(gpu, eta):
    """The GEMM time model of ``gpu`` at efficiency ``eta`` (:func:`topologies.devices.device_gemm`).

    The datasheet peak, HBM bandwidth and SMs of the GPU model, with ``eta`` in place of
    the GEMM benchmark's calibration.

    Examples
    --------
    >>> d = gemm_of("H100", 0.5)
    >>> d.sms, d.efficiency, d.peak / 1e12
    (132, 0.5, 989.5)
    """
    return device_gemm(gpu)._replace(efficiency=eta)


def _point(row, eta, simulate=False, prices=None):
    """:func:`studies.scaling.transformer.point` of a row at GEMM efficiency ``eta``."""
    c, L = model(row), layout(row["tp"], row["pp"], row["dp"])
    G = cluster(row)
    return point(c, L, G, eta, simulate=simulate, compute="gemm", gemm=gemm_of(row["gpu"], eta),
                 memory_bandwidth=HBM[row["gpu"]], prices=prices, **options(row))


def efficiencies():
    """The one GEMM efficiency ``eta`` of each GPU model, from its run of :data:`CALIBRATION`.

    The A100's: :func:`studies.validation.megatron.efficiency_from` of Table 1's 145.6B
    row under its ``"gemm"`` rule (GEMM shapes plus memory traffic, MPICH rings on DGX
    A100 links, the paper's own settings). The H100's: the ``eta`` at which the closed
    form of row ``mcore-177b`` (GEMM shapes plus memory traffic, NCCL's plans on DGX H100
    machines, as every row here) takes its measured time (Brent's method; the closed form
    rises as ``eta`` falls). Taken once, never tuned on the other rows. Tens of seconds.

    Returns
    -------
    dict
        ``{gpu: eta}``.
    """
    r = _row(CALIBRATION["H100"])
    G = cluster(r)
    prices, goal = NcclPrices(G), measured_time(r)
    h100 = brentq(lambda e: _point(r, e, prices=prices)["time"] - goal, 0.2, 1.0, xtol=1e-12,
                  rtol=1e-12)
    return {"A100": efficiency_from(ROWS[REFERENCE], rule="gemm"), "H100": h100}


def predict(row, etas):
    """One row's prediction: a dict of :data:`_FIELDS` (times in seconds).

    ``etas`` is :func:`efficiencies`' ``{gpu: eta}``. ``predicted`` is the replay's
    makespan (``method`` ``"simulated"``), ``closed`` the closed form beside it,
    ``efficiency`` the ``eta`` of the row's GPU, ``note`` why the two differ
    (:mod:`studies.scaling.gaps`: which class of calls or hops the replay found slower
    than alone), or that the closed form raised (the replay then runs alone).

    Examples
    --------
    >>> r = next(r for r in load() if r["id"] == "mcore-1.7b")
    >>> p = predict(r, {"H100": 0.6})
    >>> p["method"], p["efficiency"], abs(p["simulated"] / p["closed"] - 1) < 0.05
    ('simulated', 0.6, True)
    """
    eta = etas[row["gpu"]]
    try:
        rec = _point(row, eta, simulate=True)
        closed, made, note = rec["time"], rec["simulated"], rec["why"] or ""
    except (KeyError, ValueError) as exc:   # a closed form that fails: say so, replay alone
        c, L = model(row), layout(row["tp"], row["pp"], row["dp"])
        G = cluster(row)
        t = schedule(c, L.tp, L.pp, L.dp, device_flops=eta * peak_of(G, c.precision),
                     compute="gemm", device=gemm_of(row["gpu"], eta),
                     memory_bandwidth=HBM[row["gpu"]], **options(row))
        closed, made = None, replay(t, G, placement=gpus_of(G)[:L.world], collapse=True).makespan
        note = f"closed form failed: {type(exc).__name__} {exc}"
    return {"id": row["id"], "method": "simulated", "closed": closed, "simulated": made,
            "predicted": made, "null": null_time(row), "efficiency": eta, "note": note}


def predictions(rows=None, out=None):
    """:func:`predict` of every row (minutes: the replays); ``out`` gets a line per row."""
    rows = load() if rows is None else rows
    etas = efficiencies()
    preds = []
    for r in rows:
        preds.append(predict(r, etas))
        if out is not None:
            out(f"{r['id']}: {preds[-1]['method']} {preds[-1]['predicted']:.4g} s")
    return preds


def save(preds, path=PREDICTED):
    """Write :func:`predictions` to ``path`` (floats with 12 significant digits)."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(_FIELDS)
        for p in preds:
            w.writerow(["" if p[k] is None else f"{p[k]:.12g}" if isinstance(p[k], float)
                        else p[k] for k in _FIELDS])


def cached(path=PREDICTED):
    """The stored predictions: ``{id: dict}`` with floats (None where empty).

    Examples
    --------
    >>> set(cached()) == {r["id"] for r in load()}
    True
    """
    out = {}
    with open(path, newline="") as f:
        for p in csv.DictReader(f):
            for k in ("closed", "simulated", "predicted", "null", "efficiency"):
                p[k] = float(p[k]) if p[k] else None
            out[p["id"]] = p
    return out
