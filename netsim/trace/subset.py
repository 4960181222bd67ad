"""A trace builder that keeps the ops of some ranks only, for a replay under a symmetry.

A replay under a rank permutation (:func:`netsim.simulate` with ``symmetry=``) takes a
trace of the *home* ranks (each cycle's smallest), whose collectives still name every
member. A workload whose ranks come in classes of like work builds that trace by
writing its program once through :class:`Subset`: the ops of the other ranks are not
recorded, dependencies on them are dropped, and a collective is kept where any member
is home. Dropping a dependency on another rank's op is exact under the symmetry: that
op is the image of a home op that ends at the same time.
"""

import numpy as np

from netsim.trace.core import TraceBuilder, TraceError

__all__ = ["Subset", "DROPPED"]

#: The id :class:`Subset` returns for an op it did not record.
DROPPED = -1


class Subset:
    """A :class:`~netsim.trace.core.TraceBuilder` over ``ranks`` ranks recording only the
    ops of the ranks ``keep`` marks (messages between two of them, computes on them,
    collectives with a member among them).

    Parameters
    ----------
    ranks : int
    keep : array_like of bool
        Per rank.
    metadata : dict, optional

    Examples
    --------
    Two shards that do the same: only shard 0's compute is recorded, and the allreduce
    of both waits for it alone.

    >>> b = Subset(2, [True, False])
    >>> ops = [b.compute(r, seconds=1e-3) for r in (0, 1)]
    >>> ops
    [0, -1]
    >>> ar = b.collective("allreduce", [0, 1], 1e6, deps=ops)
    >>> t = b.build(); t.num_ops, t.deps(ar).tolist()
    (2, [0])
    """

    def __init__(self, ranks, keep, metadata=None):
        keep = np.asarray(keep, bool)
        if keep.shape != (ranks,):
            raise TraceError(f"keep must hold one flag per rank ({ranks}), got {keep.shape}")
        self._kept = set(np.flatnonzero(keep).tolist())
        self._b = TraceBuilder(ranks, metadata)
        self.ranks, self.metadata = ranks, self._b.metadata

    def message(self, src, dst, nbytes, deps=(), **kwargs):
        """As :meth:`TraceBuilder.message`; :data:`DROPPED` between two ranks not kept.

        Raises
        ------
        TraceError
            For a message between a kept rank and one not kept (no symmetry keeps one
            end of a message and drops the other).
        """
        ks, kd = src in self._kept, dst in self._kept
        if ks != kd:
            raise TraceError(f"a message from rank {src} to rank {dst} joins a kept rank to "
                             f"one not kept")
        if not ks:
            return DROPPED
        return self._b.message(src, dst, nbytes, deps=_live(deps), **kwargs)

    def compute(self, rank, seconds=None, flops=None, deps=(), **kwargs):
        """As :meth:`TraceBuilder.compute`; :data:`DROPPED` on a rank not kept."""
        if rank not in self._kept:
            return DROPPED
        return self._b.compute(rank, seconds=seconds, flops=flops, deps=_live(deps), **kwargs)

    def collective(self, op, ranks, nbytes, deps=(), **kwargs):
        """As :meth:`TraceBuilder.collective`; :data:`DROPPED` with no member kept."""
        if not any(r in self._kept for r in ranks):
            return DROPPED
        return self._b.collective(op, ranks, nbytes, deps=_live(deps), **kwargs)

    def add_tag(self, name):
        """As :meth:`TraceBuilder.add_tag`."""
        return self._b.add_tag(name)

    def __len__(self):
        return len(self._b)

    def build(self):
        """As :meth:`TraceBuilder.build`."""
        return self._b.build()


def _live(deps):
    """``deps`` without the ops not recorded."""
    return [d for d in deps if d != DROPPED]
