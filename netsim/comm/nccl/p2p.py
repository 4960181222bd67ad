"""How NCCL splits a point-to-point call over channels (NCCL v2.30.7-1).

alltoall and sendrecv are grouped sends and receives: NCCL's tuning model has
no entry for them; the channels they run on come from three places in the
source of NCCL v2.30.7-1 (:data:`netsim.comm.nccl.tuning.NCCL_VERSION`).

* **Channels of the communicator** (``ncclTopoPostset``, src/graph/connect.cc):
  ``comm->nChannels`` is twice the search's ring channels, at most
  ``MAXCHANNELS`` (64, src/include/device.h), and twice that again on Hopper and
  later across machines when the ring graph's ``bwIntra`` exceeds 45 GB/s and
  fewer than 16 channels result ("4 compute channels per search channel").
* **Channels available** (``ncclTopoComputeP2pChannels``,
  ``ncclTopoComputeP2pChannelsPerPeer`` and ``ncclTopoGetNchannels``,
  src/graph/paths.cc): ``p2pnChannels`` is ``comm->nChannels`` (at most
  ``NCCL_MAX_P2P_NCHANNELS``, default ``MAXCHANNELS``) rounded up to a power of
  two. ``p2pnChannelsPerPeer`` is the least, over every peer, of ``2 x max(1,
  NVLink path bandwidth / one NVLink's)`` for a peer over NVLink, 2 over PCIe or
  host memory, and for a peer on another machine ``max(netCount, ceil(netBw /
  NCCL_P2P_PER_CHANNEL_NET_BW))``, the GPU's local NICs counted until their
  bandwidth reaches the GPU's own path to its CPU (``ncclTopoGetLocalNetCountByBw``,
  src/graph/topo.cc; ``NCCL_P2P_PER_CHANNEL_NET_BW`` 14 GB/s), rounded up to a
  power of two. Across machines it is then halved while ``perPeer x
  ceil(nRanks / NCCL_MAX_DEV_WORK_P2P_PER_BATCH)`` (8, device.h) exceeds
  ``p2pnChannels``; on one machine it is at most ``p2pnChannels``.
* **Channels one send uses** (``scheduleP2pTasksToPlan`` and ``addP2pToPlan``,
  src/enqueue.cc): ``nChannelsMin`` is ``p2pnChannelsPerPeer`` halved while
  ``nChannelsMin x nRanks > p2pnChannels``. A send of ``b`` bytes starts on
  ``min(nChannelsMin, ceil(b / minPartSize))`` channels and doubles them (up to
  ``p2pnChannelsPerPeer``) while its part ``ceil(b / channels)`` exceeds
  ``maxPartSize``; ``minPartSize`` and ``maxPartSize`` are ``stepSize/8`` and
  ``32 stepSize`` on one machine, ``stepSize/2`` and ``stepSize`` across
  machines, where ``stepSize`` is ``p2pChunkSize`` (src/init.cc
  ``computeBuffSizes``: ``NCCL_P2P_NET_CHUNKSIZE`` 128 KiB across machines,
  doubled on Arm hosts with Blackwell GPUs, which the graph does not say, so
  not here; ``NCCL_P2P_NVL_CHUNKSIZE`` 512 KiB when every path is NVLink;
  ``NCCL_P2P_PCI_CHUNKSIZE`` 128 KiB otherwise; at most the Simple buffer
  4 MiB / ``NCCL_STEPS`` 8).
* **Protocol** (``addP2pToPlan``): LL when the send's bytes are at most its
  channels x ``NCCL_P2P_LL_THRESHOLD`` (16384), Simple otherwise.
* **Latency** (:func:`latency`): NCCL's tuning model has no entry for point-to-point
  calls. Inside a machine the call is charged one ring step (``baseLat`` + the
  intra-node ``hwLat`` of the ring, tuning.cc). A send to another machine also waits
  for its receiver: NCCL's IB transport posts a send only once the receiver's posted
  receive has reached it (src/transport/net_ib/p2p.cc, "Wait for the receiver to have
  posted the corresponding receive"; the receiver writes its buffer into the
  sender's FIFO, ``ncclIbPostFifo``), so the data crosses the network after that
  notice: two network latencies, each the tree's ``hwLat[NET]`` (tuning.cc uses it
  where "latencies are fully exposed", one rank per node; a call of one step has
  nothing to hide them behind) plus the network plugin's latency. And every send and
  receive to another machine is one network operation that the GPU's proxy thread
  posts, one after another: ``getNetOverhead`` each (1 us Intel, 2 us AMD, x3 for
  Simple, tuning.cc), before the last one can cross.
"""

from netsim.checks import check_int
from netsim.comm.nccl import tuning
from netsim.comm.nccl.tuning import NcclModelError

__all__ = ["MAX_CHANNELS", "P2P_LL_THRESHOLD", "CHUNK_SIZE", "PER_CHANNEL_NET_BW",
           "MAX_P2P_PER_BATCH", "comm_channels", "net_peer_channels", "p2p_channels",
           "step_size", "send_channels", "protocol", "net_posts", "latency"]

MAX_CHANNELS = 64           # v2.30.7-1 src/include/device.h MAXCHANNELS
MAX_P2P_PER_BATCH = 8       # v2.30.7-1 src/include/device.h NCCL_MAX_DEV_WORK_P2P_PER_BATCH
P2P_LL_THRESHOLD = 16384    # v2.30.7-1 src/enqueue.cc NCCL_PARAM(P2pLLThreshold, ..., 16384)
PER_CHANNEL_NET_BW = 14     # GB/s, v2.30.7-1 src/graph/paths.cc NCCL_PARAM(P2pPerChannelNetBw)
# v2.30.7-1 src/init.cc NCCL_P2P_{NVL,PCI,NET}_CHUNKSIZE defaults; the cap is DEFAULT_BUFFSIZE
# (4 MiB) / NCCL_STEPS (8).
CHUNK_SIZE = {"nvlink": 1 << 19, "pci": 1 << 17, "net": 1 << 17}
_SIMPLE_STEP_MAX = (1 << 22) // 8


def _pow2_up(v):  # paths.cc pow2Up
    p = 1
    while p < v:
        p <<= 1
    return p


def comm_channels(search_channels, compcap=0, n_machines=1, bw_intra=0.0):
    """``comm->nChannels`` after ``ncclTopoPostset`` (connect.cc): the search's, doubled.

    Parameters
    ----------
    search_channels : int
        The ring channels NCCL's search found.
    compcap : int, optional
        Compute capability x 10 (Hopper is 90).
    n_machines : int, optional
    bw_intra : float, optional
        The ring graph's ``bwIntra``, GB/s.

    Examples
    --------
    >>> comm_channels(12), comm_channels(4, 90, 2, 360.0), comm_channels(8, 90, 2, 360.0)
    (24, 16, 16)
    """
    c = check_int(search_channels, "search_channels", error=NcclModelError)
    n = min(MAX_CHANNELS, 2 * c)
    if compcap >= 90 and n_machines > 1 and bw_intra > 45.0 and n < 16:
        n = min(MAX_CHANNELS, 2 * n)
    return n


def net_peer_channels(nic_bws, gpu_bw):
    """``ncclTopoGetNchannels`` of a peer on another machine (paths.cc), default config.

    Parameters
    ----------
    nic_bws : sequence of float
        GB/s of the paths from the GPU to each of its local NICs, in NCCL's order.
    gpu_bw : float
        GB/s of the GPU's path to its CPU: NICs are counted until their sum reaches it.

    Returns
    -------
    int
        ``max(netCount, ceil(int(netBw) / 14))``; 2 without a NIC.

    Examples
    --------
    One 400 Gb/s NIC behind a PCIe gen5 x16 path (NCCL: 48 GB/s both): 4 channels;
    four 100 Gb/s EFA NICs (12.5 GB/s each) behind the same path: 4 as well.

    >>> net_peer_channels([48.0], 48.0), net_peer_channels([12.5] * 4, 48.0)
    (4, 4)
    """
    count, total = 0, 0.0
    for bw in nic_bws:
        total += bw
        count += 1
        if total >= gpu_bw:
            break
    if count == 0:
        return 2
    return max(count, -(-int(total) // PER_CHANNEL_NET_BW))


def p2p_channels(channels, peer_channels, n_ranks, n_machines=1):
    """``(p2pnChannels, p2pnChannelsPerPeer)`` of a communicator (paths.cc).

    Parameters
    ----------
    channels : int
        ``comm->nChannels`` (:func:`comm_channels`).
    peer_channels : sequence of int
        ``ncclTopoGetNchannels`` of each kind of peer present: ``2 x k`` for a pair
        joined by ``k`` NVLinks' worth of bandwidth, 2 over PCIe or host memory,
        :func:`net_peer_channels` for a peer on another machine.
    n_ranks, n_machines : int

    Returns
    -------
    (int, int)

    Examples
    --------
    Eight A100 on NVSwitch (12 search channels, 24 after Postset; 12 NVLinks to every
    peer):

    >>> p2p_channels(24, [24], 8)
    (32, 32)

    Two DGX H100 (16 channels): a peer on the other machine gets 4, and 4 x
    ceil(16 / 8) = 8 <= 16 keeps it:

    >>> p2p_channels(16, [36, 4], 16, 2)
    (16, 4)
    """
    c = check_int(channels, "channels", error=NcclModelError)
    n_ranks = check_int(n_ranks, "n_ranks", minimum=2, error=NcclModelError)
    total = min(_pow2_up(min(c, MAX_CHANNELS)), MAX_CHANNELS)
    per_peer = _pow2_up(min([MAX_CHANNELS] + [int(k) for k in peer_channels]))
    if n_machines > 1:
        while per_peer * -(-n_ranks // MAX_P2P_PER_BATCH) > total and per_peer > 1:
            per_peer //= 2
    else:
        per_peer = min(total, per_peer)
    return total, per_peer


def step_size(path, n_machines):
    """``p2pChunkSize`` (src/init.cc ``computeBuffSizes``), bytes.

    ``path`` is ``"nvlink"`` when every GPU pair is joined by NVLink, else ``"pci"``.

    Examples
    --------
    >>> step_size("nvlink", 1), step_size("nvlink", 2), step_size("pci", 1)
    (524288, 131072, 131072)
    """
    size = CHUNK_SIZE["net" if n_machines > 1 else path]
    return min(size, _SIMPLE_STEP_MAX)


def send_channels(nbytes, n_ranks, n_machines, total, per_peer, step):
    """Channels one send of ``nbytes`` runs on (enqueue.cc ``addP2pToPlan``).

    Parameters
    ----------
    nbytes : int
        Bytes of the send (to one peer).
    n_ranks, n_machines : int
    total, per_peer : int
        ``p2pnChannels`` and ``p2pnChannelsPerPeer`` (:func:`p2p_channels`).
    step : int
        ``p2pChunkSize`` (:func:`step_size`).

    Returns
    -------
    int

    Examples
    --------
    A100 sendrecv on one NVSwitch: 8 channels for 128 MiB, 16 for 256 MiB,
    32 from 512 MiB (parts of at most 16 MiB, from 4 channels up):

    >>> [send_channels(2**k, 8, 1, 32, 32, 2**19) for k in (27, 28, 29, 30)]
    [8, 16, 32, 32]
    >>> send_channels(2**17, 8, 1, 32, 32, 2**19)   # 64 KiB parts: two
    2
    """
    nbytes = check_int(nbytes, "nbytes", error=NcclModelError)
    lo = per_peer
    while lo * n_ranks > total and lo > 1:
        lo //= 2
    min_part, max_part = (step // 2, step) if n_machines > 1 else (step // 8, step * 32)
    n = min(lo, -(-nbytes // min_part))
    part = max(min_part, -(-nbytes // n))
    while part > max_part and n <= per_peer // 2:
        n *= 2
        part = -(-nbytes // n)
    return n


def protocol(nbytes, channels):
    """The protocol of a send of ``nbytes`` on ``channels`` (enqueue.cc ``addP2pToPlan``).

    Examples
    --------
    >>> protocol(16384, 1), protocol(16385, 1), protocol(32768, 2)
    ('LL', 'Simple', 'LL')
    """
    return "LL" if nbytes <= channels * P2P_LL_THRESHOLD else "Simple"


def net_posts(op, machine_of):
    """Network operations the busiest proxy posts for one call: sends and receives off-machine.

    Parameters
    ----------
    op : {"alltoall", "sendrecv"}
        alltoall sends to and receives from every other rank; sendrecv (nccl-tests'
        ring shift) sends to rank ``r + 1`` and receives from ``r - 1``.
    machine_of : sequence
        The machine of each rank, in rank order.

    Returns
    -------
    int
        The most, over ranks, of its sends plus receives whose peer is on another
        machine.

    Examples
    --------
    Two machines of 8 GPUs: an alltoall posts 8 sends and 8 receives a rank; a
    sendrecv at most one of each (ranks 7 and 8 send across, 0 and 8 receive):

    >>> m = [0] * 8 + [1] * 8
    >>> net_posts("alltoall", m), net_posts("sendrecv", m), net_posts("alltoall", [0] * 4)
    (16, 1, 0)
    """
    n = len(machine_of)
    if op == "alltoall":
        return max(2 * sum(machine_of[b] != machine_of[a] for b in range(n)) for a in range(n))
    if op != "sendrecv":
        raise NcclModelError(f"point-to-point op must be alltoall or sendrecv, not {op!r}")
    return max((machine_of[(a + 1) % n] != machine_of[a]) + (machine_of[a - 1] != machine_of[a])
               for a in range(n))


def latency(protocol, intra_link, posts, net_latency=0.0, cpu_vendor="intel", flush=False):
    """Seconds charged to a point-to-point call before its bytes move (see the module docstring).

    Parameters
    ----------
    protocol : {"LL", "Simple"}
        The sends' protocol (:func:`protocol`).
    intra_link : {"nvlink", "pci"}
        The path between GPUs of one machine (its ``hwLat`` row).
    posts : int
        Network operations the busiest proxy posts (:func:`net_posts`); 0 when no
        peer is on another machine.
    net_latency : float, optional
        Seconds the network plugin reports (0 for NCCL's InfiniBand/RoCE transport).
    cpu_vendor : {"intel", "amd"}, optional
        The host's, for ``getNetOverhead``.
    flush : bool, optional
        The receive is flushed (GPUDirect RDMA before compute capability 90, Simple):
        one more network latency.

    Returns
    -------
    float
        ``baseLat`` of the ring, then the longer of one intra-node ring hop and, with
        ``posts`` > 0, ``posts`` x the net overhead plus two network latencies (the
        receiver's notice and the data), each ``hwLat[NET]`` of the tree plus
        ``net_latency``.

    Examples
    --------
    One machine, NVLink, LL: 6.6 + 0.6 us. Two machines of 8 GPUs, LL on InfiniBand:
    6.6 + 16 x 1 + 2 x 5 us.

    >>> round(latency("LL", "nvlink", 0) * 1e6, 6), round(latency("LL", "nvlink", 16) * 1e6, 6)
    (7.2, 32.6)
    """
    ring = tuning.NCCL_ALGO_ORDER.index("ring")
    p = tuning.PROTOCOLS.index(protocol)
    hop = tuning.HW_LAT_US[0 if intra_link == "nvlink" else 1][ring][p] * 1e-6
    posts = check_int(posts, "posts", minimum=0, error=NcclModelError)
    if posts:
        one_way = tuning.HW_LAT_US[2][tuning.NCCL_ALGO_ORDER.index("tree")][p] * 1e-6 + net_latency
        hop = max(hop, posts * tuning.net_overhead(cpu_vendor, protocol) + 2 * one_way
                  + (net_latency if flush else 0.0))
    return tuning.BASE_LAT_US[ring][p] * 1e-6 + hop
