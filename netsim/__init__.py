"""netsim: flow-level network simulation of distributed neural-network training.

The core takes a trace (what each rank computes and sends) and a networkx graph
(the hardware) and replays one on the other with max-min fair bandwidth sharing.

>>> import netsim
>>> b = netsim.TraceBuilder(2); _ = b.message(0, 1, 1e6)
>>> G = netsim.nx.Graph(); G.add_edge("a", "b", bandwidth=1e9, latency=0.0)
>>> netsim.simulate(b.build(), G).makespan
0.001

``import netsim`` loads the replay path only. What only some runs need loads on
first use (PEP 562's module ``__getattr__``): the NCCL model ``netsim.nccl``, the
Chakra reader and writer (and with them protobuf), the Kineto reader, and
``netsim.nx`` (networkx, whose import loads all its algorithms).

>>> netsim.nccl.ALGORITHMS[0]
'ring'
"""

import importlib

from netsim.errors import DeadlockError, NetsimError, TopologyError, TraceError, UnitError
from netsim.network.compiled import Network, check_topology, compute_nodes
from netsim.result import Result, simulate
from netsim.trace.core import COMPUTE, MESSAGE, Trace, TraceBuilder
from netsim.formats.tracefile import load_trace, save_trace
from netsim.trace.ops import concat, repeat

__version__ = "0.1.0"

__all__ = [
    "simulate", "Result", "Network", "check_topology", "compute_nodes",
    "Trace", "TraceBuilder", "COMPUTE", "MESSAGE", "concat", "repeat", "load_trace", "save_trace",
    "load_kineto", "load_chakra", "save_chakra",
    "NetsimError", "TopologyError", "TraceError", "DeadlockError", "UnitError", "nx",
]

# Loaded on first access, not at import (see the module docstring): name -> (module, attribute
# or None for the module itself).
_LAZY = {
    "nccl": (".nccl", None),
    "load_chakra": (".formats.chakra", "load_chakra"),
    "save_chakra": (".formats.chakra", "save_chakra"),
    "load_kineto": (".formats.kineto", "load_kineto"),
    "nx": ("networkx", None),
}


def __getattr__(name):
    """``netsim.nccl``, ``netsim.load_chakra``, ...: import the module on first access (PEP 562)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attr = _LAZY[name]
    found = importlib.import_module(module, __name__)
    return found if attr is None else getattr(found, attr)


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
