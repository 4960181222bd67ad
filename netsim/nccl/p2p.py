"""How NCCL splits a point-to-point call over channels (v2.21.5-1: not yet re-read).

This module still follows NCCL v2.21.5-1, the one part of :mod:`netsim.nccl` not
moved to v2.30.7-1 (:data:`netsim.nccl.tuning.NCCL_VERSION`): v2.30.7-1 doubles
``MAXCHANNELS`` to 64 and chooses LL for a send up to ``nChannels x
NCCL_P2P_LL_THRESHOLD`` (src/enqueue.cc), and its ``scheduleP2pTasksToPlan`` has
not been transcribed here.

alltoall and sendrecv are grouped sends and receives: NCCL's tuning model has
no entry for them; the channels they run on come from two places in its source.

* **Channels available** (``ncclTopoComputeP2pChannels`` and
  ``ncclTopoGetNchannels``, src/graph/paths.cc): ``p2pnChannels`` is the
  communicator's channel count (``comm->nChannels``, which ``ncclTopoPostset``
  in src/graph/connect.cc sets to twice the search's ring channels, at most
  ``MAXCHANNELS`` 32) rounded up to a power of two; ``p2pnChannelsPerPeer`` is
  the least, over every pair of ranks, of ``2 x (NVLink path bandwidth / one
  NVLink's)`` for a peer over NVLink, 2 for a peer over PCIe or host memory, and
  for a peer on another machine ``NCCL_NCHANNELS_PER_NET_PEER`` (default: 2,
  halved while ``2 x nRanks > 4 x p2pnChannels``, at least one per NIC the GPU
  drives; these machines have one NIC per GPU or per GPU pair, so 1), capped by
  ``p2pnChannels`` and rounded up to a power of two.
* **Channels one send uses** (``scheduleP2pTasksToPlan`` and
  ``calcP2pChunkSize``, src/enqueue.cc): a send is cut into chunks, one
  channel each. ``nChannelsMin`` is ``p2pnChannelsPerPeer`` halved while
  ``nChannelsMin x nRanks > p2pnChannels``; the chunk starts at
  ``max(minSize, bytes / nChannelsMin)`` and the channel count doubles (up to
  ``p2pnChannelsPerPeer``) while the chunk exceeds ``maxSize``; ``minSize`` and
  ``maxSize`` are ``stepSize/8`` and ``32 stepSize`` on one machine,
  ``stepSize/2`` and ``stepSize`` across machines, where ``stepSize`` is
  ``p2pChunkSize`` (src/init.cc: ``NCCL_P2P_NVL_CHUNKSIZE`` 512 KiB when every
  path is NVLink, ``NCCL_P2P_PCI_CHUNKSIZE`` / ``NCCL_P2P_NET_CHUNKSIZE``
  128 KiB otherwise, at most the Simple buffer 4 MiB / ``NCCL_STEPS`` 8).
* **Protocol** (``addP2pToPlan``, src/enqueue.cc): LL for a chunk of at most
  ``NCCL_P2P_LL_THRESHOLD`` (16384) bytes, Simple otherwise.
"""

from ..checks import check_int
from .tuning import NcclModelError

__all__ = ["MAX_CHANNELS", "P2P_LL_THRESHOLD", "CHUNK_SIZE", "p2p_channels", "step_size",
           "send_channels", "protocol"]

MAX_CHANNELS = 32           # src/include/device.h MAXCHANNELS
P2P_LL_THRESHOLD = 16384    # src/enqueue.cc NCCL_PARAM(P2pLLThreshold, ..., 16384)
# src/init.cc NCCL_P2P_{NVL,PCI,NET}_CHUNKSIZE defaults; the cap is DEFAULT_BUFFSIZE / NCCL_STEPS.
CHUNK_SIZE = {"nvlink": 1 << 19, "pci": 1 << 17, "net": 1 << 17}
_SIMPLE_STEP_MAX = (1 << 22) // 8


def _pow2_up(v):  # paths.cc nextPow2
    p = 1
    while p < v:
        p <<= 1
    return p


def p2p_channels(search_channels, peer_channels, n_ranks):
    """``(p2pnChannels, p2pnChannelsPerPeer)`` of a communicator (paths.cc).

    Parameters
    ----------
    search_channels : int
        The ring channels NCCL's search found (``ncclTopoPostset`` doubles them).
    peer_channels : sequence of int
        ``ncclTopoGetNchannels`` of each kind of peer pair present: ``2 x k``
        for a pair joined by ``k`` NVLinks' worth of bandwidth, 2 over PCIe or
        host memory, ``None`` for a peer on another machine (computed here).
    n_ranks : int

    Returns
    -------
    (int, int)

    Examples
    --------
    Eight A100 on NVSwitch (12 search channels; 12 NVLinks to every peer):

    >>> p2p_channels(12, [24], 8)
    (32, 32)

    Two DGX H100 (8 search channels): a peer on the other machine gets 2:

    >>> p2p_channels(8, [36, None], 16)
    (16, 2)
    """
    c = check_int(search_channels, "search_channels", error=NcclModelError)
    n_ranks = check_int(n_ranks, "n_ranks", minimum=2, error=NcclModelError)
    total = min(MAX_CHANNELS, 2 * c)
    least = total
    for k in peer_channels:
        if k is None:
            net = 2
            while net * n_ranks > total * 4 and net > 1:
                net //= 2
            k = max(1, net)
        least = min(least, k)
    return _pow2_up(total), _pow2_up(least)


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
    """Channels one send of ``nbytes`` runs on (enqueue.cc ``calcP2pChunkSize``).

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
        The number of chunks, each on its own channel.

    Examples
    --------
    A100 sendrecv on one NVSwitch: 8 channels for 128 MiB, 16 for 256 MiB,
    32 from 512 MiB (chunks of at most 16 MiB, from 4 channels up):

    >>> [send_channels(2**k, 8, 1, 32, 32, 2**19) for k in (27, 28, 29, 30)]
    [8, 16, 32, 32]
    >>> send_channels(2**17, 8, 1, 32, 32, 2**19)   # 64 KiB chunks
    2
    """
    nbytes = check_int(nbytes, "nbytes", error=NcclModelError)
    lo = per_peer
    while lo * n_ranks > total and lo > 1:
        lo //= 2
    min_size, max_size = (step // 2, step) if n_machines > 1 else (step // 8, step * 32)
    size, n = max(min_size, -(-nbytes // lo)), lo
    while size > max_size and n <= per_peer // 2:
        n *= 2
        size = -(-nbytes // n)
    size = -(-size // min_size) * min_size   # alignUp(size, minSize)
    return -(-nbytes // size)


def protocol(chunk_bytes):
    """The protocol of a send's chunk (enqueue.cc ``addP2pToPlan``).

    Examples
    --------
    >>> protocol(16384), protocol(16385)
    ('LL', 'Simple')
    """
    return "LL" if chunk_bytes <= P2P_LL_THRESHOLD else "Simple"
