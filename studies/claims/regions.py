"""Where each seed claim holds: the claim over a grid of the two knobs that matter.

A verdict at one point flips with the setup (RingTMP's byte ratio is about
width / per-worker batch; Parameter Flow's traffic cut grows with the
epochs), so every claim of :mod:`studies.claims.reproduce` also gets a **region**: its
value over a small grid of two knobs and whether the claim holds there.

Each function returns one region record:

``claim``
    The claim, in a few words (as in :mod:`studies.claims.reproduce`).
``x``, ``y``
    Names of the two knobs; ``xs``, ``ys`` their values.
``values``
    ``values[i][j]``: the claim's number at ``ys[i]``, ``xs[j]``.
``holds``
    ``holds[i][j]``: whether the claim holds there.
``threshold``
    The test, in words.
``how``
    ``"closed form"`` (the number is exact, computed from the knobs alone: the
    claim then holds *by construction* wherever it holds), or ``"simulated"``
    / ``"trained"`` (runs at every cell).
``note``
    What the region shows.
``seed``
    The seed of a trained region's runs (its map is of that seed alone), None
    for a closed form.

:func:`format_region` prints one as a small table, :func:`plot_regions` draws
them all as maps (PNG). Every function has a ``quick`` grid (fewer cells) for
tests and ``netsim claims --quick``.

Examples
--------
>>> r = ringtmp_region(quick=True)
>>> r["x"], r["how"], len(r["values"]) == len(r["ys"])
('hidden width', 'closed form', True)
"""

import numpy as np

from netsim import costmodel
from netsim.analysis.collectives import fit_scaling, lp_be_ratio, lp_segments, scale
from topologies import star
from topologies.specs import ETHERNET, ETHERNET_LATENCY
from workloads.paradigms import dgc, pf, slimdp
from workloads import mlp

from studies.claims import metis_vs_random

__all__ = ["pipelining_claims", "lp_be_region", "ringtmp_byte_ratio", "ringtmp_region", "pf_region",
           "partition_region", "partition_peak_region",
           "dgc_ratios", "dgc_region", "slimdp_region", "format_region",
           "plot_regions"]

_ALPHA = 2 * ETHERNET_LATENCY  # a 10 GbE star: two links per message
_BETA = 1 / ETHERNET["10GbE"]


def _region(claim, x, xs, y, ys, values, holds, threshold, how, note, seed=None):
    return {"claim": claim, "x": x, "xs": list(xs), "y": y, "ys": list(ys),
            "values": [[float(v) for v in row] for row in values],
            "holds": [[bool(h) for h in row] for row in holds], "threshold": threshold,
            "how": how, "note": note, "seed": seed}


def pipelining_claims(bandwidth=ETHERNET["10GbE"], latency=ETHERNET_LATENCY, nbytes=64e6,
                      workers=(2, 4, 8, 16, 32, 64), sizes=(1e5, 1e6, 1e7, 1e8), ratio_P=64):
    """Check the three claims of the linear-pipelining study on a non-blocking star.

    The star is :func:`topologies.star` with the given host links.

    Defaults: a 10 GbE star (1.25e9 bytes/s, 1 us per link, so alpha = 2 us
    and beta = 0.8 ns/byte), n = 64 MB, P = 2, 4, ..., 64.

    1. LP broadcast with k fixed at the optimum for the largest P
       (:func:`netsim.costmodel.optimal_segments`: k = 1260 by default) is
       classified ``"constant"`` by :func:`netsim.analysis.collectives.fit_scaling`: its time varies by
       about 5 % while P grows 32-fold. (Re-optimising k at every P makes the
       small-P times shorter and the spread about 10 %.)
    2. MST (binomial) broadcast is classified ``"log2 P"``.
    3. The BE / LP broadcast time ratio at ``P = ratio_P`` grows with n
       towards ``2 (P - 1) / P`` (:func:`netsim.analysis.collectives.lp_be_ratio`, optimal k per size).

    Parameters
    ----------
    bandwidth : float
        Bytes/s of every link of the star.
    latency : float
        Seconds per link.
    nbytes : float
        Bytes broadcast for the scaling claims (1 and 2).
    workers : sequence of int
        The P values.
    sizes : sequence of float
        Message sizes (bytes) of the size sweep.
    ratio_P : int
        The P at which the BE / LP broadcast time ratio is taken.

    Returns
    -------
    dict
        ``lp`` and ``mst``: ``{"segments", "records", "fit"}``; ``ratio``:
        the rows of :func:`netsim.analysis.collectives.lp_be_ratio`.

    Examples
    --------
    >>> c = pipelining_claims(nbytes=1e6, workers=(2, 4, 8), sizes=(1e5, 1e6), ratio_P=4)
    >>> c["mst"]["fit"]["law"], c["ratio"][0]["ratio"] < c["ratio"][1]["ratio"]
    ('log2 P', True)
    """
    def build(hosts):
        return star(hosts, bandwidth=bandwidth, latency=latency)

    k = lp_segments(workers, nbytes, build)
    out = {}
    for name, seg in (("lp", k), ("mst", None)):
        recs = scale(name, workers, nbytes, build, segments=seg, saturation=False)
        out[name] = {"segments": seg, "records": recs,
                     "fit": fit_scaling([r["P"] for r in recs], [r["simulated"] for r in recs])}
    out["ratio"] = lp_be_ratio(ratio_P, sizes, build(ratio_P))
    return out


def lp_be_region(quick=False, ratio_min=1.8):
    """BE over LP broadcast time on a 10 GbE star over message size n x ranks P.

    Closed forms (:func:`netsim.costmodel.be_broadcast`, LP with k* tuned to
    each point), which the simulation equals on a non-blocking star
    (``tests/test_studies.py``). The claim ("about 2x") holds where the ratio
    reaches ``ratio_min``; it tends to ``2 (P - 1) / P`` as n grows.

    Examples
    --------
    >>> r = lp_be_region(quick=True)
    >>> r["holds"][0][-1], r["holds"][-1][0]  # large n and P holds, small n does not
    (False, False)
    """
    Ps = (4, 16, 64) if quick else (4, 8, 16, 32, 64)
    ns = (1e5, 1e7, 1e9) if quick else (1e5, 1e6, 1e7, 1e8, 1e9)
    vals = []
    for n in ns:
        row = []
        for P in Ps:
            k = costmodel.optimal_segments(P, n, _ALPHA, _BETA)
            lp = costmodel.pipeline_broadcast(P, n, k, _ALPHA, _BETA)
            row.append(costmodel.be_broadcast(P, n, _ALPHA, _BETA) / lp)
        vals.append(row)
    holds = [[v >= ratio_min for v in row] for row in vals]
    return _region("LP has about 2x the bandwidth of BE for large n", "P", Ps, "n (bytes)", ns,
                   vals, holds, f"BE/LP >= {ratio_min}", "closed form",
                   "holds for n >= ~1e8 B at P >= 16; below ~1 MB BE is faster")


def ringtmp_byte_ratio(width, batch, nodes=8, inputs=64, outputs=10):
    """Parameter-server bytes over RingTMP bytes for an MLP cut by layer over a ring.

    The MLP has ``nodes - 1`` hidden layers of ``width``, one boundary per
    pair of neighbouring nodes. Per step ps-sync pushes and pulls the n
    parameters of every worker (``2 P 4 n`` bytes); RingTMP sends each
    boundary's activations forward and gradients back for the union batch
    (``2 (P - 1) (P batch) width 4`` bytes). The ratio is
    ``n / ((P - 1) batch width)``, about ``width / batch``.

    Examples
    --------
    >>> round(ringtmp_byte_ratio(32, 8), 4)  # digits 64-(32 x 7)-10 on 8 nodes: 8746 params
    4.8806
    """
    layers = [inputs] + [width] * (nodes - 1) + [outputs]
    n = mlp.model_of(tuple(layers)).params
    return n / ((nodes - 1) * batch * width)


def ringtmp_region(quick=False, target=8.0):
    """RingTMP's byte ratio over hidden width x per-worker batch (digits, 8 nodes).

    Examples
    --------
    >>> r = ringtmp_region()
    >>> r["holds"][0][-1], r["holds"][-1][0]  # batch 4, width 128: holds; batch 32, width 16: no
    (True, False)
    """
    widths = (16, 64, 128) if quick else (16, 32, 64, 128)
    batches = (4, 8, 32) if quick else (4, 8, 16, 32)
    vals = [[ringtmp_byte_ratio(w, b) for w in widths] for b in batches]
    holds = [[v >= target for v in row] for row in vals]
    return _region("RingTMP bytes <= 1/8 of the parameter server's", "hidden width", widths,
                   "per-worker batch", batches, vals, holds, f"PS/RingTMP >= {target:g}x",
                   "closed form", "the ratio is about width / batch: it holds for width >= ~8 "
                   "batch, by construction of the model's shape")


def pf_region(quick=False, dataset="digits", hidden=(64,), workers=4, seed=0,
              target=12.3 / 3.0):
    """Parameter Flow's traffic cut (ps-sync bytes over PF bytes) over tau0 x epochs.

    One PF run per tau0 over the most epochs; the cut after e epochs is taken
    from the bytes of its first e epochs (ps-sync sends ``2 P 4 n`` bytes per
    step whatever the data, ``tests/test_claims.py``).

    Examples
    --------
    >>> r = pf_region(quick=True, dataset="iris", hidden=(8,))
    >>> r["how"], r["seed"], len(r["xs"])
    ('trained', 0, 2)
    >>> format_region(r).splitlines()[0]
    'PF traffic: 4.1x less than ps-sync: ps-sync/PF bytes >= 4.10x (bytes only) (trained, seed 0)'
    """
    taus = (0.05, 0.1) if quick else (0.02, 0.05, 0.1)
    epochs = (1, 3, 10) if quick else (1, 3, 5, 10)
    cols = []
    for tau in taus:
        r = pf.run(dataset=dataset, hidden=tuple(hidden), epochs=max(epochs), workers=workers,
                   seed=seed, tau0=tau)
        t = r.trace
        msg = t.is_message
        per_iter = np.bincount(t.iteration[msg], weights=t.size[msg],
                               minlength=t.num_iterations)
        n = mlp.model_of(tuple(t.metadata["layers"])).params
        steps = t.num_iterations // max(epochs)
        cols.append([2 * workers * 4 * n * steps * e / per_iter[:steps * e].sum() for e in epochs])
    vals = [[cols[j][i] for j in range(len(taus))] for i in range(len(epochs))]
    holds = [[v >= target for v in row] for row in vals]
    return _region("PF traffic: 4.1x less than ps-sync", "tau0", taus, "epochs", epochs, vals,
                   holds, f"ps-sync/PF bytes >= {target:.2f}x (bytes only)", "trained",
                   "the cut grows with the epochs (the threshold decays as 1/t^(1/a)) and tau0",
                   seed)


def partition_region(quick=False, servers=4, clusters=16, epochs=1, seed=0, target=10.0,
                     grid=None):
    """Random over METIS traffic of the partitioned parameter server over locality x P.

    ``grid`` = ``(localities, Ps)`` replaces the default grid.

    Examples
    --------
    >>> r = partition_region(servers=2, grid=((1.0,), (2,)))
    >>> r["values"][0][0] > 1
    True
    """
    locs = (0.5, 1.0) if quick else (0.5, 0.8, 1.0)
    Ps = (4, 16) if quick else (4, 8, 16)
    if grid is not None:
        locs, Ps = grid
    vals = [[metis_vs_random.compare(workers=P, servers=servers, epochs=epochs, seed=seed,
                                    dataset_options={"locality": loc, "n_clusters": clusters}
                                    )["traffic_ratio"] for P in Ps] for loc in locs]
    holds = [[v >= target for v in row] for row in vals]
    return _region("Graph partitioning eliminates 90% of PS traffic", "P", Ps, "locality", locs,
                   vals, holds, f"random/METIS bytes >= {target:g}x", "trained",
                   f"{servers} servers, {clusters} clusters, {epochs} epoch(s)", seed)


def partition_peak_region(quick=False, servers=4, locality=1.0, epochs=1, seed=0,
                          target=14.0):
    """Random over METIS traffic over clusters x P: where partitioning cuts it 14x or more.

    Examples
    --------
    >>> r = partition_peak_region(quick=True)
    >>> r["x"], r["y"], r["xs"], r["ys"]
    ('P', 'clusters', [16, 32, 64], [16, 32])
    """
    clusters = (16, 32)
    Ps = (16, 32, 64) if quick else (8, 16, 32, 64)
    vals = [[metis_vs_random.compare(workers=P, servers=servers, epochs=epochs, seed=seed,
                                    dataset_options={"locality": locality, "n_clusters": c}
                                    )["traffic_ratio"] for P in Ps] for c in clusters]
    holds = [[v >= target for v in row] for row in vals]
    return _region("Graph partitioning cuts PS traffic up to 14x", "P", Ps, "clusters",
                   clusters, vals, holds, f"random/METIS bytes >= {target:g}x", "trained",
                   f"locality {locality}, {servers} servers, {epochs} epoch(s); the ratio "
                   "peaks at P = clusters", seed)


def dgc_ratios(layers, epochs=8, warmup_epochs=4, final_sparsity=0.999):
    """DGC's compression ratio after warm-up and over the whole run, from the shapes alone.

    Dense bytes (4 per value) over sent bytes (8 per kept value: value and
    index; :func:`workloads.paradigms.dgc.values_per_layer` at each epoch's
    :func:`workloads.paradigms.dgc.warmup_sparsity`), every epoch with the same steps.

    Parameters
    ----------
    layers : sequence of int
        Widths of the MLP, input to output.
    epochs, warmup_epochs : int
    final_sparsity : float

    Returns
    -------
    tuple of float
        (after warm-up, whole run).

    Examples
    --------
    >>> after, whole = dgc_ratios((64, 128, 10))  # 9610 values, 11 kept after warm-up
    >>> round(after, 1), round(whole, 1)
    (436.8, 11.9)
    """
    sizes = [a * b + b for a, b in zip(layers[:-1], layers[1:])]
    dense = 4 * sum(sizes)
    sent = [8 * sum(dgc.values_per_layer(sizes, dgc.warmup_sparsity(e, warmup_epochs,
                                                                    final_sparsity)))
            for e in range(epochs)]
    return dense / sent[-1], epochs * dense / sum(sent)


def dgc_region(quick=False, epochs=8, low=270.0, whole=True):
    """DGC's compression ratio over model size x final sparsity (digits MLPs 64-w-10).

    ``whole``: the ratio over the whole run (warm-up included); else after the
    warm-up. Both follow from the shapes alone (:func:`dgc_ratios`).

    Examples
    --------
    >>> r = dgc_region(quick=True)
    >>> any(any(row) for row in r["holds"])  # the warm-up caps the whole-run ratio
    False
    >>> dgc_region(quick=True, whole=False)["holds"][-1]  # 0.999: 1 value per 1000 kept
    [False, True, True]
    """
    widths = (16, 256, 4096) if quick else (16, 128, 1024, 4096)
    sparsities = (0.99, 0.999) if quick else (0.99, 0.999, 0.9999)
    pick = 1 if whole else 0
    vals = [[dgc_ratios((64, w, 10), epochs, 4, s)[pick] for w in widths] for s in sparsities]
    holds = [[v >= low for v in row] for row in vals]
    if whole:
        return _region("DGC: 270x-600x over the whole run", "hidden width", widths,
                       "final sparsity", sparsities, vals, holds,
                       f"whole-run ratio >= {low:g}x ({epochs} epochs, 4 of warm-up)",
                       "closed form", "the warm-up's denser epochs (25 %, 6.25 %, ... kept) "
                       "cap the ratio over the run near 12x")
    return _region("DGC: 270x-600x after warm-up", "hidden width", widths, "final sparsity",
                   sparsities, vals, holds, f"ratio after warm-up >= {low:g}x", "closed form",
                   "1 / (2 (1 - s)) by construction for layers large enough (500x at "
                   "s = 0.999); one value per layer at least caps small models")


def slimdp_region(quick=False, dataset="digits", epochs=3, workers=4, seed=0, grid=None):
    """Slim-DP's explore-exploit subset against a random one of the same size: accuracy gain.

    At each cell Slim-DP (core share beta = 0.5) and the random-subset
    ablation (beta = 0: every value drawn at random) train the same model from
    the same seed; the value is the accuracy difference (explore-exploit
    minus random). Holds where it is >= 0. ``grid`` = ``(hiddens, alphas)``
    replaces the default grid.

    Examples
    --------
    >>> r = slimdp_region(dataset="iris", epochs=1, grid=((8,), (0.3,)))
    >>> -1 <= r["values"][0][0] <= 1
    True
    """
    alphas = (0.1, 0.3) if quick else (0.1, 0.3, 0.5)
    hiddens = (64,) if quick else (16, 64)
    if grid is not None:
        hiddens, alphas = grid
    vals = []
    for h in hiddens:
        common = dict(dataset=dataset, hidden=(h,), epochs=epochs, workers=workers, seed=seed)
        vals.append([slimdp.run(alpha=a, **common).accuracy
                     - slimdp.run(alpha=a, beta=0.0, **common).accuracy for a in alphas])
    holds = [[v >= 0 for v in row] for row in vals]
    return _region("Slim-DP's explore-exploit subset beats a random one", "alpha", alphas,
                   "hidden width", hiddens, vals, holds, "accuracy(Slim-DP) - accuracy(random) "
                   ">= 0", "trained", "byte savings are 1 - 3 alpha / 2 by construction; "
                   "only the accuracy depends on the choice of subset", seed)


def format_region(r):
    """A region as a small text table: rows ``y``, columns ``x``, a ``*`` where the claim holds.

    The head names the seed of a trained region (``(trained, seed 0)``).

    Examples
    --------
    >>> print(format_region(ringtmp_region(quick=True)).splitlines()[0])
    RingTMP bytes <= 1/8 of the parameter server's: PS/RingTMP >= 8x (closed form)
    """
    from studies.reports.text import table

    seed = "" if r.get("seed") is None else f", seed {r['seed']}"
    head = f"{r['claim']}: {r['threshold']} ({r['how']}{seed})"
    rows = [[f"{y:g}"] + [f"{v:.3g}{'*' if h else ''}" for v, h in zip(vals, hold)]
            for y, vals, hold in zip(r["ys"], r["values"], r["holds"])]
    body = table([f"{r['y']} \\ {r['x']}"] + [f"{x:g}" for x in r["xs"]], rows)
    return f"{head}\n{body}\n* holds; {r['note']}"


def plot_regions(regions, path):
    """Draw every region as a map: one panel each, cells green where the claim holds.

    Examples
    --------
    >>> import os, tempfile
    >>> out = plot_regions([ringtmp_region(quick=True)], os.path.join(tempfile.mkdtemp(), "r.png"))
    >>> os.path.getsize(out) > 0
    True
    """
    from matplotlib.figure import Figure  # no pyplot: the caller's backend stays as it is

    n = len(regions)
    cols = min(3, n)
    rows = (n + cols - 1) // cols
    fig = Figure(figsize=(4.6 * cols, 3.6 * rows))
    axes = fig.subplots(rows, cols, squeeze=False)
    for ax, r in zip(axes.flat, regions):
        hold = np.array(r["holds"], float)
        ax.imshow(hold, cmap="RdYlGn", vmin=-0.3, vmax=1.3, origin="lower", aspect="auto")
        for i, row in enumerate(r["values"]):
            for j, v in enumerate(row):
                ax.text(j, i, f"{v:.3g}", ha="center", va="center", fontsize=8)
        ax.set_xticks(range(len(r["xs"])), [f"{x:g}" for x in r["xs"]])
        ax.set_yticks(range(len(r["ys"])), [f"{y:g}" for y in r["ys"]])
        ax.set_xlabel(r["x"])
        ax.set_ylabel(r["y"])
        ax.set_title(f"{r['claim']}\n{r['threshold']}", fontsize=8)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return str(path)

