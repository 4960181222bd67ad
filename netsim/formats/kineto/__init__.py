"""PyTorch profiler (Kineto) traces: read into a netsim trace, compared with a replay, and written back.

Modules
-------
comms       Communication kernels of older PyTorch profiles: what they move, read from the launching operator.
file        One PyTorch profiler file read: its rank, world size, GPU ops, collectives and steps.
load        PyTorch profiler (Kineto) traces in: one Chrome-trace JSON per rank becomes a netsim trace.
measured    A replay set against the run it came from: per-rank steps and per-collective kernel times.
older       The event names of early PyTorch profiler files, read as today's.
ranks       Every rank of a profiled job its own program: its collectives matched with its peers' in order.
step_split  Where a rank's step goes: compute, exposed communication, waiting for peers and host gaps.
steps       Which measured steps of an imported profile a replay is compared with, and why.
streams     Where each kernel of an imported profile ran: its device, CUDA stream and name, kept per op.
timeline    A simulated run in the PyTorch profiler's trace layout, one file per rank, for HTA.
"""

from netsim.formats.kineto.load import load_kineto

__all__ = ["load_kineto"]
