"""NCCL's topology search as plain numbers: the channels and speeds it reaches.

``search_channels`` bounds what ``ncclTopoCompute`` (src/graph/search.cc of
NCCL v2.30.7-1) finds on a machine's links: channels and per-channel
bandwidth, on the speed ladders of the source; ``raise_tree_intra`` is its
second pass for trees across machines, and ``nvls_intra`` its NVLS search inside one
NVLink domain (both passes). They take and return SI units (bytes/s); the ladders are
kept in GB/s as the source writes them. :mod:`netsim.comm.nccl.tuning` re-exports them.
"""

import math
import types

from netsim.checks import check_int, check_real
from netsim.errors import NcclModelError

__all__ = ["SPEEDS", "MAX_CHANNELS", "MAX_RING_CHANNELS", "MAX_NVLS_ARITY", "search_channels",
           "nvls_intra", "raise_tree_intra"]

# src/include/device.h ``MAXCHANNELS``: the channels a communicator can have at most.
MAX_CHANNELS = 64
# init.cc ``ringGraph->maxChannels = MAXCHANNELS / 2``.
MAX_RING_CHANNELS = MAX_CHANNELS // 2
# src/include/device.h ``NCCL_MAX_NVLS_ARITY``: an NVLS graph has at most this many heads, so
# at most this many channels (search.cc: ``maxChannels = std::min(NCCL_MAX_NVLS_ARITY,
# system->nodes[GPU].count)``; on one node ``minChannels = maxChannels``): 32 of a
# 72-GPU NVLink domain, which NCCL's MNNVL sees as one node.
MAX_NVLS_ARITY = 32

# search.cc speed ladders (GB/s per channel), keyed (generation, crosses a network):
# generation 0 ``speedArray*``, 90 ``sm90SpeedArray*``, 100 ``sm100SpeedArray*``.
SPEEDS = types.MappingProxyType({
    (0, False): (40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0),
    (0, True): (48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0,
                4.0, 3.0, 2.4, 1.2, 0.24, 0.12),
    (90, False): (60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0),
    (90, True): (48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0,
                 2.4, 1.2, 0.24, 0.12),
    (100, False): (90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0),
    (100, True): (96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0,
                  12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12),
})
_GB = 1e9


def _generation(compcap):
    """The key of :data:`SPEEDS` for a compute capability (search.cc picks by ``ccMin``)."""
    return 100 if compcap >= 100 else 90 if compcap >= 90 else 0


def search_channels(link_bw, n_links=1, compcap=80, net=False, pattern="ring",
                    n_gpus=8, min_channels=1, max_channels=MAX_RING_CHANNELS):
    """Channels and per-channel bandwidth NCCL's search reaches when it fills the links.

    Follows ``ncclTopoCompute`` (search.cc): start at the fastest speed of the
    ladder that one link carries (and, for trees and NVLS, that
    ``min_channels`` channels fit in ``n_gpus/(n_gpus-1)`` of the total); fit
    ``floor(link_bw / speed)`` channels on each of ``n_links`` links; step down
    the ladder while the next speed is more than 0.49 of the best found, keep
    the largest ``channels * speed``, stop when it fills the total; then
    ``ncclTopoDupChannels`` doubles the channels (halving their bandwidth)
    unless the speed is < 25 GB/s, or compcap > 80 with speed < 50 and more
    than 4 channels, or the pattern is NVLS. NVLS inside one node is
    :func:`nvls_intra`. The real search also proves a ring (tree, NVLS head
    set) exists at that speed; here it is assumed to.

    Parameters
    ----------
    link_bw : float
        Bytes/s of the link each channel crosses: one GPU's NVLink (NV1), its
        NVSwitch port (all its NVLinks), its PCIe path, or one NIC.
    n_links : int
        How many such links share the channels (NVLinks per GPU, NICs per node).
    compcap : int
        Compute capability (selects the sm90 or sm100 ladders).
    net : bool
        Whether the graph crosses a network (selects the inter-node ladder).
    pattern : {"ring", "tree", "nvls"}
        Graph pattern (``"nvls"`` only with ``net``: across machines).
    n_gpus : int
        GPUs per node.
    min_channels, max_channels : int
        NCCL's bounds (ring 1..:data:`MAX_RING_CHANNELS`; tree = ring's channels;
        NVLS 1..:data:`MAX_NVLS_ARITY`, and min(n_gpus, 32) on one node).

    Returns
    -------
    (int, float)
        Channels and per-channel bytes/s (the graph's ``bwIntra`` = ``bwInter``).

    Examples
    --------
    >>> search_channels(12 * 20e9)                 # A100: 6 x 40 GB/s, duplicated
    (12, 20000000000.0)
    >>> search_channels(20e9, n_links=6, compcap=70)   # DGX-1 V100: six NVLinks
    (6, 20000000000.0)
    >>> search_channels(12.5e9, n_links=4, net=True)   # four 100 Gb/s NICs
    (4, 12000000000.0)
    """
    link = check_real(link_bw, "link_bw", lo=0, strict=True, error=NcclModelError) / _GB
    n_links = check_int(n_links, "n_links", error=NcclModelError)
    n_gpus = check_int(n_gpus, "n_gpus", error=NcclModelError)
    hi = check_int(max_channels, "max_channels", error=NcclModelError)
    lo = check_int(min_channels, "min_channels", maximum=hi, error=NcclModelError)
    if pattern not in ("ring", "tree", "nvls"):
        raise NcclModelError(f"unknown graph pattern {pattern!r}; known: ring, tree, nvls")
    if pattern == "nvls" and not net:
        raise NcclModelError("NVLS inside one node is nvls_intra's search, not search_channels'")
    ladder = SPEEDS[(_generation(check_int(compcap, "compcap", error=NcclModelError)), bool(net))]
    total = link * n_links * (n_gpus / (n_gpus - 1) if pattern != "ring" and n_gpus > 1 else 1)
    i = 0
    while i < len(ladder) - 1 and (ladder[i] > link or ladder[i] * lo > total):
        i += 1
    best = (0, 0.0)
    for speed in ladder[i:]:
        if best[0] and speed / best[1] <= .49:
            break
        fit = min(hi, n_links * math.floor(link / speed + 1e-9))
        if fit >= lo and fit * speed > best[0] * best[1] + 1e-9:
            best = (fit, speed)
        if best[0] * best[1] >= total - 1e-9:
            break
    n, bw = best
    if n == 0:
        raise NcclModelError(f"no channel fits: link {link:g} GB/s below every speed")
    if pattern != "nvls" and bw >= 25.0 and not (compcap > 80 and bw < 50.0 and n > 4):
        dup = min(2 * n, hi)
        bw /= -(-dup // n)
        n = dup
    return n, bw * _GB


def nvls_intra(link_bw, n_gpus, compcap=90):
    """NCCL's NVLS graph inside one NVLink domain: channels, ``bwIntra`` and ``bwInter``.

    ``ncclTopoCompute`` (search.cc, NCCL v2.30.7-1; the same in v2.25.1-1) with the
    NVLS pattern and no network: ``maxChannels = min(NCCL_MAX_NVLS_ARITY, GPUs)``
    and ``minChannels = maxChannels`` ("force intra-node NVLS algorithm to pull
    evenly from all GPUs"). Pass 1 starts at the first speed of the intra-node
    ladder that the GPU's NVLink carries and of which ``minChannels`` channels fit
    in ``n_gpus / (n_gpus - 1)`` of it, and steps down until the channels fit:
    ``ncclTopoSearchTryNvls`` takes ``bwIntra`` from every GPU's switch link in
    both directions for each channel, twice from the channel's head (``d0 == g ?
    2 : 1``), and channel ``c`` is headed by GPU ``c``, so the channels fit when
    ``(channels + 1) x speed`` fits one GPU's link. Pass 2 (``pattern ==
    NCCL_TOPO_PATTERN_NVLS``) raises ``bwInter`` one step of the ladder at a time
    while it is below twice ``bwIntra``; inside one node no path of the search is
    an inter-node one, so every step is found. The tuning reads ``bwInter`` as the
    NVLS graph's limit beside ``bwIntra x nvlsEfficiency``
    (:func:`netsim.comm.nccl.tuning.bandwidth`).

    Parameters
    ----------
    link_bw : float
        Bytes/s of one GPU's link to the NVLink switch (NCCL's figure: links x
        ``SM*_NVLINK_BW``).
    n_gpus : int
        GPUs in the NVLink domain, >= 2.
    compcap : int, optional
        Compute capability x 10 (selects the sm90 or sm100 ladder).

    Returns
    -------
    (int, float, float)
        Channels, ``bwIntra`` and ``bwInter`` in bytes/s.

    Examples
    --------
    A DGX H100 (18 x 20.6 GB/s to the switch): 9 x 50 exceeds 370.8, 9 x 40 fits;
    ``bwInter`` climbs 50, 60 (the top of the sm90 ladder). One NVL72 domain: 32
    heads, 24 x 32 exceeds 72/71 x 721.8, 33 x 20 fits; ``bwInter`` 24, 30, 40.

    >>> c, intra, inter = nvls_intra(18 * 20.6e9, 8, 90); c, intra / 1e9, inter / 1e9
    (8, 40.0, 60.0)
    >>> c, intra, inter = nvls_intra(18 * 40.1e9, 72, 100); c, intra / 1e9, inter / 1e9
    (32, 20.0, 40.0)
    """
    link = check_real(link_bw, "link_bw", lo=0, strict=True, error=NcclModelError) / _GB
    n = check_int(n_gpus, "n_gpus", minimum=2, error=NcclModelError)
    ladder = SPEEDS[(_generation(check_int(compcap, "compcap", error=NcclModelError)), False)]
    channels = min(MAX_NVLS_ARITY, n)
    total = link * n / (n - 1)
    i = 0
    while i < len(ladder) - 1 and (ladder[i] > link or ladder[i] * channels > total):
        i += 1
    while (channels + 1) * ladder[i] > link + 1e-9:   # the head carries its channel twice
        if i == len(ladder) - 1:
            raise NcclModelError(f"no NVLS graph fits: {channels + 1} x {ladder[i]:g} GB/s "
                                 f"exceed the {link:g} GB/s link")
        i += 1
    intra = inter = ladder[i]
    while i > 0 and inter < 2 * intra:   # pass 2: bwInter up the ladder
        i -= 1
        inter = ladder[i]
    return channels, intra * _GB, inter * _GB


def raise_tree_intra(bw_inter, n_channels, link_bw, n_links=1, compcap=80, n_gpus=8):
    """A tree graph's intra-node bandwidth after the search's second pass, in bytes/s.

    ``ncclTopoCompute`` (search.cc, pass 2, "increase bwIntra for trees (2 nodes
    or collnet)"): once a tree is found at ``bw_inter`` per channel, the search
    raises the intra-node speed one step of the inter-node ladder at a time
    while it is below twice ``bw_inter`` and the machine's links still carry
    ``n_channels`` channels at the next speed (one link carries one channel's
    speed; ``n_channels`` fit in the GPU's ``n_links`` links, with the
    ``n_gpus/(n_gpus-1)`` of a tree). The tuning model reads this ``bwIntra``
    for trees on at most two nodes (:func:`bandwidth`).

    Parameters
    ----------
    bw_inter : float
        The tree's per-channel bytes/s across nodes (:func:`search_channels` on the NICs).
    n_channels : int
        The tree's channels.
    link_bw : float or None
        Bytes/s of one intra-node link as :func:`search_channels` takes it
        (one NVLink, an NVSwitch port, a PCIe path); None for machines of one
        GPU, which have no intra-node link to hold the speed back.
    n_links : int
        Such links per GPU.
    compcap : int
        Compute capability x 10 (selects the sm90 ladder).
    n_gpus : int
        GPUs per node.

    Returns
    -------
    float

    Examples
    --------
    Four 100 Gb/s NICs (12 GB/s per channel) on A100s behind an NVSwitch: the
    search stops at 24 GB/s, the first speed of the ladder at twice 12.

    >>> raise_tree_intra(12e9, 4, 240e9) / 1e9
    24.0
    >>> raise_tree_intra(24e9, 8, 240e9) / 1e9      # 8 x 48 would not fit the 240 GB/s port
    30.0
    """
    bw = check_real(bw_inter, "bw_inter", lo=0, strict=True, error=NcclModelError) / _GB
    n = check_int(n_channels, "n_channels", error=NcclModelError)
    k = check_int(n_gpus, "n_gpus", error=NcclModelError)
    links = check_int(n_links, "n_links", error=NcclModelError)
    if link_bw is None:
        link = total = math.inf
    else:
        link = check_real(link_bw, "link_bw", lo=0, strict=True, error=NcclModelError) / _GB
        total = link * links * (k / (k - 1) if k > 1 else 1)
    ladder = SPEEDS[(_generation(check_int(compcap, "compcap", error=NcclModelError)), True)]
    intra = bw
    for speed in sorted(s for s in ladder if s > bw):
        if intra >= 2 * bw or speed > link or n * speed > total + 1e-9:
            break
        intra = speed
    return intra * _GB
