"""Link speeds and latencies of real hardware, in SI units, with their sources.

Every bandwidth is in bytes per second **per direction** (a full-duplex link
carries this much each way at once) and is the signalling rate after line
coding, before protocol overheads (packet headers, flow control), which
typically cost a few percent more. Every latency is in seconds.

Bandwidth tables
----------------
``ETHERNET``
    IEEE 802.3 MAC data rates: 1GbE (802.3z/ab), 10GbE (802.3ae), 25GbE
    (802.3by), 40GbE and 100GbE (802.3ba), 50GbE (802.3cd), 200GbE and 400GbE
    (802.3bs). ``"10GbE"`` is 10e9 bit/s = 1.25e9 bytes/s.
``INFINIBAND``
    4x port data rates of the InfiniBand Architecture Specification (IBTA):
    EDR 100 Gb/s (4 lanes of 25.78125 Gb/s, 64b/66b), HDR 200 Gb/s, NDR
    400 Gb/s, as also stated in the NVIDIA ConnectX-5/6/7 adapter manuals.
``PCIE_X16``
    PCI Express Base Specification (PCI-SIG) x16 links after 128b/130b coding:
    rate (GT/s per lane) x 16 lanes x 128/130 / 8 bits. gen3 (8 GT/s)
    ~15.75 GB/s, gen4 (16 GT/s) ~31.5 GB/s, gen5 (32 GT/s) ~63.0 GB/s.
``NVLINK``
    One NVLink, per direction: 25 GB/s for NVLink2 (NVIDIA Tesla V100 GPU
    Architecture whitepaper, 2017: six links per GPU, 300 GB/s total both
    ways), NVLink3 (NVIDIA A100 Tensor Core GPU Architecture whitepaper, 2020:
    twelve links, 600 GB/s total) and NVLink4 (NVIDIA H100 Tensor Core GPU
    Architecture whitepaper, 2022: eighteen links, 900 GB/s total).
    ``NVLINK_LINKS_PER_GPU`` holds those link counts.
``CPU_INTERCONNECT``
    One socket-to-socket link, per direction: Intel QuickPath Interconnect at
    9.6 GT/s (Xeon E5-2600 v4 family, Intel ARK) and Intel Ultra Path
    Interconnect at 10.4 GT/s (Xeon Scalable, Intel ARK). Both carry 16 data
    bits (2 bytes) per transfer each way, so 19.2 GB/s and 20.8 GB/s per
    direction (Intel quotes the both-ways sums, 38.4 and 41.6 GB/s).

Latencies
---------
Only two figures below are vendor datasheet values; the others are typical or
assumed orders of magnitude, and say so. All are per link: a path costs the
sum of the latencies of its links.

``ETHERNET_LATENCY`` = 1 us
    Typical figure, not a datasheet value: cut-through data-centre Ethernet
    switches are specified at a few hundred ns to ~1 us port to port, and
    store-and-forward switches and NICs add more.
``INFINIBAND_LATENCY`` = 0.6 us
    Datasheet: NVIDIA ConnectX-6 adapter user manual, "sub-600ns latency".
``PCIE_LATENCY`` = 100 ns
    Datasheet: PLX (Broadcom) ExpressLane PEX 8747 Gen3 switch product brief,
    "packet cut-thru with 100ns max packet latency (x16 to x16)". The DGX-1's
    switches (PCI ID 10b5:8764, a PEX 8764, in the NCCL topology dump of
    NVIDIA/nccl issue #671) are of the same Gen3 family; we assume the same
    figure for them and for gen4/gen5 switches.
``NVLINK_LATENCY`` = 100 ns
    Assumed. NVIDIA publishes no per-link NVLink latency. An NVLink is a
    direct point-to-point link with no switch in between, so we give it the
    cost of one PCIe switch hop. Keeping it below two PCIe links matters:
    netsim routes on the lowest-latency path, and this makes a direct NVLink
    beat any PCIe path and, in the DGX-1, a two-NVLink path through a third
    GPU beat PCIe plus QPI, the order NCCL uses (its path types NVL, then NVB
    "NVLink using an intermediate GPU", then the PCIe ones). Measured
    GPU-to-GPU latencies (e.g. Li et al. 2019) are microseconds because they
    include CUDA software overheads, which belong to the alpha of a cost
    model, not to the link.
``SOCKET_LATENCY`` = 100 ns
    Assumed. Intel publishes no per-hop QPI/UPI latency; 100 ns is the order
    of the extra cost of a remote-socket access.

References
----------
.. [1] IEEE Std 802.3-2018, IEEE Standard for Ethernet.
.. [2] InfiniBand Trade Association, InfiniBand Architecture Specification,
       Vol. 2 (physical layer), and the NVIDIA ConnectX-5 / ConnectX-6 adapter
       card user manuals (docs.nvidia.com/networking).
.. [3] PCI-SIG, PCI Express Base Specification, Revisions 3.0, 4.0 and 5.0.
.. [4] NVIDIA, "NVIDIA Tesla V100 GPU Architecture", whitepaper, 2017.
.. [5] NVIDIA, "NVIDIA A100 Tensor Core GPU Architecture", whitepaper, 2020.
.. [6] NVIDIA, "NVIDIA H100 Tensor Core GPU Architecture", whitepaper, 2022.
.. [7] Intel ARK, Xeon E5-2698 v4 (2 QPI links, 9.6 GT/s) and Xeon Scalable
       processors (UPI 10.4 GT/s).
.. [8] PLX Technology, "PEX 8747, PCI Express Gen 3 Switch, 48 Lanes, 5 Ports",
       product brief v1.0, 2010.
.. [9] NVIDIA NCCL, src/graph/topo.h, path types PATH_NVL, PATH_NVB, PATH_PIX...
.. [10] A. Li et al., "Evaluating Modern GPU Interconnect: PCIe, NVLink,
       NV-SLI, NVSwitch and GPUDirect", IEEE TPDS 31(1), 2020 (arXiv:1903.04611).
"""

from types import MappingProxyType

from netsim.errors import TopologyError

__all__ = [
    "ETHERNET",
    "INFINIBAND",
    "PCIE_X16",
    "PCIE_RATE",
    "NVLINK",
    "NVLINK_LINKS_PER_GPU",
    "CPU_INTERCONNECT",
    "ETHERNET_LATENCY",
    "INFINIBAND_LATENCY",
    "PCIE_LATENCY",
    "NVLINK_LATENCY",
    "SOCKET_LATENCY",
    "link_speed",
]

_GBIT = 1e9 / 8  # bytes/s in one Gb/s

# IEEE 802.3 MAC data rates [1].
ETHERNET = MappingProxyType({
    "1GbE": 1 * _GBIT,
    "10GbE": 10 * _GBIT,
    "25GbE": 25 * _GBIT,
    "40GbE": 40 * _GBIT,
    "50GbE": 50 * _GBIT,
    "100GbE": 100 * _GBIT,
    "200GbE": 200 * _GBIT,
    "400GbE": 400 * _GBIT,
})

# IBTA 4x data rates [2].
INFINIBAND = MappingProxyType({
    "EDR": 100 * _GBIT,
    "HDR": 200 * _GBIT,
    "NDR": 400 * _GBIT,
})

# PCI-SIG lane rates in transfers/s; gen3 onwards use 128b/130b coding [3].
PCIE_RATE = MappingProxyType({"gen3": 8e9, "gen4": 16e9, "gen5": 32e9})
PCIE_X16 = MappingProxyType({gen: rate * 16 * (128 / 130) / 8
                             for gen, rate in PCIE_RATE.items()})

# One link, one direction [4, 5, 6].
NVLINK = MappingProxyType({
    "NVLink2": 25e9,
    "NVLink3": 25e9,
    "NVLink4": 25e9,
})
NVLINK_LINKS_PER_GPU = MappingProxyType({"V100": 6, "A100": 12, "H100": 18})

# One socket link, one direction: GT/s x 2 data bytes per transfer [7].
CPU_INTERCONNECT = MappingProxyType({
    "QPI": 9.6e9 * 2,
    "UPI": 10.4e9 * 2,
})

ETHERNET_LATENCY = 1e-6  # typical, see module docstring
INFINIBAND_LATENCY = 0.6e-6  # ConnectX-6 user manual [2]
PCIE_LATENCY = 100e-9  # PEX 8747 product brief [8]
NVLINK_LATENCY = 100e-9  # assumed, below two PCIe links; see module docstring
SOCKET_LATENCY = 100e-9  # assumed, see module docstring

# The tables are read-only mappings: a builder cannot change another one's constants.
_TABLES = (ETHERNET, INFINIBAND, PCIE_X16, NVLINK, CPU_INTERCONNECT)


def link_speed(name):
    """Bandwidth of a named link, in bytes/s per direction.

    Looks ``name`` up in ``ETHERNET``, ``INFINIBAND``, ``PCIE_X16``, ``NVLINK``
    (one link) and ``CPU_INTERCONNECT``, ignoring case.

    Parameters
    ----------
    name : str
        A key of one of the tables, such as ``"10GbE"``, ``"HDR"``, ``"gen4"``,
        ``"NVLink3"`` or ``"UPI"``.

    Returns
    -------
    float
        Bytes per second in each direction.

    Raises
    ------
    TopologyError
        If the name is in no table; the message lists the known names.

    Examples
    --------
    >>> link_speed("10GbE")
    1250000000.0
    >>> link_speed("hdr")
    25000000000.0
    >>> round(link_speed("gen3") / 1e9, 2)
    15.75

    References
    ----------
    See the module docstring for the source of each table.
    """
    if isinstance(name, str):
        folded = name.casefold()
        for table in _TABLES:
            for key, value in table.items():
                if key.casefold() == folded:
                    return value
    known = ", ".join(key for table in _TABLES for key in table)
    raise TopologyError(f"link_speed: unknown link name {name!r}; known: {known}")
