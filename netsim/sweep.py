"""Parameter sweeps: a grid of topologies x collectives or paradigms x P x sizes, in parallel.

A sweep config (YAML, or JSON, which is YAML) names the grid::

    topologies: ["star:bandwidth=10Gbps,latency=1us", "two_tier:per_rack=4"]
    collectives: [ring, rabenseifner]   # netsim.studies.ALGORITHMS
    bytes: [1MB, 64MB]                  # message sizes of the collectives
    paradigms: [ps-sync, allreduce]     # workloads.PARADIGMS
    hidden: ["16", "64,64"]             # model sizes of the paradigms (hidden widths)
    P: "2..16"                          # or a list: [2, 4, 8, 16]

Every point (a topology, a collective and a size, or a paradigm and a model
size, and a P) is one row of a CSV file holding its inputs (:data:`INPUTS`)
and its results (:data:`RESULTS`). Points run in parallel on a Dask cluster
(a ``LocalCluster`` of the machine's cores by default, or an existing
scheduler) and each row is written as soon as its point is done, so an
interrupted sweep loses nothing. The sweep is resumable: points whose inputs
are already in the output file are skipped.

Like :mod:`netsim.cli`, this module composes: it turns names into topology
builders (:func:`netsim.cli.topology_factory`) and paradigms
(:func:`workloads.record`), importing them only inside the functions that
need them, so the core never depends on them.

Results
-------
* Collectives: :func:`netsim.studies.compare`, so ``simulated`` is the
  collective's time and ``closed_form`` its alpha-beta closed form.
* Paradigms: run by the runner the caller gives (``runners={"paradigm":
  ...}`` of :func:`run_sweep`; the CLI gives
  :func:`workloads.scaling.sweep_point`, which trains the paradigm at P
  workers for ``epochs`` epochs and simulates the trace on the topology built
  for its ranks): ``simulated`` is the time per iteration (makespan /
  iterations), ``closed_form`` the paradigm's closed form per iteration where
  it has one, else empty.
* ``top_link`` is the link that spent the longest at >= 99 % of its
  capacity (``u<->v``: either direction of a full-duplex link, see
  :func:`netsim.saturation.link_saturation`), ``saturated_fraction`` that
  time over the makespan. A point whose input is bad (say more ranks than
  the topology has) gets its message in ``error`` and empty results.
"""

import csv
import json
import math
import os

from .errors import NetsimError

__all__ = [
    "INPUTS",
    "RESULTS",
    "COLUMNS",
    "KNOWN_KEYS",
    "load_config",
    "check_config",
    "sweep_points",
    "point_key",
    "run_point",
    "completed",
    "run_sweep",
    "read_rows",
    "plot_sweep",
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
    "collectives": "collective algorithms of netsim.studies.ALGORITHMS",
    "bytes": "message sizes of the collectives (64MB, 1e6, ...)",
    "paradigms": "training paradigms of workloads.PARADIGMS",
    "hidden": "model sizes of the paradigms: hidden-layer widths such as 16 or '64,64'",
    "P": "worker counts: a list, or 2..64 for the powers of two",
    "dataset": "dataset of the paradigms (default iris)",
    "epochs": "training epochs of the paradigms (default 1)",
    "seed": "seed of the paradigms (default 0)",
    "options": "per collective or paradigm, its options: {ps-sync: {servers: 2}, "
               "lp: {segments: 8}}",
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
        For a missing or unreadable file, invalid YAML, or a bad config,
        naming the file.

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
        with open(path) as f:
            raw = yaml.safe_load(f)
    except FileNotFoundError:
        raise NetsimError(f"sweep config not found: {path}") from None
    except OSError as exc:
        raise NetsimError(f"cannot read {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" at line {where.line + 1}" if where is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise NetsimError(f"{path}: not valid YAML{at}: {problem}") from None
    config = check_config(raw, where=str(path))
    if "output" not in config:
        config["output"] = os.path.splitext(str(path))[0] + ".csv"
    return config


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
    if isinstance(value, int) and not isinstance(value, bool):
        widths = (value,)
    elif isinstance(value, str):
        try:
            widths = tuple(int(x) for x in value.replace("x", ",").split(",") if x.strip())
        except ValueError:
            widths = ()
    elif isinstance(value, list) and all(isinstance(x, int) for x in value):
        widths = tuple(value)
    else:
        widths = ()
    if not widths or min(widths) < 1:
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
        ``dataset``, ``epochs``, ``seed``, ``options`` (name -> dict) and,
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
    from .cli import parse_workers, topology_factory
    from .studies import ALGORITHMS
    from .units import parse_bytes

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
            topology_factory(spec)(out["P"][0])  # unknown names and options fail here
        except NetsimError as exc:
            _fail(where, f"topology {spec!r}: {exc}")
        out["topologies"].append(spec)
    if raw.get("collectives"):
        out["collectives"] = [str(c) for c in _list(where, raw, "collectives")]
        for name in out["collectives"]:
            if name not in ALGORITHMS:
                _fail(where, f"unknown collective {name!r}; known: {', '.join(ALGORITHMS)}")
        if "bytes" not in raw:
            _fail(where, "collectives need bytes (message sizes, e.g. [1MB, 64MB])")
        try:
            out["bytes"] = [parse_bytes(b) for b in _list(where, raw, "bytes")]
        except NetsimError as exc:
            _fail(where, f"bytes: {exc}")
    if raw.get("paradigms"):
        import workloads

        out["paradigms"] = [str(p) for p in _list(where, raw, "paradigms")]
        for name in out["paradigms"]:
            if name not in workloads.PARADIGMS:
                _fail(where, f"unknown paradigm {name!r}; known: {', '.join(workloads.PARADIGMS)}")
        if "hidden" in raw:
            out["hidden"] = [_hidden(where, h) for h in _list(where, raw, "hidden")]
        dataset = raw.get("dataset", "iris")
        if dataset not in workloads.DATASETS:
            _fail(where, f"unknown dataset {dataset!r}; known: {', '.join(workloads.DATASETS)}")
        out["dataset"] = dataset
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
        out["options"][name] = dict(opts)
    for key in ("output", "png"):
        if key in raw:
            if not isinstance(raw[key], str) or not raw[key]:
                _fail(where, f"{key} must be a file name, got {raw[key]!r}")
            out[key] = raw[key]
    return out


def _paradigm_options(name):
    """Options a sweep may set for a paradigm (epochs, seed and hidden are grid keys)."""
    import workloads

    return [k for k in workloads.PARADIGMS[name].options if k not in ("epochs", "seed", "hidden")]


# -- the grid --------------------------------------------------------------------------------

def sweep_points(config):
    """Every point of a checked config's grid, in a fixed order.

    Topology, then collectives (each size, each P), then paradigms (each
    model size, each P); a point listed twice (a repeated value) appears once.

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
    import workloads

    points = []
    for topo in config["topologies"]:
        for name in config["collectives"]:
            opts = _options(config["options"].get(name))
            for n in config["bytes"]:
                for P in config["P"]:
                    points.append({"kind": "collective", "name": name, "topology": topo, "P": P,
                                   "nbytes": n, "hidden": None, "dataset": None, "epochs": None,
                                   "seed": None, "options": opts})
        for name in config["paradigms"]:
            opts = _options(config["options"].get(name))
            has_hidden = "hidden" in workloads.PARADIGMS[name].options
            for hidden in (config["hidden"] if has_hidden else [None]):
                for P in config["P"]:
                    points.append({"kind": "paradigm", "name": name, "topology": topo, "P": P,
                                   "nbytes": None, "hidden": hidden,
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


# -- one point -------------------------------------------------------------------------------

def run_point(point, runners=None):
    """Simulate one point of a sweep; return its row (inputs and results).

    Runs in a Dask worker: it takes and returns plain values only. Bad input
    (:class:`~netsim.errors.NetsimError`, e.g. more ranks than the topology
    has) is reported in the row's ``error`` column, not raised.

    Parameters
    ----------
    point : dict
        One of :func:`sweep_points`.
    runners : dict, optional
        Point kind -> ``runner(point, topology)`` for the kinds other than
        ``"collective"``, which this module runs itself: ``topology(ranks)``
        builds the point's topology, and the runner returns the point's result
        columns (of :data:`RESULTS`). The core knows no paradigm, so the
        caller gives the runner of ``"paradigm"`` points
        (:func:`workloads.scaling.sweep_point`, as the CLI does); a point
        without a runner gets an error.

    Returns
    -------
    dict
        A value for every column of :data:`COLUMNS` (None if empty).

    Examples
    --------
    >>> row = run_point({"kind": "collective", "name": "ring", "topology": "star:latency=1us",
    ...                  "P": 4, "nbytes": 1e6, "options": None})
    >>> row["messages"], abs(row["gap"]) < 1e-9, row["error"]
    (24, True, None)
    >>> run_point({"kind": "collective", "name": "ring", "topology": "star:n=2",
    ...            "P": 4, "nbytes": 1e6, "options": None})["error"]  # doctest: +ELLIPSIS
    'the trace has 4 ranks but the topology has only 2 compute nodes...'
    """
    import time

    row = {c: point.get(c) for c in INPUTS}
    row.update({c: None for c in RESULTS})
    t0 = time.perf_counter()
    try:
        kind = point["kind"]
        if kind == "collective":
            row.update(_collective(point))
        elif kind in (runners or {}):
            from .cli import topology_factory

            row.update(runners[kind](point, topology_factory(point["topology"])))
        else:
            raise NetsimError(f"no runner for {kind} points: give run_sweep "
                              f"runners={{{kind!r}: function}}")
    except NetsimError as exc:
        row["error"] = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    row["wall_seconds"] = round(time.perf_counter() - t0, 6)
    return row


def _collective(point):
    from .cli import topology_factory
    from .network import Network
    from .studies import compare, ranks_for

    opts = json.loads(point["options"]) if point.get("options") else {}
    P = int(point["P"])
    servers = int(opts.get("servers", 1))
    G = Network(topology_factory(point["topology"])(ranks_for(point["name"], P, servers)))
    rec = compare(point["name"], G, P, float(point["nbytes"]), segments=opts.get("segments"),
                  gamma=float(opts.get("gamma", 0.0)), servers=servers)
    out = {"ranks": rec["ranks"], "simulated": rec["simulated"], "closed_form": rec["closed_form"],
           "gap": rec["gap"], "makespan": rec["simulated"], "iterations": 1,
           "messages": rec["messages"], "limit": rec["limit"]}
    out.update({k: rec[k] for k in ("top_link", "saturated_fraction")})
    return out


# -- the output file -------------------------------------------------------------------------

def read_rows(path):
    """The rows of a sweep's CSV file, as dicts of strings (an empty list if it is absent).

    Raises
    ------
    NetsimError
        If the file exists but is not a sweep output (other columns).

    Examples
    --------
    >>> import os, tempfile
    >>> read_rows(os.path.join(tempfile.mkdtemp(), "none.csv"))
    []
    """
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames
            rows = list(reader)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise NetsimError(f"cannot read {path}: {exc.strerror or exc}") from None
    if header is None:
        return []
    if tuple(header) != COLUMNS:
        raise NetsimError(f"{path} is not the output of this sweep (its columns differ); "
                          f"give another output file")
    return rows


def completed(path):
    """Keys (:func:`point_key`) of the points already in a sweep's output file.

    Examples
    --------
    >>> import os, tempfile
    >>> completed(os.path.join(tempfile.mkdtemp(), "none.csv"))
    set()
    """
    return {point_key(r) for r in read_rows(path)}


def _open_output(path):
    """Open the output for appending (a header first if it is new or empty)."""
    try:
        f = open(path, "a", newline="")
    except OSError as exc:
        raise NetsimError(f"cannot write {path}: {exc.strerror or exc}") from None
    writer = csv.DictWriter(f, fieldnames=COLUMNS)
    if f.tell() == 0:
        writer.writeheader()
        f.flush()
    return f, writer


def _sort_output(path, points):
    """Rewrite the output with the grid's rows in grid order, other rows after them."""
    rows = read_rows(path)
    rank = {point_key(p): i for i, p in enumerate(points)}
    rows.sort(key=lambda r: rank.get(point_key(r), len(rank)))
    tmp = f"{path}.tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, path)


# -- running ---------------------------------------------------------------------------------

def _client(scheduler, jobs, processes, timeout):
    """A Dask client: of the scheduler at ``scheduler``, else of a new LocalCluster."""
    import logging

    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise NetsimError("sweeps need Dask: pip install 'dask[distributed]'") from None
    if scheduler:
        try:
            return Client(scheduler, timeout=timeout), None
        except (OSError, TimeoutError, ValueError) as exc:
            why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise NetsimError(f"cannot reach the Dask scheduler at {scheduler}: {why}") from None
    n = jobs or os.cpu_count() or 1
    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=processes,
                           dashboard_address=None, silence_logs=logging.ERROR)
    return Client(cluster), cluster


def run_sweep(config, output=None, scheduler=None, jobs=None, processes=True, timeout=10.0,
              client=None, progress=None, log=None, runners=None):
    """Run every point of a sweep not yet in its output file, in parallel on Dask.

    Parameters
    ----------
    config : dict
        From :func:`load_config` or :func:`check_config`.
    output : str, optional
        The CSV file (default ``config["output"]``). Rows are appended as
        points finish; at the end the grid's rows are put in grid order.
    scheduler : str, optional
        Address of a running Dask scheduler (``tcp://host:8786``); default a
        new ``LocalCluster``.
    jobs : int, optional
        Workers of the local cluster (default: the machine's cores).
    processes : bool, optional
        Local workers as processes (True) or as threads of this process.
    timeout : float, optional
        Seconds to wait for the scheduler before giving up.
    client : distributed.Client, optional
        Use this client instead (its cluster is left running).
    progress : callable, optional
        Called as ``progress(points_done, points)``, counting skipped points
        as done (see :class:`netsim.progress.Progress`).
    log : callable, optional
        Called with one line for people once the work is about to start (how
        many points, on which cluster), after every check has passed.
    runners : dict, optional
        Point kind -> runner, for the points that are not collectives (see
        :func:`run_point`); each must be picklable (a module-level function)
        to run in worker processes.

    Returns
    -------
    dict
        ``points`` (in the grid), ``skipped`` (already in the output), ``ran``
        (simulated now), ``failed`` (of those, rows with an ``error``) and
        ``output``.

    Raises
    ------
    NetsimError
        For an unwritable or foreign output file, or an unreachable scheduler.

    Examples
    --------
    A sweep whose points are all done already starts no cluster:

    >>> import os, tempfile
    >>> cfg = check_config({"topologies": ["star"], "collectives": ["ring"], "bytes": [1e6],
    ...                     "P": [2]})
    >>> out = os.path.join(tempfile.mkdtemp(), "s.csv")
    >>> f, w = _open_output(out); _ = w.writerow(run_point(sweep_points(cfg)[0])); f.close()
    >>> run_sweep(cfg, out)["skipped"]
    1
    """
    output = output or config.get("output")
    if not output:
        raise NetsimError("no output file: give one in the config (output:) or on the command line")
    points = sweep_points(config)
    done = completed(output)
    todo = [p for p in points if point_key(p) not in done]
    skipped = len(points) - len(todo)
    summary = {"points": len(points), "skipped": skipped, "ran": 0, "failed": 0,
               "output": str(output)}
    f, writer = _open_output(output)  # fails now, before any work, if it cannot be written
    try:
        if progress is not None:
            progress(skipped, len(points))
        if not todo:
            if log is not None:
                log(f"sweep: all {len(points)} points are in {output} already")
            return summary
        own = None
        if client is None:
            client, own = _client(scheduler, jobs, processes, timeout)
        if log is not None:
            where = (scheduler or "the given cluster" if own is None else
                     f"a local cluster of {len(own.workers)} "
                     f"{'processes' if processes else 'threads'}")
            log(f"sweep: {len(points)} points, {len(todo)} to simulate on {where}")
        try:
            from distributed import as_completed

            futures = client.map(run_point, todo, runners=runners, pure=False)
            for fut in as_completed(futures):
                row = fut.result()
                writer.writerow(row)
                f.flush()
                summary["ran"] += 1
                summary["failed"] += row["error"] is not None
                if progress is not None:
                    progress(skipped + summary["ran"], len(points))
        finally:
            if own is not None:
                client.close()
                own.close()
    finally:
        f.close()
    _sort_output(output, points)
    return summary


# -- the picture -----------------------------------------------------------------------------

def _float(text):
    try:
        x = float(text)
    except (TypeError, ValueError):
        return math.nan
    return x


def plot_sweep(rows, path, level=0.5, title="", logy=True):
    """Time per iteration against P, one series per (topology, collective or paradigm, size).

    Simulated times are markers, closed forms lines; each series' saturation
    point (the smallest P at which its ``top_link`` is at >= 99 % of capacity
    for more than ``level`` of the run) is circled.

    Parameters
    ----------
    rows : list of dict
        Sweep rows (from :func:`read_rows` or :func:`run_point`); rows with an
        error are left out.
    path : str or file
        The PNG to write.
    level : float, optional
        Saturated fraction that marks saturation.
    title : str, optional
    logy : bool, optional
        Logarithmic time axis.

    Returns
    -------
    list of dict
        The series plotted (``label``, ``P``, ``simulated``, ``closed_form``,
        ``saturation``: the saturation point's P or None).

    Examples
    --------
    >>> import os, tempfile
    >>> rows = [{"kind": "collective", "name": "ps", "topology": "star", "P": p, "nbytes": 1e6,
    ...          "hidden": None, "simulated": t, "closed_form": t, "saturated_fraction": f,
    ...          "error": None} for p, t, f in [(2, 1.0, 0.4), (4, 2.0, 0.6), (8, 4.0, 0.9)]]
    >>> s = plot_sweep(rows, os.path.join(tempfile.mkdtemp(), "sweep.png"))
    >>> s[0]["saturation"], s[0]["label"]
    (4, 'ps 1 MB on star')
    """
    from .plot import plot_series
    from .saturation import saturation_label, saturation_point
    from .units import format_bytes

    groups = {}
    for r in rows:
        if r.get("error") or math.isnan(_float(r.get("simulated"))):
            continue
        if r.get("kind") == "collective":
            size = format_bytes(_float(r["nbytes"]))
        else:
            size = f"hidden {r['hidden']}" if r.get("hidden") else ""
        label = " ".join(x for x in (str(r["name"]), size) if x) + f" on {r['topology']}"
        groups.setdefault(label, []).append(r)
    series = []
    for label, rs in groups.items():
        rs = sorted(rs, key=lambda r: int(r["P"]))
        P = [int(r["P"]) for r in rs]
        closed = [_float(r.get("closed_form")) for r in rs]
        sat = None
        if len(set(P)) == len(P):  # rows of other grids may repeat a P under one label
            sat = saturation_point(P, [_float(r.get("saturated_fraction")) for r in rs],
                                   level=level)["P"]
        series.append({"label": label, "P": P, "simulated": [_float(r["simulated"]) for r in rs],
                       "closed_form": None if all(math.isnan(c) for c in closed) else closed,
                       "saturation": sat})
    plot_series(series, path, title=title, xlabel="workers P (log2 scale)",
                ylabel="time per iteration (s)", logy=logy,
                saturation_label=saturation_label(level))
    return series
