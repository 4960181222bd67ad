"""Link technologies as read-only data: bandwidth, latency and framing efficiency.

One record per technology (:data:`TECHNOLOGIES`, a read-only mapping): the
per-direction data rate in bytes/s, a per-hop latency in seconds, the framing
family that sets its payload efficiency, and the public source of each number.
Rates and latencies that :mod:`topologies.specs` already holds are taken from
there, not restated; this module adds NVLink1, the NVSwitch generations, RoCE
and EFA, and the framing arithmetic.

Payload efficiency
------------------
The share of the data rate left for the application once each packet's
headers, trailers and inter-packet gaps are paid, at a given MTU:

``ethernet`` (TCP over IPv4 over Ethernet, IEEE 802.3 / RFC 791 / RFC 9293 /
RFC 7323)
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
``None`` (NVLink, NVSwitch, PCIe)
    the table's rate is already the data rate after line coding; packet
    overheads of these links are not modelled and the efficiency is 1.0.

Examples
--------
>>> from topologies.links import technology, payload_efficiency
>>> technology("HDR").bandwidth
25000000000.0
>>> round(payload_efficiency("10GbE", 1500), 4)
0.9415
"""

import math
import types
from typing import NamedTuple

from netsim.errors import TopologyError

from . import specs

__all__ = [
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


class Technology(NamedTuple):
    """One link technology: a flat, read-only record (SI units)."""

    name: str
    family: str  # nvlink, nvswitch, pcie, infiniband, roce, efa, ethernet
    bandwidth: float  # bytes/s per direction, one link (NVSwitch: one GPU's port)
    latency: float  # seconds per hop
    framing: str | None  # "ethernet", "roce", "infiniband", "efa" or None
    in_network_reduction: bool  # NVLS on NVSwitch gen3; SHARP needs the switch, not the link
    source: str


# Bytes each Ethernet frame costs beyond its MTU-sized payload (IEEE 802.3-2018,
# clause 3.1.1 and 4.4.2): preamble 7 + SFD 1 + DA 6 + SA 6 + EtherType 2 + FCS 4
# + inter-packet gap 96 bit times (12 bytes).
ETHERNET_FRAME_OVERHEAD = 7 + 1 + 6 + 6 + 2 + 4 + 12
# IPv4 header without options (RFC 791) + TCP header (RFC 9293) + the timestamps
# option (RFC 7323: 10 bytes, padded with two NOPs to 12), as Linux sends by default.
TCP_IPV4_HEADERS = 20 + 20 + 12
# RoCEv2 inside the Ethernet payload (IBTA Annex A17): IPv4 20 + UDP 8 + BTH 12 + ICRC 4.
ROCE_HEADERS = 20 + 8 + 12 + 4
# InfiniBand packet around its payload (IBTA Vol. 1): LRH 8 + BTH 12 + ICRC 4 + VCRC 2.
IB_PACKET_OVERHEAD = 8 + 12 + 4 + 2

# MTU assumed when the caller gives none: 1500 for Ethernet (IEEE 802.3 maximum
# untagged payload), 4096 for InfiniBand and RoCE (largest IB path MTU),
# 9001 for EFA (the EC2 jumbo-frame MTU, AWS EC2 user guide "Network MTU").
DEFAULT_MTU = types.MappingProxyType(
    {"ethernet": 1500, "roce": 4096, "infiniband": 4096, "efa": 9001}
)
# Smallest MTU each framing allows: Ethernet needs room for the TCP/IP headers,
# InfiniBand and RoCE path MTUs are 256, 512, 1024, 2048 or 4096.
_IB_MTUS = (256, 512, 1024, 2048, 4096)

_NVLINK1 = 20e9  # P100 whitepaper (2016): 4 NVLinks, 160 GB/s both ways in total
_EFA_PORT = 100e9 / 8  # one EFA interface: p4d.24xlarge has 4 x 100 Gbps (AWS EC2 docs)

_PCIE_SRC = "PCI-SIG PCI Express Base Spec 3.0/4.0/5.0: GT/s x 16 lanes x 128/130 (specs.PCIE_X16)"
_NVL_SRC = "{wp}: {n} links per GPU, 25 GB/s per link per direction (specs.NVLINK)"


def _nvswitch(gen, model, nvlink, whitepaper, nvls):
    links = specs.NVLINK_LINKS_PER_GPU[model]
    return Technology(
        f"NVSwitch{gen}", "nvswitch", links * specs.NVLINK[nvlink], specs.NVLINK_LATENCY,
        None, nvls,
        f"{whitepaper}: one GPU's port into the switch = {links} x {nvlink} "
        f"(specs.NVLINK_LINKS_PER_GPU); latency assumed equal to one NVLink hop"
        + ("; NVLink SHARP (NVLS) in-switch reduction" if nvls else ""),
    )


def _build():
    rows = [
        Technology("NVLink1", "nvlink", _NVLINK1, specs.NVLINK_LATENCY, None, False,
                   "NVIDIA Tesla P100 whitepaper (2016): 4 NVLinks, 160 GB/s bidirectional "
                   "in total, so 20 GB/s per link per direction; latency specs.NVLINK_LATENCY"),
        Technology("NVLink2", "nvlink", specs.NVLINK["NVLink2"], specs.NVLINK_LATENCY, None,
                   False, _NVL_SRC.format(wp="NVIDIA V100 whitepaper (2017)", n=6)),
        Technology("NVLink3", "nvlink", specs.NVLINK["NVLink3"], specs.NVLINK_LATENCY, None,
                   False, _NVL_SRC.format(wp="NVIDIA A100 whitepaper (2020)", n=12)),
        Technology("NVLink4", "nvlink", specs.NVLINK["NVLink4"], specs.NVLINK_LATENCY, None,
                   False, _NVL_SRC.format(wp="NVIDIA H100 whitepaper (2022)", n=18)),
        _nvswitch(1, "V100", "NVLink2", "NVIDIA DGX-2 / V100 whitepaper (2018)", False),
        _nvswitch(2, "A100", "NVLink3", "NVIDIA A100 whitepaper (2020)", False),
        _nvswitch(3, "H100", "NVLink4", "NVIDIA H100 whitepaper (2022)", True),
    ]
    for gen, rate in specs.PCIE_X16.items():
        rows.append(Technology(f"PCIe-{gen}-x16", "pcie", rate, specs.PCIE_LATENCY, None,
                               False, _PCIE_SRC + "; latency specs.PCIE_LATENCY"))
    for name, rate in specs.INFINIBAND.items():
        rows.append(Technology(name, "infiniband", rate, specs.INFINIBAND_LATENCY,
                               "infiniband", False,
                               "IBTA 4x data rate (specs.INFINIBAND); latency "
                               "specs.INFINIBAND_LATENCY (ConnectX-6 manual)"))
    for gbe in ("100GbE", "200GbE", "400GbE"):
        rows.append(Technology(f"RoCE-{gbe[:-3]}G", "roce", specs.ETHERNET[gbe],
                               specs.ETHERNET_LATENCY, "roce", False,
                               f"IEEE 802.3 {gbe} MAC rate (specs.ETHERNET); RoCEv2 framing "
                               "IBTA Annex A17; latency specs.ETHERNET_LATENCY (typical)"))
    rows.append(Technology("EFA", "efa", _EFA_PORT, specs.ETHERNET_LATENCY, "efa", False,
                           "AWS EC2 p4d.24xlarge: 400 Gbps EFA over 4 interfaces, 100 Gbps "
                           "each; latency assumed specs.ETHERNET_LATENCY (AWS publishes none)"))
    for gbe, rate in specs.ETHERNET.items():
        rows.append(Technology(gbe, "ethernet", rate, specs.ETHERNET_LATENCY, "ethernet",
                               False, "IEEE 802.3 MAC data rate (specs.ETHERNET); latency "
                               "specs.ETHERNET_LATENCY (typical)"))
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
        ``"nvlink"``, ``"nvswitch"``, ``"pcie"``, ``"infiniband"``, ``"roce"``,
        ``"efa"`` or ``"ethernet"``; None for all.

    Returns
    -------
    list of str

    Examples
    --------
    >>> technologies("infiniband")
    ['EDR', 'HDR', 'NDR']
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
