"""``netsim scale``: time per iteration against P, for a paradigm or for collectives.

With a PARADIGM (or a trace file): :func:`studies.scaling.paradigm.study`.
Without one: collective algorithms by :func:`netsim.analysis.collectives.scale`, with
scaling-law fits (:func:`netsim.analysis.collectives.fit_scaling`).
"""

import json
import os

from netsim.analysis.collectives import fit_scaling, plot_scale, scale, scale_terms, takes_segments
from netsim.checks import check_real
from netsim.errors import NetsimError
from netsim.units import format_bytes, format_time, parse_bytes, parse_workers
from topologies.devices import device_flops
from workloads.models import get_model
from workloads import V100_FP32_FLOPS

from studies.cli.console import (check_not_read, check_options, check_png, check_writable, expect,
                                 log, note, write, write_csv)
from studies.cli.options import (add_force_argument, add_library_argument, add_perturb_arguments,
                       add_transport_argument, given_options, paradigm_options, perturb_label,
                       perturb_options)
from studies.scaling.paradigm import plot_study, study
from studies.registry import COLLECTIVES, PARADIGMS, topology_factory
from studies.reports.text import format_study, speedup_hint, table
from studies.scaling.defaults import DATASET, study_defaults
from studies.scaling.run_length import EPOCH_SECONDS, check_count, check_training
from studies.scaling.study_run import window_iterations
from studies.scaling.trace_size import PROBE, check_fits
from studies.cli.commands import scale_transformer

HELP = ("time per iteration against P for a paradigm, or collectives: simulation, "
        "closed forms, saturation, fits, PNG")
"""One line for ``netsim --help``."""


def add_arguments(p):
    """Add the command's arguments to ``p``, its ``argparse`` parser.

    Parameters
    ----------
    p : argparse.ArgumentParser

    Examples
    --------
    >>> import argparse
    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> p.parse_args(["-a", "ring,mst", "-P", "2..8"]).workers
    '2..8'
    """
    p.description = (
        "Time per iteration against the worker count P. With a PARADIGM (or a saved trace): "
        "simulate its training at each P next to its alpha-beta closed form, split into "
        "compute and exposed communication, with speed-up and efficiency (weak scaling: fixed "
        "per-worker batch, speed-up P*T(1)/T(P) with T(1) one worker's compute alone), the "
        "saturation point (smallest P at which a link is at >= 99% of capacity for more than "
        "half of the iteration; --strong: or at which time per iteration stops falling) and "
        "scaling-law fits. Without one: collective algorithms (--algorithms), one row per "
        "algorithm and P; the limit column names the link that made the simulation differ "
        "from the closed form (the most messages sharing it at once; - when they agree). "
        "P ranges A..B run over the powers of two from A to B (both ends powers of two); "
        "give any other set as a list, e.g. 3,5,6. "
        "A paradigm's time per iteration is measured over a window of its run that "
        "represents it, from the phases the paradigm declares: the steady state after its "
        "warm-up, in whole periods, where iterations are alike (dgc after its warm-up epochs, "
        "model-averaging in whole periods of H, ps-sync, allreduce, ...), or the whole recorded "
        "run where each iteration replays its recording's traffic (pf, slimdp). A warm-up is "
        "simulated and reported apart (per stage, weighted by its length); the report names "
        "the window, the closed forms are computed over the same window, and a window that "
        "cuts a period is warned about on stderr (and in the JSON's warnings).")
    p.add_argument("paradigm", nargs="?", metavar="PARADIGM|TRACE",
                   help="a paradigm (see netsim record --list) or a trace file to project to "
                        "each P; omit for collective algorithms")
    p.add_argument("--algorithms", "-a", default=None,
                   help="comma-separated collective algorithms (default lp,mst,be,ring): "
                        + ", ".join(COLLECTIVES))
    p.add_argument("--workers", "-P", default="2..64",
                   help="P values: 2..64 (the powers of two from 2 to 64; both ends must be "
                        "powers of two) or a list 2,3,5 (default 2..64)")
    p.add_argument("--bytes", "-n", default=None, help="message size (default 64MB)")
    p.add_argument("--topology", default="star", metavar="NAME[:k=v,...]",
                   help="topology (default star; builders with n are sized to each P)")
    p.add_argument("--segments", "-k", type=int, default=None,
                   help="LP segments, fixed across P (default: the optimum k* tuned to each P)")
    p.add_argument("--png", default="netsim-scale.png", help="plot file (default netsim-scale.png)")
    p.add_argument("--logy", action="store_true", help="logarithmic time axis in the plot")
    p.add_argument("--json", action="store_true", help="print the records as JSON")
    p.add_argument("--csv", metavar="FILE", help="also write the records as CSV")
    add_transport_argument(p)
    add_force_argument(p)
    g = p.add_argument_group("paradigm scaling (with PARADIGM)")
    g.add_argument("--model", help="resize the traces to this model: resnet50, vgg16, "
                                   "bert-large, gpt2-small, ... (message sizes and FLOPs)")
    g.add_argument("--batch", type=int, default=None,
                   help="samples per worker per step (default: the recording's)")
    g.add_argument("--device", metavar="NAME[:PRECISION]",
                   help="device preset for the compute ops: V100, A100, H100 (-PCIe), "
                        "optionally :fp32 (default), :tf32 or :fp16; with PARADIGM "
                        "transformer a GPU name alone, whose dense peak replaces that of the "
                        "topology's GPUs (the precision is the model's)")
    g.add_argument("--device-flops", type=float, default=None,
                   help="device throughput, FLOP/s (default: the trace's device_flops; a "
                        f"recording's is a V100's FP32 {V100_FP32_FLOPS / 1e12:g}e12)")
    g.add_argument("--dataset", default=None,
                   help="dataset of the recordings (default digits; sparse for ps-partitioned, "
                        "where METIS and random placement differ)")
    g.add_argument("--iterations", type=int, default=None,
                   help="iterations of the window measured at each P (default: 3 rounded up to "
                        "whole periods, after any warm-up; the whole recorded epoch for pf and "
                        "slimdp, recorded as long as the window)")
    g.add_argument("--seed", type=int, default=0,
                   help="seed of the recordings and of the --jitter and p=P:Kx --straggler "
                        "draws (default 0)")
    g.add_argument("--set", dest="options", action="append", default=[], metavar="KEY=VALUE",
                   help="a paradigm option, e.g. --set batch_size=32 (repeatable)")
    g.add_argument("--strong", action="store_true",
                   help="strong scaling: the global batch of the smallest P, split over P workers")
    add_library_argument(g)
    add_perturb_arguments(p)
    scale_transformer.add_arguments(p)


def run(args, title=None):
    """Run the command on its parsed arguments: the report on stdout, notes on stderr.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed by the parser :func:`add_arguments` filled (``quiet`` is read if present).

    Examples
    --------
    >>> import argparse, os, tempfile
    >>> p = argparse.ArgumentParser(); add_arguments(p)
    >>> png = os.path.join(tempfile.mkdtemp(), "s.png")
    >>> run(p.parse_args(["-a", "ring", "-P", "2,4", "-n", "1MB", "--png", png]))
    ... # doctest: +ELLIPSIS, +NORMALIZE_WHITESPACE
    algorithm  P  simulated  closed form  gap  limit
    ---------  -  ---------  -----------  ---  -----
    ring       2  804 us     804 us       0    -
    ring       4  1.21 ms    1.21 ms      0    -
    ...
    """
    _refuse_other_modes(args)
    check_options(args, segments=(1, None), seed=(0, 2**32 - 1), iterations=(1, None),
                  batch=(1, None))
    if getattr(args, "device_flops", None) is not None:
        check_real(args.device_flops, "--device-flops", lo=0, strict=True)
    check_png(args.png)
    check_writable(args.csv)
    check_not_read({"--csv": args.csv, "--png": args.png},
                   [path for path in (getattr(args, "paradigm", None), args.topology)
                    if path and os.path.isfile(path)])
    perturbation = perturb_options(args)
    if getattr(args, "paradigm", None) == "transformer":
        return scale_transformer.run(args, perturbation)
    if getattr(args, "paradigm", None):
        return _run_paradigm(args, perturbation)
    algorithms = [a.strip() for a in (args.algorithms if args.algorithms is not None
                                      else "lp,mst,be,ring").split(",") if a.strip()]
    if not algorithms:  # `-a ''` named none: not the default silently
        raise NetsimError(f"--algorithms {args.algorithms!r} names none; give at least one")
    if not algorithms:
        raise NetsimError(f"--algorithms {args.algorithms!r} names none; give at least one")
    for name in algorithms:
        if name not in COLLECTIVES:
            raise NetsimError(f"unknown algorithm {name!r}; known: {', '.join(COLLECTIVES)}")
    if args.segments is not None and not any(takes_segments(name) for name in algorithms):
        raise NetsimError(f"--segments applies to the LP family (lp, lp_reduce, lp_allreduce), "
                          f"not {', '.join(algorithms)}")
    workers = parse_workers(args.workers)
    nbytes = parse_bytes("64MB" if args.bytes is None else args.bytes)
    make = topology_factory(args.topology)
    if not getattr(args, "force", False):  # every algorithm at every P, before any is simulated
        seconds = 0.0
        for topology in (None, make):  # every trace's memory, then with the topology and time
            for name in algorithms:
                for P in workers:
                    # LP without -k: k >= 1, so the count is a lower bound, as in `collective`.
                    fits = check_fits(name, P, segments=args.segments or 1, topology=topology)
                    seconds += fits.get("seconds", 0.0)
        expect(args, seconds, f"{', '.join(algorithms)} at P = {', '.join(map(str, workers))}")
    segments = args.segments  # None: k* tuned to each P (analysis.compare)
    pipelined = any(takes_segments(name) for name in algorithms)
    records = []
    for name in algorithms:
        note(args, f"simulating {name} at P = {', '.join(map(str, workers))} ...")
        records += scale([name], workers, nbytes, make, segments=segments,
                         transport=getattr(args, "transport", "fluid"))
    fits, notes = {}, {}
    for name in algorithms:
        # A point of zero time (P = 1: one rank sends nothing) fits no law; leave it out.
        rs = [r for r in records if r["algorithm"] == name]
        timed = [r for r in rs if r["simulated"] > 0]
        fits[name] = (fit_scaling([r["P"] for r in timed], [r["simulated"] for r in timed])
                      if len({r["P"] for r in timed}) >= 2 else None)
        zero = [r["P"] for r in rs if r["simulated"] <= 0]
        if fits[name] is None:
            notes[name] = "no fit: fewer than two P with time > 0"
        elif zero:
            notes[name] = f"P = {', '.join(map(str, zero))} left out (time 0: no messages)"
    terms = scale_terms(records)
    for name, t in terms.items():
        if fits[name] is not None:
            fits[name]["terms"] = t
    if args.csv:
        write_csv(args.csv, records)
    kname = (f"k = {segments}" if segments is not None else "k* per P") if pipelined else ""
    title = title or (f"{', '.join(algorithms)}: n = {format_bytes(nbytes)} on {args.topology}"
                      + (f", LP {kname}" if kname else ""))
    write(args.png, lambda f: plot_scale(records, f, title=title, logy=args.logy), binary=True)
    if args.json:
        print(json.dumps({"records": records, "fits": fits}))
        return
    print(table(["algorithm", "P", "simulated", "closed form", "gap", "limit"],
                [(r["algorithm"], r["P"], format_time(r["simulated"]), format_time(r["closed_form"]),
                  f"{r['gap'] + 0.0:+.2%}" if abs(r["gap"]) >= 5e-5 else "0", r["limit"] or "-")
                 for r in records]))
    print()
    def law(name, term):
        t = terms[name]
        return "-" if t is None else t[term]["law"]

    print(table(["algorithm", "scaling law", "R^2", "latency term", "bandwidth term", "fill",
                 "contention", "note"],
                [(name, f["law"] if f else "-", "-" if not f or f["r2"] is None else f"{f['r2']:.4f}",
                  law(name, "latency"), law(name, "bandwidth"), law(name, "fill"),
                  law(name, "contention"),
                  "; ".join(x for x in ("no single law fits" if f and f["no_single_law"] else "",
                                        notes.get(name, "")) if x))
                 for name, f in fits.items()]))
    print("\nterm laws: least BIC among constant, (P-1)/P, log2 P, sqrt P, P, P log2 P, P^2 "
          "(netsim.analysis.scaling_laws); latency = time as beta -> 0, bandwidth = as alpha -> 0, fill = "
          "the rest of a tuned pipeline, contention = simulated - closed form")
    footer = f"n = {format_bytes(nbytes)}, topology {args.topology}"
    if pipelined:
        footer += f", LP segments {kname}"
    print(f"\n{footer}; wrote {args.png}")


_MODES = {"collectives": "collectives (--algorithms)", "paradigm": "a PARADIGM's scaling",
          "transformer": "PARADIGM transformer"}
"""The three modes of ``netsim scale`` -> how a message names them."""

_APPLIES = {
    **dict.fromkeys(("algorithms", "bytes", "segments", "logy"), ("collectives",)),
    **dict.fromkeys(("model", "batch", "device_flops", "dataset", "iterations", "options",
                     "strong"), ("paradigm",)),
    **dict.fromkeys(("seed", "straggler", "jitter"), ("paradigm", "transformer")),
    "library": ("paradigm", "transformer"), "device": ("paradigm", "transformer"), "transport": ("collectives", "paradigm"),
    "force": ("collectives", "paradigm", "transformer"),
}
"""Option destination -> the modes it applies to (the transformer's own options: transformer;
any other option: every mode). A paradigm's plot has a logarithmic time axis already, and the
transformer's closed form has no TCP model."""


def _refuse_other_modes(args):
    """Refuse an option given for a mode of ``netsim scale`` other than the one chosen."""
    paradigm = getattr(args, "paradigm", None)
    mode = ("collectives" if not paradigm else
            "transformer" if paradigm == "transformer" else "paradigm")
    if mode == "paradigm" and getattr(args, "algorithms", None):
        raise NetsimError("--algorithms is for collectives; give either a PARADIGM or --algorithms")
    if mode == "collectives" and (getattr(args, "straggler", None) or getattr(args, "jitter", None)):
        raise NetsimError("--straggler and --jitter perturb a paradigm's compute; give a PARADIGM")
    given = given_options(args, add_arguments)
    transformer_own = given_options(args, scale_transformer.add_arguments)
    for dest, flag in given.items():
        modes = (("transformer",) if dest in transformer_own
                 else _APPLIES.get(dest, tuple(_MODES)))
        if mode not in modes:
            raise NetsimError(f"{flag} applies to {' or '.join(_MODES[m] for m in modes)}, not "
                              f"to {_MODES[mode] if mode != 'paradigm' else paradigm}")
    if mode == "paradigm" and paradigm not in PARADIGMS:  # a trace file: recorded already
        draws = getattr(args, "jitter", None) or "p=" in (getattr(args, "straggler", None) or "")
        for dest, flag in given.items():
            if dest == "dataset" or (dest == "seed" and not draws):
                raise NetsimError(f"{flag} applies to a PARADIGM's recordings, not to the trace "
                                  f"file {paradigm} (recorded already)")
    if mode == "transformer":
        perturbs = " (it perturbs the replay; the closed form is not perturbed)"
        for dest, flag, needs, why in (("library", "--library", "simulate", ""),
                                       ("straggler", "--straggler", "simulate", perturbs),
                                       ("jitter", "--jitter", "simulate", perturbs)):
            if dest in given and not getattr(args, needs):
                raise NetsimError(f"{flag} applies with --{needs}{why}")
        draws = getattr(args, "jitter", None) or "p=" in (getattr(args, "straggler", None) or "")
        if "seed" in given and not draws:
            raise NetsimError(f"{given['seed']} applies with --jitter or a p=P:Kx --straggler "
                              f"(their draws) in PARADIGM transformer")
        _refuse_transformer_no_ops(args, given)


def _refuse_transformer_no_ops(args, given):
    """Refuse a transformer option that the other options make change nothing.

    ``--sweep`` tries every (tp, pp, dp) layout and every ep of the largest P, so a given
    ``--tp``, ``--pp`` or ``--ep`` would be dropped; ``--compute gemm`` times the blocks from
    their GEMMs, so ``--efficiency`` would be dropped; with a given ``--tp 1`` there is no
    tensor-parallel collective for ``--sequence-parallel`` (or ``--tp-overlap``) to split;
    ``--sweep`` tries no context parallelism, so ``--cp`` with it would be dropped;
    ``--no-memory-check`` checks nothing under ``--sweep`` or beside a ``--memory``.
    """
    if args.sweep:
        for dest in ("tp", "pp", "ep"):
            if dest in given:
                raise NetsimError(f"{given[dest]} applies without --sweep (the sweep tries "
                                  f"every {dest} of the largest P)")
        if "cp" in given:
            raise NetsimError("--cp applies without --sweep (the sweep tries cp 1 only)")
    if "no_memory_check" in given:
        if args.sweep:
            raise NetsimError("--no-memory-check applies without --sweep (the sweep checks "
                              "memory only with --memory, leaving out what does not fit)")
        if "memory" in given:
            raise NetsimError("--memory sets the memory --no-memory-check would not check; "
                              "give one")
    if "efficiency" in given and getattr(args, "compute", "flops") == "gemm":
        raise NetsimError("--efficiency applies with --compute flops (--compute gemm times "
                          "each block from its GEMMs' shapes)")
    if args.tp == 1 and not args.sweep:
        for dest in ("sequence_parallel", "tp_overlap"):
            if dest in given:
                raise NetsimError(f"{given[dest]} splits the tensor-parallel collectives; "
                                  f"with --tp 1 there are none (it would change nothing)")


def _run_paradigm(args, perturbation=None):
    """``netsim scale PARADIGM``: :func:`studies.scaling.paradigm.study` at each P."""
    workers = parse_workers(args.workers)
    options = paradigm_options(args.paradigm, PARADIGMS.get(args.paradigm), args.options)
    if "epochs" in options:
        raise NetsimError("--set epochs= does not apply to a scaling study: it records the "
                          "epochs its window needs (--iterations sets the window)")
    if "seed" in options:
        raise NetsimError("--set seed= is --seed in a scaling study; give --seed")
    dataset, options, defaults = (study_defaults(args.paradigm, workers, options, args.dataset)
                                  if args.paradigm in PARADIGMS
                                  else (args.dataset or DATASET, options, []))
    # ps-partitioned's paper compares METIS with random placement: run both unless one is named
    baseline = args.paradigm == "ps-partitioned" and "partition" not in options
    flops = args.device_flops
    if args.device:
        if flops is not None:
            raise NetsimError("give --device or --device-flops, not both")
        flops = _device_flops(args.device)
    if args.model:
        get_model(args.model)  # an unknown name fails here, before any work
    priced = 0.0  # the training and the window; study() adds its points and announces the sum
    if not args.force:
        # recorded at 4 workers (study's base_workers), and at the probe sizes up to
        # PROBE[-1] when a P lies beyond them
        priced += check_training(options, iterations=args.iterations,
                                 workers=PROBE[-1] if max(workers) > PROBE[-1] else 4)
        if args.iterations is None and args.paradigm in PARADIGMS:  # as --iterations would be
            n = window_iterations(args.paradigm, options, dataset=dataset)
            priced += check_count(n, EPOCH_SECONDS, f"the window of {n} iterations in whole "
                                  f"periods that {args.paradigm}'s options ask for", "iteration")
    what = f"{args.paradigm} at P = {', '.join(map(str, workers))}"

    def accepted(seconds):   # the study's estimate passed (a refusal prints no note before)
        expect(args, seconds * (2 if baseline else 1) + priced, what)
        note(args, f"simulating {what} ...")

    if args.force:   # no estimate, no refusal: the work starts at once
        note(args, f"simulating {what} ...")

    run = dict(model=args.model, device_flops=flops, iterations=args.iterations,
               seed=args.seed, dataset=dataset, strong=args.strong, batch=args.batch,
               perturbation=perturbation or None, library=args.library,
               transport=getattr(args, "transport", "fluid"), force=getattr(args, "force", False))
    st = study(args.paradigm, workers, topology_factory(args.topology),
               expect=accepted, **run, **options)
    if defaults:
        st["defaults"] = defaults
    if baseline:
        note(args, f"simulating {args.paradigm} with random placement, the paper's baseline ...")
        random = study(args.paradigm, workers, topology_factory(args.topology), **run,
                       **{**options, "partition": "random"})
        st["baseline"] = {"partition": "random", "records": random["records"]}
    for warning in st["warnings"]:
        log(args, f"warning: {warning}")
    records = st["records"]
    if args.csv:
        write_csv(args.csv, records)
    write(args.png, lambda f: plot_study(st, f, topology=args.topology), binary=True)
    if args.json:
        print(json.dumps(st))
        return
    # The hint goes to stderr right under the per-P table; stdout stays the study's text.
    table_text, _, rest = format_study(st).partition("\n\n")
    print(table_text, flush=True)
    hint = speedup_hint(st)
    if hint:
        log(args, hint)
    print("\n" + rest)
    if st.get("baseline"):
        print("\n" + _versus_random(st))
    for line in defaults:
        print(f"\ndefault for {args.paradigm}: {line}")
    if perturbation:
        print(f"\nperturbed at replay: {perturb_label(perturbation)} (seed {perturbation['seed']}); "
              f"closed forms unperturbed")
    print(f"\ntopology {args.topology}; wrote {args.png}")


def _versus_random(st):
    """ps-partitioned's METIS placement against random placement, per P (the paper's effect)."""
    rows = [(r["P"], format_time(r["time"]), format_time(b["time"]),
             f"{b['time'] / r['time']:.2f}x",
             f"{b['bytes_per_iteration'] / r['bytes_per_iteration']:.2f}x")
            for r, b in zip(st["records"], st["baseline"]["records"])]
    return (table(["P", "METIS time/iter", "random time/iter", "random/METIS time",
                   "random/METIS bytes"], rows)
            + "\nplacement (Li, Andersen & Smola, arXiv:1505.04636): METIS keeps a worker's rows "
              "on few servers; random placement, the paper's baseline, spreads them "
              "(--set partition=metis or random runs one alone)")


def _device_flops(spec):
    """FLOP/s of a device preset: ``V100`` or ``A100:tf32`` (``topologies.devices``)."""
    name, _, precision = spec.partition(":")
    return device_flops(name, precision or "fp32")
