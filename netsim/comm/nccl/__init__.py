"""A model of NCCL as a communication library: its tuning, its topology search and its plans.

NCCL's plan for a call (algorithm, protocol, channels) comes from NCCL's own
tuning model (:mod:`netsim.comm.nccl.tuning`, a transcription of v2.30.7-1); the
call is then built as a trace of flows over the graph's real links and replayed
by the engine (:mod:`netsim.comm.nccl.model`), so links shared by channels, rings or
other traffic are counted. The graph is read by :mod:`netsim.comm.nccl.hardware`.

Graph attribute contract
------------------------
The model reads only these attributes, so any networkx graph that carries them
works, not only the builders of ``topologies``:

* node ``kind``: one of ``"gpu"``, ``"nvswitch"``, ``"pcie_switch"``, ``"cpu"``,
  ``"nic"``, ``"switch"``, ``"host"``.
* gpu nodes may carry ``node`` (machine index, default 0), ``sm`` (compute
  capability x 10, e.g. 90; default 80; a node that names a ``model`` must give
  its ``sm``: the core keeps no table of products, ``topologies.devices`` does),
  ``model`` (a label, e.g. ``"H100"``), ``p2p`` (bool, default True: GPU
  peer-to-peer possible; False stages every transfer through host memory),
  ``launch`` (host seconds per kernel launch: read only when one thread launches
  on several GPUs in turn, :mod:`netsim.comm.nccl.launch`).
* nvswitch nodes ``nvls`` (bool: NVLink SHARP in-switch reduction available).
* network switch nodes ``sharp`` (bool: InfiniBand SHARP in-network reduction; with it on
  every rail's switch NCCL may run CollNet chain, as with NCCL's SHARP plugin loaded).
* cpu nodes may carry ``vendor`` (``"amd"`` or ``"intel"``, NCCL's network post
  overhead; default intel) and ``memory_bandwidth`` (bytes/s of the socket's memory,
  reads and writes together: shared by the transfers staged there without P2P,
  :mod:`netsim.comm.nccl.staging`; default no limit).
* every edge ``bandwidth`` (bytes/s per direction, the whole edge: for a bundle of
  parallel links, their sum) and ``latency`` (s); optionally
  ``technology`` (a link technology name such as ``"NVLink4"``, ``"PCIe-gen4-x16"``,
  ``"NDR"``, ``"RoCE-200G"``, ``"EFA"``, ``"10GbE"``: it sets the link's class) and
  ``links`` (parallel links in the edge; for NVLink the default is ``bandwidth`` / one
  link's rate). NVLink edges are told from the ends' kinds (gpu-gpu, gpu-nvswitch) when
  no ``technology`` is given, PCIe edges (pcie_switch, cpu, gpu-nic) likewise, and the rest
  are network links.

Examples
--------
>>> from netsim.comm import nccl
>>> nccl.ALGORITHMS
('ring', 'tree', 'nvls', 'nvls_tree', 'collnet_chain', 'pat', 'p2p')

A lone call, ``netsim.nccl.simulate(G, op, nbytes)``, is :mod:`netsim.nccl`: it replays a
one-op trace through :mod:`netsim.comm.library`, so it sits above the library and this model.
"""

from netsim.comm.nccl import hardware, launch, limits, p2p, search, staging, tuning
from netsim.comm.nccl.model import ALGORITHMS, OPS, WIRE_FACTOR, Plan
from netsim.comm.nccl.tuning import NcclModelError, bus_factor

__all__ = ["Plan", "NcclModelError", "OPS", "ALGORITHMS", "WIRE_FACTOR",
           "bus_factor", "tuning", "search", "hardware", "p2p", "limits", "launch", "staging"]
