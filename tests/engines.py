"""Either engine behind one call: a :class:`~netsim.Result` built from the :class:`Record`
that :func:`netsim.engine.replay.replay` or :func:`netsim.engine.reference.replay` returns.

``simulate`` always runs the main engine; the tests that hold it against the plain-Python
specification, or its small-event path against its batch path, build both results here
from the same network, placement and durations.
"""

from netsim import Network
from netsim.engine import replay as engine
from netsim.result import Result


def result(trace, G, by=engine, link_series=False, ecmp=None, ecmp_seed=0, sharing="maxmin",
           priority=None, **options):
    """Replay ``trace`` on graph ``G`` (default placement) with module ``by``'s ``replay``.

    ``options`` go to that ``replay`` as they are (``small_event=-1`` for the main engine's
    batch path).
    """
    net = Network(G)
    record = by.replay(trace, net, net.placement(trace.ranks), trace.compute_seconds(),
                       link_series=link_series, ecmp=ecmp, seed=ecmp_seed, sharing=sharing,
                       priority=priority, **options)
    return Result(record, trace, net, 0.0)
