"""The flow-level engine: a trace replayed on a compiled network, SimPy ordering its events.

Why it has several execution paths (general, small-event, fused instants, batch on numpy or
compiled loops, reference) and what state each may touch: docs/engine-design.md.

Modules
-------
bottlenecks The tolerant solve's kernels: re-solve some flows, verify max-min's bottleneck conditions.
environment The engine's event queue: its own heap of timed calls, run inside SimPy's event loop.
flow_index  The incremental path's index of flows per link direction, and its component search.
flows       The messages on the wire and the link directions they load: rates, finishes, statistics.
kernels     Compiled loops of the engine's batch path.
maxmin      Max-min fair rates by progressive filling: a compiled loop for batches, plain Python for a few flows.
reference   The readable specification of the engine: a plain-Python reference replay.
replay      The flow-level fluid engine: replays a trace on a network, SimPy ordering its events.
small       The small-event path: an instant of a few ops in plain Python, and its fused form.
tcp         TCP's start-up as a time-varying per-flow rate bound: slow start, store-and-forward, handshake.
tolerant    The tolerance-bounded batch solve (``exact=False``): re-solve only the flows an instant changes.
transport   The engine's side of per-flow rate bounds and of TCP's start-up (:mod:`netsim.engine.tcp`).
vectorised  The batch path's loops in numpy: the compiled kernels' float operations, without numba.
views       The replay's state as named records: memoryviews of its op, link and flow columns.
"""
