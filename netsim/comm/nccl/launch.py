"""Host-side kernel launches of an NCCL call: one thread launching on several GPUs in turn.

Every rank's kernel is launched from the host before it runs. How the GPUs are
driven is an input of the call, not something the graph can tell:

* ``"proc"``: one process (or thread) per GPU, as nccl-tests runs with ``-g 1``
  under MPI. The launches happen side by side; the one launch each rank pays is
  not charged apart from NCCL's own per-call latency (the tuning model's
  ``baseLat``, :mod:`netsim.comm.nccl.tuning`), so nothing is added.
* ``"thread"``: one host thread drives every GPU of its machine, as nccl-tests
  runs with ``-g N`` in one process: inside ``ncclGroupStart``/``ncclGroupEnd``
  the thread launches the call's kernel on each of its GPUs in turn, so the
  machine's last kernel starts after the launches of all the GPUs before it.
  No rank gets far before every rank has its kernel running (every step of a
  ring or tree needs its peers), so the call is charged the longest such wait
  over the machines: per machine, the sum of its ranks' launch times except
  the first's.

The launch time is the GPU node's ``launch`` attribute (host seconds one thread
spends per kernel launch; :mod:`topologies` sets it from a published
measurement, :data:`topologies.devices.LAUNCH_LATENCY`). It is a lower bound of
what NCCL's launch costs the thread: NCCL's own host work per GPU (planning the
kernel, switching device) comes on top and is not modelled.
"""

from netsim.checks import check_choice
from netsim.comm.nccl.tuning import NcclModelError

__all__ = ["LAUNCH_MODES", "check_launch", "launch_delay"]

LAUNCH_MODES = ("proc", "thread")
"""How the GPUs of a call are driven: a process each, or one thread per machine."""


def check_launch(mode):
    """``mode`` if it is one of :data:`LAUNCH_MODES`, else :class:`NcclModelError`.

    Examples
    --------
    >>> check_launch("thread")
    'thread'
    >>> check_launch("threads")
    Traceback (most recent call last):
    ...
    netsim.errors.NcclModelError: unknown launch mode 'threads'; known: proc, thread
    """
    check_choice(mode, "launch mode", LAUNCH_MODES, error=NcclModelError)
    return mode


def launch_delay(G, hw, mode):
    """Seconds the call waits for its kernels' launches beyond NCCL's own latency.

    Parameters
    ----------
    G : networkx.Graph
        The graph; in ``"thread"`` mode every rank's gpu node must carry
        ``launch`` (seconds, >= 0).
    hw : netsim.comm.nccl.hardware.Hardware
        The call's ranks (:func:`netsim.comm.nccl.hardware.describe`).
    mode : {"proc", "thread"}
        See the module docstring.

    Returns
    -------
    float
        0 for ``"proc"``; for ``"thread"`` the largest, over the machines, sum of
        ``launch`` of the machine's ranks but its first.

    Raises
    ------
    NcclModelError
        For an unknown mode, or in ``"thread"`` mode a rank's gpu node without a
        ``launch`` of seconds >= 0 (naming it).

    Examples
    --------
    Eight GPUs of one machine launched in turn at 2 us each: the last starts 14 us
    after the first.

    >>> import networkx as nx
    >>> from netsim.comm.nccl import hardware
    >>> G = nx.complete_graph([f"g{i}" for i in range(8)])
    >>> nx.set_node_attributes(G, "gpu", "kind"); nx.set_node_attributes(G, 2e-6, "launch")
    >>> hw = hardware.describe(G)
    >>> round(launch_delay(G, hw, "thread") * 1e6, 6), launch_delay(G, hw, "proc")
    (14.0, 0.0)
    """
    if check_launch(mode) == "proc":
        return 0.0
    worst = 0.0
    for ranks in hw.machines:
        times = []
        for r in ranks:
            node = hw.gpus[r]
            t = G.nodes[node].get("launch")
            if isinstance(t, bool) or not isinstance(t, (int, float)) or not t >= 0:
                raise NcclModelError(f"launch mode 'thread' needs gpu node {node!r} to carry "
                                     f"launch (host seconds per kernel launch, >= 0); got {t!r}")
            times.append(float(t))
        worst = max(worst, sum(times[1:]))
    return worst
