"""What the fields of a Chakra node mean to the tools that read them.

netsim counts a collective's bytes as nccl-tests does (:mod:`netsim.trace.collop`: the
whole gathered buffer of an allgather, the whole scattered buffer of a reduce_scatter);
Chakra's ``comm_size`` counts each rank's *input* buffer:

* Chakra's PyTorch converter (``PyTorchNode.comm_size``, ``src/converter/pytorch_node.py``
  of github.com/mlcommons/chakra at commit 21585d8) sums the sizes of the NCCL kernel's
  input tensors, i.e. one rank's send buffer;
* ASTRA-sim's ring (``astra-sim/system/astraccl/native_collectives/collective_algorithm/
  Ring.cc`` of github.com/astra-sim/astra-sim at commit 518bd51, the constructor's switch)
  takes ``All_Gather``'s ``data_size`` as each rank's piece (``msg_size = data_size``,
  ``final_data_size = data_size * nodes_in_ring``) and ``Reduce_Scatter``'s as the whole
  input (``msg_size = final_data_size = data_size / nodes_in_ring``).

So an allgather's ``comm_size`` is netsim's size divided by the group size, and a
reduce_scatter's is netsim's size unchanged (its input is the whole scattered buffer);
the other collectives' buffers are the same in both.

The group of every rank is ``pg_name`` ``""`` (:data:`WORLD`): ASTRA-sim before commit
8817510 ("Special handle commgroup 0", 2025-11-12) takes only ``""`` as the default group
and exits with ``communicator group 0 not found`` on ``"0"``; from that commit on
``Workload::extract_comm_group`` takes both, and Chakra's converter writes no ``pg_name``
for the default group, which its feeder reads as ``""``. Both are read back as the world.

A compute op given in FLOPs is written with Chakra's ``num_ops`` (an ``int64_val`` read by
the feeder, ``src/feeder/et_feeder_node.cpp``; ASTRA-sim's roofline model divides it by
the achieved FLOP/s, ``Workload::issue_comp``) and, when the trace's ``device_flops`` is
known, ``duration_micros = FLOPs / device_flops``: ASTRA-sim outside roofline mode runs a
node of ``duration_micros`` 0 in 1 ns (``Workload::issue_replay``). netsim writes no
``tensor_size`` (it does not know the bytes an op touches), so ASTRA-sim's roofline mode
skips such nodes (``issue_comp``: "tensor_size is 0 ... invalid node").
"""

import numpy as np

__all__ = ["WORLD", "comm_size", "netsim_size", "is_world", "compute_micros",
           "process_groups", "NO_RATE"]

#: ``pg_name`` of the group of every rank (see the module docstring).
WORLD = ""

#: Warning of an export with compute ops given in FLOPs and no device rate.
NO_RATE = ("{n} compute op(s) are given in FLOPs and the trace has no device_flops: "
           "exported with num_ops and duration_micros 0, which ASTRA-sim runs in 1 ns "
           "(set trace.metadata['device_flops'] to export their durations)")


def comm_size(op, nbytes, members):
    """Chakra's ``comm_size`` of a netsim collective of ``nbytes`` over ``members`` ranks.

    Examples
    --------
    >>> comm_size("allgather", 8e6, 4), comm_size("reduce_scatter", 8e6, 4)
    (2000000, 8000000)
    """
    return int(round(nbytes / members if op == "allgather" else nbytes))


def netsim_size(op, size, members):
    """netsim's byte count of a Chakra collective of ``comm_size`` ``size``: the inverse.

    Examples
    --------
    >>> netsim_size("allgather", 2000000, 4), netsim_size("allreduce", 2000000, 4)
    (8000000.0, 2000000.0)
    """
    return float(size) * members if op == "allgather" else float(size)


def is_world(pg_name):
    """Whether ``pg_name`` names the group of every rank: ``""`` or ``"0"`` (see above).

    Examples
    --------
    >>> is_world(""), is_world("0"), is_world("2")
    (True, True, False)
    """
    return pg_name in ("", "0")


def compute_micros(seconds, flops, rate):
    """``duration_micros`` of a compute op: its seconds, else ``flops / rate``, else 0.

    Parameters
    ----------
    seconds : float
        NaN when the op is given in FLOPs.
    flops : float
    rate : float or None
        The device's FLOP/s (``trace.metadata["device_flops"]``).

    Returns
    -------
    int or None
        Microseconds, None for an op in FLOPs without a positive ``rate``.

    Examples
    --------
    >>> compute_micros(2.5e-3, 0, None), compute_micros(float("nan"), 3e9, 1e12)
    (2500, 3000)
    >>> compute_micros(float("nan"), 3e9, None) is None
    True
    """
    if not np.isnan(seconds):
        return int(round(seconds * 1e6))
    if rate is None or not rate > 0:
        return None
    return int(round(flops / float(rate) * 1e6))


def process_groups(trace):
    """``pg_name`` of each collective group: :data:`WORLD` for every rank, else 1, 2, ...

    ASTRA-sim reads ``pg_name`` as an integer (``std::stoi``, ``Workload::extract_comm_group``
    of github.com/astra-sim/astra-sim): any id but the world's must be in the
    communicator-group file given by ``--comm-group-configuration``, a JSON object of
    id -> ranks, which :func:`~netsim.formats.chakra.save_chakra` writes beside the traces
    when a collective spans fewer ranks.

    Examples
    --------
    >>> from netsim import TraceBuilder
    >>> b = TraceBuilder(4); a = b.collective("allreduce", [0, 1, 2, 3], 8)
    >>> _ = b.collective("allreduce", [1, 3], 8, deps=[a])
    >>> process_groups(b.build())
    {(0, 1, 2, 3): '', (1, 3): '1'}
    """
    names, world = {}, tuple(range(trace.ranks))
    for i in np.flatnonzero(trace.is_collective):
        group = tuple(int(g) for g in trace.specs.row(int(trace.spec[i])).group)
        if group not in names:
            names[group] = WORLD if group == world else str(sum(g != world for g in names) + 1)
    return names
