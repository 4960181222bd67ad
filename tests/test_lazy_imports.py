"""What a process loads: `import netsim` and a small replay stay off the heavy dependencies.

Each check runs in a fresh interpreter (``sys.modules`` of this one holds everything the
suite imported) and reads ``sys.modules`` afterwards: which modules are loaded, not how long
it took, so the checks hold on a loaded machine.
"""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEAVY = ("networkx", "numba", "google.protobuf", "matplotlib", "scipy", "pandas")


def loaded(code):
    """The HEAVY modules and netsim's own loaded after running ``code`` in a fresh process."""
    probe = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env,
                         cwd=ROOT, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_import_netsim_loads_no_heavy_dependency():
    mods = loaded("import netsim")
    assert not [m for m in HEAVY if m in mods]
    assert not {"netsim.comm.nccl", "netsim.formats.chakra", "netsim.formats.kineto.load", "netsim.engine.kernels"} & mods


def test_lazy_names_load_on_first_access():
    mods = loaded("import netsim\nassert netsim.nccl.ALGORITHMS\nassert netsim.nx.Graph\n"
                  "assert callable(netsim.load_chakra) and callable(netsim.load_kineto)")
    assert {"netsim.comm.nccl", "networkx", "netsim.formats.chakra", "netsim.formats.kineto.load"} <= mods
    assert "google.protobuf" not in mods  # the Chakra reader imports protobuf when it reads


def test_unknown_attribute_is_an_attribute_error():
    import netsim
    import pytest

    with pytest.raises(AttributeError, match="no attribute 'nosuch'"):
        netsim.nosuch


def test_small_replay_loads_no_compiled_kernel():
    mods = loaded("import networkx as nx, netsim\n"
                  "b = netsim.TraceBuilder(2); _ = b.message(0, 1, 1e6)\n"
                  "G = nx.Graph(); G.add_edge('a', 'b', bandwidth=1e9, latency=0.0)\n"
                  "assert netsim.simulate(b.build(), G).makespan == 1e6 / 1e9")
    assert "numba" not in mods and "netsim.engine.kernels" not in mods


def test_a_small_batch_replay_loads_no_compiled_kernel():
    # A synchronous ring's steps start P flows at one instant: the batch path, whose numpy
    # loops serve until the work would pay numba's load.
    mods = loaded("import networkx as nx, netsim\n"
                  "from netsim.comm.collectives import ring_allreduce\n"
                  "G = nx.star_graph(16); nx.set_edge_attributes(G, 1e9, 'bandwidth')\n"
                  "nx.set_edge_attributes(G, 0.0, 'latency')\n"
                  "netsim.simulate(ring_allreduce(16, 1e6), G)")
    assert "numba" not in mods and "netsim.engine.kernels" not in mods


def test_batch_work_past_the_threshold_loads_the_kernels():
    mods = loaded("import networkx as nx, netsim\n"
                  "from netsim.comm.collectives import ring_allreduce\n"
                  "from netsim.engine import flows\n"
                  "flows.COMPILE_WORK = 0\n"
                  "G = nx.star_graph(16); nx.set_edge_attributes(G, 1e9, 'bandwidth')\n"
                  "nx.set_edge_attributes(G, 0.0, 'latency')\n"
                  "netsim.simulate(ring_allreduce(16, 1e6), G)")
    assert "netsim.engine.kernels" in mods


def test_cli_command_imports_no_other_command():
    mods = loaded("from studies.cli.parser import main\n"
                  "assert main(['replay', 'no-such-file.json', '--topology', 'star']) == 2")
    commands = {m for m in mods if m.startswith("studies.cli.commands.")}
    assert commands == {"studies.cli.commands.replay"}
    assert not [m for m in ("numba", "matplotlib", "scipy", "pandas") if m in mods]
