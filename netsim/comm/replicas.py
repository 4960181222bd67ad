"""A library's calls under a symmetry of the ranks: the home's share of each.

With ``symmetry=`` (:func:`netsim.simulate`), a trace holds the ops of the home
ranks only (each cycle's smallest rank of the rank permutation), and its
collectives still name every member: a data-parallel allreduce spans every
replica. The replay runs on the quotient network
(:mod:`netsim.network.symmetry`), which needs one flow per orbit. For an NCCL
call that is the plan's flows leaving the home, and the plan must map onto
itself under the permutation (a ring over the replicas in order does; a tree
rooted at one replica does not): :func:`home_share` checks this and refuses
a plan that does not, since its flows would load the copies' links unequally.
MPICH's and gloo's schedules are kept only where every member is a home rank.
"""

import numpy as np

from netsim.network.symmetry import SymmetryError
from netsim.trace.core import ranges

__all__ = ["home_share", "check_blocks", "home_parts"]


def home_share(q, planned):
    """Each NCCL call's plan reduced to its flows leaving the home (each plan checked once).

    Parameters
    ----------
    q : netsim.network.symmetry.Quotient
    planned : dict
        Original op -> ``(plan key, plan)``, as :func:`netsim.comm.library.expand` keeps them.

    Returns
    -------
    dict
        Original op -> ``(plan key, plan)``: a call of simulated ranks as it is, one
        whose members the permutation maps onto themselves with its home flows.
    set
        The plan keys kept *whole*: calls inside one machine whose members the
        permutation maps onto themselves but whose plan it does not (NCCL's ring
        through a DGX's GPUs under a shift of shards that is not the ring's). Such a
        call is exact only as one op of its isolated replay on the whole network
        (:mod:`netsim.comm.alone`), which the expansion then requires.

    Raises
    ------
    SymmetryError
        For a plan across machines that the node permutation does not map onto itself
        (naming its algorithm), or none of whose flows leaves the home.

    Examples
    --------
    >>> import networkx as nx
    >>> from collections import namedtuple
    >>> from netsim.network.compiled import as_network
    >>> from netsim.network.symmetry import quotient
    >>> G = nx.Graph()
    >>> for m in (0, 1):
    ...     G.add_node(f"gpu{m}", kind="gpu", node=m)
    ...     G.add_edge(f"gpu{m}", "sw", bandwidth=50e9, latency=1e-6)
    >>> net = as_network(G)
    >>> q = quotient(net, np.array([net.node_of("gpu0"), net.node_of("gpu1")]), [1, 0])
    >>> Plan = namedtuple("Plan", "flows bounds algorithm")   # as netsim.comm.nccl's Call
    >>> ring = Plan((("gpu0", "gpu1", 8.0), ("gpu1", "gpu0", 8.0)), (1.0, 1.0), "ring")
    >>> home_share(q, {5: ((("gpu0", "gpu1"),), ring)})[0][5][1].flows
    (('gpu0', 'gpu1', 8.0),)
    """
    out, seen, whole = {}, {}, set()
    for i, (key, call) in planned.items():
        if key not in seen:
            seen[key] = _share(q, key[0], call)
            if seen[key] is None:
                whole.add(key)
        out[i] = (key, call if seen[key] is None else seen[key])
    return out, whole


def _share(q, members, call):
    """A call within the home as it is; one that spans the copies, its home flows."""
    idx = q.base.index
    src = np.array([idx[u] for u, _, _ in call.flows], np.int64)
    group = np.array([idx[v] for v in members], np.int64)
    dst = np.array([idx[v] for _, v, _ in call.flows], np.int64)
    if (np.lcm(q.size[src], q.size[dst]) != q.g).any():
        raise SymmetryError(f"NCCL's {call.algorithm} plan has a flow with fewer than "
                            f"{q.g} copies under the shift")
    if (q.home[group] & q.moved[group]).all():
        # the call's images are the other copies' calls: each of its flows is one of its
        # orbit, wherever it leaves from (a NIC its GPU shares with another's, say)
        return call
    if set(q.perm[group].tolist()) != set(group.tolist()):
        raise SymmetryError(f"a call's members {members[:4]}... neither lie in the simulated "
                            f"machines nor map onto themselves")
    size = np.array([b for _, _, b in call.flows], np.float64)
    bound = np.asarray(call.bounds, np.float64)
    rows = sorted(zip(src.tolist(), dst.tolist(), size.tolist(), bound.tolist()))
    image = sorted(zip(q.perm[src].tolist(), q.perm[dst].tolist(), size.tolist(),
                       bound.tolist()))
    if rows != image:
        machine = {q.base.graph.nodes[v].get("node", -1) for v in members}
        if len(machine) == 1 and -1 not in machine:
            return None   # kept whole: exact only as one op replayed alone
        raise SymmetryError(f"NCCL's {call.algorithm} plan of {len(rows)} flows is not "
                            f"symmetric under the replicas' shift")
    # one flow of each orbit: the one whose end that moves with it (its tail where both
    # do) lies in the home
    keep = q.home[np.where(q.size[src] == q.g, src, dst)]
    if len(src) and not keep.any():
        raise SymmetryError("a call has no flow leaving the simulated machines")
    flows = tuple(f for f, k in zip(call.flows, keep.tolist()) if k)
    return call._replace(flows=flows, bounds=tuple(bound[keep].tolist()))


def check_blocks(a, q, nodes):
    """Refuse MPICH's and gloo's schedules with a member outside the home.

    Parameters
    ----------
    a : netsim.comm.library._Assembly
    q : netsim.network.symmetry.Quotient
    nodes : ndarray of int
        Node index of every rank of the trace.

    Raises
    ------
    SymmetryError
        Naming the op.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> a = SimpleNamespace(blocks={}, trace=None)
    >>> check_blocks(a, None, None) is None
    True
    """
    for i in a.blocks:
        group = a.trace.group(i)
        if not _simulated(q, nodes)[group].all():
            raise SymmetryError(f"op {i}: only NCCL's calls run under a symmetry when they "
                                f"span the copies")


def home_parts(parts, q, nodes):
    """The parts of the simulated ranks only (the others' are their copies').

    Examples
    --------
    >>> p = {"op": np.array([0, 0]), "rank": np.array([0, 1]), "gate_ptr": np.array([0, 1, 2]),
    ...      "gate": np.array([4, 5]), "end_ptr": np.array([0, 1, 2]), "end": np.array([6, 6])}
    >>> from types import SimpleNamespace
    >>> q = SimpleNamespace(home=np.array([True, False]), moved=np.array([True, True]))
    >>> home_parts(p, q, np.array([0, 1]))["gate"].tolist()
    [4]
    """
    keep = np.flatnonzero(_simulated(q, nodes)[parts["rank"]])
    out = {"op": parts["op"][keep], "rank": parts["rank"][keep]}
    for name in ("gate", "end"):
        ptr = parts[f"{name}_ptr"]
        cnt = np.diff(ptr)[keep]
        new = np.zeros(len(keep) + 1, np.int64)
        np.cumsum(cnt, out=new[1:])
        out[f"{name}_ptr"], out[name] = new, parts[name][ranges(ptr[keep], cnt)]
    return out


def _simulated(q, nodes):
    """Per rank: whether it is simulated (on a home machine)."""
    return q.home[nodes] & q.moved[nodes]
