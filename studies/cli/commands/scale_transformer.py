"""``netsim scale transformer``: a transformer under TP x PP x DP against P, or the layout sweep.

Part of ``netsim scale`` (:mod:`studies.cli.commands.scale`), which hands it the
parsed arguments when the paradigm is ``transformer``; the study is
:mod:`studies.scaling.transformer`.
"""

import json

from netsim.checks import check_real
from netsim.errors import NetsimError
from netsim.units import format_bytes, format_time, parse_bytes, parse_spec, parse_workers
from topologies.devices import device_flops
from workloads.transformer.flops import CONFIGS, Config, get_config
from workloads.transformer.closed import check_options as check_layout, timelines
from workloads.transformer.layout import layout
from workloads.transformer.moe import moe
from workloads.transformer.stages import stage_layers

from studies.cli.console import check_options, expect, progress, write, write_csv
from studies.cli.options import given_options, option_value, perturb_label
from studies.registry import topology_factory
from studies.reports.text import table
from studies.scaling.run_length import check_layers, check_passes
from studies.scaling.fit import capacity_of, check_memory
from studies.scaling.trace_size import check_ops
from studies.scaling.transformer import default_efficiency, plot, study, sweep, sweep_layouts

__all__ = ["add_arguments", "parse_config", "parse_experts", "check_device", "check_work",
           "check_fit", "run"]


def add_arguments(p):
    """Add the transformer options to ``p`` (an ``argparse`` parser or group).

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> p.parse_args(["--tp", "8", "--pp", "4"]).pp
    4
    """
    g = p.add_argument_group("transformer (PARADIGM transformer)")
    g.add_argument("--config", default="gpt3-13b", metavar="NAME[:k=v,...]",
                   help="model: " + ", ".join(CONFIGS) + ", with changes such as "
                        "gpt3-13b:layers=8,seq=1024 or gpt3-13b:ffn_hidden=13824,mlp=swiglu,"
                        "kv_heads=8 (keys: " + ", ".join(Config._fields) + "; default gpt3-13b)")
    g.add_argument("--tp", type=int, default=8, help="tensor-parallel degree (default 8)")
    g.add_argument("--pp", type=int, default=1, help="pipeline-parallel degree (default 1)")
    g.add_argument("--cp", type=int, default=1,
                   help="context-parallel degree: each sequence over N GPUs (Megatron-Core "
                        "with Transformer Engine's ring attention: keys and values passed "
                        "round the N, beside the attention core; 2 N must divide the sequence; "
                        "P = tp x cp x pp x dp; default 1; not with --sweep, --experts, "
                        "ZeRO-3/--fsdp, --compute gemm, --tp-overlap, --overlap-param-gather)")
    g.add_argument("--micro-batch", type=int, default=1, help="sequences per micro-batch "
                                                               "(default 1)")
    g.add_argument("--global-batch", type=int, default=512,
                   help="sequences per iteration (default 512: a 1M-token batch of 2048-token "
                        "sequences, GPT-3 13B's in Brown et al. 2020, Table 2.1)")
    g.add_argument("--pipeline", default="1f1b", help="1f1b (default), gpipe or interleaved")
    g.add_argument("--chunks", type=int, default=None,
                   help="chunks of layers per stage of the interleaved schedule (default 2)")
    g.add_argument("--first-stage-layers", type=int, default=None, metavar="N",
                   help="layers on the first pipeline stage, the rest split evenly over the "
                        "stages between (Megatron-LM's --decoder-first-pipeline-num-layers; "
                        "1f1b or gpipe)")
    g.add_argument("--last-stage-layers", type=int, default=None, metavar="N",
                   help="layers on the last pipeline stage (Megatron-LM's "
                        "--decoder-last-pipeline-num-layers)")
    g.add_argument("--recompute", default="full",
                   help="full (default), selective (the attention core only, Korthikanti et al. "
                        "2022 section 5) or none")
    g.add_argument("--sequence-parallel", action="store_true",
                   help="tensor-parallel blocks as allgather + reduce-scatter")
    g.add_argument("--zero", type=int, default=0, metavar="1|2|3",
                   help="shard the data parallelism as ZeRO stage 1, 2 or 3 (Rajbhandari et al. "
                        "SC'20; needs dp > 1, stage 3 pp 1; --sweep leaves out the layouts "
                        "it does not apply to)")
    g.add_argument("--fsdp", action="store_true",
                   help="PyTorch FSDP full sharding: ZeRO-3's traffic and memory")
    g.add_argument("--tp-overlap", action="store_true",
                   help="tensor-parallel collectives beside the GEMMs (Megatron-LM "
                        "--tp-comm-overlap; needs --sequence-parallel)")
    g.add_argument("--overlap-param-gather", action="store_true",
                   help="ZeRO-1/2's parameter allgather under the next forward, bucket by "
                        "bucket (Megatron-LM --overlap-param-gather; needs --zero 1 or 2)")
    g.add_argument("--experts", type=int, default=None, metavar="E",
                   help="mixture-of-experts layers of E experts (with tp > 1 they need "
                        "--sequence-parallel, as in Megatron-LM)")
    g.add_argument("--top-k", type=int, default=2, metavar="K",
                   help="experts per token (default 2: Megatron-LM core_r0.9.0's "
                        "moe_router_topk)")
    g.add_argument("--capacity-factor", type=float, default=1.0,
                   help="expert capacity factor (default 1.0: Switch Transformer, Fedus et al. "
                        "2021)")
    g.add_argument("--moe-every", type=int, default=1, metavar="N",
                   help="every N-th layer is an MoE layer (default 1; 2: GShard's every other)")
    g.add_argument("--ep", type=int, default=1,
                   help="expert-parallel degree, dividing dp and the experts (default 1; "
                        "--sweep runs over it)")
    g.add_argument("--efficiency", type=float, default=None,
                   help="achieved share of the GPUs' dense FP16 peak (default: taken from "
                        "Narayanan et al. SC'21 Table 1, the 145.6B row)")
    g.add_argument("--compute", default="flops", choices=("flops", "gemm"),
                   help="compute time: flops (FLOPs at --efficiency of the peak, the default) "
                        "or gemm (each block's GEMMs from their shapes: tile and wave "
                        "quantisation on the GPU model, one calibration row per GPU)")
    g.add_argument("--simulate", action="store_true",
                   help="also replay the trace on the topology: identical data-parallel "
                        "replicas once, each NCCL call alone on its links once (refused with "
                        "its estimate where every replica must be replayed and would not fit)")
    g.add_argument("--sweep", action="store_true",
                   help="rank every (TP, PP, DP) layout of the largest P by the closed form "
                        "(with --simulate: replay each layout kept and rank by the replay)")
    g.add_argument("--memory", default=None, metavar="BYTES",
                   help="memory of one GPU, e.g. 40GB: a layout needing more per GPU (weights, "
                        "gradients, optimizer state, activations) is refused, and --sweep "
                        "leaves it out (default: the GPU's datasheet figure, not applied by "
                        "--sweep)")
    g.add_argument("--no-memory-check", action="store_true",
                   help="compute a layout even where it needs more memory per GPU than the "
                        "GPU has (refused by default, naming what it needs)")


def parse_config(text, micro_batch, global_batch, given=()):
    """``NAME[:k=v,...]`` as a :class:`workloads.transformer.flops.Config`.

    The spec is read as a topology's is (:func:`netsim.units.parse_spec`: a key given twice
    or a stray comma is refused); each value takes the type of the model's own field. A
    ``micro_batch`` or ``global_batch`` change given with its option (``given``: the
    option's destinations the command line holds) is refused: neither would win silently.

    Examples
    --------
    >>> parse_config("gpt3-13b:layers=8", 1, 64).layers
    8
    >>> parse_config("gpt3-13b:ffn_hidden=13824,mlp=swiglu,kv_heads=8", 1, 64).kv
    8
    >>> parse_config("gpt3-13b:colour=red", 1, 64)
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: --config gpt3-13b has no option 'colour'; options: layers, hidden, heads, seq, vocab, micro_batch, global_batch, precision, ffn_hidden, mlp, kv_heads, bias, norm, position, tied
    """
    name, items = parse_spec(text, "--config", NetsimError)
    if name not in CONFIGS:
        get_config(name)   # its refusal lists the models
    base = CONFIGS[name]
    changes = {}
    for key, value in items.items():
        if key not in base._fields:
            raise NetsimError(f"--config {name} has no option {key!r}; options: "
                              f"{', '.join(base._fields)}")
        if key in given:
            flag = "--" + key.replace("_", "-")
            raise NetsimError(f"--config gives {key}={value} and {flag} is given too; give one")
        changes[key] = option_value(key, value, getattr(base, key))
    changes.setdefault("micro_batch", micro_batch)
    changes.setdefault("global_batch", global_batch)
    return get_config(name, **changes)


_HEAD = ["P", "tp", "pp", "dp", "m", "time", "compute", "bubble", "TP", "PP", "DP",
         "tokens/s", "MFU", "memory"]
#: With experts: ``ep`` after ``dp`` and the exposed all-to-all after ``DP``.
_MOE_HEAD = _HEAD[:4] + ["ep"] + _HEAD[4:11] + ["EP"] + _HEAD[11:]
#: With context parallelism: ``cp`` after ``dp`` and the rings' exposed time after ``DP``.
_CP_HEAD = _HEAD[:4] + ["cp"] + _HEAD[4:11] + ["CP"] + _HEAD[11:]


def _replicas(r):
    """How many data-parallel replicas and tensor shards a record's replay simulated, in
    words."""
    k, dp = r["replicas_simulated"], r["dp"]
    s, tp = r.get("shards_simulated", r["tp"]), r["tp"]
    if "cp" in r:
        return f"every rank ({r['P']}: context parallelism's rings join the replicas)"
    if s < tp:
        return (f"{s} of {tp} tensor shards of each stage (the others their copies), "
                f"every replica ({dp})")
    if k == dp:
        return f"every replica ({dp})"
    return f"{k} of {dp} replicas (the others their copies)"


def _row(r):
    row = (r["P"], r["tp"], r["pp"], r["dp"], r["microbatches"], format_time(r["time"]),
           format_time(r["compute"]), format_time(r["bubble"]), format_time(r["tp_comm"]),
           format_time(r["pp_comm"]), format_time(r["dp_comm"]), f"{r['tokens_per_s']:.4g}",
           f"{r['mfu']:.1%}", format_bytes(r["memory"]))
    for key in ("ep", "cp"):
        if key in r:
            return row[:4] + (r[key],) + row[4:11] + (format_time(r[f"{key}_comm"]),) + row[11:]
    return row


def parse_experts(args):
    """The :class:`workloads.transformer.moe.Moe` of the options (None without ``--experts``).

    Raises
    ------
    NetsimError
        For expert options without ``--experts`` (even at their defaults), a bad value, or ``--sweep``
        over experts without ``--sequence-parallel`` (its layouts of tp > 1 need it).

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> parse_experts(p.parse_args(["--experts", "8", "--top-k", "1"]))
    Moe(experts=8, top_k=1, capacity_factor=1.0, every=1)
    """
    check_options(args, ep=(1, None), top_k=(1, None), moe_every=(1, None))
    if args.experts is None:
        given = given_options(args, add_arguments)
        for dest in ("ep", "top_k", "capacity_factor", "moe_every"):
            if dest in given:
                raise NetsimError(f"{given[dest]} {getattr(args, dest)} needs --experts")
        return None
    check_options(args, experts=(1, None))
    if args.sweep and not args.sequence_parallel:
        raise NetsimError("--sweep with --experts needs --sequence-parallel (experts under "
                          "tp > 1 need it, as in Megatron-LM)")
    return moe(args.experts, args.top_k, args.capacity_factor, args.moe_every)


def _layouts(c, args, workers, chunks, experts=None):
    """(tp, pp, dp) of each point the command computes: the given layout at each P, checked
    as the closed form checks it (:func:`workloads.transformer.closed.check_options`), or with
    ``--sweep`` every layout :func:`studies.scaling.transformer.sweep` tries at the largest P,
    none of them a refusal naming P."""
    if not args.sweep:
        if args.pp == 1 and (args.first_stage_layers is not None
                             or args.last_stage_layers is not None):
            raise NetsimError("--first-stage-layers and --last-stage-layers split the layers "
                              "over pipeline stages: they need --pp 2 or more (with --pp 1 one "
                              "stage holds every layer)")
        out = []
        for P in workers:
            L = layout(args.tp, args.pp, None, world=P, cp=getattr(args, "cp", 1))
            check_layout(c, L.tp, L.pp, L.dp, args.pipeline, args.recompute,
                         args.sequence_parallel, chunks=chunks, zero=args.zero, fsdp=args.fsdp,
                         moe=experts, ep=args.ep if experts is not None else 1,
                         first_stage_layers=args.first_stage_layers,
                         last_stage_layers=args.last_stage_layers,
                         tp_overlap=getattr(args, "tp_overlap", False),
                         param_gather="overlap" if getattr(args, "overlap_param_gather", False)
                         else "after", cp=getattr(args, "cp", 1))
            out.append((L.tp, L.pp, L.dp))
        return out
    if args.first_stage_layers is not None or args.last_stage_layers is not None:
        raise NetsimError("--sweep tries even splits only; --first-stage-layers and "
                          "--last-stage-layers need a given --pp")
    P = max(workers)
    out = sweep_layouts(c, P)
    if not out:   # the sweep's own refusal, before its topology is built
        raise NetsimError(f"no layout of {P} GPUs fits the model: tp in 1, 2, 4, 8 and pp "
                          f"dividing its {c.layers} layers leave no dp dividing the global "
                          f"batch of {c.global_batch} in micro-batches of {c.micro_batch}")
    return out


def check_work(args, c, workers, chunks, experts=None):
    """Refuse, before any graph is built, points whose layout, closed form or topology fails.

    Each layout is checked first (:func:`_layouts`). The closed form lists each micro-batch's
    forward and backward pass on each stage, 2 m v p of them
    (:func:`studies.scaling.run_length.check_passes`); each P's topology is priced by its
    build (:func:`studies.scaling.trace_size.check_ops` with no ops; with ``--simulate`` also
    its route searches). Without ``--force`` accepted work of a second or more is announced
    with its estimate (:func:`studies.cli.console.expect`); with it only the layouts are
    checked.
    """
    force = getattr(args, "force", False)
    # every layer is listed by the layouts' check below, and walked again by each point (a
    # sweep's layouts are counted once they are listed: one here, a lower bound)
    seconds = 0.0 if force else check_layers(c.layers, 1 if args.sweep else len(workers),
                                             f"--config {args.config}")
    layouts = _layouts(c, args, workers, chunks, experts)
    if force:
        return
    runs = timelines(1 if args.sweep else args.pp, chunks, args.zero, args.fsdp,
                     "overlap" if getattr(args, "overlap_param_gather", False) else "after")
    for tp, pp, dp in layouts:
        m = c.global_batch // (c.micro_batch * dp)
        what = (f"--global-batch {c.global_batch} over tp {tp} x pp {pp} x dp {dp} "
                f"(m = {m} micro-batches)")
        seconds += check_passes(2 * m * chunks * pp, what,
                                runs=runs if not args.sweep else timelines(pp, chunks))
    for P in sorted(set(workers)) if not args.sweep else [max(workers)]:
        seconds += check_ops(0, f"the topology {args.topology} of P = {P}",
                             topology=args.topology, ranks=P,
                             passes=1)["seconds"]   # the closed form routes its hops too
    expect(args, seconds, f"transformer at P = {', '.join(map(str, workers))}")


def check_device(name, precision):
    """``--device`` in transformer mode: a GPU name of :data:`topologies.devices.DEVICES`, or None.

    Raises
    ------
    NetsimError
        For a precision given with it (the model's is used) or an unknown name, listing
        the known ones.

    Examples
    --------
    >>> check_device("a100", "fp16")
    'a100'
    >>> check_device("A100:tf32", "fp16")
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: --device A100:tf32: with PARADIGM transformer give a GPU name alone (the precision is the model's, fp16)
    """
    if name is None:
        return None
    if ":" in name:
        raise NetsimError(f"--device {name}: with PARADIGM transformer give a GPU name alone "
                          f"(the precision is the model's, {precision})")
    device_flops(name, "fp16" if precision in ("fp16", "bf16") else precision)
    return name


def check_fit(args, c, workers, G, device, options):
    """Refuse a P at which the layout of the options needs more memory per GPU than a GPU has.

    The GPU's memory is ``--memory`` where given, else the datasheet's of ``--device`` or of
    the GPUs of ``G`` (the topology of the first P: :func:`studies.scaling.fit.capacity_of`);
    ``options`` are the study's (its memory options are read). Nothing is checked under
    ``--sweep`` (``--memory`` leaves layouts out there) or with ``--no-memory-check``.

    Raises
    ------
    studies.scaling.fit.OutOfMemory
        Naming the P, the need by part, the memory and ``--no-memory-check``.
    """
    if args.sweep or getattr(args, "no_memory_check", False):
        return
    if args.memory is not None:
        capacity, name = parse_bytes(args.memory), f"--memory {args.memory}"
    else:
        capacity, name = capacity_of(G, device)
    keep = ("pipeline", "recompute", "sequence_parallel", "chunks", "zero", "fsdp", "moe",
            "first_stage_layers", "last_stage_layers", "cp")
    kw = {k: v for k, v in options.items() if k in keep}
    if options.get("moe") is not None:
        kw["ep"] = args.ep
    for P in workers:
        L = layout(args.tp, args.pp, None, world=P, cp=kw.get("cp", 1))
        try:
            check_memory(c, L, capacity, name, f"--config {args.config} at P = {P} (tp {L.tp} "
                         f"x pp {L.pp} x dp {L.dp}" + (f" x cp {kw['cp']}" if kw.get("cp", 1)
                                                       > 1 else "") + ")", **kw)
        except NetsimError as exc:
            raise type(exc)(f"{exc}; --no-memory-check computes it anyway") from None


def _split(c, args):
    """Layers per pipeline stage of the options (:func:`workloads.transformer.stages.stage_layers`)."""
    return stage_layers(c.layers, args.pp, args.first_stage_layers, args.last_stage_layers)


def _once(make, built):
    """``make`` that hands out each graph of ``built`` once before building any again."""
    def once(P):
        return built.pop(P) if P in built else make(P)
    return once


def run(args, perturbation=None):
    """Run ``netsim scale transformer`` on parsed arguments; the report on stdout.

    ``perturbation`` (:func:`studies.cli.options.perturb_options`' dict) perturbs the
    replay's compute (``--straggler``, ``--jitter``), every replica replayed.

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> for flag, default in (("--workers", "64"), ("--topology", "gpu_cluster:machine=dgx_h100"),
    ...                       ("--csv", None)):
    ...     _ = p.add_argument(flag, default=default)
    >>> _ = p.add_argument("--json", action="store_true")
    >>> run(p.parse_args(["--pp", "4"]))  # doctest: +ELLIPSIS, +NORMALIZE_WHITESPACE
     P  tp  pp  dp    m  time ...
    --  --  --  --  ---  ...
    64   8   4   2  256  4.96 s ...
    ...
    """
    check_options(args, tp=(1, None), pp=(1, None), cp=(1, None), micro_batch=(1, None),
                  global_batch=(1, None))
    if args.efficiency is not None:
        check_real(args.efficiency, "--efficiency", lo=0, hi=1, strict=(True, False))
    c = parse_config(args.config, args.micro_batch, args.global_batch,
                     given=given_options(args, add_arguments))
    experts = parse_experts(args)
    device = check_device(getattr(args, "device", None), c.precision)
    workers = parse_workers(args.workers)
    chunks = args.chunks if args.chunks is not None else (
        2 if args.pipeline == "interleaved" else 1)
    check_work(args, c, workers, chunks, experts)
    make = topology_factory(args.topology)
    e = default_efficiency() if args.efficiency is None else args.efficiency
    kw = dict(pipeline=args.pipeline, recompute=args.recompute,
              sequence_parallel=args.sequence_parallel, chunks=chunks, zero=args.zero,
              fsdp=args.fsdp)
    gemm = getattr(args, "compute", "flops") == "gemm"
    if gemm:
        kw["compute"] = "gemm"
    if getattr(args, "tp_overlap", False):
        kw["tp_overlap"] = True
    if getattr(args, "overlap_param_gather", False):
        kw["param_gather"] = "overlap"
    if args.first_stage_layers is not None or args.last_stage_layers is not None:
        kw.update(first_stage_layers=args.first_stage_layers,
                  last_stage_layers=args.last_stage_layers)
    if experts is not None:
        kw["moe"] = experts
    if getattr(args, "cp", 1) > 1:
        kw["cp"] = args.cp
    if device is not None:
        kw["device"] = device
    library = getattr(args, "library", None) or "auto"
    built = {}   # the first P's topology, built for the memory check, is the study's too
    if not args.sweep and not getattr(args, "no_memory_check", False):
        built[workers[0]] = make(workers[0])
        check_fit(args, c, workers, built[workers[0]], device, kw)
        make = _once(make, built)
    # The replays' ops are counted as they run (collectives expand at replay): no total.
    with progress(args, None, "replay", unit="op", show=args.simulate) as bar:
        hooks = dict(progress=bar if bar.drawn else None,
                     notice=lambda seconds, what: expect(args, seconds, what))
        if perturbation:
            hooks["perturbation"] = perturbation
        if args.sweep:
            memory = parse_bytes(args.memory) if args.memory is not None else None
            records = sweep(c, max(workers), make(max(workers)), e, memory=memory,
                            simulate=args.simulate, **hooks,
                            **({"library": library} if args.simulate else {}), **kw)
        else:
            records = study(c, args.tp, args.pp, workers, make, e, simulate=args.simulate,
                            library=library, **hooks,
                            **kw, **({} if experts is None else {"ep": args.ep}))
    if getattr(args, "csv", None):
        write_csv(args.csv, records)
    if getattr(args, "png", None):
        title = (f"{args.config} on {args.topology}"
                 + (f" (fastest layouts of P = {max(workers)})" if args.sweep else ""))
        write(args.png, lambda f: plot(records[:8], f, title=title), binary=True)
    if args.json:
        print(json.dumps({"efficiency": None if gemm else e, "records": records,
                          **({"compute": "gemm"} if gemm else {})}))
        return
    head = list(_MOE_HEAD if experts is not None else _CP_HEAD if "cp" in kw else _HEAD)
    rows = [_row(r) for r in records]
    if args.simulate:
        head += ["simulated", "saturated link"]
        rows = [row + (format_time(r["simulated"]) if r["simulated"] is not None else "-",
                       r["saturated_link"] or "-") for row, r in zip(rows, records)]
    print(table(head, rows))
    if args.simulate:   # the replay's number first, the closed form beside
        print("\nsimulated against the closed form (collectives priced as the replay runs "
              "them, each alone):")
        for r in records:
            at = f"P={r['P']}" + (f" tp {r['tp']} pp {r['pp']} dp {r['dp']}" if args.sweep
                                  else "")
            if r["simulated"] is None:
                print(f"  {at}: not simulated: {r['not_simulated']}")
                continue
            print(f"  {at}: {format_time(r['simulated'])} against "
                  f"{format_time(r['time'])} ({r['simulated'] / r['time'] - 1:+.2%}); "
                  f"why: {r['why']}")
    source = "given" if args.efficiency is not None else "from Narayanan et al. SC'21 Table 1"
    peak = f"the dense FP16 peak of {device}" if device else "the dense FP16 peak"
    rate = (f"efficiency {e:.3f} of {peak} ({source})" if not gemm else
            "compute from GEMM shapes (tile and wave quantisation, calibrated on "
            "stas00/ml-engineering's MAMF table)")
    shard = ("; FSDP" if args.fsdp else "") + (f"; ZeRO-{args.zero}" if args.zero else "")
    if "first_stage_layers" in kw:
        shard += f"; stages of {', '.join(map(str, _split(c, args)))} layers"
    if "cp" in kw:
        shard += (f"; context parallelism over {args.cp} GPUs (ring attention, "
                  f"sequence {c.seq} in {2 * args.cp} chunks)")
    if experts is not None:
        shard += (f"; {experts.experts} experts, top-{experts.top_k}, capacity factor "
                  f"{experts.capacity_factor:g}, every {experts.every}"
                  f" layer(s)")
    print(f"\n{args.config}, b = {c.micro_batch}, B = {c.global_batch}, {args.pipeline}, "
          f"recompute {args.recompute}{shard}; {rate}; "
          f"closed form (compute + bubble + exposed TP, PP, DP"
          f"{'' if experts is None else ', EP'}{', CP' if 'cp' in kw else ''}); "
          f"topology {args.topology}"
          + (f"; layouts fastest first{' as simulated' if args.simulate else ''}"
             if args.sweep else "")
          + (f", those needing more than {args.memory} per GPU left out"
             if args.memory and args.sweep else "")
          + ("; memory per GPU not checked (--no-memory-check)"
             if getattr(args, "no_memory_check", False) else ""))
    if perturbation:
        print(f"perturbed at replay: {perturb_label(perturbation)} (seed "
              f"{perturbation['seed']}); closed forms unperturbed")
    if args.simulate:
        print("simulated: " + "; ".join(
            (f"tp {r['tp']} pp {r['pp']}" if args.sweep else f"P = {r['P']}")
            + f", {_replicas(r)}" for r in records if r["simulated"] is not None)
              + " (netsim.network.symmetry)"
              + ("; NCCL calls alone on their links replayed once each (netsim.comm.alone)"
                 if library in ("auto", "nccl") else f"; {library}'s schedules as messages")
              + ("; a stage's compute and tensor-parallel calls between pipeline messages "
                 "as one op (workloads.transformer.fused)"
                 if any(r.get("tp_fused") for r in records) else ""))
