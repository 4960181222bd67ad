"""Writes the schema-2 trace files of this folder (run once from the repository root, at
commit 179cefc, before schema 3 existed): ``python tests/data/traces/make_schema2.py``."""


def main():
    import netsim
    from netsim import TraceBuilder
    from netsim.collectives import ring_allreduce
    from netsim.traceio import SCHEMA, save_trace
    from netsim.traceops import concat, repeat
    from topologies import star

    assert SCHEMA == "netsim-trace/2", "this script only makes sense under schema 2"
    b = TraceBuilder(3, metadata={"device_flops": 1e12, "paradigm": "schema-2 sample"})
    c0 = b.compute(0, seconds=1e-3, tag="fwd")
    c1 = b.compute(1, flops=2e9, tag="fwd")
    m0 = b.message(0, 1, 1.5e6, deps=[c0], tag="push", channel=1, priority=2)
    m1 = b.message(1, 2, 123457, deps=[c1, m0], tag="push", priority=-1)
    b.message(2, 0, 0, deps=[m1], iteration=0, channel=2)
    b.compute(2, seconds=2e-4, deps=[m1], tag="bwd")
    t = repeat(concat(b.build(), ring_allreduce(3, 3e6), iteration_offset=0), 2)
    save_trace(t, "tests/data/traces/schema2.json")
    save_trace(t, "tests/data/traces/schema2.npz")
    G = star(3, bandwidth=1.25e9, latency=1e-6)
    print(repr(netsim.simulate(t, G).makespan), t)


if __name__ == "__main__":
    main()
