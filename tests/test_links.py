"""topologies.links: the technology table and framing efficiencies.

Expected efficiencies are recomputed here from the header sizes as the
standards state them, field by field, not from the module's constants.
"""

import pytest

from netsim.errors import TopologyError
from topologies import links, specs

# IEEE 802.3-2018 clause 3.1.1 / 4.4.2, field by field.
PREAMBLE, SFD, DA, SA, ETHERTYPE, FCS, IFG_BITS = 7, 1, 6, 6, 2, 4, 96
IPV4, TCP, TCP_TIMESTAMPS_PADDED = 20, 20, 10 + 2      # RFC 791, RFC 9293, RFC 7323
UDP, BTH, ICRC, LRH, VCRC = 8, 12, 4, 8, 2             # RFC 768, IBTA Vol. 1


def wire_bytes(mtu):
    return mtu + PREAMBLE + SFD + DA + SA + ETHERTYPE + FCS + IFG_BITS // 8


@pytest.mark.parametrize("mtu", [1500, 9000, 576])
def test_ethernet_efficiency_is_tcp_payload_over_wire_bytes(mtu):
    payload = mtu - IPV4 - TCP - TCP_TIMESTAMPS_PADDED
    assert links.payload_efficiency("10GbE", mtu) == pytest.approx(payload / wire_bytes(mtu))


def test_ethernet_1500_and_9000_match_the_issue_figures():
    # TCP carries 1448 of every 1538 wire bytes at MTU 1500, 8948 of 9038 at MTU 9000.
    assert links.payload_efficiency("1GbE", 1500) == pytest.approx(1448 / 1538)
    assert links.payload_efficiency("400GbE", 9000) == pytest.approx(8948 / 9038)
    assert links.effective_bandwidth("10GbE", 1500) == pytest.approx(1.25e9 * 1448 / 1538)


@pytest.mark.parametrize("name", ["EDR", "HDR", "NDR"])
@pytest.mark.parametrize("mtu", [256, 2048, 4096])
def test_infiniband_efficiency_counts_lrh_bth_icrc_vcrc(name, mtu):
    assert links.payload_efficiency(name, mtu) == pytest.approx(mtu / (mtu + LRH + BTH + ICRC + VCRC))


def test_infiniband_default_mtu_is_4096():
    assert links.payload_efficiency("NDR") == pytest.approx(4096 / 4122)


def test_roce_efficiency_wraps_ib_transport_in_udp_ip_ethernet():
    mtu = 4096
    expected = mtu / wire_bytes(IPV4 + UDP + BTH + mtu + ICRC)
    assert links.payload_efficiency("RoCE-200G", mtu) == pytest.approx(expected)
    assert links.payload_efficiency("roce-100g", 1024) < links.payload_efficiency("RoCE-100G")


def test_efa_counts_the_ethernet_layer_at_mtu_9001():
    assert links.payload_efficiency("EFA") == pytest.approx(9001 / wire_bytes(9001))


def test_efficiency_rises_with_mtu_and_stays_below_one():
    for name in ("10GbE", "RoCE-400G", "HDR", "EFA"):
        small = links.payload_efficiency(name, 1024 if name != "10GbE" else 1500)
        large = links.payload_efficiency(name, 4096 if name != "10GbE" else 9000)
        assert 0 < small < large < 1


def test_gpu_links_have_no_framing_model():
    for name in links.technologies("nvlink") + links.technologies("nvswitch") + links.technologies("pcie"):
        assert links.payload_efficiency(name) == 1.0
    with pytest.raises(TopologyError, match="no MTU"):
        links.payload_efficiency("NVLink3", 1500)


def test_rates_are_reused_from_specs():
    assert links.technology("NVLink3").bandwidth == specs.NVLINK["NVLink3"]
    assert links.technology("PCIe-gen4-x16").bandwidth == specs.PCIE_X16["gen4"]
    assert links.technology("HDR").bandwidth == specs.INFINIBAND["HDR"]
    assert links.technology("RoCE-400G").bandwidth == specs.ETHERNET["400GbE"]
    assert links.technology("25GbE").latency == specs.ETHERNET_LATENCY
    assert links.technology("EDR").latency == specs.INFINIBAND_LATENCY


def test_nvswitch_port_is_links_per_gpu_times_one_link():
    # Whitepapers: V100 6, A100 12, H100 18 links of 25 GB/s per direction.
    assert links.technology("NVSwitch1").bandwidth == 6 * 25e9
    assert links.technology("NVSwitch2").bandwidth == 12 * 25e9
    assert links.technology("NVSwitch3").bandwidth == 18 * 25e9
    # Blackwell datasheet: 18 NVLink5 links, 1.8 TB/s both ways, so 900 GB/s per direction.
    assert links.technology("NVSwitch4").bandwidth == 1.8e12 / 2
    assert [links.technology(f"NVSwitch{g}").in_network_reduction for g in (1, 2, 3, 4)] == [
        False, False, True, True]


def test_new_network_and_fabric_rates_are_the_vendors():
    assert links.technology("XDR").bandwidth == 800e9 / 8          # ConnectX-8, 800 Gb/s
    assert links.technology("EFAv3").bandwidth * 16 == 3200e9 / 8  # p5en: 16 x 200 Gb/s
    # AMD: 128 GB/s peak per Infinity Fabric link, both ways; 7 links = 896 GB/s.
    assert 7 * 2 * links.technology("InfinityFabric-MI300X").bandwidth == 896e9


def test_table_is_read_only_and_complete():
    with pytest.raises(TypeError):
        links.TECHNOLOGIES["x"] = None
    families = {t.family for t in links.TECHNOLOGIES.values()}
    assert families == {"nvlink", "nvswitch", "infinity_fabric", "pcie", "infiniband", "roce",
                        "efa", "ethernet"}
    assert links.technologies("nvlink") == ["NVLink1", "NVLink2", "NVLink3", "NVLink4", "NVLink5"]
    assert links.technologies("ethernet")[0] == "1GbE" and links.technologies("ethernet")[-1] == "400GbE"
    for t in links.TECHNOLOGIES.values():
        assert t.bandwidth > 0 and t.latency > 0 and t.source


@pytest.mark.parametrize("bad", ["NVLink9", "", None, 3])
def test_unknown_technology_is_named(bad):
    with pytest.raises(TopologyError, match="unknown link technology"):
        links.technology(bad)
    with pytest.raises(TopologyError):
        links.technologies("warp")


@pytest.mark.parametrize("name, mtu", [("HDR", 3000), ("RoCE-100G", 9000), ("10GbE", 40),
                                       ("10GbE", 1500.0), ("EFA", 0), ("NDR", True)])
def test_bad_mtu_is_named(name, mtu):
    with pytest.raises(TopologyError, match="MTU"):
        links.payload_efficiency(name, mtu)
