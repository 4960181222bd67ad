"""The allreduce paradigm's messages carry whole float32 values (issue 18)."""

from collections import Counter

from netsim.comm.library import mpich_wire
from workloads.paradigms import allreduce


def test_recorded_and_projected_messages_carry_whole_float32_values():
    # Iris with the default hidden layer of 16: 4*16 + 16 + 16*3 + 3 = 131 parameters,
    # 524 B of float32 gradient. Over 8 ranks, 131 = 8 * 16 + 3: ring chunks 0-2 hold 17
    # values (68 B), chunks 3-7 hold 16 (64 B); each chunk travels 2 (P - 1) = 14 times
    # per allreduce, so per iteration 3 * 14 = 42 messages of 68 B and 5 * 14 = 70 of 64 B
    # (no longer 112 of 65.5 B), 7336 B = 2 (P - 1) * 524 in all.
    # The trace keeps each allreduce as one collective op; MPICH's ring cuts it so.
    r = allreduce.run(workers=8, epochs=1)
    t = mpich_wire(r.trace)
    iters = t.num_iterations
    assert r.extra["gradient_bytes"] == 524 and r.extra["bytes_per_allreduce"] == 7336.0
    assert Counter(t.size[t.is_message].tolist()) == {68.0: 42 * iters, 64.0: 70 * iters}
    stats = allreduce.measure(r.trace)
    assert stats["bpv"] == 4.0
    # Projected to 16 ranks: 131 = 16 * 8 + 3, chunks of 9 values (36 B) x 3, 8 (32 B) x 13,
    # each sent 30 times per allreduce.
    p = mpich_wire(allreduce.schedule(16, stats, iterations=1))
    assert Counter(p.size[p.is_message].tolist()) == {36.0: 3 * 30, 32.0: 13 * 30}
