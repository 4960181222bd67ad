"""``--sweep --simulate``: every layout kept is replayed too and ranked by the replay."""

import pytest

import studies.scaling.transformer as st
from studies.registry import topology_factory
from topologies import gpu_cluster
from workloads.transformer.flops import get_config


def test_each_layout_replays_as_the_study_of_that_layout_does_ranked_by_the_replay():
    c = get_config("gpt3-1.3b", global_batch=16)
    G = gpu_cluster("dgx_h100", 2)
    rows = st.sweep(c, 16, G, 0.5, simulate=True)
    assert rows and all(r["simulated"] is not None for r in rows)
    times = [r["simulated"] for r in rows]
    assert times == sorted(times)
    # the same layout through study (another path: its own topology and NCCL planner)
    best = rows[0]
    alone = st.study(c, best["tp"], best["pp"], [16], topology_factory(
        "gpu_cluster:machine=dgx_h100"), 0.5, simulate=True)[0]
    assert alone["simulated"] == pytest.approx(best["simulated"], rel=1e-12)
    assert alone["time"] == pytest.approx(best["time"], rel=1e-12)
    # and as the whole trace replayed by netsim.simulate, every replica and every call
    # expanded (no symmetry, no collapse: an independent path)
    from netsim import simulate
    from workloads.transformer.iteration import schedule

    rate = 0.5 * st.peak_of(G, c.precision)
    whole = schedule(c, best["tp"], best["pp"], best["dp"], device_flops=rate)
    assert simulate(whole, G, placement=st.gpus_of(G)[:16]).makespan == pytest.approx(
        best["simulated"], rel=1e-9)


def test_a_layout_whose_replay_cannot_run_keeps_its_closed_form_and_says_why(monkeypatch):
    # With 1 kB of memory every full replay (a layout without replica or shard symmetry)
    # is refused with its estimate; the layouts whose replicas or shards are simulated
    # once still run.
    monkeypatch.setattr(st, "available_memory", lambda: 1e3)
    c = get_config("gpt3-1.3b", global_batch=16)
    rows = st.sweep(c, 16, gpu_cluster("dgx_h100", 2), 0.5, simulate=True)
    refused = [r for r in rows if r["simulated"] is None]
    ran = [r for r in rows if r["simulated"] is not None]
    assert refused and ran
    assert all("would take about" in r["not_simulated"] and "1 kB are available"
               in r["not_simulated"] for r in refused)
    assert rows[:len(ran)] == ran      # the simulated ones first
    assert all(r["replicas_simulated"] < r["dp"] or r["shards_simulated"] < r["tp"]
               for r in ran)


@pytest.mark.parametrize("tp, pp, machines", [(8, 2, 4), (8, 1, 4), (4, 2, 4)])
def test_the_full_replays_estimate_counts_the_ops_the_expansion_makes(tp, pp, machines):
    # full_replay_ops counts from the trace and NCCL's plans; netsim.comm.library.expand
    # builds the ops (collapse=True): the two must agree (calls across machines at their
    # flows, calls alone inside a machine as one op, the rest as they are). A call kept as
    # one op on a condition in time (netsim.comm.alone.shared_in_time) is counted as the
    # most the replays expand it to: expanded.
    from netsim.comm.library import expand
    from netsim.comm.priced import NcclPrices
    from workloads.transformer.iteration import schedule

    c = get_config("gpt3-1.3b", global_batch=16)
    G = gpu_cluster("dgx_h100", machines)
    P = 8 * machines
    placement = st.gpus_of(G)[:P]
    dp = P // (tp * pp)
    t = schedule(c, tp, pp, dp, device_flops=1e14)
    prices = NcclPrices(G)
    est = st.full_replay_ops(t, dp, dp, G, placement, prices)
    timed = expand(t, G, placement, "auto", collapse=True, planner=prices).alone.timed
    made = len(expand(t, G, placement, "auto", collapse=True, planner=prices,
                      keep=frozenset(timed)).trace)
    assert est == made
