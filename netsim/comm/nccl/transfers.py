"""How a planned NCCL call's bytes move: every channel of its algorithm as flows on the links.

:func:`lay_out` turns one call (operation, algorithm, bytes, channels) into
``(from node, to node, bytes)`` flows on the effective graph, the fluid limit of
NCCL's pipelined channels: a ring hop of an allreduce carries ``2 (n-1)/n`` of the
channel's share, of an allgather or reduce-scatter ``(n-1)/n``; tree and CollNet
chains carry it up and down; an NVLS port ``(1 + 1/n)`` of it each way at NCCL's
NVLS efficiency; PAT exchanges with peers ``2**d`` ranks away; point-to-point
calls split each send over the channels. :class:`Transfers` routes each transfer
by NCCL's transport. :mod:`netsim.comm.nccl.model` chooses the plan and calls this
(see its docstring for the sources of each rule).
"""

import math
import types

from netsim.comm.nccl import hardware, limits

__all__ = ["NVLS_EFFICIENCY", "RING_SHARE", "Transfers", "lay_out"]

# Share of the NVLink rate NVLS transfers (multimem load-reduce and multicast store) reach:
# ``nvlsEfficiency`` in src/graph/tuning.cc of NCCL v2.30.7-1 (Hopper 0.85, Blackwell 0.74;
# :data:`netsim.comm.nccl.limits.NVLS_EFFICIENCY`). NVLS flows carry their bytes / this share.
NVLS_EFFICIENCY = types.MappingProxyType({90: limits.NVLS_EFFICIENCY[2],
                                          100: limits.NVLS_EFFICIENCY[3]})


#: The part of a channel's share each hop of a ring carries: ``2 (n-1)/n`` for allreduce,
#: ``(n-1)/n`` for allgather and reduce-scatter, the whole share for broadcast and reduce.
RING_SHARE = types.MappingProxyType({"allreduce": lambda n: 2 * (n - 1) / n,
                                     "allgather": lambda n: (n - 1) / n,
                                     "reduce_scatter": lambda n: (n - 1) / n})


def _whole(nbytes):
    """A flow's bytes: a transfer that moves data moves at least one byte.

    A tiny call split over many channels and peers (8 bytes of alltoall over 32
    ranks) would otherwise give flows of a fraction of a byte, which no trace holds.
    """
    return max(nbytes, 1.0)


class Transfers:
    """Flows between graph nodes, ``(from node, to node, bytes)``, of one call, and their bounds.

    :meth:`add` routes a transfer between two ranks by NCCL's transport (P2P, SHM
    staging, NET with PXN), :meth:`to_sharp` and :meth:`to_switch` to a reducing
    switch and back. ``wire`` is the protocol's bytes on the wire per data byte.
    ``bounds[k]`` is flow ``k``'s rate bound in wire bytes/s (inf: none), the
    engine's per-flow rate bound.

    Examples
    --------
    >>> import networkx as nx
    >>> from netsim.comm.nccl import hardware
    >>> G = nx.Graph(); G.add_nodes_from(["g0", "g1"], kind="gpu", sm=70)
    >>> G.add_edge("g0", "g1", bandwidth=25e9, latency=0.0)
    >>> t = Transfers(hardware.describe(G), wire=2.0)
    >>> t.add(0, 1, 8.0); t.flows
    [('g0', 'g1', 16.0)]
    """

    def __init__(self, hw, wire, memory=None):
        self.hw, self.wire = hw, wire
        self.memory = memory or {}   # cpu node -> its memory node (:mod:`.staging`)
        self.flows = []
        self.bounds = []

    def _flow(self, u, v, nbytes, bound=None):
        self.flows.append((u, v, _whole(nbytes * self.wire)))
        self.bounds.append(math.inf if bound is None else bound)

    def _staged(self, r):
        """The node a transfer is staged in at rank ``r``'s CPU: its memory, else the CPU."""
        cpu = self.hw.cpu[r]
        return self.memory.get(cpu, cpu)

    def add(self, a, b, nbytes, rail=0, bound=None):
        """A transfer from rank ``a`` to rank ``b`` by NCCL's transport: one flow per leg.

        ``bound`` (wire bytes/s, or None) holds the first leg, the one out of
        ``a``'s GPU, to a channel's GPU-side limit.
        """
        hw = self.hw
        if nbytes <= 0 or a == b:
            return
        ga, gb = hw.gpus[a], hw.gpus[b]
        ma, mb = hw.machine[a], hw.machine[b]
        way = [ga]
        if not hw.p2p and hw.cpu[a] is not None and ma != mb:   # NET: the sender's host
            way.append(self._staged(a))
        if not hw.p2p and hw.cpu[b] is not None and ma == mb:   # SHM: the receiver's buffer
            way.append(self._staged(b))
        if ma != mb:
            ra, rb = rail % len(hw.nics[ma]), rail % len(hw.nics[mb])
            if hw.p2p and a not in hw.rail_near[ma][ra]:   # PXN: via the NIC's own GPU
                way.append(hw.gpus[hw.rail_gpu[ma][ra]])
            way += [hw.nics[ma][ra], hw.nics[mb][rb]]
            if hw.p2p and b not in hw.rail_near[mb][rb]:
                way.append(hw.gpus[hw.rail_gpu[mb][rb]])
            if not hw.p2p and hw.cpu[b] is not None:
                way.append(self._staged(b))
        way.append(gb)
        for u, v in zip(way, way[1:]):
            if u != v:
                self._flow(u, v, nbytes, bound)
                bound = None

    def to_sharp(self, a, rail, switch, nbytes, bound=None):
        """CollNet: rank ``a`` to its rail's SHARP switch and back, ``nbytes`` each way.

        The way out is ``a``'s NIC of that rail (through the NIC's GPU over NVLink when
        ``a`` is not next to it, as :meth:`add` does); the switch reduces what every
        machine sends and returns the result to each. ``bound`` (wire bytes/s, or None)
        holds the first leg each way, out of ``a``'s GPU and out of the switch.
        """
        hw, m = self.hw, self.hw.machine[a]
        r = rail % len(hw.nics[m])
        way = [hw.gpus[a]]
        if hw.p2p and a not in hw.rail_near[m][r]:
            way.append(hw.gpus[hw.rail_gpu[m][r]])
        way += [hw.nics[m][r], switch]
        for k, (u, v) in enumerate(zip(way, way[1:])):
            self._flow(u, v, nbytes, bound if k == 0 else None)
            self._flow(v, u, nbytes, bound if k == len(way) - 2 else None)

    def to_switch(self, a, switch, nbytes, bound=None):
        """NVLS: rank ``a`` to its NVSwitch and back, ``nbytes`` each way (NVLS efficiency).

        ``bound`` (bytes/s of ``nbytes``, or None) holds both flows to their channel's
        rate; it is scaled by the NVLS efficiency as the bytes are.
        """
        eff = NVLS_EFFICIENCY[100 if self.hw.compcap >= 100 else 90]
        g = self.hw.gpus[a]
        bound = None if bound is None else bound / eff
        self._flow(g, switch, nbytes / eff, bound)
        self._flow(switch, g, nbytes / eff, bound)


def _times(bound, factor):
    """A channel's rate bound for a flow carrying ``factor`` of its share (None: unbounded)."""
    return None if bound is None else bound * factor


def _local_rings(G, hw, channels):
    return [hardware.rings(G, hw, m, channels) for m in range(len(hw.machines))]


def _machine_ring(hw, local, m, c):
    """Machine ``m``'s part of channel ``c``'s ring, entered at the GPU nearest rail ``c``.

    On an NVSwitch every order is a ring, so it also leaves from a GPU next to the
    same NIC where there is one (NCCL's search keeps a channel on one NIC); on
    direct NVLinks it leaves from the entry's predecessor on the NVLink ring.
    """
    ring = local[m][c % len(local[m])]
    if len(hw.machines) == 1 or not hw.rail_gpu[m]:
        return list(ring)
    r = c % len(hw.rail_gpu[m])
    entry = hw.rail_gpu[m][r]
    i = ring.index(entry)
    ring = list(ring[i:] + ring[:i])
    exits = [g for g in hw.rail_near[m][r] if g != entry]
    if hw.nvswitch[m] is not None and exits:
        ring.remove(exits[0])
        ring.append(exits[0])
    return ring


def _ring_order(hw, local, c):
    """Channel ``c``'s ring over every machine (see :func:`_machine_ring`)."""
    return [g for m in range(len(hw.machines)) for g in _machine_ring(hw, local, m, c)]


def _own_rail(hw, a):
    """The rail of rank ``a``'s own NIC (it is that rail's GPU), else its local index."""
    m = hw.machine[a]
    if a in hw.rail_gpu[m]:
        return hw.rail_gpu[m].index(a)
    return hw.machines[m].index(a)


def _chain(hw, local, m, c):
    """Machine ``m``'s chain of channel ``c``: its ring order from the GPU nearest rail ``c``."""
    ring = local[m][c % len(local[m])]
    head = hw.rail_gpu[m][c % len(hw.rail_gpu[m])] if hw.rail_gpu[m] else ring[0]
    i = ring.index(head)
    return ring[i:] + ring[:i]


def _chain_flows(flows, chain, share, c, cap):
    """Channel ``c``'s chain: ``share`` reduced up it and broadcast down it, hop by hop."""
    for a, b in zip(chain, chain[1:]):
        flows.add(b, a, share, rail=c, bound=cap(b, a))   # reduce
        flows.add(a, b, share, rail=c, bound=cap(a, b))   # broadcast


def _pat_flows(flows, n, op, share, c, cap):
    """Channel ``c`` of a PAT allgather (reduce-scatter): peers at distance ``2**d``.

    NCCL's PAT (src/include/collectives.h, ``PatAGAlgorithm``/``PatRSAlgorithm``)
    exchanges along dimensions ``d`` with peers ``2**d`` ranks away; as in Bruck's
    allgather, dimension ``d`` carries ``min(2**d, n - 2**d)`` of the ``n`` blocks,
    ``n - 1`` blocks in all, every rank's flows in flight at once (the fluid limit
    of its pipeline). Reduce-scatter runs the same exchange the other way.
    """
    d = 1
    while d < n:
        blocks = min(d, n - d)
        for a in range(n):
            b = (a + d) % n if op == "allgather" else (a - d) % n
            flows.add(a, b, share * blocks / n, rail=c, bound=_times(cap(a, b), blocks / n))
        d *= 2


def lay_out(G, hw, flows, op, algorithm, nbytes, channels, cap, sharp):
    """Add one call's flows to ``flows``: every channel of ``algorithm`` on the real links.

    Parameters
    ----------
    G : networkx.Graph
        The hardware graph (NVLink rings are searched on it).
    hw : netsim.comm.nccl.hardware.Hardware
    flows : Transfers
        Receives the call's flows.
    op, algorithm : str
        The operation and NCCL's algorithm for it.
    nbytes : float
        The call's bytes (nccl-tests' count).
    channels : int
    cap : callable
        ``cap(a, b)``: the rate (wire bytes/s) at which a channel may move its share
        of the call out of rank ``a``'s GPU toward rank ``b``, or None: each flow is
        bound to it times the part of the share it carries (a ring hop ``2 (n-1)/n``
        of it for allreduce, an NVLS port ``(n + 1)/n``, a tree's network edge half);
        a point-to-point flow is its channel's whole share.
    sharp : sequence or None
        The SHARP switch of each rail (CollNet chain only).

    Examples
    --------
    >>> import networkx as nx
    >>> from netsim.comm.nccl import hardware
    >>> G = nx.Graph(); G.add_nodes_from(["g0", "g1"], kind="gpu", sm=70)
    >>> G.add_edge("g0", "g1", bandwidth=25e9, latency=0.0)
    >>> t = Transfers(hardware.describe(G), wire=1.0)
    >>> lay_out(G, t.hw, t, "allgather", "ring", 100.0, 1, lambda a, b: None, None)
    >>> t.flows
    [('g0', 'g1', 50.0), ('g1', 'g0', 50.0)]
    """
    n, share = len(hw.gpus), nbytes / channels
    if op in ("alltoall", "sendrecv"):
        each = nbytes / n if op == "alltoall" else nbytes
        for a in range(n):
            for b in (range(n) if op == "alltoall" else [(a + 1) % n]):
                for c in range(channels if a != b else 0):
                    flows.add(a, b, each / channels, rail=_own_rail(hw, a), bound=cap(a, b))
        return
    local = _local_rings(G, hw, channels)
    for c in range(channels):
        if algorithm == "ring":
            order = _ring_order(hw, local, c)
            per_hop = RING_SHARE[op](n) if op in RING_SHARE else 1.0
            for i, a in enumerate(order):
                b = order[(i + 1) % n]
                if (op == "broadcast" and b == 0) or (op == "reduce" and a == 0):
                    continue  # the chain stops at (or starts from) the root
                flows.add(a, b, share * per_hop, rail=c, bound=_times(cap(a, b), per_hop))
        elif algorithm == "nvls":
            for a in range(n):
                flows.to_switch(a, hw.nvswitch[0], share * (n + 1) / n,
                                _times(cap(a, a), (n + 1) / n))
        elif algorithm == "pat":
            _pat_flows(flows, n, op, share, c, cap)
        elif algorithm == "collnet_chain":   # chains in each machine, SHARP across
            for m in range(len(hw.machines)):
                chain = _chain(hw, local, m, c)
                _chain_flows(flows, chain, share, c, cap)
                flows.to_sharp(chain[0], c, sharp[c % len(sharp)], share, cap(chain[0], chain[0]))
        else:  # tree, nvls_tree: chains (or NVLS) in each machine, binary tree across
            heads = []
            for m, members in enumerate(hw.machines):
                chain = _chain(hw, local, m, c)
                heads.append(chain[0])
                if algorithm == "nvls_tree":
                    k = len(members)
                    for a in members:
                        # unbounded: tuning.cc's NVLS-tree limit is the network's
                        flows.to_switch(a, hw.nvswitch[m], share * (k + 1) / k)
                else:
                    _chain_flows(flows, chain, share, c, cap)
            # NCCL runs both trees of its double binary tree through every NIC: a tree
            # channel c and its duplicate c + nChannels (tree 1) share graph channel c's
            # ranks (connect.cc connectTrees), and every NVLS channel passes all heads, one
            # per NIC, on tree c % 2 (connectNvls). So each rail carries half of its share
            # on each tree, at half its channel's limit, and a machine inside one tree is
            # a leaf of the other.
            for mirror in (False, True):
                parents = hardware.btree_parents(len(heads), mirror=mirror)
                for k, p in enumerate(parents):
                    if p >= 0:
                        up, down = heads[k], heads[p]
                        flows.add(up, down, share / 2, rail=c, bound=_times(cap(up, down), 0.5))
                        flows.add(down, up, share / 2, rail=c, bound=_times(cap(down, up), 0.5))
