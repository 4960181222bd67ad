"""Projection along the data dimension of a job with tensor and pipeline groups: the trace of
a TP x PP x DP job projected to more replicas is the job built directly at that size."""

import collections

import numpy as np
import pytest

from netsim.errors import TraceError
from netsim.trace.reproject import reproject
from netsim.trace.core import TraceBuilder
from workloads.transformer.iteration import schedule
from workloads.transformer.flops import config


def _listed(t):
    """The list of collectives an imported profile carries (metadata 'collectives')."""
    return t.with_metadata(collectives=[
        {"kind": t.specs.row(int(t.spec[i])).op, "bytes": float(t.size[i]),
         "group": t.group(i).tolist()} for i in np.flatnonzero(t.is_collective)])


def _graph(t):
    """Every op as (kind, rank, peer, bytes, FLOPs, tag, collective op and group) with the
    multiset of the rows it waits for: the trace as a dependency graph, without op ids."""
    def sig(i):
        coll = t.specs.row(int(t.spec[i]))[:2] if t.spec[i] >= 0 else None
        return (int(t.kind[i]), int(t.rank[i]), int(t.peer[i]), float(t.size[i]),
                float(t.flops[i]), t.tags[t.tag[i]], coll)
    rows = [sig(i) for i in range(t.num_ops)]
    return collections.Counter((rows[i], tuple(sorted(rows[j] for j in t.deps(i))))
                               for i in range(t.num_ops))


@pytest.mark.parametrize("tp,pp,dp,new_dp", [(2, 2, 2, 4), (2, 2, 2, 3), (2, 1, 2, 3),
                                             (1, 2, 2, 2), (2, 2, 3, 2)])
def test_tp_pp_dp_job_projects_to_the_job_built_at_more_replicas(tp, pp, dp, new_dp):
    c = config(4, 64, 4, 32, 64, micro_batch=1, global_batch=4 * dp)
    recorded = _listed(schedule(c, tp, pp, dp, sequence_parallel=tp > 1 and dp > 1))
    projected = reproject(recorded, tp * pp * new_dp, grid=(pp, tp))
    direct = schedule(c._replace(global_batch=4 * new_dp), tp, pp, new_dp,
                      sequence_parallel=tp > 1 and dp > 1)
    assert projected.ranks == direct.ranks
    assert _graph(projected) == _graph(direct)
    listed = [tuple(g["group"]) for g in projected.metadata["collectives"]]
    assert listed == [tuple(projected.group(i).tolist())
                      for i in np.flatnonzero(projected.is_collective)]
    assert sorted(listed) == sorted(tuple(direct.group(i).tolist())
                                    for i in np.flatnonzero(direct.is_collective))


def test_groups_across_replicas_that_are_no_position_are_refused():
    b = TraceBuilder(4)
    b.collective("allreduce", [0, 3], 8.0)       # replicas 0 and 1, but positions 0 and 1
    t = _listed(b.build())
    with pytest.raises(TraceError, match=r"sub-group \[0, 3\] of the 4 ranks, neither inside"):
        reproject(t, 8, grid=(1, 2))
    b = TraceBuilder(4)
    b.message(0, 2, 8.0)
    with pytest.raises(TraceError, match=r"from rank 0 to rank 2, between two data replicas"):
        reproject(_listed(b.build()), 8, grid=(1, 2))
    one = _listed(schedule(config(2, 64, 4, 32, 0), tp=2))
    with pytest.raises(TraceError, match=r"one data replica"):
        reproject(one, 8, grid=(1, 2))
    with pytest.raises(TraceError, match=r"not a multiple of the grid's 1 x 2"):
        reproject(_listed(TraceBuilder(4).build()), 7, grid=(1, 2))
