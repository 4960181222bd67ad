"""Published transformer training runs whose layout changes the answer, against the simulation.

Narayanan et al.'s Table 1 (:mod:`studies.validation.megatron`) is weak scaling at
nearly constant throughput per GPU, so a constant predicts it as well as the model
does. This validation takes published runs where the layout, the schedule, the
recomputation or the scale changes the measured throughput
(``studies/data/transformer_layouts.csv``, its sources in
``studies/data/transformer_layouts.md``): Megatron-Core's H100 weak-scaling table and
its strong-scaling figure (a 177B GPT at a fixed batch on 96 to 4608 GPUs), and
torchtitan's Llama runs (FSDP, FSDP + TP) on H100 and A100.

For each row the prediction is the time per iteration of the replay of the trace
(:func:`studies.scaling.transformer.point` with ``simulate=True``, the closed form
beside it) on ``gpu_cluster:machine=dgx_a100`` or ``dgx_h100`` with the row's GPU
count, each GPU at the project's one efficiency
(:func:`studies.scaling.transformer.default_efficiency`, taken from Narayanan et al.'s
Table 1 row :data:`studies.validation.megatron.REFERENCE`, the 145.6B model at 148
TFLOP/s per A100). No constant is taken from these rows. Each row runs its framework's
mechanisms as its configuration turns them on (:func:`options`): Megatron-Core's
TP communication overlap (``--tp-comm-overlap``) and its distributed optimizer's
overlapped parameter allgather (``--overlap-param-gather``), its gradient buckets and
fp32 gradient reduction; torchtitan's FSDP2 reducing gradients in fp32.

The null model runs every row at the calibration row's throughput per unit of peak
(:data:`NULL_SHARE`: 148 of the A100's 312 TFLOP/s, the same share of the H100's
peak), counting the FLOPs of the row's own recomputation
(:func:`workloads.transformer.flops.iteration_flops`).

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

from studies.registry import topology_factory
from studies.scaling.transformer import default_efficiency, gpus_of, peak_of, point
from studies.validation.megatron import PEAK, REFERENCE, ROWS
from netsim import simulate as replay
from workloads.transformer.flops import config, iteration_flops
from workloads.transformer.iteration import schedule
from workloads.transformer.layout import layout

__all__ = ["DATA", "PREDICTED", "NULL_SHARE", "MACHINES", "load", "model", "measured_time",
           "model_rate", "null_time", "options", "predict", "predictions", "save", "cached"]

_HERE = pathlib.Path(__file__).resolve().parent.parent / "data"
#: The measurements: one published run per line (sources in ``transformer_layouts.md``).
DATA = _HERE / "transformer_layouts.csv"
#: The predictions of every row, stored by :func:`save` (recomputed by :func:`predictions`).
PREDICTED = _HERE / "transformer_layouts_predicted.csv"
#: The null model's throughput per unit of peak: Narayanan et al.'s Table 1 calibration
#: row (:data:`studies.validation.megatron.REFERENCE`, 148 TFLOP/s) over the A100's peak.
NULL_SHARE = ROWS[REFERENCE].tflops * 1e12 / PEAK
#: The machine each GPU model runs on (``gpu_cluster:machine=...``).
MACHINES = {"A100": "dgx_a100", "H100": "dgx_h100"}

_INT = ("gpus", "layers", "hidden", "heads", "vocab", "seq", "micro_batch", "global_batch", "tp",
        "pp", "dp", "chunks", "zero")
_BOOL = ("bias", "tied", "fsdp", "sequence_parallel", "tp_comm_overlap", "overlap_param_gather")
_FIELDS = ("id", "method", "closed", "simulated", "predicted", "null", "note")


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


def null_time(row):
    """The null model's seconds per iteration: the row's FLOPs at :data:`NULL_SHARE` of its peak.

    Examples
    --------
    >>> r = load()[0]
    >>> round(NULL_SHARE, 4), round(model_rate(r, null_time(r)) / 1e12, 1)
    (0.4744, 469.4)
    """
    from topologies.devices import device_flops

    c = model(row)
    return iteration_flops(c, row["recompute"]) / (row["gpus"] * NULL_SHARE
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
      the default ``bucket_size`` with ``--overlap-grad-reduce``).
    * ``torchtitan``: FSDP2 with ``MixedPrecisionPolicy(param_dtype=bfloat16,
      reduce_dtype=float32)`` (``torchtitan/parallelisms/parallelize_llama.py`` at
      504e7641d; ``--training.mixed_precision_reduce`` "float32" in
      ``torchtitan/config_manager.py`` at 9dec370): the gradients' reduce-scatters in fp32.

    Examples
    --------
    >>> o = options(load()[1])   # Megatron-Core, TP 2, DP 48
    >>> o["tp_overlap"], o["param_gather"], o["grad_element"], o["bucket_bytes"] / 1e6
    (True, 'overlap', 4, 192.0)
    """
    out = dict(pipeline="interleaved" if row["chunks"] > 1 else "1f1b", chunks=row["chunks"],
               recompute=row["recompute"], sequence_parallel=row["sequence_parallel"],
               zero=row["zero"], fsdp=row["fsdp"], tp_overlap=row["tp_comm_overlap"],
               param_gather="overlap" if row["overlap_param_gather"] else "after",
               grad_element=4)
    if row["framework"] == "megatron-core":
        out["bucket_bytes"] = 4 * max(40e6, 1e6 * row["dp"])
    elif row["framework"] != "torchtitan":
        raise ValueError(f"unknown framework {row['framework']!r} of row {row['id']}")
    return out


def predict(row, efficiency=None):
    """One row's prediction: a dict of :data:`_FIELDS` (times in seconds).

    ``predicted`` is the replay's makespan (``method`` ``"simulated"``), ``closed`` the
    closed form beside it, ``note`` why the two differ (:mod:`studies.scaling.gaps`:
    which class of calls or hops the replay found slower than alone), or that the
    closed form raised (the replay then runs alone).

    Examples
    --------
    >>> r = next(r for r in load() if r["id"] == "mcore-1.7b")
    >>> p = predict(r)
    >>> p["method"], abs(p["simulated"] / p["closed"] - 1) < 0.05
    ('simulated', True)
    """
    e = default_efficiency() if efficiency is None else efficiency
    c, L = model(row), layout(row["tp"], row["pp"], row["dp"])
    G = topology_factory(f"gpu_cluster:machine={MACHINES[row['gpu']]}")(row["gpus"])
    kw = options(row)
    try:
        rec = point(c, L, G, e, simulate=True, **kw)
        closed, made, note = rec["time"], rec["simulated"], rec["why"] or ""
    except (KeyError, ValueError) as exc:   # a closed form that fails: say so, replay alone
        t = schedule(c, L.tp, L.pp, L.dp, device_flops=e * peak_of(G, c.precision), **kw)
        closed, made = None, replay(t, G, placement=gpus_of(G)[:L.world], collapse=True).makespan
        note = f"closed form failed: {type(exc).__name__} {exc}"
    return {"id": row["id"], "method": "simulated", "closed": closed, "simulated": made,
            "predicted": made, "null": null_time(row), "note": note}


def predictions(rows=None, out=None):
    """:func:`predict` of every row (minutes: the replays); ``out`` gets a line per row."""
    rows = load() if rows is None else rows
    preds = []
    for r in rows:
        preds.append(predict(r))
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
            for k in ("closed", "simulated", "predicted", "null"):
                p[k] = float(p[k]) if p[k] else None
            out[p["id"]] = p
    return out
