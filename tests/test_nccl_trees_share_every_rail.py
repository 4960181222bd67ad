"""NCCL's double binary tree runs both of its trees through every NIC rail.

The hand-worked case behind `netsim scale allreduce --model resnet50 --topology dgx_h100
-P 32`: one allreduce per iteration, of ResNet-50's gradient (25,557,032 fp32 values,
102,228,128 bytes), among 32 GPUs on four DGX H100, which NCCL runs as NVLS tree, Simple,
8 channels. Written out by hand from NCCL v2.30.7-1's constants:

* share per channel: S = 102,228,128 / 8 = 12,778,516 B.
* tuning.cc: per channel min(NVLS intra, bwInter 50 GB/s, perChMaxNVLSTreeBw 45.5 GB/s
  (Hopper, > 2 nodes)) = 45.5 GB/s of busbw; 8 channels: 364 GB/s; algbw = busbw x nRanks /
  nsteps = 364 x 32 / 62 = 187.87 GB/s; bandwidth term 102,228,128 / 187.87e9 = 544.14 us.
* Each channel's flows across machines are held to 45.5 x 32 / 62 = 23.484 GB/s
  (limits.channel_cap).
* trees.cc over 4 machines: tree 0 parents (-1, 2, 0, 2), tree 1 (1, 3, 1, -1). Machine 2 is
  inner in tree 0 (3 edges) and a leaf in tree 1 (1 edge); machine 1 the reverse.
* NCCL runs tree channel c and its duplicate c + nChannels on the same NICs (connect.cc), and
  every NVLS channel through every head, one per NIC, on tree c % 2: each rail carries half of
  a channel on each tree. The head GPU of rail r in machine 2 then sends 3 S/2 + S/2 = 2 S =
  25,557,032 B, four half flows at half the channel's limit, 4 x 11.742 = 46.97 GB/s, under
  its PCIe gen5 x16 link as NCCL counts it (63.0 GB/s x 6 / (8 x 128/130) = 48.0 GB/s) and its
  50 GB/s NIC: every half flow runs at its limit, S/2 / 11.742 GB/s = 544.14 us, NCCL's own
  figure.
* With one tree per rail (what netsim did before), rail r of an even channel saw machine 2
  send 3 S = 38,335,548 B through that 48.0 GB/s link: 798.7 us, the +39 % (907 against
  653 us with the 108.6 us latency) the scaling study showed.
"""

import pytest

from netsim import nccl
from topologies import gpu_cluster

US = 1e-6
NBYTES = 102_228_128
S = NBYTES / 8


@pytest.fixture(scope="module")
def four_dgx_h100():
    return gpu_cluster("dgx_h100", 4)


def test_nvls_tree_allreduce_on_four_dgx_h100_takes_nccls_own_time(four_dgx_h100):
    r = nccl.simulate(four_dgx_h100, "allreduce", NBYTES)
    p = r.plan
    assert (p.algorithm, p.protocol, p.channels) == ("nvls_tree", "Simple", 8)
    bandwidth_term = NBYTES / (8 * 45.5e9 * 32 / 62)          # 544.14 us, by hand above
    assert p.tuning_time - p.latency == pytest.approx(bandwidth_term, rel=1e-9)
    # the simulation adds only the paths' link latencies (< 1 us) to the same figure
    assert r.makespan - p.latency == pytest.approx(bandwidth_term, abs=1 * US)
    assert r.makespan - p.latency < 798.7 * US              # one tree per rail: 3 S / 48 GB/s


def test_every_head_sends_two_shares_through_its_nic(four_dgx_h100):
    r = nccl.simulate(four_dgx_h100, "allreduce", NBYTES, algorithm="nvls_tree",
                      protocol="Simple", channels=8)
    L = r.links
    out = {str(L["src"][i]): float(L["bytes"][i]) for i in range(len(L["src"]))
           if str(L["dst"][i]).startswith("rail")}
    # inner machines (1 and 2) send 2 S on every rail, the others (0, 3) S: never 3 S
    assert out["n1.nic0"] == out["n2.nic1"] == pytest.approx(2 * S)
    assert out["n0.nic0"] == out["n3.nic7"] == pytest.approx(S)
    assert max(out.values()) == pytest.approx(2 * S)

