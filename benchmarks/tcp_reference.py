"""netsim's ``transport="tcp"`` against the packet-level reference (``tcp_packet.py``).

Run:  python benchmarks/tcp_reference.py            (compare with the stored reference)
      python benchmarks/tcp_reference.py --make     (re-run the packet simulator first)

The patterns, on a star of hosts at 10 and 100 Gb/s with 1 us links:

* ``lone``: one transfer of 10 kB .. 100 MB, at MTU 1500 and 9000;
* ``incast``: 2, 4 or 8 senders of 100 kB .. 10 MB each into one host;
* ``ring``: MPICH's ring allreduce (``netsim.comm.collectives.ring_allreduce``) at
  P = 4 and 8, 1 MB .. 32 MB;
* ``ps``: a parameter-server round (``netsim.comm.collectives.ps_push_pull``: every
  worker pushes the model to one server, which sends it back to each), P = 4, 8.

The packet simulator's makespans are stored in ``data/tcp_reference.json`` with
the parameters that made them; the comparison runs netsim on the same star
(``topologies.star`` with the same MTU, so the same framing) with
``transport="tcp"`` and ``"fluid"`` and prints each error and their median and
worst. The acceptance of the TCP transport is a median |error| <= 1 % and a
worst <= 10 %.
"""

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "tcp_reference.json")
DELAY = 1e-6
RATES = {"10G": 1.25e9, "100G": 12.5e9}


def cases():
    """Every reference case: (name, pattern, P, bytes, rate key, MTU)."""
    out = []
    for rate in RATES:
        for mtu in (1500, 9000):
            for n in (10e3, 100e3, 1e6, 10e6, 100e6):
                out.append(("lone", 1, n, rate, mtu))
        for senders in (2, 4, 8):
            for n in (100e3, 1e6, 10e6):
                out.append(("incast", senders, n, rate, 1500))
        for P in (4, 8):
            for n in (1e6, 8e6, 32e6):
                out.append(("ring", P, n, rate, 1500))
        for P in (4, 8):
            for n in (1e6, 8e6):
                out.append(("ps", P, n, rate, 1500))
    return [{"pattern": p, "P": P, "bytes": n, "rate": r, "mtu": m} for p, P, n, r, m in out]


def trace_of(case):
    """The message-level trace of a case and the hosts it needs."""
    from netsim import TraceBuilder
    from netsim.comm import collectives

    P, n = case["P"], case["bytes"]
    if case["pattern"] == "lone":
        b = TraceBuilder(2)
        b.message(0, 1, n)
        return b.build(), 2
    if case["pattern"] == "incast":
        b = TraceBuilder(P + 1)
        for i in range(P):
            b.message(i, P, n)
        return b.build(), P + 1
    if case["pattern"] == "ring":
        return collectives.ring_allreduce(P, n), P
    return collectives.ps_push_pull(P, n), P + 1


def label(case):
    return f"{case['pattern']} P={case['P']} {case['bytes']:.0e} B {case['rate']} MTU {case['mtu']}"


def make():
    """Run the packet simulator on every case; store the makespans."""
    sys.path.insert(0, HERE)
    from tcp_packet import simulate_packets

    rows = []
    for case in cases():
        trace, hosts = trace_of(case)
        t0 = time.perf_counter()
        end = simulate_packets(trace, hosts, RATES[case["rate"]], DELAY, case["mtu"])
        rows.append({**case, "makespan": float(end.max()),
                     "wall": round(time.perf_counter() - t0, 2)})
        print(f"{label(case):42s} {rows[-1]['makespan'] * 1e6:12.2f} us  ({rows[-1]['wall']} s)",
              flush=True)
    os.makedirs(os.path.dirname(DATA), exist_ok=True)
    with open(DATA, "w") as f:
        json.dump({"simulator": "benchmarks/tcp_packet.py", "delay": DELAY, "rates": RATES,
                   "cases": rows}, f, indent=1)


def compare(tcp=None):
    """netsim's errors against the stored reference, per case and summarised."""
    from netsim import simulate
    from topologies.clusters import star

    with open(DATA) as f:
        ref = json.load(f)
    errs = {"tcp": [], "fluid": []}
    print(f"{'case':42s} {'packet':>11s} {'tcp':>8s} {'fluid':>8s}")
    for row in ref["cases"]:
        trace, hosts = trace_of(row)
        G = star(hosts, bandwidth=RATES[row["rate"]], latency=ref["delay"], mtu=row["mtu"])
        out = {}
        for transport in errs:
            r = simulate(trace, G, transport=transport,
                         tcp=tcp if transport == "tcp" else None)
            out[transport] = (r.makespan - row["makespan"]) / row["makespan"]
            errs[transport].append(abs(out[transport]))
        print(f"{label(row):42s} {row['makespan'] * 1e6:9.1f}us {out['tcp']:+8.2%} "
              f"{out['fluid']:+8.2%}")
    for transport, e in errs.items():
        print(f"{transport}: median |error| {statistics.median(e):.2%}, worst {max(e):.2%} "
              f"over {len(e)} loss-free runs")
    return errs


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--make", action="store_true", help="re-run the packet simulator first")
    args = ap.parse_args()
    if args.make:
        make()
    compare()
