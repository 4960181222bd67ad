"""Every paradigm trains for real, and its trace holds exactly what it sent."""

import networkx as nx
import numpy as np
import pytest

import netsim
import workloads
from workloads import DatasetError, PartitionError, WorkloadError, mlp

DENSE = ["single", "ps-sync", "ps-async", "allreduce", "model-averaging", "admm", "ringtmp"]
COLUMNS = ("kind", "rank", "peer", "size", "duration", "flops", "iteration", "tag", "dep_ptr",
           "dep_idx")
N_IRIS = mlp.num_params((4, 16, 3))


@pytest.fixture(scope="module")
def defaults():
    """Each dense paradigm once with its defaults on Iris."""
    return {name: workloads.record(name) for name in DENSE}


@pytest.mark.parametrize("name", DENSE)
def test_default_run_reaches_090_on_iris(defaults, name):
    r = defaults[name]
    assert r.accuracy >= 0.90, r.summary()
    assert r.paradigm == name and r.trace.metadata["paradigm"] == name


# Bytes and messages of a whole default run (P workers, I iterations, float32 Iris
# parameters), from each paradigm's own description: ps-sync pushes and pulls the model
# every step, the ring allreduce sends 2 (P - 1) chunks of 1/P of it per rank, model
# averaging sends it up and back every period-th step. (run_result already refuses a
# run whose accounting differs from its trace; these check the accounting itself.)
WHOLE_RUN = {
    "single": lambda P, I, md: (0, 0),
    "ps-sync": lambda P, I, md: (I * P * 2 * 4 * N_IRIS, I * P * 2),
    "allreduce": lambda P, I, md: (I * 2 * (P - 1) * 4 * N_IRIS, I * P * 2 * (P - 1)),
    "model-averaging": lambda P, I, md: (I // md["hyper"]["period"] * P * 2 * 4 * N_IRIS,
                                         I // md["hyper"]["period"] * P * 2),
}


@pytest.mark.parametrize("name", DENSE)
def test_accounting_equals_the_trace(defaults, name):
    r = defaults[name]
    md = r.trace.metadata
    if name in WHOLE_RUN:
        nbytes, messages = WHOLE_RUN[name](md["workers"], r.iterations, md)
        assert r.total_bytes == pytest.approx(nbytes, rel=1e-12)
        assert r.messages == messages
    assert md["dataset"] == "iris" and md["seed"] == 0 and md["device_flops"] > 0
    assert r.trace.ranks == md["workers"] + md["servers"] == len(md["roles"])
    assert r.iterations == md["iterations"] >= 1


def test_ps_sync_pushes_and_pulls_true_shard_sizes():
    r = workloads.record("ps-sync", workers=3, epochs=1, servers=3)
    t = r.trace
    sizes = r.extra["shard_sizes"]
    assert sum(sizes) == N_IRIS and max(sizes) - min(sizes) <= 1
    for tag in ("push", "pull"):
        m = t.is_message & (t.tag == t.tags.index(tag))
        server = np.where(tag == "push", t.peer[m], t.rank[m]) - 3
        np.testing.assert_array_equal(t.size[m], 4 * np.asarray(sizes)[server])
    assert r.total_bytes == r.iterations * 3 * 2 * 4 * N_IRIS


def test_sent_values_are_the_ones_used():
    # ps-sync averages the pushed gradients and workers rebuild their model from the
    # pulled shards; allreduce averages directly; RingTMP moves activations. All compute
    # the same updates as one node on the same batches, up to float32 rounding.
    kw = dict(workers=3, epochs=3, seed=2)
    ref = workloads.record("single", **kw).extra["test_loss"]
    for name, extra in (("ps-sync", {"servers": 2}), ("allreduce", {}),
                        ("ringtmp", {"partition": "layer", "hidden": (16, 16)}),
                        ("ringtmp", {"partition": "neuron", "hidden": (16,)})):
        if "hidden" in extra:
            ref_h = workloads.record("single", hidden=extra["hidden"], **kw).extra["test_loss"]
        else:
            ref_h = ref
        got = workloads.record(name, **kw, **extra).extra["test_loss"]
        assert got == pytest.approx(ref_h, rel=1e-4), name


@pytest.mark.parametrize("collective", ["ring", "mst", "be", "lp"])
@pytest.mark.parametrize("workers", [3, 4])
def test_allreduce_moves_2_p_minus_1_gradients(collective, workers):
    r = workloads.record("allreduce", workers=workers, epochs=1, collective=collective)
    assert r.extra["gradient_bytes"] == 4 * N_IRIS
    assert r.extra["bytes_per_allreduce"] == pytest.approx(2 * (workers - 1) * 4 * N_IRIS)
    assert r.total_bytes == pytest.approx(r.iterations * r.extra["bytes_per_allreduce"])


def test_ps_async_staleness_and_schedule():
    r = workloads.record("ps-async", workers=4, epochs=1)
    assert r.extra["max_staleness"] == 3 and r.extra["mean_staleness"] == pytest.approx(1.5)
    assert r.extra["updates"] == 4 * r.iterations
    r2 = workloads.record("ps-async", workers=4, epochs=1, n_fetch=3, n_push=2)
    assert r2.messages < r.messages and r2.extra["max_staleness"] > 3
    with pytest.raises(WorkloadError, match="n_push must be"):
        workloads.record("ps-async", n_push=0)


def test_model_averaging_and_admm_message_counts():
    r = workloads.record("model-averaging", workers=3, epochs=1, period=2)
    assert r.messages == 2 * 3 * r.extra["averagings"]
    assert r.total_bytes == r.messages * 4 * N_IRIS
    a = workloads.record("admm", workers=3, epochs=1, local_steps=2)
    assert a.messages == 2 * 3 * a.iterations and a.total_bytes == a.messages * 4 * N_IRIS


def test_single_sends_nothing():
    r = workloads.record("single", epochs=1, workers=4)
    assert r.messages == 0 and r.trace.ranks == 1 and r.trace.num_ops > 0


@pytest.mark.parametrize("name", DENSE)
def test_same_seed_same_trace_other_seed_differs(name):
    a = workloads.record(name, workers=3, epochs=2, seed=5)
    b = workloads.record(name, workers=3, epochs=2, seed=5)
    c = workloads.record(name, workers=3, epochs=2, seed=6)
    for col in COLUMNS:
        np.testing.assert_array_equal(getattr(a.trace, col), getattr(b.trace, col))
    assert a.accuracy == b.accuracy and a.extra == b.extra
    assert (c.extra["test_loss"] != a.extra["test_loss"] or c.accuracy != a.accuracy
            or c.trace.num_ops != a.trace.num_ops)


def test_record_validates_inputs():
    with pytest.raises(WorkloadError, match="known paradigms: single, ps-sync, ps-async"):
        workloads.record("gossip")
    with pytest.raises(DatasetError, match="known datasets: iris, digits, mnist, sparse"):
        workloads.record("ps-sync", dataset="imagenet")
    for bad in (0, -1, 2.5, True, "4"):
        with pytest.raises(WorkloadError, match="workers must be an integer >= 1"):
            workloads.record("ps-sync", workers=bad)
    with pytest.raises(WorkloadError, match="takes no option\\(s\\) colective"):
        workloads.record("allreduce", colective="ring")
    with pytest.raises(WorkloadError, match="known collectives"):
        workloads.record("allreduce", collective="tree")
    # The option's range (the words --set and a sweep config use), then the model's bound.
    with pytest.raises(WorkloadError, match="servers must be an integer >= 1, got 0"):
        workloads.record("ps-sync", servers=0)
    with pytest.raises(WorkloadError, match="servers must be an integer in 1..131, got 200"):
        workloads.record("ps-sync", servers=200)


def test_bad_ringtmp_partitions():
    with pytest.raises(PartitionError, match="leaves node 2 without a layer"):
        workloads.record("ringtmp", workers=4, hidden=(16,))
    with pytest.raises(PartitionError, match="without a neuron in layer 1"):
        workloads.record("ringtmp", workers=4, partition="neuron")
    with pytest.raises(PartitionError, match="without a neuron in layer 0"):
        workloads.record("ringtmp", workers=3, partition="neuron", hidden=(2,))
    with pytest.raises(WorkloadError, match="known partitions: layer, neuron"):
        workloads.record("ringtmp", partition="column")
    assert issubclass(PartitionError, netsim.NetsimError)


def test_registry_lists_descriptions_and_options():
    for name in DENSE:
        p = workloads.PARADIGMS[name]
        assert p.description and callable(p.run)
        assert "epochs" in p.options and "seed" in p.options
    assert workloads.PARADIGMS["ps-sync"].options["servers"][0] == 1
    assert workloads.PARADIGMS["allreduce"].options["collective"][0] == "ring"
    assert "period=4" in workloads.describe("model-averaging")


def _star(n):
    G = nx.Graph()
    G.add_node("sw", kind="switch")
    for i in range(n):
        G.add_node(f"h{i}", kind="host")
        G.add_edge(f"h{i}", "sw", bandwidth=1.25e9, latency=1e-6)
    return G


@pytest.mark.parametrize("name", DENSE)
def test_traces_replay_on_a_star(name):
    r = workloads.record(name, workers=3, epochs=1)
    G = _star(r.trace.ranks)
    res = netsim.simulate(r.trace, G)
    # No schedule beats the busiest link direction's bytes / bandwidth.
    from netsim.costmodel import contention_bound

    bound = contention_bound(r.trace, G)["seconds"]
    moves = r.trace.num_messages > 0 or r.trace.num_collectives > 0
    assert (bound > 0) == moves and res.makespan * (1 + 1e-9) >= bound
    assert res.makespan > 0
    assert len(res.iteration_times) == r.trace.num_iterations
    assert res.stats["bytes"] == pytest.approx(r.total_bytes, rel=1e-12)
