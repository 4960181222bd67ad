"""A sweep's grid: its config file, the checks of it, and its points.

A sweep config (YAML, or JSON, which is YAML) names the grid::

    topologies: ["star:bandwidth=10Gbps,latency=1us", "two_tier:per_rack=4"]
    collectives: [ring, rabenseifner]   # studies.registry.COLLECTIVES
    bytes: [1MB, 64MB]                  # message sizes of the collectives
    paradigms: [ps-sync, allreduce]     # studies.registry.PARADIGMS
    hidden: ["16", "64,64"]             # model sizes of the paradigms (hidden widths)
    P: "2..16"                          # or a list: [2, 4, 8, 16]
    straggler: [none, "0:10x"]          # paradigms: perturbed at replay (netsim.trace.perturb)
    jitter: "lognormal:0.1"             # ... each value a point; seeded by seed
    library: [mpich, nccl]              # paradigms: the library of their collectives
    transport: [fluid, tcp]             # every point: the transport of its simulation

Every point (a topology, a collective and a size, or a paradigm and a model
size, and a P) is one row of a CSV file holding its inputs (:data:`INPUTS`)
and its results (:data:`RESULTS`); :func:`point_key` is a row's key for
resuming. Names are checked against :mod:`studies.registry`. Running the
points is :mod:`studies.sweep.run`.
"""

import json
import os

from netsim.errors import NetsimError, UnitError
from netsim.units import parse_bytes, parse_jitter, parse_shape, parse_straggler, parse_workers
from workloads import DATASETS
from workloads.option_ranges import check_needs, check_option

from netsim.comm.library import LIBRARIES
from netsim.network.compiled import Network
from netsim.engine.tcp import TRANSPORTS

from studies.registry import COLLECTIVES, PARADIGMS, topology_factory

__all__ = [
    "INPUTS",
    "RESULTS",
    "COLUMNS",
    "KNOWN_KEYS",
    "load_config",
    "check_config",
    "sweep_points",
    "point_key",
]

INPUTS = ("kind", "name", "topology", "P", "nbytes", "hidden", "dataset", "epochs", "seed",
          "options")
"""Input columns: a row's key for resuming."""

RESULTS = ("ranks", "simulated", "closed_form", "gap", "makespan", "iterations", "messages",
           "top_link", "saturated_fraction", "limit", "accuracy", "error", "wall_seconds")
"""Result columns (seconds, or fractions of the run for utilisation and saturation)."""

COLUMNS = INPUTS + RESULTS
"""The header of a sweep's CSV file."""

KNOWN_KEYS = {
    "topologies": "list of topology specs (NAME[:k=v,...] or a .json/.graphml file); builders "
                  "with an n option are sized to each point's ranks",
    "collectives": "collective algorithms of studies.registry.COLLECTIVES",
    "bytes": "message sizes of the collectives (64MB, 1e6, ...)",
    "paradigms": "training paradigms of studies.registry.PARADIGMS",
    "hidden": "model sizes of the paradigms: hidden-layer widths such as 16 or '64,64'",
    "P": "worker counts: a list, or 2..64 for the powers of two",
    "dataset": "dataset of the paradigms (default iris)",
    "epochs": "training epochs of the paradigms (default 1)",
    "seed": "seed of the paradigms (default 0)",
    "options": "per collective or paradigm, its options: {ps-sync: {servers: 2}, "
               "lp: {segments: 8}}",
    "straggler": "paradigms: a straggler spec or a list of them, each a point (R:Kx: rank R is "
                 "K times slower; p=P:Kx: each compute op with probability P; none: no "
                 "straggler), applied at replay time with the point's seed",
    "jitter": "paradigms: a compute jitter spec or a list of them, each a point "
              "(lognormal:SIGMA, uniform:LO,HI, none), applied at replay time with the seed",
    "library": "paradigms: the communication library expanding their collectives at replay, "
               "or a list of them, each a point (auto, mpich, nccl; default auto: NCCL where "
               "every member is a GPU, netsim.comm.library)",
    "transport": "the transport of every point's simulation, or a list of them, each a point "
                 "(fluid: the flow model, default; tcp: TCP's slow start on top, netsim.engine.tcp)",
    "output": "CSV file of the results (default: the config's name with .csv)",
    "png": "plot of time per iteration against P (optional)",
}
"""The keys a sweep config may have, with what each means."""

_COLLECTIVE_OPTIONS = ("segments", "gamma", "servers")


# -- the config ------------------------------------------------------------------------------

def load_config(path):
    """Read and check a sweep config file (YAML or JSON).

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    dict
        The checked config (see :func:`check_config`).

    Raises
    ------
    NetsimError
        For a missing or unreadable file, a binary one, invalid YAML, a key
        given twice in one mapping (YAML would keep the last), or a bad
        config, naming the file.

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "s.yaml")
    >>> _ = open(p, "w").write("topologies: [star]\\ncollectives: [ring]\\n"
    ...                        "bytes: [1MB]\\nP: 2..8\\n")
    >>> load_config(p)["P"]
    [2, 4, 8]
    """
    try:
        import yaml
    except ImportError:
        raise NetsimError("reading a sweep config needs PyYAML: pip install pyyaml") from None
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8")
        raw = yaml.load(text, Loader=_unique_keys_loader(yaml))
    except UnicodeDecodeError:
        raise NetsimError(f"{path}: not a text file (a sweep config is UTF-8 YAML or JSON)") \
            from None
    except FileNotFoundError:
        raise NetsimError(f"sweep config not found: {path}") from None
    except OSError as exc:
        raise NetsimError(f"cannot read {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" at line {where.line + 1}" if where is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise NetsimError(f"{path}: not valid YAML{at}: {problem}") from None
    except ValueError as exc:  # a YAML scalar that does not convert (a date such as 2024-13-01)
        raise NetsimError(f"{path}: not valid YAML: {exc}") from None
    except RecursionError:  # [[[[...]]]] deeper than Python's stack
        raise NetsimError(f"{path}: not a sweep config: nested too deeply") from None
    config = check_config(raw, where=str(path))
    if "output" not in config:
        config["output"] = os.path.splitext(str(path))[0] + ".csv"
    return config


def _unique_keys_loader(yaml):
    """A safe YAML loader refusing a key given twice in one mapping (PyYAML keeps the last)."""

    class Loader(yaml.SafeLoader):
        pass

    def mapping(loader, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=deep)
            if isinstance(key, (str, int, float, bool)) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} given twice (give each key once)",
                    key_node.start_mark)
            seen.add(key)
        return loader.construct_mapping(node, deep=deep)

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    return Loader


def _fail(where, message):
    raise NetsimError(f"{where}: {message}")


def _list(where, raw, key):
    value = raw[key]
    if isinstance(value, (str, int, float)):
        value = [value]
    if not isinstance(value, list) or not value:
        _fail(where, f"{key} must be a non-empty list, got {value!r}")
    return value


def _hidden(where, value):
    """Hidden widths as a normalised string ``"64,64"`` and a tuple."""
    try:
        widths = parse_shape(value, "hidden")
    except UnitError:
        _fail(where, f"hidden sizes look like 16 or '64,64', got {value!r}")
    return ",".join(map(str, widths))


def check_config(raw, where="sweep config"):
    """Check a sweep config (a mapping, as read from YAML) and normalise it.

    Parameters
    ----------
    raw : dict
        Keys of :data:`KNOWN_KEYS`.
    where : str, optional
        Named in error messages (the file).

    Returns
    -------
    dict
        ``topologies`` (list of str), ``collectives`` and ``paradigms`` (lists
        of names, possibly empty), ``bytes`` (list of float), ``hidden`` (list
        of str such as ``"64,64"``), ``P`` (increasing list of int),
        ``dataset``, ``epochs``, ``seed``, ``options`` (name -> dict),
        ``straggler`` and ``jitter`` (lists of specs, None for none),
        ``library`` and ``transport`` (lists of names, None for the default) and,
        when given, ``output`` and ``png``.

    Raises
    ------
    NetsimError
        For an unknown key (listing the known ones), a missing key, an
        unknown topology, collective, paradigm, dataset or option, or a bad
        value.

    Examples
    --------
    >>> check_config({"topologies": ["star"], "collectives": ["ring"], "bytes": ["1MB"],
    ...               "P": [2, 4]})["bytes"]
    [1000000.0]
    >>> check_config({"topologies": ["star"], "colectives": ["ring"]})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    netsim.errors.NetsimError: sweep config: unknown key 'colectives'; known keys: topologies, ...
    """
    if not isinstance(raw, dict):
        _fail(where, f"a sweep config is a mapping of keys ({', '.join(KNOWN_KEYS)}), "
                     f"got {type(raw).__name__}")
    unknown = [k for k in raw if k not in KNOWN_KEYS]
    if unknown:
        _fail(where, f"unknown key {unknown[0]!r}; known keys: {', '.join(KNOWN_KEYS)}")
    for key in ("topologies", "P"):
        if key not in raw:
            _fail(where, f"missing key {key!r} ({KNOWN_KEYS[key]})")
    if not raw.get("collectives") and not raw.get("paradigms"):
        _fail(where, "give collectives (with bytes) or paradigms, or both")
    unused = [k for k in ("dataset", "epochs", "seed", "hidden", "straggler", "jitter", "library")
              if k in raw and not raw.get("paradigms")]
    unused += ["bytes"] if "bytes" in raw and not raw.get("collectives") else []
    if unused:
        users = "collectives" if unused[0] == "bytes" else "paradigms"
        _fail(where, f"{unused[0]} is set but no point uses it (the config has no {users})")
    out = {"collectives": [], "paradigms": [], "bytes": [], "hidden": [None]}
    P = raw["P"]
    if isinstance(P, list) and P and all(isinstance(p, int) and not isinstance(p, bool)
                                         for p in P):
        P = ",".join(map(str, P))
    if not isinstance(P, (str, int)) or isinstance(P, bool):
        _fail(where, f"P must be a list of integers or A..B, got {P!r}")
    try:
        out["P"] = parse_workers(str(P))
    except NetsimError as exc:
        _fail(where, exc)
    out["topologies"] = []
    for spec in _list(where, raw, "topologies"):
        if not isinstance(spec, str) or not spec.strip():
            _fail(where, f"a topology is a spec string such as star:bandwidth=10Gbps, got {spec!r}")
        spec = spec.strip()
        try:
            # Unknown names and options fail here; built small (a P of 10^11 is refused for its
            # size by the command's estimate, not built here to be checked).
            # Network() checks every edge (a graph file with a negative bandwidth fails here).
            Network(topology_factory(spec)(min(out["P"][0], 16)))
        except NetsimError as exc:
            _fail(where, f"topology {spec!r}: {exc}")
        out["topologies"].append(spec)
    if raw.get("collectives"):
        out["collectives"] = [str(c) for c in _list(where, raw, "collectives")]
        for name in out["collectives"]:
            if name not in COLLECTIVES:
                _fail(where, f"unknown collective {name!r}; known: {', '.join(COLLECTIVES)}")
        if "bytes" not in raw:
            _fail(where, "collectives need bytes (message sizes, e.g. [1MB, 64MB])")
        try:
            out["bytes"] = [parse_bytes(b) for b in _list(where, raw, "bytes")]
        except NetsimError as exc:
            _fail(where, f"bytes: {exc}")
    if raw.get("paradigms"):
        out["paradigms"] = [str(p) for p in _list(where, raw, "paradigms")]
        for name in out["paradigms"]:
            if name not in PARADIGMS:
                _fail(where, f"unknown paradigm {name!r}; known: {', '.join(PARADIGMS)}")
        if "hidden" in raw:
            out["hidden"] = [_hidden(where, h) for h in _list(where, raw, "hidden")]
        dataset = raw.get("dataset", "iris")
        if dataset not in DATASETS:
            _fail(where, f"unknown dataset {dataset!r}; known: {', '.join(DATASETS)}")
        out["dataset"] = dataset
    for key, parse in (("straggler", parse_straggler), ("jitter", parse_jitter)):
        out[key] = [_perturbation(where, key, v, parse)
                    for v in (_list(where, raw, key) if key in raw else [None])]
    out["library"] = _list(where, raw, "library") if "library" in raw else [None]
    for lib in out["library"]:
        if lib is not None and lib not in LIBRARIES:
            _fail(where, f"unknown library {lib!r}; known: {', '.join(LIBRARIES)}")
    out["transport"] = _list(where, raw, "transport") if "transport" in raw else [None]
    for name in out["transport"]:
        if name is not None and name not in TRANSPORTS:
            _fail(where, f"unknown transport {name!r}; known: {', '.join(TRANSPORTS)}")
    for key, default, low in (("epochs", 1, 1), ("seed", 0, 0)):
        value = raw.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            _fail(where, f"{key} must be an integer >= {low}, got {value!r}")
        out[key] = value
    out.setdefault("dataset", raw.get("dataset", "iris"))
    options = raw.get("options") or {}
    if not isinstance(options, dict):
        _fail(where, f"options must map a collective or paradigm to its options, got {options!r}")
    out["options"] = {}
    for name, opts in options.items():
        if name not in out["collectives"] + out["paradigms"]:
            _fail(where, f"options for {name!r}, which is not in collectives or paradigms")
        if not isinstance(opts, dict):
            _fail(where, f"options of {name} must be a mapping, got {opts!r}")
        known = (_COLLECTIVE_OPTIONS if name in out["collectives"] else _paradigm_options(name))
        for key in opts:
            if key not in known:
                _fail(where, f"{name} has no option {key!r}; its options: {', '.join(known)}")
            if name in out["collectives"] and not _uses(name, key):
                _fail(where, f"option {key!r} of {name} is used by no point: only "
                             f"{'the LP family' if key == 'segments' else 'ps'} takes it")
        try:
            out["options"][name] = (_collective_values(opts) if name in out["collectives"]
                                    else _paradigm_values(name, opts))
            if name in out["paradigms"]:
                _check_run_bounds(name, out, out["options"][name])
        except NetsimError as exc:
            _fail(where, f"options of {name}: {exc}")
    for key in ("output", "png"):
        if key in raw:
            if not isinstance(raw[key], str) or not raw[key]:
                _fail(where, f"{key} must be a file name, got {raw[key]!r}")
            if key == "png" and not raw[key].lower().endswith(".png"):  # even if --png is given
                _fail(where, f"png: cannot write {raw[key]}: a picture is a PNG, its file name "
                             f"must end in .png")
            out[key] = raw[key]
    if out["paradigms"] and any(out["straggler"]):
        from studies.sweep.ranks import check_straggler_ranks

        check_straggler_ranks(sweep_points(out), where)
    return out


def _check_run_bounds(name, config, opts):
    """A paradigm's options checked against the run of every point (its epochs, samples and
    steps at each P: :func:`workloads.registry.check_run_options`), as ``netsim record`` does."""
    from workloads.option_ranges import RUN_BOUNDS
    from workloads.registry import check_run_options

    if not any(key in RUN_BOUNDS for key in opts):
        return
    data = config["dataset"]
    if any(RUN_BOUNDS[key][0] != "epochs" for key in opts if key in RUN_BOUNDS):
        from workloads.datasets import load

        data = load(data)  # once for every P
    for P in config["P"]:
        try:
            check_run_options(name, data, workers=P, epochs=config["epochs"], **opts)
        except NetsimError as exc:
            raise NetsimError(f"at P = {P}: {exc}") from None


def _collective_values(opts):
    """A collective's sweep options checked as ``netsim collective`` checks its flags."""
    from netsim.checks import check_int, check_real

    return {key: (check_real(value, key, lo=0) if key == "gamma" else check_int(value, key))
            for key, value in opts.items()}


def _paradigm_values(name, opts):
    """A paradigm's sweep options typed as ``--set KEY=VALUE`` types them (its defaults' types).

    A number must also be finite and >= 0, as every default is, and within the option's range
    (:func:`workloads.option_ranges.check_option`, the check of ``--set`` and of the paradigm
    itself), before the first point runs.
    """
    import math

    from studies.cli.options import option_value

    entry, out = PARADIGMS[name], {}
    for key, value in opts.items():
        if isinstance(value, (list, tuple)):
            text = ",".join(map(str, value))
        elif isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, (str, int, float)):
            text = str(value)
        else:
            raise NetsimError(f"option {key} takes a value such as {entry.options[key][0]!r}, "
                              f"got {value!r}")
        typed = check_option(key, option_value(key, text, entry.options[key][0],
                                               (entry.words or {}).get(key, ())), name)
        if isinstance(typed, (int, float)) and not isinstance(typed, bool) and not (
                math.isfinite(typed) and typed >= 0):
            raise NetsimError(f"option {key} must be a finite number >= 0, got {value!r}")
        out[key] = typed
    check_needs(out, {k: v[0] for k, v in entry.options.items()})
    return out


def _perturbation(where, key, value, parse):
    """A straggler or jitter spec checked (None for none), for the options of a point."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "none"):
        return None
    if not isinstance(value, str):
        _fail(where, f"{key} must be a spec string or none, got {value!r}")
    try:
        parse(value)
    except NetsimError as exc:
        _fail(where, f"{key}: {exc}")
    return value.strip()


def _uses(collective, key):
    """Whether a collective takes the sweep option ``key`` (segments: LP; servers: ps)."""
    from netsim.analysis.collectives import takes_segments

    return {"segments": takes_segments(collective), "servers": collective == "ps"}.get(key, True)


def _paradigm_options(name):
    """Options a sweep may set for a paradigm (epochs, seed and hidden are grid keys)."""
    return [k for k in PARADIGMS[name].options if k not in ("epochs", "seed", "hidden")]


# -- the grid --------------------------------------------------------------------------------

def sweep_points(config):
    """Every point of a checked config's grid, in a fixed order.

    Topology, then collectives (each size, each P), then paradigms (each
    straggler, each jitter, each library, each model size, each P; a
    perturbation and a library are kept in the point's ``options`` as
    ``straggler``, ``jitter`` and ``library``), each for every transport
    (kept in the options as ``transport`` unless it is the default); a point listed
    twice (a repeated value) appears once.

    Parameters
    ----------
    config : dict
        From :func:`check_config` or :func:`load_config`.

    Returns
    -------
    list of dict
        One dict of the :data:`INPUTS` per point (None where a column does
        not apply).

    Examples
    --------
    >>> cfg = check_config({"topologies": ["star", "ring"], "collectives": ["ring", "mst"],
    ...                     "bytes": [1e6], "P": [2, 4, 8, 16]})
    >>> pts = sweep_points(cfg)
    >>> len(pts), pts[0]["name"], pts[0]["P"], pts[0]["nbytes"]
    (16, 'ring', 2, 1000000.0)
    """
    points = []
    transports = [{"transport": t} if t and t != "fluid" else {}
                  for t in config.get("transport", [None])]
    for topo, via in [(topo, via) for topo in config["topologies"] for via in transports]:
        for name in config["collectives"]:
            opts = _options({**(config["options"].get(name) or {}), **via} or None)
            for n in config["bytes"]:
                for P in config["P"]:
                    points.append({"kind": "collective", "name": name, "topology": topo, "P": P,
                                   "nbytes": n, "hidden": None, "dataset": None, "epochs": None,
                                   "seed": None, "options": opts})
        for name in config["paradigms"]:
            has_hidden = "hidden" in PARADIGMS[name].options
            for straggler, jitter, library in [(s, j, lib) for s in config.get("straggler", [None])
                                               for j in config.get("jitter", [None])
                                               for lib in config.get("library", [None])]:
                # A perturbation and a library ride in the point's options (used at replay).
                replay = {k: v for k, v in (("straggler", straggler), ("jitter", jitter),
                                            ("library", library)) if v}
                opts = _options({**(config["options"].get(name) or {}), **replay, **via})
                for hidden in (config["hidden"] if has_hidden else [None]):
                    for P in config["P"]:
                        points.append({"kind": "paradigm", "name": name, "topology": topo,
                                       "P": P, "nbytes": None, "hidden": hidden,
                                       "dataset": config["dataset"], "epochs": config["epochs"],
                                       "seed": config["seed"], "options": opts})
    unique = {point_key(p): p for p in points}  # a value listed twice is one point
    return list(unique.values())


def _options(opts):
    return json.dumps(opts, sort_keys=True) if opts else None


def _cell(value):
    return "" if value is None else str(value)


def point_key(point):
    """The key of a point or row: its input columns as the strings the CSV holds.

    Examples
    --------
    >>> point_key({"kind": "collective", "name": "ring", "topology": "star", "P": 4,
    ...            "nbytes": 1e6})[:5]
    ('collective', 'ring', 'star', '4', '1000000.0')
    """
    return tuple(_cell(point.get(c)) for c in INPUTS)
