"""Files in and out: netsim's own trace files, Chakra ET, timelines, graph files and PyTorch profiles.

Modules
-------
chakra     Chakra execution traces in and out: one ``.et`` protobuf stream per rank.
graphio    Read and write topologies as networkx node-link JSON or GraphML.
kineto     PyTorch profiler (Kineto) traces: read into a netsim trace, compared with a replay, and written back.
timeline   Timelines: a simulated run in the Chrome trace event format, for ui.perfetto.dev.
tracefile  Trace files: JSON (one object per op, for people) and ``.npz`` (the columns, for size).
whole      Files written whole or not at all: a temporary file beside the target, renamed onto it.
"""
