"""The desynchronised patterns of ``desync.py`` in SimGrid's Python API (S4U), for comparison.

Run by ``desync.py`` with the system Python (Debian's ``python3-simgrid``), never imported
by netsim:  python3 benchmarks/simgrid_desync.py PATTERN P GAPS_FILE PLATFORM_XML

The platform (written by ``desync.py``) is a SimGrid cluster (a star): every host has a
10 GbE split-duplex private link (1.25e9 B/s, 1 us) to a fat-pipe backbone that never
limits, so a message crosses two 1 us link directions, as on netsim's star. The network
model is CM02 with no TCP window,
no cross traffic and no latency or bandwidth factors: SimGrid's max-min sharing with
netsim's parameters. GAPS_FILE holds the compute gap of (step s, rank r) on line s P + r,
the same numbers as the netsim trace. Prints JSON: wall and CPU seconds (all threads) and
the simulated makespan.
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
        # Post every receive first, so a send never waits for its receiver (as in netsim);
        # each get_async is (comm, data holder) and both stay referenced until the end.
        recvs = [boxes[r].get_async() for _ in range(steps)] if pattern == "desync-ring" else []
        send = None
        for s in range(steps):
            if s:
                send.wait()
                if recvs:
                    recvs[s - 1][0].wait()
            simgrid.this_actor.sleep_for(gaps[s * P + r])
            send = right(r).put_async(s, chunk)
        send.wait()
        if recvs:
            recvs[-1][0].wait()

    def sink(r):
        # Chains: rank r's right neighbour drains its messages without constraining them.
        pending = [boxes[(r + 1) % P].get_async() for _ in range(steps)]
        for comm, _data in pending:  # keep the data holder alive until the comm ends
            comm.wait()

    for r in range(P):
        simgrid.Actor.create(f"a{r}", hosts[f"h{r}"], ring, r)
        if pattern == "chains":
            simgrid.Actor.create(f"s{r}", hosts[f"h{(r + 1) % P}"], sink, r)
    t0, c0 = time.perf_counter(), time.process_time()
    e.run()
    print(json.dumps({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0,
                      "makespan": simgrid.Engine.clock}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4])
