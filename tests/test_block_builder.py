"""The block builder (netsim.trace.blocks) against the one-op-at-a-time TraceBuilder.

The reference is :class:`netsim.TraceBuilder`, separate code (Python lists, one op per call):
any sequence of blocks, each column given as one value for the block or one value per op,
must build the same trace as adding the same ops one at a time.
"""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from netsim import TraceBuilder
from netsim.trace.blocks import BlockBuilder
from netsim.comm.collectives.schedule import Schedule
from netsim.trace.core import COMPUTE, MESSAGE

RANKS = 4
TAGS = (None, "push", "pull", "forward")


@st.composite
def blocks(draw):
    """A list of blocks: (kind, ranks, peers, sizes, flops, durations, tag, deps, as_scalar)."""
    out, n = [], 0
    for _ in range(draw(st.integers(1, 6))):
        m = draw(st.integers(1, 4))
        kind = draw(st.sampled_from([COMPUTE, MESSAGE]))
        rank = draw(st.lists(st.integers(0, RANKS - 1), min_size=m, max_size=m))
        peer = [(r + draw(st.integers(1, RANKS - 1))) % RANKS for r in rank]
        size = draw(st.sampled_from([0.0, 8.0, 1e6]))
        flops = draw(st.sampled_from([0.0, 5.0, 2e9]))
        duration = draw(st.sampled_from([None, 0.0, 1e-3]))
        tag = draw(st.sampled_from(TAGS))
        deps = [sorted(set(draw(st.lists(st.integers(0, n - 1), max_size=3)))) if n else []
                for _ in range(m)]
        as_scalar = draw(st.booleans())   # give the constant columns as one value
        out.append((kind, rank, peer, size, flops, duration, tag, deps, as_scalar))
        n += m
    return out


def by_blocks(spec):
    b = BlockBuilder(RANKS)
    for kind, rank, peer, size, flops, duration, tag, deps, as_scalar in spec:
        m = len(rank)

        def col(x):
            return x if as_scalar or x is None else np.full(m, x)

        counts = np.array([len(d) for d in deps], np.int64)
        idx = np.array([x for d in deps for x in d], np.int64)
        b.add(col(kind), rank, peer, col(size if kind == MESSAGE else 0.0),
              col(flops if kind == COMPUTE else 0.0), tag=col(b.tag(tag)), deps=(counts, idx),
              duration=col(duration if kind == COMPUTE else None))
    return b.build()


def one_at_a_time(spec):
    b = TraceBuilder(RANKS)
    for kind, rank, peer, size, flops, duration, tag, deps, _ in spec:
        for r, p, d in zip(rank, peer, deps):
            if kind == MESSAGE:
                b.message(r, p, size, deps=d, tag=tag)
            else:   # BlockBuilder's rule: no duration and no FLOPs is 0 s, FLOPs alone NaN
                seconds = duration if duration is not None or flops > 0 else 0.0
                b.compute(r, seconds=seconds, flops=flops, deps=d, tag=tag)
        if tag is not None:
            b.add_tag(tag)   # a block registers its tag even if it has no ops of it
    return b.build()


@given(blocks())
def test_blocks_build_the_trace_of_their_ops_one_at_a_time(spec):
    got, want = by_blocks(spec), one_at_a_time(spec)
    for name in ("kind", "rank", "peer", "size", "flops", "iteration", "tag", "priority",
                 "spec", "queue", "dep_ptr", "dep_idx"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name), err_msg=name)
        assert getattr(got, name).dtype == getattr(want, name).dtype, name
    np.testing.assert_array_equal(got.duration, want.duration)   # NaN where NaN
    assert got.tags == want.tags


def test_extra_columns_follow_their_ops_across_blocks():
    # Schedule's chunk ranges ride along as extra columns: one value for a block or one per op.
    s = Schedule("demo", 3, 6, 1.0)
    s.messages(np.array([0, 1]), np.array([1, 2]), 0, 2, "x")           # both carry [0, 2)
    s.messages(np.array([2]), np.array([0]), np.array([3]), np.array([6]), "y", reduce=True)
    p, t = s.payload(), s.trace()
    assert p["lo"].tolist() == [0, 0, 3] and p["hi"].tolist() == [2, 2, 6]
    assert p["reduce"].tolist() == [False, False, True]
    assert t.size.tolist() == [2.0, 2.0, 3.0]   # (hi - lo) chunks of one byte
    assert t.tags == ["x", "y"]
