"""The desynchronised patterns of ``desync.py`` in SimGrid's Python API (S4U), for comparison.

Run by ``desync.py`` with the system Python (Debian's ``python3-simgrid``), never imported
by netsim:  python3 benchmarks/simgrid_desync.py PATTERN P GAPS_FILE PLATFORM_XML

The platform (written by ``desync.py``) is a SimGrid cluster (a star) without a backbone:
every host has a 10 GbE split-duplex private link (1.25e9 B/s, 1 us), so a message crosses
its sender's up link and its receiver's down link, two 1 us link directions, as on netsim's
star. The network model is CM02 with no TCP window, no cross traffic and no latency or
bandwidth factors: SimGrid's max-min sharing with netsim's parameters. Written the usual way,
as ``simgrid_desync.cpp``: each receiving actor is its mailbox's permanent receiver
(``Mailbox.set_receiver``: messages flow before the ``get``, so a send never waits for its
receiver, as in netsim), sends are blocking ``put`` (a rank's next step waits for its own
send, as the trace says), receives blocking ``get``. GAPS_FILE holds the compute gap of (step
s, rank r) on line s P + r, the same numbers as the netsim trace. Prints JSON: wall and CPU
seconds (all threads) and the simulated makespan.
"""

import json
import sys
import time

import simgrid

def main(pattern, P, gaps_file, platform, nbytes=100e6):
    with open(gaps_file) as f:
        gaps = [float(x) for x in f]
    steps = 2 * (P - 1)
    chunk = round(nbytes / P)  # the bindings take whole bytes (P = 1024: 97,656 for 97,656.25)
    e = simgrid.Engine(["simgrid_desync", "--cfg=network/model:CM02", "--cfg=network/TCP-gamma:0",
                        "--cfg=network/crosstraffic:0", "--log=root.thres:critical"])
    e.load_platform(platform)
    hosts = {h.name: h for h in e.all_hosts}
    boxes = [simgrid.Mailbox.by_name(f"m{r}") for r in range(P)]
    right = lambda r: boxes[(r + 1) % P]

    def ring(r):
        mine = boxes[r]
        for s in range(steps):
            if s and pattern == "desync-ring":
                mine.get()  # the chunk the left neighbour sent in step s - 1
            simgrid.this_actor.sleep_for(gaps[s * P + r])
            right(r).put(s, chunk)
        if pattern == "desync-ring":
            mine.get()

    def sink(r):
        # Chains: rank r's right neighbour takes rank r's messages without constraining them.
        box = boxes[(r + 1) % P]
        for _ in range(steps):
            box.get()

    # Mailbox m(r + 1) receives rank r's messages: its permanent receiver is rank r + 1 (ring)
    # or rank r's sink (chains), declared before any actor runs.
    for r in range(P):
        actor = simgrid.Actor.create(f"a{r}", hosts[f"h{r}"], ring, r)
        if pattern == "chains":
            boxes[(r + 1) % P].set_receiver(
                simgrid.Actor.create(f"s{r}", hosts[f"h{(r + 1) % P}"], sink, r))
        else:
            boxes[r].set_receiver(actor)
    t0, c0 = time.perf_counter(), time.process_time()
    e.run()
    print(json.dumps({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0,
                      "makespan": simgrid.Engine.clock}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4])
