"""A stage's run of compute and tensor-parallel calls written as one op per shard.

Between two points where anything else reads it (a pipeline message leaves, a
gradient is complete), a stage's work on one micro-batch is a chain: each block's
compute, then its tensor-parallel allreduce (or allgather before and reduce-scatter
after), then the next block's. When every tensor-parallel call runs alone on its
links (:mod:`netsim.comm.alone`: a tensor-parallel group inside an NVSwitch machine),
each call takes its isolated seconds wherever it starts, and the chain ends a fixed
number of seconds after it starts: the sum of its compute and of its calls alone.
:class:`Chains` writes that sum as one compute op per shard, which is the replay of
the whole chain up to float rounding. A 16,384-GPU iteration of a 405B model then
has some 65,000 ops where it had 3.2 million.

Two things keep it exact, and the replay checks both
(:func:`netsim.comm.library.expand`):

* The first call of each kind (operation and bytes) of each group is written as the
  collective it is (a *witness*), so the expansion sees the group's plan and checks
  that its class runs alone, as it checks any call; the fused calls are counted per
  plan in the trace's metadata (``"fused_tp"``: group, operation, bytes, count and the
  seconds used), and the expansion refuses the trace
  (:class:`netsim.comm.alone.FusedNotAlone`) when a witness's class does not run alone
  or its plan takes other seconds than the ones summed. Their link statistics are
  added back as the collapsed calls' are (:func:`netsim.comm.alone.add_back`).
* A tensor-parallel call waits for every shard, so a chain with one waits for every
  shard's inputs (each shard's chain starts at the latest); before its first call a
  shard's compute starts at its own inputs, but the shards' compute takes the same
  seconds, so the first call starts at the latest input plus that compute either
  way. A chain without a call keeps each shard's own inputs.

What is not kept apart: the fused op's seconds count as compute in the replay's
per-rank figures, and the calls it holds are not in its table of collectives
(``result.collectives``): a chain's calls ran alone, none slower than its price.
"""

from workloads.errors import WorkloadError

__all__ = ["Chains", "NotFusable", "check_fusable"]


class NotFusable(WorkloadError):
    """A schedule whose chains something reads apart (:func:`check_fusable`)."""


def check_fusable(tp, zero, moe, overlap, gathered, regather, dev, device_flops, cp=1):
    """Refuse the fused chains where something reads a chain apart.

    ZeRO-3's hooks, experts' all-to-alls, the tensor-parallel overlap, the parameter
    allgathers under the first forward, the scatter/gather's allgathers and context
    parallelism's rings all join a chain in its middle; FLOPs need the rate to be seconds.

    Raises
    ------
    NotFusable
        Naming what prevents it.

    Examples
    --------
    >>> check_fusable(8, 1, None, False, False, False, None, 1e14)
    >>> check_fusable(8, 3, None, False, False, False, None, 1e14)
    Traceback (most recent call last):
    ...
    workloads.transformer.fused.NotFusable: fused tensor-parallel chains: not with ZeRO-3's hooks
    """
    why = [w for w, bad in (("tp = 1 (no tensor-parallel calls)", tp < 2),
                            ("ZeRO-3's hooks", zero == 3), ("experts", bool(moe)),
                            ("the tensor-parallel overlap", overlap),
                            ("the overlapped parameter allgather", gathered),
                            ("scatter/gather", regather),
                            ("context parallelism's rings", cp > 1),
                            ("compute in FLOPs without device_flops",
                             not dev and device_flops is None)) if bad]
    if why:
        raise NotFusable(f"fused tensor-parallel chains: not with {why[0]}")


class Chains:
    """The pending chain of each (stage, replica), written out when something reads it.

    Parameters
    ----------
    b : netsim.trace.core.TraceBuilder
        The trace being written.
    groups : dict
        ``(stage, replica) -> ranks`` of the tensor-parallel group.
    last : dict
        ``(stage, replica) -> ops``: each shard's last written op (the schedule's; the
        chains read and write it).
    kept : int
        Shards written (the others padded with ``pad``).
    pad : list
        The ops of the shards not written.
    seconds : callable
        ``seconds(op, ranks, nbytes)``: a tensor-parallel call's seconds alone.
    element : int
        Bytes per value of the calls (the trace's ``element``).

    Examples
    --------
    Two blocks of 1 s each, each followed by a 0.5 s call on two shards, and a message
    after them: the first call is written (the witness), the rest is one op per shard.

    >>> from netsim.trace.core import TraceBuilder
    >>> b = TraceBuilder(2); last = {(0, 0): [None, None]}
    >>> ch = Chains(b, {(0, 0): [0, 1]}, last, 2, [], lambda op, g, n: 0.5, 2)
    >>> for _ in range(2):
    ...     ch.compute(0, 0, 1.0, None, 0, "forward")
    ...     ch.call(0, 0, "allreduce", 64, 0, "forward")
    >>> ops = ch.flush(0, 0)
    >>> t = b.build()
    >>> t.kind.tolist(), [float(x) for x in t.duration[t.kind == 0]]
    ([0, 0, 2, 0, 0], [1.0, 1.0, 1.5, 1.5])
    >>> [list(x) for x in ch.counts()]
    [[[0, 1], 'allreduce', 64.0, 1, 0.5]]
    """

    def __init__(self, b, groups, last, kept, pad, seconds, element):
        self.b, self.groups, self.last, self.kept, self.pad = b, groups, last, kept, pad
        self.price, self.element = seconds, element
        self.pending = {}    # (stage, replica) -> its _Chain, not written yet
        self.seen = set()    # (group, op, bytes) whose witness is written
        self.fused = {}      # (group, op, bytes) -> [count, seconds]

    def _chain(self, s, r, it, tag):
        ch = self.pending.get((s, r))
        if ch is None:
            prev = self.last[(s, r)]
            ch = self.pending[(s, r)] = _Chain(
                [[] if prev[k] is None else [prev[k]] for k in range(self.kept)], tag, it)
        elif tag != "forward":
            ch.tag = "backward"
        return ch

    def compute(self, s, r, seconds, inputs, it, tag):
        """Add ``seconds`` of compute on every shard of (s, r), after ``inputs`` (a list of
        ops per shard, or None).

        Inputs that arrive in the middle of a chain end it first: only a chain's start
        waits for them."""
        ch = self.pending.get((s, r))
        if inputs and any(inputs) and ch is not None and (ch.seconds or ch.joined):
            self.flush(s, r)
        ch = self._chain(s, r, it, tag)
        if inputs:
            for k in range(self.kept):
                ch.deps[k].extend(inputs[k])
        ch.seconds += seconds

    def call(self, s, r, op, nbytes, it, tag):
        """Add a tensor-parallel call of (s, r): its witness, or its seconds alone."""
        group = tuple(self.groups[(s, r)])
        key = (group, op, float(nbytes))
        if key not in self.seen:   # the group's first call of this kind is written
            self.seen.add(key)
            ops = self.flush(s, r)
            c = self.b.collective(op, group, nbytes, deps=[x for x in ops[:self.kept]
                                                            if x is not None],
                                  iteration=it, tag="tp", element=self.element)
            self.last[(s, r)] = [c] * self.kept + self.pad
            return
        ch = self._chain(s, r, it, tag)
        entry = self.fused.get(key)
        if entry is None:
            entry = self.fused[key] = [0, self.price(op, group, nbytes)]
        entry[0] += 1
        ch.seconds += entry[1]
        ch.joined = True

    def flush(self, s, r):
        """Write (s, r)'s pending chain as one op per shard; its shards' last ops."""
        ch = self.pending.pop((s, r), None)
        if ch is None:
            return self.last[(s, r)]
        deps = ch.deps
        if ch.joined:   # a call waits for every shard: each shard's chain for all inputs
            every = list(dict.fromkeys(x for d in deps for x in d))
            deps = [every] * self.kept
        group = self.groups[(s, r)]
        ops = [self.b.compute(group[k], seconds=ch.seconds, deps=deps[k], iteration=ch.it,
                              tag=ch.tag) for k in range(self.kept)]
        self.last[(s, r)] = ops = ops + self.pad
        return ops

    def counts(self):
        """The fused calls: ``[group, op, bytes, count, seconds]`` rows for the metadata."""
        return [[list(g), op, n, c, sec] for (g, op, n), (c, sec) in self.fused.items()]


class _Chain:
    """A pending chain: its seconds, each shard's inputs, whether a call is in it (then it
    waits for every shard's), its tag and iteration."""

    __slots__ = ("seconds", "deps", "joined", "tag", "it")

    def __init__(self, deps, tag, it):
        self.seconds, self.deps, self.joined, self.tag, self.it = 0.0, deps, False, tag, it
