"""Invariants of the topology builders.

Expected numbers come from closed formulas and from the cited specifications
(IEEE 802.3, IBTA, PCI-SIG, NVIDIA whitepapers, Intel ARK), never from running
the builders.
"""

import itertools
import math

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import topologies
from netsim.errors import TopologyError
from topologies import (
    CPU_INTERCONNECT,
    ETHERNET,
    INFINIBAND,
    NVLINK,
    NVLINK_LINKS_PER_GPU,
    PCIE_X16,
    dgx1,
    dgx_a100,
    dgx_h100,
    fat_tree,
    leaf_spine,
    link_speed,
    pcie_tree,
    ring,
    star,
    torus,
    two_tier,
)
from topologies._validate import KINDS

GB = 1e9
GBIT = 1e9 / 8


# ---------------------------------------------------------------- helpers


def ranks(G):
    """The simulator's default placement: gpus in insertion order, else hosts."""
    gpus = [n for n, k in G.nodes(data="kind") if k == "gpu"]
    return gpus or [n for n, k in G.nodes(data="kind") if k == "host"]


def check_contract(G):
    """What every builder promises (see topologies/__init__.py)."""
    assert type(G) is nx.Graph
    assert isinstance(G.graph["name"], str) and G.graph["name"]
    for node, kind in G.nodes(data="kind"):
        assert isinstance(node, str)
        assert kind in KINDS, (node, kind)
    for u, v, d in G.edges(data=True):
        bw, lat = d["bandwidth"], d["latency"]
        assert isinstance(bw, float) and math.isfinite(bw) and bw > 0, (u, v)
        assert isinstance(lat, float) and math.isfinite(lat) and lat >= 0, (u, v)
    assert nx.number_of_selfloops(G) == 0
    # A path between every pair of compute nodes.
    assert nx.is_connected(G)
    # Compute nodes are added in rank order and named after their kind.
    r = ranks(G)
    kind = G.nodes[r[0]]["kind"]
    assert r == [f"{kind}{i}" for i in range(len(r))]


def degrees(G, prefix):
    return {G.degree(n) for n in G if n.startswith(prefix)}


# ---------------------------------------------------------------- specs


def test_ethernet_rates_are_ieee_data_rates():
    gbits = {f"{g}GbE": g for g in (1, 10, 25, 40, 50, 100, 200, 400)}
    assert set(ETHERNET) == set(gbits)
    for name, g in gbits.items():
        assert ETHERNET[name] == pytest.approx(g * GBIT)


def test_infiniband_4x_rates():
    assert INFINIBAND == pytest.approx({"EDR": 100 * GBIT, "HDR": 200 * GBIT, "NDR": 400 * GBIT,
                                        "XDR": 800 * GBIT})


def test_pcie_x16_rates_follow_128b130b():
    # GT/s per lane x 16 lanes x 128/130 / 8 bits, per direction (PCI-SIG).
    for gen, gts, approx_gbs in [("gen3", 8, 15.75), ("gen4", 16, 31.5), ("gen5", 32, 63.0)]:
        assert PCIE_X16[gen] == pytest.approx(gts * 1e9 * 16 * 128 / 130 / 8)
        assert PCIE_X16[gen] == pytest.approx(approx_gbs * GB, rel=1e-3)


def test_nvlink_per_gpu_totals_match_whitepapers():
    # Whitepapers quote totals over both directions: V100 300, A100 600, H100 900 GB/s.
    whitepapers = [("V100", "NVLink2", 300), ("A100", "NVLink3", 600), ("H100", "NVLink4", 900)]
    for model, gen, total_both_ways in whitepapers:
        assert NVLINK[gen] == pytest.approx(25 * GB)
        assert NVLINK_LINKS_PER_GPU[model] * NVLINK[gen] == pytest.approx(total_both_ways * GB / 2)


def test_socket_interconnect_two_bytes_per_transfer():
    assert CPU_INTERCONNECT["QPI"] == pytest.approx(9.6e9 * 2)
    assert CPU_INTERCONNECT["UPI"] == pytest.approx(10.4e9 * 2)


def test_latencies_are_small_non_negative_seconds():
    for name in ["ETHERNET", "INFINIBAND", "PCIE", "NVLINK", "SOCKET"]:
        value = getattr(topologies, f"{name}_LATENCY")
        assert 0 <= value < 1e-5, name


def test_link_speed_looks_up_every_table_ignoring_case():
    assert link_speed("10GbE") == pytest.approx(10 * GBIT)
    assert link_speed("100gbe") == pytest.approx(100 * GBIT)
    assert link_speed("HDR") == pytest.approx(200 * GBIT)
    assert link_speed("gen4") == pytest.approx(16e9 * 16 * 128 / 130 / 8)
    assert link_speed("NVLink3") == pytest.approx(25 * GB)
    assert link_speed("UPI") == pytest.approx(20.8 * GB)


@pytest.mark.parametrize("name", ["10Gbps", "gen7", "", None, "FDR"])
def test_link_speed_unknown_lists_known_names(name):
    with pytest.raises(TopologyError, match="known: .*10GbE.*HDR.*gen3") as info:
        link_speed(name)
    assert repr(name) in str(info.value)


# ---------------------------------------------------------------- star


@pytest.mark.parametrize("n", [1, 2, 5, 64])
def test_star(n):
    G = star(n, bandwidth=3e9, latency=2e-6)
    check_contract(G)
    assert G.number_of_nodes() == n + 1
    assert G.number_of_edges() == n
    assert G.degree("switch") == n and G.nodes["switch"]["kind"] == "switch"
    assert degrees(G, "host") == {1}
    assert ranks(G) == [f"host{i}" for i in range(n)]
    assert nx.is_isomorphic(G, nx.star_graph(n))
    assert all(d["bandwidth"] == 3e9 and d["latency"] == 2e-6 for _, _, d in G.edges(data=True))
    assert G.graph["name"] == f"star({n} hosts, 24 Gbps)"


def test_star_defaults_to_10gbe():
    G = star(3)
    assert G.edges["host2", "switch"]["bandwidth"] == pytest.approx(10 * GBIT)
    assert G.edges["host2", "switch"]["latency"] == topologies.ETHERNET_LATENCY


# ---------------------------------------------------------------- two_tier


@pytest.mark.parametrize("n, per_rack", [(1, 1), (10, 4), (12, 4), (7, 1), (5, 10), (16, 16)])
def test_two_tier(n, per_rack):
    G = two_tier(n, per_rack, bandwidth=1e9, uplink_bandwidth=4e9, latency=0.0)
    check_contract(G)
    racks = -(-n // per_rack)
    assert G.number_of_nodes() == n + racks + 1
    assert G.number_of_edges() == n + racks
    assert nx.is_tree(G)
    assert sorted(G["core"]) == sorted(f"tor{r}" for r in range(racks))
    for i in range(n):
        assert list(G[f"host{i}"]) == [f"tor{i // per_rack}"]
        assert G.nodes[f"host{i}"]["rack"] == i // per_rack
        assert G.edges[f"host{i}", f"tor{i // per_rack}"]["bandwidth"] == 1e9
    for r in range(racks):
        in_rack = min(per_rack, n - r * per_rack)
        assert G.degree(f"tor{r}") == in_rack + 1
        assert G.edges[f"tor{r}", "core"]["bandwidth"] == 4e9


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 60), st.integers(1, 20))
def test_two_tier_every_tor_has_one_uplink(n, per_rack):
    G = two_tier(n, per_rack)
    for tor in (v for v in G if v.startswith("tor")):
        assert sum(1 for u in G[tor] if not u.startswith("host")) == 1
    assert len(ranks(G)) == n


# ---------------------------------------------------------------- leaf_spine


@pytest.mark.parametrize("leaves, spines, hpl", [(1, 1, 1), (4, 2, 8), (3, 5, 2), (6, 6, 6)])
def test_leaf_spine(leaves, spines, hpl):
    G = leaf_spine(leaves, spines, hpl, bandwidth=1e9, uplink_bandwidth=5e9)
    check_contract(G)
    assert G.number_of_nodes() == leaves * hpl + leaves + spines
    assert G.number_of_edges() == leaves * hpl + leaves * spines
    assert degrees(G, "leaf") == {hpl + spines}
    assert degrees(G, "spine") == {leaves}
    assert degrees(G, "host") == {1}
    for i in range(leaves * hpl):  # leaf-major numbering
        assert list(G[f"host{i}"]) == [f"leaf{i // hpl}"]
    fabric = G.subgraph(v for v in G if not v.startswith("host"))
    assert nx.is_isomorphic(fabric, nx.complete_bipartite_graph(leaves, spines))
    assert {d["bandwidth"] for _, _, d in fabric.edges(data=True)} == {5e9}


# ---------------------------------------------------------------- fat_tree


@pytest.mark.parametrize("k", [2, 4, 6, 8])
def test_fat_tree(k):
    G = fat_tree(k)
    check_contract(G)
    half = k // 2
    hosts = [v for v, kind in G.nodes(data="kind") if kind == "host"]
    switches = [v for v, kind in G.nodes(data="kind") if kind == "switch"]
    # Al-Fares et al. 2008: k^3/4 hosts, k pods of k/2 edge + k/2 aggregation, (k/2)^2 core.
    assert len(hosts) == k**3 // 4
    assert len(switches) == k * k + half * half
    assert sum(v.startswith("core") for v in switches) == half * half
    assert G.number_of_edges() == 3 * k**3 // 4
    assert all(G.degree(s) == k for s in switches)
    assert all(G.degree(h) == 1 for h in hosts)
    # Each core switch reaches every pod exactly once; each edge switch serves k/2 hosts.
    for c in range(half * half):
        assert sorted(G.nodes[a]["pod"] for a in G[f"core{c}"]) == list(range(k))
    for e in range(k * half):
        assert sum(n.startswith("host") for n in G[f"edge{e}"]) == half
    # Hosts are leaves of a 3-level tree of switches: at most 6 hops apart.
    assert nx.diameter(G) == 6
    assert G.graph["name"] == f"fat_tree(k={k}, {k**3 // 4} hosts, 10 Gbps)"


# ---------------------------------------------------------------- ring


def test_ring_small_cases():
    one = ring(1)
    assert list(one) == ["host0"] and one.number_of_edges() == 0
    two = ring(2)
    check_contract(two)
    assert list(two.edges) == [("host0", "host1")]


@pytest.mark.parametrize("n", [3, 4, 7, 16])
def test_ring_is_a_cycle(n):
    G = ring(n, bandwidth=2e9, latency=1e-7)
    check_contract(G)
    assert nx.is_isomorphic(G, nx.cycle_graph(n))
    assert degrees(G, "host") == {2}
    assert all(G.has_edge(f"host{i}", f"host{(i + 1) % n}") for i in range(n))


def test_ring_of_gpus():
    G = ring(4, kind="gpu")
    check_contract(G)
    assert ranks(G) == ["gpu0", "gpu1", "gpu2", "gpu3"]


# ---------------------------------------------------------------- torus

TORUS_DIMS = [(1,), (2,), (5,), (3, 4), (2, 3), (4, 4, 4), (2, 2, 2), (1, 5), (3, 1, 2), (2, 2)]


@pytest.mark.parametrize("dims", TORUS_DIMS)
def test_torus(dims):
    G = torus(dims)
    if G.number_of_nodes() > 1:
        check_contract(G)
    N = math.prod(dims)
    # Links per node along a dimension: 2 (size >= 3, shared by 2 nodes), 1 (size 2), 0 (size 1).
    per_node = [2 if s >= 3 else 1 if s == 2 else 0 for s in dims]
    assert G.number_of_nodes() == N
    assert 2 * G.number_of_edges() == N * sum(per_node)
    assert degrees(G, "host") == {sum(per_node)}
    reference = nx.grid_graph(dim=list(dims), periodic=True)
    reference.remove_edges_from(list(nx.selfloop_edges(reference)))
    assert nx.is_isomorphic(G, reference)


@pytest.mark.parametrize("dims", TORUS_DIMS)
def test_torus_coords_are_row_major(dims):
    G = torus(dims)
    for i, coord in enumerate(itertools.product(*(range(s) for s in dims))):
        assert G.nodes[f"host{i}"]["coord"] == coord
    # Neighbours differ by +-1 (mod size) in exactly one coordinate.
    for u, v in G.edges:
        a, b = G.nodes[u]["coord"], G.nodes[v]["coord"]
        diff = [d for d in range(len(dims)) if a[d] != b[d]]
        assert len(diff) == 1
        d = diff[0]
        assert (a[d] - b[d]) % dims[d] in (1, dims[d] - 1)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=3))
def test_torus_matches_networkx_periodic_grid(dims):
    G = torus(tuple(dims), kind="gpu")
    reference = nx.grid_graph(dim=dims, periodic=True)
    reference.remove_edges_from(list(nx.selfloop_edges(reference)))
    assert nx.is_isomorphic(G, reference)
    assert ranks(G) == [f"gpu{i}" for i in range(math.prod(dims))]


def test_torus_accepts_an_int_as_one_dimension():
    assert nx.is_isomorphic(torus(6), ring(6))


# ---------------------------------------------------------------- pcie_tree


@pytest.mark.parametrize(
    "g, s, k, gen, interconnect",
    [
        (2, 2, 2, "gen3", "QPI"),
        (1, 1, 1, "gen4", "UPI"),
        (4, 1, 2, "gen5", "UPI"),
        (2, 3, 3, "gen3", "QPI"),
    ],
)
def test_pcie_tree(g, s, k, gen, interconnect):
    G = pcie_tree(g, s, k, gen=gen, interconnect=interconnect)
    check_contract(G)
    gpus = g * s * k
    assert ranks(G) == [f"gpu{i}" for i in range(gpus)]
    assert G.number_of_nodes() == gpus + s * k + k
    assert G.number_of_edges() == gpus + s * k + k * (k - 1) // 2
    assert degrees(G, "gpu") == {1}
    assert degrees(G, "pcie") == {g + 1}
    assert degrees(G, "cpu") == {s + k - 1}
    if k <= 2:
        assert nx.is_tree(G)
    x16 = {"gen3": 8e9, "gen4": 16e9, "gen5": 32e9}[gen] * 16 * 128 / 130 / 8
    socket = {"QPI": 19.2e9, "UPI": 20.8e9}[interconnect]
    for i in range(gpus):
        assert G.edges[f"gpu{i}", f"pcie{i // g}"]["bandwidth"] == pytest.approx(x16)
        assert G.nodes[f"gpu{i}"]["socket"] == i // (g * s)
    for j in range(s * k):
        assert G.edges[f"pcie{j}", f"cpu{j // s}"]["bandwidth"] == pytest.approx(x16)
        assert G.nodes[f"pcie{j}"]["kind"] == "pcie_switch"
    for a, b in itertools.combinations(range(k), 2):
        assert G.edges[f"cpu{a}", f"cpu{b}"]["bandwidth"] == pytest.approx(socket)
    assert {G.nodes[f"cpu{c}"]["kind"] for c in range(k)} == {"cpu"}


def test_pcie_tree_cross_socket_path_crosses_both_cpus():
    G = pcie_tree(socket_links=2)
    assert nx.shortest_path(G, "gpu0", "gpu7") == ["gpu0", "pcie0", "cpu0", "cpu1", "pcie3", "gpu7"]
    assert nx.shortest_path(G, "gpu0", "gpu1") == ["gpu0", "pcie0", "gpu1"]
    assert G.edges["cpu0", "cpu1"]["bandwidth"] == pytest.approx(2 * 19.2e9)


# ---------------------------------------------------------------- dgx1

# GPU pairs with two bonded NVLinks (NV2) in `nvidia-smi topo -m` on a DGX-1V.
DGX1_NV2 = {(0, 3), (0, 4), (1, 2), (1, 5), (2, 3), (4, 7), (5, 6), (6, 7)}


def nvlink_graph(G):
    return G.subgraph(ranks(G)).copy()


def hybrid_cube_mesh():
    """The whitepaper's description: a cube with all 12 edges plus the
    diagonals of two opposite faces."""
    Q = nx.hypercube_graph(3)
    for x in (0, 1):
        Q.add_edge((x, 0, 0), (x, 1, 1))
        Q.add_edge((x, 0, 1), (x, 1, 0))
    return Q


@pytest.mark.parametrize("nics", [False, True])
def test_dgx1_counts_and_pcie_tree(nics):
    G = dgx1(nics=nics)
    check_contract(G)
    kinds = [k for _, k in G.nodes(data="kind")]
    assert kinds.count("gpu") == 8 and kinds.count("pcie_switch") == 4 and kinds.count("cpu") == 2
    assert kinds.count("nic") == (4 if nics else 0)
    # 16 NVLink pairs + 8 GPU-switch + 4 switch-CPU + 1 QPI (+ 4 NIC-switch).
    assert G.number_of_edges() == 16 + 8 + 4 + 1 + (4 if nics else 0)
    for i in range(8):
        gen3_x16 = 8e9 * 16 * 128 / 130 / 8
        assert G.edges[f"gpu{i}", f"pcie{i // 2}"]["bandwidth"] == pytest.approx(gen3_x16)
    for j in range(4):
        assert G.has_edge(f"pcie{j}", f"cpu{j // 2}")
        if nics:
            assert list(G[f"nic{j}"]) == [f"pcie{j}"]
    # Two 9.6 GT/s QPI links between the E5-2698 v4 sockets.
    assert G.edges["cpu0", "cpu1"]["bandwidth"] == pytest.approx(2 * 19.2e9)


def test_dgx1_nvlink_hybrid_cube_mesh():
    G = dgx1()
    N = nvlink_graph(G)
    assert N.number_of_edges() == 16
    assert nx.is_isomorphic(N, hybrid_cube_mesh())
    # Two fully connected quads plus i <-> i+4.
    for quad in (range(4), range(4, 8)):
        assert all(N.has_edge(f"gpu{a}", f"gpu{b}") for a, b in itertools.combinations(quad, 2))
    assert all(N.has_edge(f"gpu{i}", f"gpu{i + 4}") for i in range(4))
    assert not N.has_edge("gpu0", "gpu6")
    for i in range(8):
        gpu = f"gpu{i}"
        assert N.degree(gpu) == 4
        # Six NVLink2 links of 25 GB/s per direction per GPU (V100 whitepaper).
        nvlink_bw = sum(d["bandwidth"] for _, _, d in N.edges(gpu, data=True))
        assert nvlink_bw == pytest.approx(6 * 25 * GB)
    for a, b in itertools.combinations(range(8), 2):
        if N.has_edge(f"gpu{a}", f"gpu{b}"):
            links = 2 if (a, b) in DGX1_NV2 else 1
            assert N.edges[f"gpu{a}", f"gpu{b}"]["bandwidth"] == pytest.approx(links * 25 * GB)
    # 8 GPUs x 6 links / 2 ends = 24 physical NVLinks.
    assert sum(N.edges[e]["bandwidth"] for e in N.edges) == pytest.approx(24 * 25 * GB)


def test_dgx1_lowest_latency_paths_follow_nccls_nvlink_preference():
    # netsim routes on the lowest-latency path. NCCL ranks NVLink (NVL) above
    # NVLink through an intermediate GPU (NVB) above every PCIe path.
    G = dgx1(nics=True)
    N = nvlink_graph(G)
    for a, b in itertools.combinations(ranks(G), 2):
        path = nx.shortest_path(G, a, b, weight="latency")
        if N.has_edge(a, b):
            assert path == [a, b]
        else:
            assert len(path) == 3 and G.nodes[path[1]]["kind"] == "gpu", path
    # A GPU reaches the NIC on its own PCIe switch directly.
    assert nx.shortest_path(G, "gpu5", "nic2", weight="latency") == ["gpu5", "pcie2", "nic2"]


@pytest.mark.parametrize("nics", ["false", 2, None])
def test_dgx1_nics_must_be_a_bool(nics):
    with pytest.raises(TopologyError, match="dgx1: nics must be True or False"):
        dgx1(nics=nics)


# ---------------------------------------------------------------- NVSwitch machines


@pytest.mark.parametrize("build, per_gpu_both_ways", [(dgx_a100, 600 * GB), (dgx_h100, 900 * GB)])
def test_nvswitch_machines(build, per_gpu_both_ways):
    G = build()
    check_contract(G)
    assert ranks(G) == [f"gpu{i}" for i in range(8)]
    assert G.number_of_nodes() == 9 and G.number_of_edges() == 8
    assert G.nodes["nvswitch0"]["kind"] == "nvswitch"
    assert G.degree("nvswitch0") == 8
    assert nx.is_isomorphic(G, nx.star_graph(8))
    for i in range(8):
        assert G.edges[f"gpu{i}", "nvswitch0"]["bandwidth"] == pytest.approx(per_gpu_both_ways / 2)


# ---------------------------------------------------------------- errors

BAD_CALLS = [
    (star, (0,), {}, "n must be an integer >= 1, got 0"),
    (star, (-3,), {}, "n must be an integer >= 1, got -3"),
    (star, (2.5,), {}, "n must be an integer"),
    (star, (True,), {}, "n must be an integer"),
    (star, (4,), {"bandwidth": 0}, "bandwidth .* got 0"),
    (star, (4,), {"bandwidth": -1e9}, "bandwidth .* got -1"),
    (star, (4,), {"bandwidth": float("nan")}, "bandwidth .* got nan"),
    (star, (4,), {"bandwidth": float("inf")}, "bandwidth .* got inf"),
    (star, (4,), {"bandwidth": "10Gbps"}, "bandwidth .*'10Gbps'"),
    (star, (4,), {"latency": -1e-6}, "latency .* got -1e-06"),
    (two_tier, (0, 4), {}, "n must be an integer >= 1, got 0"),
    (two_tier, (8, 0), {}, "per_rack must be an integer >= 1, got 0"),
    (two_tier, (8, 2), {"uplink_bandwidth": 0}, "uplink_bandwidth .* got 0"),
    (leaf_spine, (0, 2, 2), {}, "leaves must be an integer >= 1, got 0"),
    (leaf_spine, (2, 0, 2), {}, "spines must be an integer >= 1, got 0"),
    (leaf_spine, (2, 2, 0), {}, "hosts_per_leaf must be an integer >= 1, got 0"),
    (leaf_spine, (2, 2, 2), {"uplink_bandwidth": -5}, "uplink_bandwidth .* got -5"),
    (fat_tree, (3,), {}, "k must be even, got 3"),
    (fat_tree, (0,), {}, "k must be an integer >= 2, got 0"),
    (fat_tree, (4,), {"latency": -1}, "latency .* got -1"),
    (ring, (0,), {}, "n must be an integer >= 1, got 0"),
    (ring, (4,), {"kind": "cpu"}, "kind must be one of .* got 'cpu'"),
    (torus, ((),), {}, "dims must have at least one dimension"),
    (torus, ((3, 0),), {}, r"dims\[1\] must be an integer >= 1, got 0"),
    (torus, ((-1, 3),), {}, r"dims\[0\] must be an integer >= 1, got -1"),
    (torus, (None,), {}, "dims must be a tuple"),
    (torus, ((2, 2),), {"kind": "switch"}, "kind must be one of"),
    (pcie_tree, (), {"gen": "gen7"}, "gen must be one of gen3, gen4, gen5, gen6, got 'gen7'"),
    (pcie_tree, (), {"gen": 3}, "gen must be one of .*, got 3"),
    (pcie_tree, (), {"interconnect": "HT"}, "interconnect must be one of QPI, UPI, got 'HT'"),
    (pcie_tree, (), {"sockets": 0}, "sockets must be an integer >= 1, got 0"),
    (pcie_tree, (), {"gpus_per_switch": 0}, "gpus_per_switch must be an integer >= 1, got 0"),
    (pcie_tree, (), {"switches_per_socket": 0}, "switches_per_socket must be an integer >= 1, got 0"),
    (pcie_tree, (), {"socket_links": 0}, "socket_links must be an integer >= 1, got 0"),
    (pcie_tree, (), {"pcie_latency": -1e-9}, "pcie_latency .* got -1e-09"),
]


@pytest.mark.parametrize(
    "build, args, kwargs, message", BAD_CALLS, ids=lambda x: getattr(x, "__name__", None)
)
def test_bad_arguments_raise_topology_error(build, args, kwargs, message):
    with pytest.raises(TopologyError, match=message) as info:
        build(*args, **kwargs)
    # The message names the builder.
    assert str(info.value).startswith(f"{build.__name__}: ")


# ---------------------------------------------------------------- package


def test_package_exports_and_docstrings():
    for name in topologies.__all__:
        assert hasattr(topologies, name), name
    assert set(topologies.BUILDERS) <= set(topologies.__all__)
    assert all(callable(getattr(topologies, name)) for name in topologies.BUILDERS)
    for f in [getattr(topologies, name) for name in topologies.BUILDERS] + [link_speed]:
        assert f.__name__ in topologies.__all__
        for section in ("Returns", "Examples"):
            assert section in f.__doc__, (f.__name__, section)


def test_spec_tables_are_read_only():
    from topologies import DEVICES, INFINIBAND, NVLINK_LINKS_PER_GPU, PCIE_RATE

    for table in (ETHERNET, INFINIBAND, PCIE_RATE, PCIE_X16, NVLINK, NVLINK_LINKS_PER_GPU,
                  CPU_INTERCONNECT, DEVICES):
        key = next(iter(table))
        with pytest.raises(TypeError):
            table[key] = 0
    assert ETHERNET["10GbE"] == 1.25e9  # unchanged by the attempt


def test_drawing_keeps_the_session_backend_and_writes_png(tmp_path):
    import matplotlib

    from netsim.drawing.plot import draw_topology, plot_series

    before = matplotlib.get_backend()
    matplotlib.use("svg")  # a user's choice, which drawing must not switch to Agg
    try:
        draw_topology(star(4), path=tmp_path / "t.png")
        plot_series([{"label": "x", "P": [2, 4], "simulated": [1.0, 2.0]}], tmp_path / "s.png")
        assert matplotlib.get_backend() == "svg"
    finally:
        matplotlib.use(before)
    for name in ("t.png", "s.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
