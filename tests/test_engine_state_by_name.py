"""The engine reads its shared state by name: every record of memoryviews (netsim.engine.views)
views the column its field is named after, every unpacking of one in the engine names its
locals as the fields (so reordering a record fails here, not silently elsewhere), and only
the event queue's module touches SimPy's private attributes."""

import ast
import pathlib

import networkx as nx
import numpy as np

from netsim import Network, TraceBuilder
from netsim.engine import replay as engine
from netsim.engine import views
from netsim.engine.flows import SATURATION
from netsim.engine.tcp import tcp_options

ENGINE = pathlib.Path(engine.__file__).parent
RECORDS = {"link_views": views.LinkViews, "flow_views": views.FlowViews}
SIMPY_PRIVATE = {"_queue", "_now", "_eid", "_value", "_ok", "_delay", "_active_proc",
                 "_defused"}


def _record_of(path, attr):
    """The record class that attribute ``attr`` holds in engine module ``path``, or None."""
    if attr == "views":
        return views.TcpViews if path.name == "tcp.py" else views.OpViews
    return RECORDS.get(attr)


def _unpackings():
    """(module, line, target names, record class) of every tuple unpacking of a record."""
    found = []
    for path in sorted(ENGINE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute)):
                continue
            record = _record_of(path, node.value.attr)
            if record is None:
                continue
            for target in node.targets:
                if isinstance(target, ast.Tuple):
                    names = [t.id if isinstance(t, ast.Name) else None for t in target.elts]
                    found.append((path.name, node.lineno, names, record))
    return found


def test_every_unpacking_of_a_record_names_its_locals_as_the_fields():
    found = _unpackings()
    assert len(found) >= 10  # small.py, flows.py and tcp.py unpack them (not a vacuous pass)
    for module, line, names, record in found:
        where = f"{module}:{line} unpacks {record.__name__}"
        assert len(names) == len(record._fields), f"{where} into {len(names)} names"
        for name, field in zip(names, record._fields):
            assert name in ("_", field), f"{where}: {name!r} where the field is {field!r}"


def test_no_record_is_read_by_position():
    for path in sorted(ENGINE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute):
                assert _record_of(path, node.value.attr) is None, \
                    f"{path.name}:{node.lineno} indexes {node.value.attr}"
            if isinstance(node, ast.Attribute):
                assert not node.attr.endswith("_views") or node.attr in RECORDS, \
                    f"{path.name}:{node.lineno} reads {node.attr}"


def test_only_the_event_queue_module_reads_simpy_internals():
    for path in sorted(ENGINE.glob("*.py")):
        if path.name == "environment.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute):
                assert node.attr not in SIMPY_PRIVATE, f"{path.name}:{node.lineno}: .{node.attr}"


def _replay_state(**options):
    """A small replay's state after it ran: two hosts, a gap then a message."""
    G = nx.Graph()
    G.add_node("a", kind="host")
    G.add_node("b", kind="host")
    G.add_edge("a", "b", bandwidth=1e9, latency=1e-6)
    b = TraceBuilder(2)
    b.message(0, 1, 1e6, deps=[b.compute(0, 1e-3)])
    trace, net = b.build(), Network(G)
    rp = engine._Replay(trace, net, net.placement(2), trace.compute_seconds(), **options)
    rp.run()
    return rp


def _views_its_column(view, column):
    """Whether memoryview ``view`` is a view of the whole of array ``column``."""
    return view.obj is column or (np.shares_memory(np.asarray(view), column)
                                  and view.nbytes == column.nbytes)


def test_each_field_views_the_column_it_is_named_after():
    rp = _replay_state(priority=np.zeros(2, np.int64), bound=np.full(2, np.inf),
                       tcp=tcp_options(None))
    for field in views.OpViews._fields:
        assert _views_its_column(getattr(rp.views, field), getattr(rp, field)), field
    flows = rp.flows
    for field in views.LinkViews._fields[:-1]:
        assert _views_its_column(getattr(flows.link_views, field), getattr(flows, field)), field
    assert list(flows.link_views.full) == (SATURATION * flows.cap).tolist()
    for field in views.FlowViews._fields:
        assert _views_its_column(getattr(flows.flow_views, field), getattr(flows, field)), field
    for field in views.TcpViews._fields:
        assert _views_its_column(getattr(rp.tcp.views, field), getattr(rp.tcp, field)), field


def test_the_flow_views_follow_the_slots_when_they_grow():
    rp = _replay_state()
    flows = rp.flows
    flows._alloc(2 * len(flows.fl_active))
    assert _views_its_column(flows.flow_views.fl_rem, flows.fl_rem)
