"""GPU-side per-channel limits of NCCL's kernels (v2.30.7-1, src/graph/tuning.cc).

NCCL's tuning model caps the bus bandwidth of some (algorithm, protocol) pairs
by what the GPU, not the link, can move per channel: ``llMaxBws`` (LL, the whole
call), ``perChMaxRingLL128Bws``, ``perChMaxTreeLL128Bws``, ``perChMaxTreeBws`` and
``perChMaxNVLSTreeBws`` (per channel), all in ``ncclTunerConstantsDefaults``; and
it counts NVLS transfers at ``nvlsEfficiency`` of the NVLink rate.
:mod:`netsim.comm.nccl.tuning` applies them to NCCL's choice; :func:`channel_cap` turns
the ring and NVLS-tree ones into the rate one flow of one channel may carry,
which :func:`netsim.nccl.simulate` enforces on the graph.

Tables are in GB/s as written in tuning.cc: rows Volta, Ampere, Hopper, Blackwell
(compute capability index ``NCCL_*_COMPCAP_IDX``), columns nNodes 1, 2, > 2.
``llMaxBws`` rows are the GPU for one node and the CPU (Intel, AMD or mixed) beyond.
The NVLS tree's bandwidth is ``nChannels`` times the least of its intra-node,
network and ``perChMaxNVLSTreeBw`` figure, converted to algorithm bandwidth by
``nRanks / nsteps``.
"""

__all__ = ["LL_MAX_BW", "PER_CH_MAX_RING_LL128_BW", "PER_CH_MAX_TREE_LL128_BW",
           "PER_CH_MAX_TREE_BW", "PER_CH_MAX_NVLS_TREE_BW", "NVLS_EFFICIENCY", "table_indices",
           "channel_cap"]

LL_MAX_BW = ((39.0, 39.0, 20.4), (87.7, 22.5, 19.0), (141.0, 45.0, 35.0),
             (2 * 141.0, 2 * 45.0, 2 * 35.0))
PER_CH_MAX_RING_LL128_BW = ((20.0, 20.0, 20.0), (20.0, 20.0, 20.0), (36.7, 36.7, 36.7),
                            (40.0, 40.0, 40.0))
PER_CH_MAX_TREE_LL128_BW = ((20.0, 20.0, 20.0), (20.0, 20.0, 20.0), (36.7, 36.7, 29.0),
                            (55.6, 31.67, 20.0))
PER_CH_MAX_TREE_BW = ((26.5, 18.5, 10.0), (24.0, 23.6, 17.8), (38.7, 41.4, 36.0),
                      (70.0, 42.8, 24.0))
PER_CH_MAX_NVLS_TREE_BW = ((26.5, 18.5, 10.0), (24.0, 23.6, 17.8), (0.0, 57.7, 45.5),
                           (0.0, 96.0, 80.0))
# ``nvlsEfficiency``: the share of the NVLink rate NVLS (multimem) transfers reach, per row.
NVLS_EFFICIENCY = (0.0, 0.0, 0.85, 0.74)


def table_indices(comm):
    """``(compCapIndex, index1, index2)`` of ``ncclTopoTuneModel`` for these tables.

    Parameters
    ----------
    comm : netsim.comm.nccl.tuning.Comm
        Reads ``compcap``, ``n_nodes`` and ``cpu_vendor``.

    Returns
    -------
    (int, int, int)
        Row of the per-channel tables, row of ``llMaxBws``, column of both.

    Examples
    --------
    >>> from types import SimpleNamespace as C
    >>> table_indices(C(compcap=90, n_nodes=1, cpu_vendor="intel"))
    (2, 2, 0)
    >>> table_indices(C(compcap=80, n_nodes=4, cpu_vendor="amd"))
    (1, 1, 2)
    """
    cc_index = 3 if comm.compcap >= 100 else 2 if comm.compcap >= 90 else 1 if comm.compcap >= 80 else 0
    index2 = comm.n_nodes - 1 if comm.n_nodes <= 2 else 2
    index1 = cc_index if comm.n_nodes == 1 else (1 if comm.cpu_vendor == "amd" else 0)
    return cc_index, index1, index2


def channel_cap(comm, algorithm, protocol, channels):
    """Bytes/s of data one flow of one channel may carry, or None where NCCL names no limit.

    A ring channel's busbw is the rate of each of its hops, so ring LL gets
    ``llMaxBw / channels`` and ring LL128 ``perChMaxRingLL128Bw``. An NVLS tree
    channel's algorithm bandwidth is ``perChMaxNVLSTreeBw x nRanks / (2 (nRanks -
    1))``, the rate of its flows across machines, which carry the
    channel's share once each way. Trees get nothing here: tuning.cc gives a tree
    algbw = busbw / 2 even where both directions of an edge run at once, so what
    its per-channel tree caps (``perChMaxTreeBws``, ``perChMaxTreeLL128Bws``) mean
    for one flow is not determined by the source; :mod:`netsim.comm.nccl.model`
    holds a tree channel's share (not a flow) to NCCL's per-channel tree bandwidth,
    which includes them, as it does an NVLS channel's and a point-to-point channel's
    (it needs the tuning model). Ring Simple and NVLS tree inside a machine have none.

    Parameters
    ----------
    comm : netsim.comm.nccl.tuning.Comm
    algorithm : str
    protocol : {"LL", "LL128", "Simple"}
    channels : int
        Channels the call runs on.

    Returns
    -------
    float or None

    Examples
    --------
    >>> from types import SimpleNamespace as C
    >>> h100 = C(compcap=90, n_nodes=1, cpu_vendor="intel")
    >>> channel_cap(h100, "ring", "LL128", 16) / 1e9
    36.7
    >>> channel_cap(h100, "ring", "LL", 4) / 1e9      # llMaxBw 141 GB/s over 4 channels
    35.25
    >>> channel_cap(h100, "ring", "Simple", 16) is None, channel_cap(h100, "tree", "LL", 4)
    (True, None)
    >>> two = C(compcap=90, n_nodes=2, n_ranks=16, cpu_vendor="intel")
    >>> round(channel_cap(two, "nvls_tree", "Simple", 8) / 1e9, 4)   # 57.7 x 16 / 30
    30.7733
    """
    cc, i1, i2 = table_indices(comm)
    if algorithm == "nvls_tree":
        per_channel = PER_CH_MAX_NVLS_TREE_BW[cc][i2]
        n = comm.n_ranks
        return per_channel * n / (2 * (n - 1)) * 1e9 if per_channel else None
    if algorithm != "ring" or protocol == "Simple":
        return None
    if protocol == "LL":
        return LL_MAX_BW[i1][i2] / channels * 1e9
    return PER_CH_MAX_RING_LL128_BW[cc][i2] * 1e9
