"""Desynchronised traffic: the engine's cost per event, and SimGrid side by side.

Run:  python benchmarks/desync.py                 (P = 64, 128, 256, 1024; median of 3)
      python benchmarks/desync.py --P 64 --repeat 1

Patterns (100 MB on a 10 GbE star, 1 us links, fixed seeds):

* ``desync-ring``: ring allreduce (2 (P - 1) steps of ``nbytes / P`` per rank to its
  right neighbour) where each step waits for the chunk received in the previous step
  and then for a random compute gap U(0, 1 ms) drawn from the seed;
* ``chains``: every rank sends ``2 (P - 1)`` messages of ``nbytes / P`` to its right
  neighbour, each after the previous one and a random compute gap, with no
  dependency between ranks.

Each case runs in a fresh process so that its peak RSS is its own.
"""

import argparse
import json
import statistics
import subprocess
import sys

import numpy as np


def desync_trace(P, nbytes=100e6, pattern="desync-ring", seed=0, gap=1e-3):
    """The trace of ``pattern`` for P ranks: a compute gap then a message, per step and rank.

    Op ``2 (s P + r)`` is rank r's gap before step s, op ``2 (s P + r) + 1`` its message.
    """
    from netsim.trace import COMPUTE, MESSAGE, Trace, deps_csr

    steps = 2 * (P - 1)
    rng = np.random.default_rng(seed)
    s, r = np.divmod(np.arange(steps * P), P)
    comp = 2 * (s * P + r)
    msg = comp + 1
    n = 2 * steps * P
    kind = np.empty(n, np.uint8)
    kind[comp], kind[msg] = COMPUTE, MESSAGE
    rank = np.empty(n, np.int32)
    rank[comp] = rank[msg] = r
    peer = np.full(n, -1, np.int32)
    peer[msg] = (r + 1) % P
    size = np.zeros(n)
    size[msg] = nbytes / P
    duration = np.zeros(n)
    duration[comp] = rng.uniform(0.0, gap, steps * P)
    iteration = np.repeat(s, 2).astype(np.int32)
    # A gap waits for the rank's previous message and, in the ring, for the one received.
    own = np.full(n, -1, np.int64)
    recv = np.full(n, -1, np.int64)
    later = s > 0
    own[comp[later]] = msg[later] - 2 * P
    if pattern == "desync-ring":
        recv[comp[later]] = 2 * ((s[later] - 1) * P + (r[later] - 1) % P) + 1
    elif pattern != "chains":
        raise ValueError(f"unknown pattern {pattern!r}")
    mine = np.full(n, -1, np.int64)
    mine[msg] = comp
    ptr, idx = deps_csr(own, recv, mine)
    return Trace(P, kind=kind, rank=rank, peer=peer, size=size, duration=duration,
                 iteration=iteration, dep_ptr=ptr, dep_idx=idx)
