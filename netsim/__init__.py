"""netsim: flow-level network simulation of distributed neural-network training.

The core takes a trace (what each rank computes and sends) and a networkx graph
(the hardware) and replays one on the other with max-min fair bandwidth sharing.

>>> import netsim
>>> b = netsim.TraceBuilder(2); _ = b.message(0, 1, 1e6)
>>> G = netsim.nx.Graph(); G.add_edge("a", "b", bandwidth=1e9, latency=0.0)
>>> netsim.simulate(b.build(), G).makespan
0.001
"""

import networkx as nx

from .chakra import load_chakra, save_chakra
from .errors import DeadlockError, NetsimError, TopologyError, TraceError, UnitError
from .network import Network, check_topology, compute_nodes
from .kineto import load_kineto
from .result import Result, simulate
from .trace import COMPUTE, MESSAGE, Trace, TraceBuilder
from .traceio import load_trace, save_trace
from .traceops import concat, repeat

__version__ = "0.1.0"

__all__ = [
    "simulate", "Result", "Network", "check_topology", "compute_nodes",
    "Trace", "TraceBuilder", "COMPUTE", "MESSAGE", "concat", "repeat", "load_trace", "save_trace",
    "load_kineto", "load_chakra", "save_chakra",
    "NetsimError", "TopologyError", "TraceError", "DeadlockError", "UnitError", "nx",
]
