"""Link technologies as read-only data: bandwidth, latency and framing efficiency.

The one home of every link constant in netsim (:mod:`topologies.specs` is an
alias kept so that old imports work). Two views of the same numbers:

* the rate tables (``ETHERNET``, ``INFINIBAND``, ``PCIE_X16``, ``NVLINK``,
  ``CPU_INTERCONNECT``) and the per-hop latencies, looked up by
  :func:`link_speed`;
* one :class:`Technology` record per technology (:data:`TECHNOLOGIES`): the
  per-direction data rate in bytes/s, a per-hop latency in seconds, the framing
  family that sets its payload efficiency, and the public source of each
  number, looked up by :func:`technology`. Every record's rate and latency is
  taken from the tables, never restated.

A builder's edge carries ``technology``, a key of :data:`TECHNOLOGIES` (or of
``CPU_INTERCONNECT`` for a socket-to-socket link), so that a model reading the
graph can find the record.

Every bandwidth is in bytes per second **per direction** (a full-duplex link
carries this much each way at once) and is the signalling rate after line
coding, before protocol overheads (packet headers, flow control); those are
the payload efficiency below. Every latency is in seconds.

Bandwidth tables
----------------
``ETHERNET``
    IEEE 802.3 MAC data rates: 1GbE (802.3z/ab), 10GbE (802.3ae), 25GbE
    (802.3by), 40GbE and 100GbE (802.3ba), 50GbE (802.3cd), 200GbE and 400GbE
    (802.3bs). ``"10GbE"`` is 10e9 bit/s = 1.25e9 bytes/s.
``INFINIBAND``
    4x port data rates of the InfiniBand Architecture Specification (IBTA):
    EDR 100 Gb/s (4 lanes of 25.78125 Gb/s, 64b/66b), HDR 200 Gb/s, NDR
    400 Gb/s, as also stated in the NVIDIA ConnectX-5/6/7 adapter manuals; XDR
    800 Gb/s (ConnectX-8, below).
``PCIE_X16``
    PCI Express Base Specification (PCI-SIG) x16 links after line coding:
    rate (GT/s per lane) x 16 lanes x coding / 8 bits. gen3 (8 GT/s)
    ~15.75 GB/s, gen4 (16 GT/s) ~31.5 GB/s, gen5 (32 GT/s) ~63.0 GB/s, with
    128b/130b coding; gen6 (64 GT/s, PAM4) moves 256-byte FLITs of which 242
    bytes carry transaction and data-link layer packets (8 bytes CRC, 6 bytes
    FEC), ~121 GB/s (PCI Express Base Specification 6.0, FLIT mode). The
    ConnectX-8 SuperNIC of the GB300 NVL72 is a gen6 device.
``NVLINK``
    One NVLink, per direction: 20 GB/s for NVLink1 (NVIDIA Tesla P100
    whitepaper, 2016: four links, 160 GB/s total both ways), 25 GB/s for NVLink2 (NVIDIA Tesla V100 GPU
    Architecture whitepaper, 2017: six links per GPU, 300 GB/s total both
    ways), NVLink3 (NVIDIA A100 Tensor Core GPU Architecture whitepaper, 2020:
    twelve links, 600 GB/s total) and NVLink4 (NVIDIA H100 Tensor Core GPU
    Architecture whitepaper, 2022: eighteen links, 900 GB/s total), 50 GB/s for
    NVLink5 (NVIDIA Blackwell datasheet: "5th Generation NVLink: 1.8TB/s" per
    GPU over eighteen links, as ``nvidia-smi topo -m`` shows NV18 between every
    two HGX B200 GPUs; the DGX B200 user guide: "2 x 5th generation NVLink
    switches that provide 14.4 TB/s aggregate bandwidth", 8 x 1.8 TB/s).
    ``NVLINK_LINKS_PER_GPU`` holds those link counts; the H200 keeps the
    H100's eighteen NVLink4 links (NVIDIA H200 Tensor Core GPU datasheet,
    2024: "NVLink: 900GB/s"); the H800 has its NVLink cut to 400 GB/s both ways,
    which is eight NVLink4 links (the count is derived: 400 / 50 GB/s per link
    both ways); B200, GB200 and GB300 GPUs have eighteen NVLink5 links. The NCCL model in the core, which may not import
    this module, repeats these figures by compute capability
    (``netsim.comm.nccl.hardware.NVLINK_RATE``: to count the links of an edge
    that gives no ``links``); tests/test_datasheet_copies_agree.py holds the two
    equal. NCCL's own per-link figures (``SM*_NVLINK_BW``, e.g. 20.6 GB/s for
    sm90) are NCCL's assumption, not a datasheet's:
    ``netsim.comm.nccl.tuning.NVLINK_BW``.
``CPU_INTERCONNECT``
    One socket-to-socket link, per direction: Intel QuickPath Interconnect at
    9.6 GT/s (Xeon E5-2600 v4 family, Intel ARK) and Intel Ultra Path
    Interconnect at 10.4 GT/s (Xeon Scalable, Intel ARK). Both carry 16 data
    bits (2 bytes) per transfer each way, so 19.2 GB/s and 20.8 GB/s per
    direction (Intel quotes the both-ways sums, 38.4 and 41.6 GB/s). AMD
    EPYC's socket link (xGMI, Infinity Fabric) runs at up to 18 GT/s over 16
    lanes, two bytes per transfer, so 36 GB/s per direction per link; two
    second-generation EPYC sockets are joined by three such links (AMD ROCm
    documentation, "AMD Instinct MI100 microarchitecture": "up to 18 GT/sec",
    "three AMD Infinity fabric links are available to connect the
    processors"; the MI250 page gives the two bytes per transfer of a
    16-wide link).
``EFA_PORT``
    One AWS Elastic Fabric Adapter interface, 100 Gb/s: p4d.24xlarge has
    4 x 100 Gbps and p5.48xlarge 32 x 100 Gbps (AWS EC2 user guide,
    "Supported instance types" / "Maximize network bandwidth on accelerated
    computing instances"). ``EFA_PORT_V3``, 200 Gb/s: p5en.48xlarge has
    3200 Gbps of EFAv3 over 16 interfaces (the same AWS tables).
``INFINIBAND["XDR"]``
    800 Gb/s, the ConnectX-8 SuperNIC's InfiniBand XDR port (NVIDIA GB300
    NVL72 specifications: one ConnectX-8 800 Gb/s per GPU).
``INFINITY_FABRIC``
    One AMD Infinity Fabric (xGMI) link between two MI300X GPUs, per direction:
    AMD's "Peak Infinity Fabric Link Bandwidth" of 128 GB/s, a both-ways
    figure, halved: 64 GB/s. An eight-GPU MI300X platform joins every pair of
    GPUs by one such link, seven per GPU ("AMD Instinct MI300X Platform":
    896 GB/s of peer bandwidth per GPU = 7 x 128 GB/s; both as copied in
    stas00/ml-engineering ``network/README.md``, commit 744d01e, "Infinity
    Fabric / xGMI" table: 64 GB/s per link and direction, 7 links).

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

Payload efficiency
------------------
The share of the data rate left for the application once each packet's
headers, trailers and inter-packet gaps are paid, at a given MTU:

``ethernet`` (TCP over IPv4 over Ethernet, IEEE 802.3 / RFC 791 / RFC 9293 / RFC 7323)
    payload = MTU - IPv4 header (20) - TCP header (20) - TCP timestamps
    option padded to 12 bytes; on the wire each frame also costs preamble (7),
    start-frame delimiter (1), destination and source MAC (6 + 6), EtherType
    (2), frame check sequence (4) and the minimum inter-frame gap (96 bit
    times = 12 bytes): 38 bytes beyond the MTU. MTU 1500 gives 1448/1538.
``roce`` (RoCEv2, IBTA Annex A17)
    an InfiniBand transport packet (BTH 12, ICRC 4) carried in UDP (8) over
    IPv4 (20) over the same Ethernet frame; payload = the IB MTU (path MTU,
    256..4096 bytes).
``infiniband`` (IBTA Architecture Specification Vol. 1, ch. 5-7)
    local route header LRH (8), base transport header BTH (12), invariant
    CRC (4) and variant CRC (2) around each payload of up to the IB MTU; no
    global route header inside a subnet.
``efa`` (AWS Elastic Fabric Adapter)
    AWS does not publish the layout of its SRD transport header, so only the
    Ethernet layer is counted (preamble, SFD, MAC header, FCS, gap) around
    MTU-byte frames; the result is an upper bound.
``None`` (NVLink, NVSwitch, PCIe, Infinity Fabric)
    the table's rate is already the data rate after line coding; packet
    overheads of these links are not modelled and the efficiency is 1.0.

References
----------
.. [1] IEEE Std 802.3-2018, IEEE Standard for Ethernet.
.. [2] InfiniBand Trade Association, InfiniBand Architecture Specification,
       Vol. 2 (physical layer), and the NVIDIA ConnectX-5 / ConnectX-6 adapter
       card user manuals (docs.nvidia.com/networking).
.. [3] PCI-SIG, PCI Express Base Specification, Revisions 3.0, 4.0, 5.0 and 6.0.
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
.. [11] AMD ROCm documentation, "AMD Instinct MI100 microarchitecture" and
       "AMD Instinct MI250 microarchitecture" (rocm.docs.amd.com).
.. [12] AWS, Amazon EC2 User Guide, "Elastic Fabric Adapter" and the
       p4d / p5 instance specifications (aws.amazon.com/ec2/instance-types/p4,
       /p5).
.. [13] NVIDIA, "NVIDIA Tesla P100" whitepaper, 2016 (NVLink1).
.. [14] NVIDIA, "NVIDIA Blackwell" datasheet and DGX B200 User Guide,
       "Introduction to NVIDIA DGX B200 Systems" (docs.nvidia.com/dgx/
       dgxb200-user-guide): NVLink5, 18 links, 1.8 TB/s per GPU.
.. [15] AMD, "AMD Instinct MI300X" and "AMD Instinct MI300X Platform"
       specifications (amd.com): 8 Infinity Fabric links, 128 GB/s peak each.

Examples
--------
>>> from topologies.links import technology, payload_efficiency, link_speed
>>> technology("HDR").bandwidth == link_speed("HDR")
True
>>> round(payload_efficiency("10GbE", 1500), 4)
0.9415
"""

import math
import types
from types import MappingProxyType
from typing import NamedTuple

from netsim.errors import TopologyError
from netsim.engine.tcp import DEFAULT_MTU as ETHERNET_MTU
from netsim.engine.tcp import TCP_IPV4_HEADERS

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
    "EFA_PORT",
    "EFA_PORT_V3",
    "INFINITY_FABRIC",
    "Technology",
    "TECHNOLOGIES",
    "ETHERNET_FRAME_OVERHEAD",
    "TCP_IPV4_HEADERS",
    "ROCE_HEADERS",
    "IB_PACKET_OVERHEAD",
    "DEFAULT_MTU",
    "technology",
    "technologies",
    "payload_efficiency",
    "effective_bandwidth",
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
    "XDR": 800 * _GBIT,
})

# PCI-SIG lane rates in transfers/s; gen3 to gen5 use 128b/130b coding, gen6 242 data bytes
# in each 256-byte FLIT [3].
PCIE_RATE = MappingProxyType({"gen3": 8e9, "gen4": 16e9, "gen5": 32e9, "gen6": 64e9})
_PCIE_CODING = MappingProxyType({"gen3": 128 / 130, "gen4": 128 / 130, "gen5": 128 / 130,
                                 "gen6": 242 / 256})
PCIE_X16 = MappingProxyType({gen: rate * 16 * _PCIE_CODING[gen] / 8
                             for gen, rate in PCIE_RATE.items()})

# One link, one direction [4, 5, 6].
NVLINK = MappingProxyType({
    "NVLink1": 20e9,
    "NVLink2": 25e9,
    "NVLink3": 25e9,
    "NVLink4": 25e9,
    "NVLink5": 50e9,
})
NVLINK_LINKS_PER_GPU = MappingProxyType({"P100": 4, "V100": 6, "A100": 12, "H100": 18,
                                         "H200": 18, "H800": 8, "B200": 18, "GB200": 18,
                                         "GB300": 18})

# One socket link, one direction: GT/s x 2 data bytes per transfer [7, 11].
CPU_INTERCONNECT = MappingProxyType({
    "QPI": 9.6e9 * 2,
    "UPI": 10.4e9 * 2,
    "xGMI": 18e9 * 2,
})

EFA_PORT = 100 * _GBIT  # one EFA interface, 100 Gbps [12]
EFA_PORT_V3 = 200 * _GBIT  # one EFAv3 interface of p5en.48xlarge, 200 Gbps [12]

# One MI300X Infinity Fabric link, one direction: 128 GB/s peak both ways, halved [15].
INFINITY_FABRIC = 128e9 / 2

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


class Technology(NamedTuple):
    """One link technology: a flat, read-only record (SI units)."""

    name: str
    family: str  # nvlink, nvswitch, infinity_fabric, pcie, infiniband, roce, efa, ethernet
    bandwidth: float  # bytes/s per direction, one link (NVSwitch: one GPU's port)
    latency: float  # seconds per hop
    framing: str | None  # "ethernet", "roce", "infiniband", "efa" or None
    in_network_reduction: bool  # NVLS on NVSwitch gen3; SHARP needs the switch, not the link
    source: str


# Bytes each Ethernet frame costs beyond its MTU-sized payload (IEEE 802.3-2018,
# clause 3.1.1 and 4.4.2): preamble 7 + SFD 1 + DA 6 + SA 6 + EtherType 2 + FCS 4
# + inter-packet gap 96 bit times (12 bytes).
ETHERNET_FRAME_OVERHEAD = 7 + 1 + 6 + 6 + 2 + 4 + 12
# TCP_IPV4_HEADERS (52 bytes: IPv4 20 + TCP 20 + timestamps 12) lives with the TCP
# transport that also uses it (netsim.engine.tcp, imported above).
# RoCEv2 inside the Ethernet payload (IBTA Annex A17): IPv4 20 + UDP 8 + BTH 12 + ICRC 4.
ROCE_HEADERS = 20 + 8 + 12 + 4
# InfiniBand packet around its payload (IBTA Vol. 1): LRH 8 + BTH 12 + ICRC 4 + VCRC 2.
IB_PACKET_OVERHEAD = 8 + 12 + 4 + 2

# MTU assumed when the caller gives none: 1500 for Ethernet (IEEE 802.3 maximum
# untagged payload; the TCP model's default, netsim.engine.tcp.DEFAULT_MTU, its one home),
# 4096 for InfiniBand and RoCE (largest IB path MTU), 9001 for EFA (the EC2 jumbo-frame MTU,
# AWS EC2 user guide "Network MTU").
DEFAULT_MTU = types.MappingProxyType(
    {"ethernet": ETHERNET_MTU, "roce": 4096, "infiniband": 4096, "efa": 9001}
)
# Smallest MTU each framing allows: Ethernet needs room for the TCP/IP headers,
# InfiniBand and RoCE path MTUs are 256, 512, 1024, 2048 or 4096.
_IB_MTUS = (256, 512, 1024, 2048, 4096)

_PCIE_SRC = ("PCI-SIG PCI Express Base Spec 3.0-6.0: GT/s x 16 lanes x 128/130 (gen6: x 242/256 "
             "of each FLIT) (PCIE_X16)")
_NVL_SRC = "{wp}: {n} links per GPU, 25 GB/s per link per direction (NVLINK)"


def _nvswitch(gen, model, nvlink, whitepaper, nvls):
    links = NVLINK_LINKS_PER_GPU[model]
    return Technology(
        f"NVSwitch{gen}", "nvswitch", links * NVLINK[nvlink], NVLINK_LATENCY,
        None, nvls,
        f"{whitepaper}: one GPU's port into the switch = {links} x {nvlink} "
        f"(NVLINK_LINKS_PER_GPU); latency assumed equal to one NVLink hop"
        + ("; NVLink SHARP (NVLS) in-switch reduction" if nvls else ""),
    )


def _build():
    rows = [
        Technology("NVLink1", "nvlink", NVLINK["NVLink1"], NVLINK_LATENCY, None, False,
                   "NVIDIA Tesla P100 whitepaper (2016): 4 NVLinks, 160 GB/s bidirectional "
                   "in total, so 20 GB/s per link per direction; latency NVLINK_LATENCY"),
        Technology("NVLink2", "nvlink", NVLINK["NVLink2"], NVLINK_LATENCY, None,
                   False, _NVL_SRC.format(wp="NVIDIA V100 whitepaper (2017)", n=6)),
        Technology("NVLink3", "nvlink", NVLINK["NVLink3"], NVLINK_LATENCY, None,
                   False, _NVL_SRC.format(wp="NVIDIA A100 whitepaper (2020)", n=12)),
        Technology("NVLink4", "nvlink", NVLINK["NVLink4"], NVLINK_LATENCY, None,
                   False, _NVL_SRC.format(wp="NVIDIA H100 whitepaper (2022)", n=18)),
        Technology("NVLink5", "nvlink", NVLINK["NVLink5"], NVLINK_LATENCY, None, False,
                   "NVIDIA Blackwell datasheet: 18 links, 1.8 TB/s per GPU both ways, so "
                   "50 GB/s per link per direction (NVLINK); latency NVLINK_LATENCY"),
        _nvswitch(1, "V100", "NVLink2", "NVIDIA DGX-2 / V100 whitepaper (2018)", False),
        _nvswitch(2, "A100", "NVLink3", "NVIDIA A100 whitepaper (2020)", False),
        _nvswitch(3, "H100", "NVLink4", "NVIDIA H100 whitepaper (2022)", True),
        _nvswitch(4, "B200", "NVLink5", "NVIDIA Blackwell datasheet and DGX B200 user guide "
                  "(fifth-generation NVLink switch)", True),
        Technology("InfinityFabric-MI300X", "infinity_fabric", INFINITY_FABRIC, NVLINK_LATENCY,
                   None, False, "AMD Instinct MI300X: 128 GB/s peak per Infinity Fabric link, "
                   "both ways, halved (INFINITY_FABRIC); latency assumed one NVLink hop's"),
    ]
    for gen, rate in PCIE_X16.items():
        rows.append(Technology(f"PCIe-{gen}-x16", "pcie", rate, PCIE_LATENCY, None,
                               False, _PCIE_SRC + "; latency PCIE_LATENCY"))
    for name, rate in INFINIBAND.items():
        rows.append(Technology(name, "infiniband", rate, INFINIBAND_LATENCY,
                               "infiniband", False,
                               "IBTA 4x data rate (INFINIBAND); latency "
                               "INFINIBAND_LATENCY (ConnectX-6 manual)"))
    for gbe in ("100GbE", "200GbE", "400GbE"):
        rows.append(Technology(f"RoCE-{gbe[:-3]}G", "roce", ETHERNET[gbe],
                               ETHERNET_LATENCY, "roce", False,
                               f"IEEE 802.3 {gbe} MAC rate (ETHERNET); RoCEv2 framing "
                               "IBTA Annex A17; latency ETHERNET_LATENCY (typical)"))
    rows.append(Technology("EFA", "efa", EFA_PORT, ETHERNET_LATENCY, "efa", False,
                           "AWS EC2 p4d.24xlarge: 400 Gbps EFA over 4 interfaces, 100 Gbps "
                           "each; latency assumed ETHERNET_LATENCY (AWS publishes none)"))
    rows.append(Technology("EFAv3", "efa", EFA_PORT_V3, ETHERNET_LATENCY, "efa", False,
                           "AWS EC2 p5en.48xlarge: 3200 Gbps EFAv3 over 16 interfaces, 200 Gbps "
                           "each; latency assumed ETHERNET_LATENCY (AWS publishes none)"))
    for gbe, rate in ETHERNET.items():
        rows.append(Technology(gbe, "ethernet", rate, ETHERNET_LATENCY, "ethernet",
                               False, "IEEE 802.3 MAC data rate (ETHERNET); latency "
                               "ETHERNET_LATENCY (typical)"))
    return types.MappingProxyType({row.name: row for row in rows})


TECHNOLOGIES = _build()
_FOLDED = types.MappingProxyType({name.casefold(): name for name in TECHNOLOGIES})


def technology(name):
    """The record of one link technology, looked up ignoring case.

    Parameters
    ----------
    name : str
        A key of :data:`TECHNOLOGIES`, e.g. ``"NVLink3"``, ``"NVSwitch3"``,
        ``"PCIe-gen4-x16"``, ``"NDR"``, ``"RoCE-200G"``, ``"EFA"``, ``"10GbE"``.

    Returns
    -------
    Technology

    Raises
    ------
    TopologyError
        If the name is unknown; the message lists the known names.

    Examples
    --------
    >>> t = technology("nvswitch3")
    >>> t.bandwidth, t.in_network_reduction
    (450000000000.0, True)
    >>> technology("PCIe-gen3-x16").family
    'pcie'
    """
    key = name.casefold() if isinstance(name, str) else None
    if key not in _FOLDED:
        raise TopologyError(f"unknown link technology {name!r}; known: {', '.join(TECHNOLOGIES)}")
    return TECHNOLOGIES[_FOLDED[key]]


def technologies(family=None):
    """Names of the technologies, in table order, optionally of one family.

    Parameters
    ----------
    family : str, optional
        ``"nvlink"``, ``"nvswitch"``, ``"infinity_fabric"``, ``"pcie"``,
        ``"infiniband"``, ``"roce"``, ``"efa"`` or ``"ethernet"``; None for all.

    Returns
    -------
    list of str

    Examples
    --------
    >>> technologies("infiniband")
    ['EDR', 'HDR', 'NDR', 'XDR']
    """
    names = [n for n, t in TECHNOLOGIES.items() if family is None or t.family == family]
    if not names:
        raise TopologyError(f"unknown link family {family!r}")
    return names


def payload_efficiency(name, mtu=None):
    """Share of a link's data rate that carries payload, after per-packet framing.

    See the module docstring for each framing's header sizes.

    Parameters
    ----------
    name : str
        A technology name (see :func:`technology`).
    mtu : int, optional
        Ethernet/EFA: the IP MTU in bytes (default 1500, EFA 9001);
        InfiniBand/RoCE: the IB path MTU, one of 256, 512, 1024, 2048, 4096
        (default 4096). Ignored (must be None) for NVLink, NVSwitch and PCIe.

    Returns
    -------
    float
        In (0, 1]; 1.0 for technologies whose framing is not modelled.

    Raises
    ------
    TopologyError
        For an unknown technology or an MTU the framing does not allow.

    Examples
    --------
    >>> round(payload_efficiency("100GbE", 9000), 4)   # 8948 / 9038
    0.99
    >>> round(payload_efficiency("HDR"), 5)            # 4096 / (4096 + 26)
    0.99369
    >>> payload_efficiency("NVLink4")
    1.0
    """
    tech = technology(name)
    if tech.framing is None:
        if mtu is not None:
            raise TopologyError(f"{tech.name} has no MTU to set (got mtu={mtu!r})")
        return 1.0
    mtu = DEFAULT_MTU[tech.framing] if mtu is None else mtu
    if tech.framing in ("infiniband", "roce"):
        if mtu not in _IB_MTUS or isinstance(mtu, bool):
            raise TopologyError(f"{tech.name}: IB MTU must be one of {_IB_MTUS}, got {mtu!r}")
        if tech.framing == "infiniband":
            return mtu / (mtu + IB_PACKET_OVERHEAD)
        return mtu / (mtu + ROCE_HEADERS + ETHERNET_FRAME_OVERHEAD)
    low = TCP_IPV4_HEADERS + 1 if tech.framing == "ethernet" else 1
    if (not isinstance(mtu, int) or isinstance(mtu, bool) or mtu < low
            or not math.isfinite(mtu)):
        raise TopologyError(f"{tech.name}: MTU must be an integer >= {low}, got {mtu!r}")
    if tech.framing == "ethernet":
        return (mtu - TCP_IPV4_HEADERS) / (mtu + ETHERNET_FRAME_OVERHEAD)
    return mtu / (mtu + ETHERNET_FRAME_OVERHEAD)  # efa: Ethernet layer only


def effective_bandwidth(name, mtu=None):
    """Payload bytes/s per direction: the data rate times :func:`payload_efficiency`.

    Parameters
    ----------
    name : str
        A technology name.
    mtu : int, optional
        As for :func:`payload_efficiency`.

    Returns
    -------
    float
        Bytes per second.

    Examples
    --------
    >>> round(effective_bandwidth("10GbE", 1500) / 1e9, 4)   # 1.25e9 * 1448 / 1538
    1.1769
    """
    return technology(name).bandwidth * payload_efficiency(name, mtu)
