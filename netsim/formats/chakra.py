"""Chakra execution traces in and out: one ``.et`` protobuf stream per rank.

MLCommons Chakra (the trace format of ASTRA-sim) stores each rank's graph as a
length-delimited protobuf stream: a varint byte count, then a serialized
``GlobalMetadata``, then one varint-prefixed ``Node`` after another (schema:
``schema/protobuf/et_def.proto`` of github.com/mlcommons/chakra, kept here as
``netsim/et_def.proto``; ``netsim/formats/et_def_pb2.py`` is generated from it at
development time, see its header, so installing netsim needs no compiler).

Mapping
-------
=========================== ==================================================
Chakra node                 netsim
=========================== ==================================================
``COMP_NODE``               compute op of ``duration_micros`` (exact seconds in
                            the ``netsim_seconds`` attribute when present;
                            FLOPs in ``netsim_flops``, and in Chakra's
                            ``num_ops`` with ``duration_micros`` from the
                            trace's ``device_flops`` when known, else 0 and
                            a warning; a foreign node of ``num_ops`` and no
                            duration is read as FLOPs)
``COMM_SEND_NODE``          the source side of a message: ``comm_dst``,
                            ``comm_size`` bytes, ``comm_tag``
``COMM_RECV_NODE``          the destination side: ``comm_src``, ``comm_tag``
``COMM_COLL_NODE``          a collective op (``comm_type``, ``comm_size``: each
                            rank's input bytes, an allgather's netsim size
                            over its group size, see
                            :mod:`netsim.formats.et_conventions`; ``pg_name``
                            ``""`` (``"0"`` read too): every rank; ``comm_group``,
                            an int64 list of ranks, else every rank), kept
                            whole: the replay's
                            library expands it (:mod:`netsim.comm.library`); MPICH
                            with the ring family of schedules unless the node
                            says ``netsim_algorithm`` (and ``netsim_root``,
                            ``netsim_segments``, ``netsim_element``), as
                            :func:`save_chakra` writes them
``data_deps``/``ctrl_deps`` dependencies (both kinds are waited for, under
                            the rule below); :func:`save_chakra` writes every
                            netsim dependency as a ``data_deps`` entry, the
                            kind Chakra's ET feeder follows
``netsim_channel``,         a message's channel and priority (int64
``netsim_priority``         attributes of its send node, written when not 0;
                            absent means 0)
=========================== ==================================================

Attribute types are the ones Chakra's feeder reads (``src/feeder/et_feeder_node.cpp``
of github.com/mlcommons/chakra at commit 21585d8, also ASTRA-sim's fork):
``comm_src``, ``comm_dst``, ``comm_tag`` and ``comm_priority`` as ``int32_val``,
``comm_type``, ``comm_size`` and ``num_ops`` as ``int64_val``, ``is_cpu_op`` as
``bool_val``; a value written as another integer type reads there as 0. Node
names start with the node type (``COMP_NODE_fwd``), as ASTRA-sim's own
generators name them and as Chakra's ``timeline_visualizer.py`` requires (it
takes the node type from the name).

Dependencies of a file another tool wrote
-----------------------------------------
Chakra's PyTorch converter (``src/converter/pytorch_converter.py``) stores the
order ops must keep in ``data_deps`` and checks only those for cycles; its
``ctrl_deps`` is each op's parent in the profiler's call tree, which may be
outside the captured window or later in the file (the feeder ignores
``ctrl_deps``). netsim keeps both kinds, except:

* a dependency on a node id not in the file is an op outside the captured
  window, taken as done before the trace starts: dropped;
* a ``ctrl_deps`` entry that lies on a dependency cycle (both ends in one
  strongly connected component of the rank's graph) is dropped; a cycle that
  remains is made of ``data_deps`` alone and is refused, naming its nodes.

Both are counted in the trace's metadata (``chakra_dropped_deps``:
``{"outside": n, "cycle": m}``) and printed by ``netsim import``. A
``COMM_COLL_NODE`` marked ``is_cpu_op`` (the converter's host-side call of a
collective, ``c10d::broadcast_``, beside the GPU kernel that carries
``comm_type``) is a compute op of its ``duration_micros``.

A send and a receive with the same (source, destination, tag) are one message,
and nodes depending on either side wait for its last byte. In files netsim
wrote (``netsim_metadata`` in the ``GlobalMetadata``) a message starts when
the dependencies of both sides are done, as in the netsim trace exported. In
any other file it starts when the send's dependencies are done (a Chakra
sender does not wait for the receive to be posted: converters' ring
schedules post every rank's first send before its first receive, and a
rendezvous would deadlock them), and the receive ends when the message has
arrived and the receive's own dependencies are done. Sizes and times that Chakra stores as
integers (bytes, microseconds) are kept exactly in the ``netsim_bytes`` and
``netsim_seconds`` double attributes, so :func:`save_chakra` then
:func:`load_chakra` replays to the same makespan. A netsim dependency between
two ops that share no rank has no Chakra equivalent and is refused on export.
"""

import json
import os
import re

import warnings

import networkx as nx
import numpy as np

from netsim.checks import check_choice
from netsim.errors import TraceError
from netsim.formats import et_conventions as conv
from netsim.trace.programs import FAMILIES, assemble
from netsim.trace.core import COLLECTIVE, COMPUTE, MESSAGE

__all__ = ["load_chakra", "save_chakra", "check_prefix", "read_et", "write_et"]

_COLL = {0: "allreduce", 1: "reduce", 2: "allgather", 5: "broadcast", 6: "alltoall",
         7: "reduce_scatter", 8: "reduce_scatter", 9: "allreduce"}
# Chakra's CollectiveCommType of each collective op netsim writes (et_def.proto).
_COMM_TYPE = {"allreduce": 0, "reduce": 1, "allgather": 2, "broadcast": 5, "alltoall": 6,
              "reduce_scatter": 7}
_FILE = re.compile(r"(.*?)\.?(\d+)\.et(\.gz)?$")
# Attributes Chakra's feeder reads as int32_val (src/feeder/et_feeder_node.cpp, mlcommons/chakra
# commit 21585d8); every other integer attribute netsim writes is int64_val, as it reads them.
_INT32 = frozenset({"comm_src", "comm_dst", "comm_tag", "comm_priority"})
_INT32_MAX = 2 ** 31 - 1


def _pb():
    try:
        from netsim.formats import et_def_pb2
    except ImportError as exc:  # protobuf missing or too old for the generated code
        raise TraceError(f"Chakra traces need the protobuf package (>= 7.35): {exc}") from None
    return et_def_pb2


def _varint(value):
    out = bytearray()
    while True:
        bits = value & 0x7F
        value >>= 7
        if value:
            out.append(0x80 | bits)
        else:
            out.append(bits)
            return bytes(out)


def write_et(path, metadata, nodes):
    """Write one Chakra ``.et`` file: ``GlobalMetadata`` then ``Node`` messages.

    Each message is preceded by its byte count as a varint, as Chakra's
    ``encodeMessage`` does.

    Parameters
    ----------
    path : str or path
        The file to write.
    metadata : GlobalMetadata
        From :mod:`netsim.formats.et_def_pb2`.
    nodes : iterable of Node
        From :mod:`netsim.formats.et_def_pb2`, in any order.

    Examples
    --------
    >>> import os, tempfile
    >>> pb = _pb()
    >>> n = pb.Node(id=1, name="gemm", type=pb.COMP_NODE, duration_micros=5)
    >>> p = os.path.join(tempfile.mkdtemp(), "x.0.et")
    >>> write_et(p, pb.GlobalMetadata(version="0.0.4"), [n])
    >>> meta, nodes = read_et(p); (meta.version, nodes[0].duration_micros)
    ('0.0.4', 5)
    """
    try:
        with open(path, "wb") as f:
            for msg in [metadata, *nodes]:
                data = msg.SerializeToString()
                f.write(_varint(len(data)))
                f.write(data)
    except OSError as exc:
        raise TraceError(f"cannot write Chakra trace {path}: {exc.strerror or exc}") from None


def read_et(path):
    """Read one Chakra ``.et`` file (optionally gzipped): (GlobalMetadata, list of Node).

    Raises
    ------
    TraceError
        For a missing, truncated or undecodable file, naming it and the message.

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "bad.0.et")
    >>> _ = open(p, "wb").write(bytes([5, 1, 2]))
    >>> read_et(p)
    Traceback (most recent call last):
    ...
    netsim.errors.TraceError: ...bad.0.et: message 0 declares 5 bytes but only 2 remain (truncated file)
    """
    pb = _pb()
    try:
        with open(path, "rb") as f:
            raw = f.read()
        if raw[:2] == b"\x1f\x8b":
            import gzip

            raw = gzip.decompress(raw)
    except FileNotFoundError:
        raise TraceError(f"Chakra trace not found: {path}") from None
    except Exception as exc:
        raise TraceError(f"{path}: unreadable ({type(exc).__name__}: {exc})") from None
    pos, msgs = 0, []
    while pos < len(raw):
        size, shift, start = 0, 0, pos
        while True:
            if pos >= len(raw) or shift > 63:
                raise TraceError(f"{path}: truncated length prefix of message {len(msgs)} "
                                 f"at byte {start}")
            b = raw[pos]
            pos += 1
            size |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        if pos + size > len(raw):
            raise TraceError(f"{path}: message {len(msgs)} declares {size} bytes but only "
                             f"{len(raw) - pos} remain (truncated file)")
        msg = pb.GlobalMetadata() if not msgs else pb.Node()
        try:
            msg.ParseFromString(raw[pos:pos + size])
        except Exception as exc:
            what = "GlobalMetadata" if not msgs else "Node"
            raise TraceError(f"{path}: message {len(msgs)} is not a Chakra {what} "
                             f"({type(exc).__name__})") from None
        msgs.append(msg)
        pos += size
    if not msgs:
        raise TraceError(f"{path}: empty Chakra trace (no GlobalMetadata)")
    return msgs[0], msgs[1:]


def _attrs(node):
    out = {}
    for a in node.attr:
        kind = a.WhichOneof("value")
        if kind is None:
            continue
        v = getattr(a, kind)
        out[a.name] = list(v.values) if kind.endswith("_list") else v
    return out


def _stuck(deps):
    """Nodes Kahn's algorithm cannot order (those on or after a cycle), sorted."""
    indeg = {n: len(d) for n, d in deps.items()}
    succ = {n: [] for n in deps}
    for n, d in deps.items():
        for x in d:
            succ[x].append(n)
    ready = [n for n, k in indeg.items() if k == 0]
    while ready:
        n = ready.pop()
        for s in succ[n]:
            indeg[s] -= 1
            if indeg[s] == 0:
                ready.append(s)
    return sorted(n for n, k in indeg.items() if k > 0)


def _dependencies(path, nodes, index):
    """Each node's dependencies by the rule of the module docstring, and the drop counts.

    Returns ``(deps, outside, cycle)``: node id -> list of node ids it waits
    for, the number of dependencies on ids not in the file, and the number of
    ``ctrl_deps`` entries dropped because they lay on a cycle.
    """
    deps, ctrl, outside = {}, set(), 0
    for node in nodes:
        data = list(dict.fromkeys(node.data_deps))
        extra = [d for d in dict.fromkeys(node.ctrl_deps) if d not in set(data)]
        kept = [d for d in data + extra if d in index]
        outside += len(data) + len(extra) - len(kept)
        ctrl.update((d, node.id) for d in extra if d in index)
        deps[node.id] = kept
    stuck = _stuck(deps)
    if not stuck:
        return deps, outside, 0
    G = nx.DiGraph()
    G.add_edges_from((d, n) for n in stuck for d in deps[n])
    component = {}
    for k, members in enumerate(nx.strongly_connected_components(G)):
        component.update((m, k) for m in members)
    cut = {(d, n) for n in stuck for d in deps[n]
           if (d, n) in ctrl and component.get(d) == component[n]}
    for d, n in cut:
        deps[n].remove(d)
    left = _stuck(deps)
    if left:
        raise TraceError(f"{path}: dependency cycle among nodes {left[:12]}"
                         + (" ..." if len(left) > 12 else "") + " (data_deps alone)")
    return deps, outside, len(cut)


def _program(path, rank, ranks, nodes, algorithm, eager, dropped):
    """One rank's records for :func:`~netsim.formats.kineto.load.assemble` (``eager``: see load_chakra).

    Adds the dependencies it dropped to the counts in ``dropped``.
    """
    pb = _pb()
    index = {}
    for i, node in enumerate(nodes):
        if node.id in index:
            raise TraceError(f"{path}: duplicate node id {node.id}")
        index[node.id] = i
    deps, outside, cycle = _dependencies(path, nodes, index)
    dropped["outside"] += outside
    dropped["cycle"] += cycle
    recs, seq = [], {}
    for node in nodes:
        a = _attrs(node)
        rec = {"deps": [index[d] for d in deps[node.id]],
               "iteration": int(a.get("netsim_iteration", 0)),
               "tag": (node.name if eager else _untyped(pb, node)) or None}
        where = f"{path}: node {node.id} ({node.name!r})"
        if node.type == pb.COMM_SEND_NODE or node.type == pb.COMM_RECV_NODE:
            send = node.type == pb.COMM_SEND_NODE
            key = "comm_dst" if send else "comm_src"
            peer = a.get(key)
            if not isinstance(peer, int) or not 0 <= peer < ranks:
                raise TraceError(f"{where}: {key} {peer!r} is not a rank 0..{ranks - 1}")
            size = a.get("netsim_bytes", a.get("comm_size"))
            if size is None and send:
                raise TraceError(f"{where}: send without comm_size")
            src, dst = (rank, peer) if send else (peer, rank)
            tag = a.get("comm_tag", 0)
            n = seq[(src, dst, tag)] = seq.get((src, dst, tag), -1) + 1
            rec.update(op="send" if send else "recv", key=(src, dst, tag, n), peer=peer,
                       nbytes=None if size is None else float(size), eager=eager)
            for name, default in (("channel", 0), ("priority", 0), ("queue", -1)):
                value = a.get(f"netsim_{name}", default)
                if not isinstance(value, int):
                    raise TraceError(f"{where}: netsim_{name} {value!r} is not an integer")
                rec[name] = value
        elif node.type == pb.COMM_COLL_NODE and a.get("is_cpu_op") is True:
            rec.update(op="compute", seconds=node.duration_micros * 1e-6)   # the host call
        elif node.type == pb.COMM_COLL_NODE:
            kind = _COLL.get(a.get("comm_type"))
            if kind is None:
                raise TraceError(f"{where}: unsupported comm_type {a.get('comm_type')!r}")
            group = a.get("comm_group", list(range(ranks)))
            if not group or any(not 0 <= g < ranks for g in group) or rank not in group:
                raise TraceError(f"{where}: group {group} does not fit {ranks} ranks with rank "
                                 f"{rank}")
            pg = a.get("pg_name", conv.WORLD)
            pg = conv.WORLD if conv.is_world(pg) else pg
            n = seq[("pg", pg)] = seq.get(("pg", pg), -1) + 1
            size = conv.netsim_size(kind, a.get("comm_size", 0), len(group))
            rec.update(op="coll", key=(pg, n), group=[int(g) for g in group],
                       nbytes=float(a.get("netsim_bytes", size)),
                       collective=FAMILIES[algorithm][kind])
            if "netsim_algorithm" in a:   # written by save_chakra: the op exactly
                rec["spec"] = (kind, a["netsim_algorithm"] or None,
                               int(a.get("netsim_root", -1)), int(a.get("netsim_segments", 0)),
                               int(a.get("netsim_element", 0)))
                rec["priority"] = int(a.get("netsim_priority", 0))
        elif node.type == pb.COMP_NODE or node.type == pb.METADATA_NODE:
            if "netsim_seconds" in a:
                rec.update(op="compute", seconds=float(a["netsim_seconds"]))
            elif "netsim_flops" in a or (a.get("num_ops") and not node.duration_micros):
                # FLOPs without a duration: timed at replay by the device's rate
                rec.update(op="compute", seconds=None,
                           flops=float(a.get("netsim_flops", a.get("num_ops"))))
            else:
                rec.update(op="compute", seconds=node.duration_micros * 1e-6)
        else:
            # Memory loads and stores: netsim models no memory system; they take no time.
            rec.update(op="compute", seconds=0.0)
        recs.append(rec)
    return recs


def _untyped(pb, node):
    """A netsim-written node's name without the node-type prefix :func:`save_chakra` adds."""
    kind = pb.NodeType.Name(node.type)
    return node.name[len(kind) + 1:] if node.name.startswith(kind + "_") else (
        "" if node.name == kind else node.name)


def _files(directory):
    if not os.path.isdir(directory):
        raise TraceError(f"{directory}: not a directory of Chakra .et files")
    found, prefixes = {}, {}
    for name in sorted(os.listdir(directory)):
        m = _FILE.match(name)
        if m:
            r = int(m.group(2))
            if r in found:
                raise TraceError(f"{directory}: two files for rank {r}: {found[r]} and {name}")
            found[r] = name
            prefixes.setdefault(m.group(1), name)
    if len(prefixes) > 1:  # two exports (two jobs) in one folder: ranks of each would mix
        first, second = list(prefixes.values())[:2]
        raise TraceError(f"{directory}: files of {len(prefixes)} prefixes ({first}, {second}): "
                         f"one folder holds one job's <prefix>.<rank>.et files")
    if not found:
        raise TraceError(f"{directory}: no Chakra files named <prefix>.<rank>.et")
    missing = sorted(set(range(max(found) + 1)) - set(found))
    if missing:
        raise TraceError(f"{directory}: missing rank file for rank {missing[0]} "
                         f"(have {sorted(found)})")
    return [os.path.join(directory, found[r]) for r in range(len(found))]


def load_chakra(directory, algorithm="ring"):
    """Import a Chakra execution trace: a directory of ``<prefix>.<rank>.et`` files.

    Parameters
    ----------
    directory : str or path
        Holds one file per rank, ranks 0..P-1 (``chakra.0.et``, ``chakra.1.et``, ...).
    algorithm : {"ring", "recursive"}
        Schedules for ``COMM_COLL_NODE`` collectives (see :data:`netsim.trace.programs.FAMILIES`).

    Returns
    -------
    Trace
        With the metadata :func:`save_chakra` stored, if any, plus ``source``
        and, when a dependency was dropped, ``chakra_dropped_deps``.

    Raises
    ------
    TraceError
        For a missing rank file, an undecodable file, a cycle of ``data_deps``
        (naming the node ids), a send without its receive, an unsupported
        collective. Dependencies on nodes outside the file and ``ctrl_deps`` on
        cycles are dropped and counted in ``metadata["chakra_dropped_deps"]``
        (see the module docstring).

    Examples
    --------
    >>> import tempfile
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(2); c = b.compute(0, seconds=1e-3); _ = b.message(0, 1, 64, deps=[c])
    >>> d = tempfile.mkdtemp(); save_chakra(b.build(), d)
    >>> t = load_chakra(d); t.num_messages, t.total_bytes, t.deps(1).tolist()
    (1, 64.0, [0])
    """
    check_choice(algorithm, "algorithm", FAMILIES, error=TraceError)
    directory = os.fspath(directory)
    paths = _files(directory)
    progs, meta, eager, dropped = [], {}, True, {"outside": 0, "cycle": 0}
    for r, path in enumerate(paths):
        gm, nodes = read_et(path)
        if r == 0:
            a = _attrs(gm)
            eager = "netsim_metadata" not in a
            try:
                meta = json.loads(a.get("netsim_metadata", "{}"))
            except ValueError:
                raise TraceError(f"{path}: netsim_metadata attribute is not JSON") from None
            meta.setdefault("chakra_version", gm.version)
        progs.append(_program(path, r, len(paths), nodes, algorithm, eager, dropped))
    if any(dropped.values()):
        meta["chakra_dropped_deps"] = dropped
    meta.pop("profile_kernels", None)   # an imported profile's kernel places name its old ops
    return assemble(progs, metadata={**meta, "source": "chakra"})


def _attr(pb, name, value):
    """One attribute, integers typed as Chakra's feeder reads them (:data:`_INT32`)."""
    a = pb.AttributeProto(name=name)
    if isinstance(value, str):
        a.string_val = value
    elif isinstance(value, float):
        a.double_val = value
    elif name in _INT32:
        if not -_INT32_MAX - 1 <= value <= _INT32_MAX:
            raise TraceError(f"{name} {value} does not fit Chakra's int32 attribute")
        a.int32_val = int(value)
    else:
        a.int64_val = int(value)
    return a


def _name(pb, kind, tag):
    """A node name Chakra's timeline visualiser reads: the node type, then netsim's tag."""
    return pb.NodeType.Name(kind) + (f"_{tag}" if tag else "")


def _collective_nodes(pb, trace, i, name, common, nodes, groups, node_on, pgs):
    """Collective op ``i`` as a ``COMM_COLL_NODE`` on each member (id ``2 i``).

    A member's node waits for the op's dependencies on that member; one that
    touches no member has no Chakra equivalent and is refused.
    """
    spec = trace.specs.row(int(trace.spec[i]))
    if spec.op not in _COMM_TYPE:
        raise TraceError(f"op {i}: Chakra has no collective type for {spec.op}")
    members = groups[i]
    deps = list(dict.fromkeys(trace.deps(i).tolist()))    # once each, as in save_chakra
    where = {d: _touched(trace, d, groups) & members for d in deps}
    lost = [d for d in deps if not where[d]]
    if lost:
        raise TraceError(f"collective op {i} depends on op {lost[0]}, which touches none of its "
                         f"members: Chakra cannot express it")
    size = float(trace.size[i])
    attrs = common + [
        _attr(pb, "comm_type", _COMM_TYPE[spec.op]),
        _attr(pb, "comm_size", conv.comm_size(spec.op, size, len(spec.group))),
        _attr(pb, "netsim_bytes", size), _attr(pb, "pg_name", pgs[tuple(int(g) for g in spec.group)]),
        pb.AttributeProto(name="comm_group", int64_list=pb.Int64List(values=list(spec.group))),
        _attr(pb, "netsim_algorithm", spec.algorithm or ""), _attr(pb, "netsim_root", spec.root),
        _attr(pb, "netsim_segments", spec.segments), _attr(pb, "netsim_element", spec.element),
        _attr(pb, "netsim_priority", int(trace.priority[i]))]
    for r in spec.group:
        nodes[r].append(pb.Node(id=2 * i, name=_name(pb, pb.COMM_COLL_NODE, name),
                                type=pb.COMM_COLL_NODE,
                                data_deps=[node_on(r, d, i) for d in deps if r in where[d]],
                                attr=attrs))


def _touched(trace, op, groups):
    """The ranks op ``op`` touches."""
    if op in groups:
        return groups[op]
    return {int(trace.rank[op])} | ({int(trace.peer[op])} if trace.kind[op] == MESSAGE else set())


def check_prefix(prefix):
    """Refuse a file name prefix that would write outside its directory, or hidden files.

    Parameters
    ----------
    prefix : str
        The ``PREFIX`` of ``DIR/PREFIX.<rank>.et``.

    Raises
    ------
    TraceError
        For an empty prefix (``.<rank>.et``: hidden files), one starting with
        a dot, one holding a path separator (``../../x`` leaves ``DIR``) or a
        control character (a newline, a tab, NUL).

    Examples
    --------
    >>> check_prefix("chakra")
    'chakra'
    >>> check_prefix("../../x")
    Traceback (most recent call last):
    ...
    netsim.errors.TraceError: prefix must be a plain file name (no /, no control characters, not empty, not starting with '.'), got '../../x'
    """
    seps = {os.sep, os.altsep} - {None}
    # isprintable(): no NUL, newline, tab or other control character (a newline in a file
    # name splits every line that names it, the log's "wrote ..." among them)
    if not isinstance(prefix, str) or not prefix or prefix.startswith(".") or \
            any(s in prefix for s in seps) or not prefix.isprintable():
        raise TraceError(f"prefix must be a plain file name (no /, no control characters, not "
                         f"empty, not starting with '.'), got {prefix!r}")
    return prefix


def _check_no_other_job(directory, prefix, ranks):
    """Refuse a directory holding ``<prefix>.<r>.et`` files of ranks ``r >= ranks``."""
    try:
        names = os.listdir(directory)
    except OSError:
        return   # missing (created below) or not a directory (refused below)
    other = sorted((int(m.group(2)), name) for name in names
                   for m in [_FILE.match(name)] if m and m.group(1) == prefix
                   and int(m.group(2)) >= ranks)
    if other:
        raise TraceError(f"{directory} holds {len(other)} {prefix} files of ranks this "
                         f"{ranks}-rank trace lacks ({other[0][1]}, ...), from another export: "
                         f"the import would mix the two jobs; remove them or give another "
                         f"directory or --prefix")


def save_chakra(trace, directory, prefix="chakra"):
    """Export a netsim trace as Chakra: ``<directory>/<prefix>.<rank>.et``, one per rank.

    Compute ops become ``COMP_NODE`` s, messages a ``COMM_SEND_NODE`` on the
    source and a ``COMM_RECV_NODE`` on the destination (tag: the op id), a
    collective op a ``COMM_COLL_NODE`` on each member (as PyTorch's
    execution-trace converter writes one per rank, so ASTRA-sim's system layer
    expands it with its own algorithms), waiting for the op's dependencies on
    that member. Every dependency is a ``data_deps`` entry, integer attributes
    have the types Chakra's feeder reads, and each node's name is its type then
    the op's tag (``COMM_SEND_NODE_push``): see the module docstring.
    A collective's ``pg_name`` is ``""`` when it spans every rank, else the id
    of its group in ``<prefix>.comm_group.json``, written beside the traces for
    ASTRA-sim's ``--comm-group-configuration``.
    Node ids: ``2 i`` for op i's compute or send node, ``2 i + 1`` for its
    receive node. The trace's metadata is stored as JSON in the
    ``GlobalMetadata`` attribute ``netsim_metadata``.

    Parameters
    ----------
    trace : Trace
        Any netsim trace whose dependencies each join two ops sharing a rank.
    directory : str or path
        Created if missing; files in it of the same names are overwritten, and files of
        the prefix for ranks the trace lacks (an earlier, larger export's) are refused:
        left beside the new ones, :func:`load_chakra` would read them as one job.
    prefix : str
        File name prefix: a plain name (:func:`check_prefix`), so every file
        stays inside ``directory``.

    Raises
    ------
    TraceError
        For a dependency between two ops that share no rank (Chakra graphs
        are per rank), an unwritable directory, a prefix that
        :func:`check_prefix` refuses, or files of the prefix for other ranks in the directory.

    Examples
    --------
    >>> import os, tempfile
    >>> from netsim.comm.collectives import ring_allreduce
    >>> d = tempfile.mkdtemp(); save_chakra(ring_allreduce(4, 4e6), d)
    >>> sorted(os.listdir(d))
    ['chakra.0.et', 'chakra.1.et', 'chakra.2.et', 'chakra.3.et']
    """
    check_prefix(prefix)
    pb = _pb()
    directory = os.fspath(directory)
    _check_no_other_job(directory, prefix, trace.ranks)
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as exc:
        raise TraceError(f"cannot create {directory}: {exc.strerror or exc}") from None
    nodes = [[] for _ in range(trace.ranks)]
    msg = trace.kind == MESSAGE
    seconds = trace.duration

    groups = {i: set(trace.group(i).tolist()) for i in np.flatnonzero(trace.is_collective)}
    pgs = conv.process_groups(trace)
    rate, no_rate = trace.metadata.get("device_flops"), 0

    def node_on(rank, op, who):
        """Id of op's node on ``rank`` (its compute, send, collective or receive node)."""
        if trace.rank[op] == rank or rank in groups.get(op, ()):
            return 2 * int(op)
        if msg[op] and trace.peer[op] == rank:
            return 2 * int(op) + 1
        raise TraceError(f"op {who} on rank {rank} depends on op {op}, which does not touch "
                         f"rank {rank}: Chakra cannot express it")

    for i in range(trace.num_ops):
        # each dependency once: Chakra's feeders count a node's data_deps entries and
        # release it when as many parents have finished, so a repeated entry (a trace may
        # name an op twice, once per member it shares) would leave it waiting for ever
        deps = list(dict.fromkeys(trace.deps(i).tolist()))
        name = trace.tags[trace.tag[i]] if trace.tag[i] >= 0 else ""
        common = [_attr(pb, "netsim_iteration", int(trace.iteration[i]))]
        r = int(trace.rank[i])
        if trace.kind[i] == COLLECTIVE:
            _collective_nodes(pb, trace, i, name, common, nodes, groups, node_on, pgs)
            continue
        if trace.kind[i] == COMPUTE:
            extra = []
            if trace.flops[i]:   # num_ops: the FLOPs ASTRA-sim's roofline model reads
                extra += [_attr(pb, "netsim_flops", float(trace.flops[i])),
                          _attr(pb, "num_ops", int(round(trace.flops[i])))]
            if not np.isnan(seconds[i]):
                extra.append(_attr(pb, "netsim_seconds", float(seconds[i])))
            dur = conv.compute_micros(seconds[i], trace.flops[i], rate)
            no_rate += dur is None
            nodes[r].append(pb.Node(id=2 * i, name=_name(pb, pb.COMP_NODE, name),
                                    type=pb.COMP_NODE, duration_micros=dur or 0,
                                    data_deps=[node_on(r, d, i) for d in deps],
                                    attr=common + extra))
            continue
        p = int(trace.peer[i])
        size = float(trace.size[i])
        on_src = [d for d in deps if trace.rank[d] == r or r in groups.get(d, ())
                  or (msg[d] and trace.peer[d] == r)]
        on_dst = [d for d in deps if d not in set(on_src)]
        comm = [_attr(pb, "comm_size", int(round(size))), _attr(pb, "netsim_bytes", size),
                _attr(pb, "comm_tag", i)]
        path = [_attr(pb, f"netsim_{name}", int(getattr(trace, name)[i]))
                for name in ("channel", "priority") if getattr(trace, name)[i]]
        if trace.queue[i] >= 0:
            path.append(_attr(pb, "netsim_queue", int(trace.queue[i])))
        ends = [_attr(pb, "comm_src", r), _attr(pb, "comm_dst", p)]
        nodes[r].append(pb.Node(id=2 * i, name=_name(pb, pb.COMM_SEND_NODE, name),
                                type=pb.COMM_SEND_NODE,
                                data_deps=[node_on(r, d, i) for d in on_src],
                                attr=common + comm + path + ends))
        nodes[p].append(pb.Node(id=2 * i + 1, name=_name(pb, pb.COMM_RECV_NODE, name),
                                type=pb.COMM_RECV_NODE,
                                data_deps=[node_on(p, d, i) for d in on_dst],
                                attr=common + comm + ends))
    meta = pb.GlobalMetadata(version="0.0.4", attr=[
        _attr(pb, "netsim_metadata", json.dumps(dict(trace.metadata), sort_keys=True, default=str))])
    for r in range(trace.ranks):
        write_et(os.path.join(directory, f"{prefix}.{r}.et"), meta, nodes[r])
    if no_rate:
        warnings.warn(conv.NO_RATE.format(n=no_rate), stacklevel=2)
    sub = {name: list(group) for group, name in pgs.items() if name != conv.WORLD}
    if sub:
        path = os.path.join(directory, f"{prefix}.comm_group.json")
        try:
            with open(path, "w") as f:
                json.dump(sub, f)
        except OSError as exc:
            raise TraceError(f"cannot write {path}: {exc.strerror or exc}") from None
