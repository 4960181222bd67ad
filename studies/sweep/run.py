"""Parameter sweeps: a grid of topologies x collectives or paradigms x P x sizes, in parallel.

The grid is a config file (:mod:`studies.sweep.config`). Points run in
parallel on a Dask cluster (a ``LocalCluster`` of the machine's cores by
default, or an existing scheduler) and each row is written as soon as its
point is done, so an interrupted sweep loses nothing. The sweep is resumable:
points whose inputs are already in the output file are skipped.

Results
-------
* Collectives: :func:`netsim.analysis.collectives.compare`, so ``simulated`` is the
  collective's time and ``closed_form`` its alpha-beta closed form.
* Paradigms: run by the runner given as ``runners={"paradigm": ...}`` to
  :func:`run_sweep` (``netsim sweep`` gives
  :func:`studies.scaling.paradigm.sweep_point`), which trains the paradigm
  at P workers for ``epochs`` epochs and simulates the trace on the topology built
  for its ranks): ``simulated`` is the time per iteration (makespan /
  iterations), ``closed_form`` the paradigm's closed form per iteration where
  it has one, else empty.
* ``top_link`` is the link that spent the longest at >= 99 % of its
  capacity (``u<->v``: either direction of a full-duplex link, see
  :func:`netsim.analysis.saturation.link_saturation`), ``saturated_fraction`` that
  time over the makespan. A point whose input is bad (say more ranks than
  the topology has) gets its message in ``error`` and empty results.
"""

import csv
import json
import math
import os

from netsim.analysis.collectives import compare, ranks_for
from netsim.errors import NetsimError
from netsim.formats.whole import write_whole
from netsim.network.compiled import Network
from netsim.analysis.saturation import saturation_label, saturation_point
from netsim.units import format_bytes

from studies.cli.options import perturb_label
from studies.parallel import ctrl_c_deferred
from studies.registry import topology_factory
from studies.sweep.config import COLUMNS, INPUTS, RESULTS, point_key, sweep_points

__all__ = [
    "run_point",
    "completed",
    "run_sweep",
    "read_rows",
    "plot_sweep",
]


# -- one point -------------------------------------------------------------------------------

def run_point(point, runners=None):
    """Simulate one point of a sweep; return its row (inputs and results).

    Runs in a Dask worker: it takes and returns plain values only. Bad input
    (:class:`~netsim.errors.NetsimError`, e.g. more ranks than the topology
    has) is reported in the row's ``error`` column, not raised.

    Parameters
    ----------
    point : dict
        One of :func:`studies.sweep.config.sweep_points`.
    runners : dict, optional
        Point kind -> ``runner(point, topology)`` for the kinds other than
        ``"collective"``, which this module runs itself: ``topology(ranks)``
        builds the point's topology, and the runner returns the point's result
        columns (of :data:`studies.sweep.config.RESULTS`). ``netsim sweep`` gives
        ``{"paradigm": studies.scaling.paradigm.sweep_point}``; a point
        without a runner gets an error.

    Returns
    -------
    dict
        A value for every column of :data:`studies.sweep.config.COLUMNS` (None if empty).

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
            row.update(runners[kind](point, topology_factory(point["topology"])))
        else:
            raise NetsimError(f"no runner for {kind} points: give run_sweep "
                              f"runners={{{kind!r}: function}}")
    except NetsimError as exc:
        row["error"] = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    row["wall_seconds"] = round(time.perf_counter() - t0, 6)
    return row


def _collective(point):
    opts = json.loads(point["options"]) if point.get("options") else {}
    P = int(point["P"])
    servers = int(opts.get("servers", 1))
    G = Network(topology_factory(point["topology"])(ranks_for(point["name"], P, servers)))
    rec = compare(point["name"], G, P, float(point["nbytes"]), segments=opts.get("segments"),
                  gamma=float(opts.get("gamma", 0.0)), servers=servers,
                  transport=opts.get("transport", "fluid"))
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
    except (UnicodeDecodeError, csv.Error) as exc:  # a binary file, or a CSV broken mid-row
        raise NetsimError(f"{path} is not a sweep's CSV output ({type(exc).__name__}); give "
                          f"another output file") from None
    if header is None:
        return []
    if tuple(header) != COLUMNS:
        raise NetsimError(f"{path} is not the output of this sweep (its columns differ); "
                          f"give another output file")
    return rows


def completed(path):
    """Keys (:func:`studies.sweep.config.point_key`) of the points already in a sweep's output file.

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

    def write(f):
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)

    write_whole(path, write)


# -- running ---------------------------------------------------------------------------------

def _client(scheduler, jobs, processes, timeout, points):
    """A Dask client: of the scheduler at ``scheduler``, else of a new LocalCluster of ``jobs``
    workers (default: the cores), at most ``points`` (more would only wait, and start slowly)."""
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
    n = min(jobs or os.cpu_count() or 1, points)  # a worker per point at most: more idle
    cluster = None
    try:
        # Workers started inside never see a Ctrl-C (a traceback each); one pressed while they
        # start is raised on leaving, and the cluster is closed here (studies.parallel).
        with ctrl_c_deferred():
            # Workers log CRITICAL only: a point's error is its row's error column, and a worker
            # still busy when a Ctrl-C closes the scheduler logged an ERROR per failed heartbeat.
            # The dashboard on a free port (":0"): distributed 2026.8 serves one even with
            # dashboard_address=None, on 8787 first, and warned "Port 8787 is already in use"
            # whenever another sweep (or any Dask cluster) ran on the machine.
            cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=processes,
                                   dashboard_address=":0", silence_logs=logging.CRITICAL)
        return Client(cluster), cluster
    except BaseException:
        if cluster is not None:
            logging.getLogger("distributed").setLevel(logging.CRITICAL + 1)
            cluster.close()
        raise


def run_sweep(config, output=None, scheduler=None, jobs=None, processes=True, timeout=10.0,
              client=None, progress=None, log=None, runners=None):
    """Run every point of a sweep not yet in its output file, in parallel on Dask.

    Parameters
    ----------
    config : dict
        From :func:`studies.sweep.config.load_config` or
        :func:`studies.sweep.config.check_config`.
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
    >>> from studies.sweep.config import check_config, sweep_points
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
            client, own = _client(scheduler, jobs, processes, timeout, len(todo))
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
        except KeyboardInterrupt:
            # Closing a cluster mid-task makes Dask log cancelled tasks; the user asked to stop.
            import logging

            logging.getLogger("distributed").setLevel(logging.CRITICAL + 1)
            raise
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

    Small multiples: one panel per topology and kind (collectives, whose time
    is one collective's, apart from paradigms, whose time is an iteration's).
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
        ``saturation``: the saturation point's P or None, ``panel``).

    Examples
    --------
    >>> import os, tempfile
    >>> rows = [{"kind": "collective", "name": "ps", "topology": "star", "P": p, "nbytes": 1e6,
    ...          "hidden": None, "simulated": t, "closed_form": t, "saturated_fraction": f,
    ...          "error": None} for p, t, f in [(2, 1.0, 0.4), (4, 2.0, 0.6), (8, 4.0, 0.9)]]
    >>> s = plot_sweep(rows, os.path.join(tempfile.mkdtemp(), "sweep.png"))
    >>> s[0]["saturation"], s[0]["label"], s[0]["panel"]
    (4, 'ps 1 MB', 'collectives on star')
    """
    from netsim.drawing.plot import plot_series

    groups = {}
    for r in rows:
        if r.get("error") or math.isnan(_float(r.get("simulated"))):
            continue
        if r.get("kind") == "collective":
            size = format_bytes(_float(r["nbytes"]))
        else:
            size = f"hidden {r['hidden']}" if r.get("hidden") else ""
            extra = perturb_label(json.loads(r["options"])) if r.get("options") else ""
            size = ", ".join(x for x in (size, extra) if x)
        label = " ".join(x for x in (str(r["name"]), size) if x)
        kind = "collectives" if r.get("kind") == "collective" else "paradigms"
        groups.setdefault((f"{kind} on {r['topology']}", label), []).append(r)
    series = []
    for (panel, label), rs in groups.items():
        rs = sorted(rs, key=lambda r: int(r["P"]))
        P = [int(r["P"]) for r in rs]
        closed = [_float(r.get("closed_form")) for r in rs]
        sat = None
        if len(set(P)) == len(P):  # rows of other grids may repeat a P under one label
            sat = saturation_point(P, [_float(r.get("saturated_fraction")) for r in rs],
                                   level=level)["P"]
        series.append({"label": label, "P": P, "simulated": [_float(r["simulated"]) for r in rs],
                       "closed_form": None if all(math.isnan(c) for c in closed) else closed,
                       "saturation": sat, "panel": panel})
    plot_series(series, path, title=title, xlabel="workers P (log2 scale)",
                ylabel="time per iteration (s)", logy=logy,
                saturation_label=saturation_label(level))
    return series
