"""Routing cost: CPU seconds per (source x (nodes + edges)) of netsim.network.compiled.Network.routes.

A replay solves one Dijkstra per distinct message source (netsim.network.compiled.Network._solve),
each over up to every node and link of the topology, so routing work grows as
sources x (nodes + edges): quadratic in P when every rank sends (a parameter server's
workers, a ring). This prints, for a star and a two-tier cluster with one server rank and
P workers, two patterns (server: each worker sends to the server, the server to each
worker, as ps-sync does; ring: each worker to the next, one target per search), the CPU
seconds of the routes and that time over sources x (nodes + edges), the figure
studies.scaling.trace_size.ROUTE_SECONDS cites.

    python benchmarks/routing.py [--P 1024 --P 4096]
"""

import argparse
import time

import numpy as np

from netsim.network.compiled import Network
from topologies import star, two_tier


def case(name, G, P, pattern="server"):
    net = Network(G)
    ranks = net.placement(P + 1)
    workers, server = ranks[:P], ranks[P]
    if pattern == "server":  # ps-sync: every worker to the server and back
        src = np.concatenate([workers, np.full(P, server)])
        dst = np.concatenate([np.full(P, server), workers])
    else:  # a ring: each worker to the next, one target per source
        src, dst = workers, np.roll(workers, -1)
    t = time.process_time()
    net.routes(src, dst)
    cpu = time.process_time() - t
    size = G.number_of_nodes() + G.number_of_edges()
    sources = len(np.unique(src))
    print(f"{name + ' ' + pattern:16s} P={P:5d} nodes+edges={size:6d} sources={sources:5d} cpu={cpu:7.3f} s "
          f"per source x (nodes+edges) = {cpu / (sources * size) * 1e9:6.1f} ns")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--P", type=int, action="append")
    for P in ap.parse_args().P or [1024, 2048, 4096]:
        for pattern in ("server", "ring"):
            case("star", star(P + 1), P, pattern)
            case("two_tier", two_tier(P + 1, per_rack=32), P, pattern)


if __name__ == "__main__":
    main()
