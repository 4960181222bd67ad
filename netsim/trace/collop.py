"""Collective ops in a trace: their vocabulary and the table of their specifications.

A collective op (kind ``COLLECTIVE`` of :mod:`netsim.trace.core`) is one call of a
communication library among a group of ranks, kept whole in the trace as
Chakra's ``COMM_COLL_NODE`` keeps it, and expanded into flows only at replay by
the library the replay chooses (:mod:`netsim.comm.library`). Its row in the trace
holds the byte count (``size``, as nccl-tests counts it: the buffer of
allreduce, broadcast and reduce, the whole gathered or scattered buffer of
allgather and reduce_scatter, each rank's send buffer of alltoall, what each
member sends to the next of sendrecv, nccl-tests' ring shift), its owner
(``rank``: the root, else the group's first rank), its dependencies, iteration,
tag and priority (its flows' priority); column ``spec`` points to a row of a
:class:`Specs` table holding what many calls share:

========== ======= ==========================================================
column     dtype   meaning
========== ======= ==========================================================
op         int8    index into :data:`OPS`
group      CSR     the member ranks, in the order the library numbers them
root       int32   the root rank of broadcast and reduce, -1 for the others
algorithm  int8    index into :data:`HINTS`, -1: the library's own choice
segments   int32   pipeline segments of MPICH's ``lp``, 0: the default (1)
element    int32   bytes per element (4 for float32): chunks are whole elements;
                   0: an even cut
========== ======= ==========================================================

Examples
--------
>>> s = Specs.from_rows([("allreduce", [0, 1, 2], -1, None, 0, 4)])
>>> len(s), s.row(0).op, s.group(0).tolist(), s.row(0).algorithm
(1, 'allreduce', [0, 1, 2], None)
"""

from typing import NamedTuple

import numpy as np

from netsim.checks import check_choice
from netsim.errors import TraceError

__all__ = ["OPS", "ROOTED", "HINTS", "MPICH_HINTS", "MPICH_ONLY", "NCCL_HINTS", "Spec", "Specs",
           "spec", "owner"]

#: The collective operations a trace may hold, in the order column ``op`` indexes (saved
#: traces depend on it). The one list of op names: the libraries, the NCCL model
#: (:data:`netsim.comm.nccl.OPS` is this tuple) and the CLI read it from here.
OPS = ("allreduce", "allgather", "reduce_scatter", "broadcast", "reduce", "alltoall",
       "sendrecv")
ROOTED = frozenset({"broadcast", "reduce"})
#: MPICH's schedules (:mod:`netsim.comm.collectives`): ring, mst (binomial tree), be
#: (bidirectional exchange: Rabenseifner, or scatter + allgather for broadcast),
#: lp (linear pipeline), rd (recursive doubling), rh (recursive halving).
MPICH_HINTS = ("ring", "mst", "be", "lp", "rd", "rh", "pairwise")
#: The algorithms the NCCL model runs (:mod:`netsim.comm.nccl`), in this order: the one home
#: of the list, which :data:`netsim.comm.nccl.ALGORITHMS` is. NCCL's own enum order of its
#: algorithms is another list, :data:`netsim.comm.nccl.tuning.NCCL_ALGO_ORDER`.
NCCL_HINTS = ("ring", "tree", "nvls", "nvls_tree", "collnet_chain", "pat", "p2p")
#: Hints only MPICH has: ``library="auto"`` expands such a call with MPICH.
MPICH_ONLY = tuple(h for h in MPICH_HINTS if h not in NCCL_HINTS)
#: Every hint, in the order column ``algorithm`` indexes (saved traces depend on it).
HINTS = tuple(dict.fromkeys(MPICH_HINTS + NCCL_HINTS))


class Spec(NamedTuple):
    """One row of a :class:`Specs` table, in plain Python values."""

    op: str
    group: tuple
    root: int          # -1: none
    algorithm: object  # str or None
    segments: int      # 0: the library's default
    element: int       # 0: an even cut


def spec(op, group, root=None, algorithm=None, segments=0, element=0):
    """One call's :class:`Spec`, its op and hint checked by name; the root defaults to the
    group's first rank for broadcast and reduce (-1 for the others).

    The one place a spec is made: every builder of collective ops calls it.

    Raises
    ------
    TraceError
        For an unknown op or algorithm (the group, root and bytes are checked with the trace).

    Examples
    --------
    >>> spec("reduce", [3, 1])
    Spec(op='reduce', group=(3, 1), root=3, algorithm=None, segments=0, element=0)
    >>> spec("allsum", [0, 1])
    Traceback (most recent call last):
    ...
    netsim.errors.TraceError: unknown collective 'allsum'; known: allreduce, allgather, reduce_scatter, broadcast, reduce, alltoall, sendrecv
    """
    group = tuple(int(r) for r in group)
    if root is None:
        root = group[0] if op in ROOTED and group else -1
    check_choice(op, "collective", OPS, error=TraceError)
    if algorithm is not None and algorithm not in HINTS:
        raise TraceError(f"unknown algorithm {algorithm!r} for {op}; known: {', '.join(HINTS)}")
    return Spec(op, group, int(root), algorithm, int(segments), int(element))


def owner(s):
    """The rank a collective op of spec ``s`` sits on in the trace: its root, else its
    group's first rank.

    Examples
    --------
    >>> owner(spec("broadcast", [1, 2], root=2)), owner(spec("allgather", [4, 5]))
    (2, 4)
    """
    return s.root if s.root >= 0 else (s.group[0] if s.group else 0)


class Specs:
    """A read-only table of collective specifications (see the module docstring).

    Parameters
    ----------
    op : array_like of int
        Index into :data:`OPS` per row.
    group_ptr, group_idx : array_like of int
        CSR member lists: row k's group is ``group_idx[group_ptr[k]:group_ptr[k+1]]``.
    root, algorithm, segments, element : array_like of int
        As in the module docstring.

    Examples
    --------
    >>> s = Specs([0], [0, 2], [3, 1], [-1], [-1], [0], [0])
    >>> s.row(0)
    Spec(op='allreduce', group=(3, 1), root=-1, algorithm=None, segments=0, element=0)
    """

    COLUMNS = ("op", "group_ptr", "group_idx", "root", "algorithm", "segments", "element")
    _DTYPES = (np.int8, np.int64, np.int32, np.int32, np.int8, np.int32, np.int32)

    def __init__(self, op, group_ptr, group_idx, root, algorithm, segments, element):
        values = (op, group_ptr, group_idx, root, algorithm, segments, element)
        for name, dtype, v in zip(self.COLUMNS, self._DTYPES, values):
            try:
                arr = np.array(v, dtype=dtype).reshape(-1)
            except (TypeError, ValueError, OverflowError) as exc:
                raise TraceError(f"collective specs: column {name!r} is not integer: {exc}") \
                    from None
            arr.flags.writeable = False
            setattr(self, name, arr)
        n = len(self.op)
        if len(self.group_ptr) != n + 1 or any(len(getattr(self, c)) != n for c in
                                               ("root", "algorithm", "segments", "element")):
            raise TraceError(f"collective specs: columns of {n} rows need group_ptr of "
                             f"{n + 1} entries and one entry per row elsewhere")
        if n and (self.group_ptr[0] != 0 or np.any(np.diff(self.group_ptr) < 0)
                  or self.group_ptr[-1] != len(self.group_idx)):
            raise TraceError("collective specs: group_ptr must start at 0, never decrease and "
                             "end at len(group_idx)")

    @classmethod
    def empty(cls):
        """A table of no rows.

        Examples
        --------
        >>> len(Specs.empty())
        0
        """
        return cls([], [0], [], [], [], [], [])

    @classmethod
    def from_rows(cls, rows):
        """A table from rows ``(op, group, root, algorithm, segments, element)``.

        ``op`` and ``algorithm`` are names (``algorithm`` None for the library's
        choice); ``root`` -1 for none.

        Raises
        ------
        TraceError
            For an unknown op or algorithm name.

        Examples
        --------
        >>> Specs.from_rows([("broadcast", (2, 0, 1), 2, "mst", 0, 0)]).row(0).root
        2
        """
        rows = [spec(*r) for r in rows]
        sizes = [len(r.group) for r in rows]
        return cls([OPS.index(r.op) for r in rows], np.concatenate([[0], np.cumsum(sizes)]),
                   [g for r in rows for g in r.group], [r.root for r in rows],
                   [-1 if r.algorithm is None else HINTS.index(r.algorithm) for r in rows],
                   [r.segments for r in rows], [r.element for r in rows])

    def __len__(self):
        return len(self.op)

    def __eq__(self, other):
        return isinstance(other, Specs) and all(
            np.array_equal(getattr(self, c), getattr(other, c)) for c in self.COLUMNS)

    def group(self, k):
        """Row ``k``'s member ranks (read-only int32 array)."""
        return self.group_idx[self.group_ptr[k]:self.group_ptr[k + 1]]

    def row(self, k):
        """Row ``k`` as a :class:`Spec` of plain values."""
        a = int(self.algorithm[k])
        return Spec(OPS[self.op[k]], tuple(self.group(k).tolist()), int(self.root[k]),
                    None if a < 0 else HINTS[a], int(self.segments[k]), int(self.element[k]))

    def rows(self):
        """Every row as a :class:`Spec`."""
        return [self.row(k) for k in range(len(self))]

    def merged(self, other):
        """This table with ``other``'s rows that it lacks appended, and ``other``'s new indices.

        Returns
        -------
        specs : Specs
        remap : ndarray of int32
            ``remap[k]`` is the index of ``other``'s row k in ``specs``; one more
            entry, -1, so that ``remap[column]`` maps -1 (no collective) to -1.

        Examples
        --------
        >>> a = Specs.from_rows([("allreduce", (0, 1), -1, None, 0, 0)])
        >>> b = Specs.from_rows([("allgather", (0, 1), -1, None, 0, 0),
        ...                      ("allreduce", (0, 1), -1, None, 0, 0)])
        >>> m, remap = a.merged(b)
        >>> len(m), remap.tolist()
        (2, [1, 0, -1])
        """
        if other is self or other == self:
            return self, np.append(np.arange(len(self), dtype=np.int32), -1).astype(np.int32)
        mine = self.rows()
        index = {r: k for k, r in enumerate(mine)}
        remap = []
        for r in other.rows():
            if r not in index:
                index[r] = len(mine)
                mine.append(r)
            remap.append(index[r])
        return Specs.from_rows(mine), np.array(remap + [-1], np.int32)

    def validate(self, ranks):
        """Raise :class:`TraceError` naming the first bad row for a trace of ``ranks`` ranks.

        Examples
        --------
        >>> Specs.from_rows([("reduce", (0, 1), 5, None, 0, 0)]).validate(2)
        Traceback (most recent call last):
        ...
        netsim.errors.TraceError: collective spec 0 (reduce): root 5 is not in its group (0, 1)
        """
        for k in range(len(self)):
            g = self.group(k)
            name = OPS[self.op[k]] if 0 <= self.op[k] < len(OPS) else None
            where = f"collective spec {k} ({name})"
            if name is None:
                raise TraceError(f"collective spec {k} has unknown op {self.op[k]}")
            if not len(g):
                raise TraceError(f"{where} has an empty group")
            if g.min() < 0 or g.max() >= ranks:
                raise TraceError(f"{where}: group names a rank outside 0..{ranks - 1}: "
                                 f"{tuple(g.tolist())}")
            if len(np.unique(g)) != len(g):
                raise TraceError(f"{where}: group repeats a rank: {tuple(g.tolist())}")
            root = int(self.root[k])
            if name in ROOTED and root not in g:
                raise TraceError(f"{where}: root {root} is not in its group {tuple(g.tolist())}")
            if name not in ROOTED and root != -1:
                raise TraceError(f"{where}: {name} has no root (got {root})")
            if not -1 <= self.algorithm[k] < len(HINTS):
                raise TraceError(f"{where} has unknown algorithm index {self.algorithm[k]}")
            if self.segments[k] < 0 or self.element[k] < 0:
                raise TraceError(f"{where}: segments and element must be >= 0")
