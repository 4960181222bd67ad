"""Rank layout of tensor x pipeline x data parallelism, tensor-parallel ranks adjacent.

``world = tp * pp * dp`` ranks. As Megatron-LM numbers them (the default order
``"tp-cp-ep-dp-pp"`` of ``initialize_model_parallel`` in
``megatron/core/parallel_state.py``, Megatron-LM core_r0.9.0), the tensor-parallel
index varies fastest, then the data-parallel one, then the stage:

    ``rank = stage * (dp * tp) + replica * tp + shard``

so a tensor-parallel group is ``tp`` consecutive ranks: on machines of 8 GPUs
with ``tp`` dividing 8, every tensor-parallel group sits inside one machine when
ranks are placed on GPUs in order, and its allreduces stay on NVLink.

Examples
--------
>>> L = Layout(2, 2, 2)
>>> L.world, L.rank(1, 0, 1), L.tp_group(1, 1), L.dp_group(0, 1)
(8, 5, (6, 7), (1, 3))

Expert parallelism (``ep`` dividing ``dp``) takes its groups from the
data-parallel replicas, the ``ep`` index varying faster than the rest of the
data-parallel one, as the ``"ep-dp"`` part of that order makes them
(``RankGenerator`` splits ``dp`` into ``ep x dp/ep`` there): replica ``r`` is
member ``r % ep`` of expert-parallel group ``r // ep`` (:func:`ep_group`) and
member ``r // ep`` of expert-data-parallel group ``r % ep``
(:func:`expert_dp_group`, Megatron's "data modulo expert parallel" group).
"""

from typing import NamedTuple

from netsim.checks import check_int

from workloads.errors import WorkloadError

__all__ = ["Layout", "layout", "ep_group", "expert_dp_group"]


class Layout(NamedTuple):
    """Degrees of tensor (``tp``), pipeline (``pp``) and data (``dp``) parallelism."""

    tp: int
    pp: int
    dp: int

    @property
    def world(self):
        """Ranks: ``tp * pp * dp``."""
        return self.tp * self.pp * self.dp

    def rank(self, stage, replica, shard):
        """The rank of tensor shard ``shard`` of stage ``stage`` in data replica ``replica``."""
        return (stage * self.dp + replica) * self.tp + shard

    def tp_group(self, stage, replica):
        """The ranks of one tensor-parallel group, shard order."""
        return tuple(self.rank(stage, replica, k) for k in range(self.tp))

    def dp_group(self, stage, shard):
        """The ranks holding the same parameters in every replica (one gradient allreduce)."""
        return tuple(self.rank(stage, r, shard) for r in range(self.dp))

    def coords(self, rank):
        """``(stage, replica, shard)`` of a rank.

        Examples
        --------
        >>> Layout(2, 2, 2).coords(5)
        (1, 0, 1)
        """
        stage, rest = divmod(rank, self.dp * self.tp)
        return (stage,) + divmod(rest, self.tp)


def layout(tp, pp, dp, world=None, cp=1):
    """A checked :class:`Layout`; with ``world``, ``dp`` may be None (the rest of the ranks).

    ``cp``: context parallelism (:mod:`workloads.transformer.context.ring`), the world then
    ``tp * cp * pp * dp`` ranks; the layout returned is of ``tp x pp x dp``.

    Raises
    ------
    WorkloadError
        For a degree below 1, or a world not a multiple of ``tp * pp`` (``* cp``).

    Examples
    --------
    >>> layout(8, 4, None, world=64)
    Layout(tp=8, pp=4, dp=2)
    >>> layout(8, 4, None, world=48)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: 48 ranks do not divide into tp 8 x pp 4
    >>> layout(8, 1, None, world=64, cp=2)
    Layout(tp=8, pp=1, dp=4)
    >>> layout(8, 1, None, world=24, cp=2)
    Traceback (most recent call last):
    ...
    workloads.errors.WorkloadError: 24 ranks do not divide into tp 8 x pp 1 x cp 2
    """
    tp = check_int(tp, "tp", error=WorkloadError)
    pp = check_int(pp, "pp", error=WorkloadError)
    cp = check_int(cp, "cp", error=WorkloadError)
    ctx = f" x cp {cp}" if cp > 1 else ""
    if dp is None:
        if world is None:
            raise WorkloadError("give dp or the world size")
        world = check_int(world, "world", error=WorkloadError)
        if world % (tp * pp * cp):
            raise WorkloadError(f"{world} ranks do not divide into tp {tp} x pp {pp}{ctx}")
        dp = world // (tp * pp * cp)
    dp = check_int(dp, "dp", error=WorkloadError)
    if world is not None and world != tp * pp * dp * cp:
        raise WorkloadError(f"tp {tp} x pp {pp} x dp {dp}{ctx} is not {world} ranks")
    return Layout(tp, pp, dp)


def ep_group(L, ep, stage, shard, j):
    """The ranks of expert-parallel group ``j`` (replicas ``j ep .. j ep + ep - 1``) of a shard.

    Examples
    --------
    >>> L = Layout(2, 1, 4)
    >>> ep_group(L, 2, 0, 0, 0), ep_group(L, 2, 0, 1, 1)
    ((0, 2), (5, 7))
    """
    return tuple(L.rank(stage, j * ep + e, shard) for e in range(ep))


def expert_dp_group(L, ep, stage, shard, e):
    """The ranks holding the same experts: replicas ``e, e + ep, ...`` of a shard.

    Examples
    --------
    >>> expert_dp_group(Layout(2, 1, 4), 2, 0, 0, 1)
    (2, 6)
    """
    return tuple(L.rank(stage, r, shard) for r in range(e, L.dp, ep))
