"""The incremental path's index of flows per link direction, and its component search.

A :class:`~netsim.engine.flows.FlowTable` re-rates, at an instant of a few changed flows, only
the flows that share a link, transitively, with one that changed. This module keeps the
table's per-link sets of flow slots (``table.on_link``) and each flow's links
(``table.route``) up to date with the flows that start and end, and finds that
component from the changed links (:func:`component`; none to search for a flow alone on
its links, the usual desynchronised event). A large batch leaves the index stale
(``on_link`` None) and the next small event rebuilds it (:func:`index`). The batch
path's own search is compiled (:mod:`netsim.engine.kernels`).
"""

import numpy as np

__all__ = ["index", "component", "search"]


def index(table):
    """The flows crossing each link direction, and each active flow's links.

    Kept incrementally by small events (:func:`component`); rebuilt from the active
    flows after a batch left it stale (``table.on_link`` None). The per-link sets are
    made once and emptied for reuse (only those the old routes filled): a fresh set
    per link direction at every rebuild cost a fat-tree replay most of its time
    (6,144 link directions, 405 rebuilds, 1.6 of 2.6 s at P = 128 with 1 MB; the
    allocations also drove Python's garbage collector through every object).

    Parameters
    ----------
    table : netsim.engine.flows.FlowTable

    Returns
    -------
    (list of set, dict)
        ``on_link[k]``, the slots of the flows on link direction ``k``, and ``route``,
        each active slot's links (no padding).

    Examples
    --------
    A table's fields that the index reads, for one flow in slot 0 on links 0 and 1 of
    two (link 2 pads a route):

    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> table = SimpleNamespace(L=2, on_link=None, link_sets=None, route={},
    ...                         fl_active=np.array([True, False]),
    ...                         fl_links=np.array([[0, 1], [2, 2]]))
    >>> index(table)
    ([{0}, {0}], {0: (0, 1)})
    """
    if table.on_link is None:
        L = table.L
        sets = table.link_sets
        if sets is None:
            sets = table.link_sets = [set() for _ in range(L)]
        else:  # stale since a batch: empty what the old routes filled
            for links in table.route.values():
                for k in links:
                    sets[k].clear()
        table.on_link, table.route = sets, {}
        active = np.flatnonzero(table.fl_active)
        for slot, links in zip(active.tolist(), table.fl_links[active].tolist()):
            route = table.route[slot] = tuple(k for k in links if k != L)
            for k in route:
                sets[k].add(slot)
    return table.on_link, table.route

def component(table, added, finished, removed, routes=None):
    """Flows sharing a link, transitively, with an added or finished flow; their links.

    Updates the per-link index (:func:`index`) of ``table`` with ``added`` and
    ``finished`` first; ``removed`` are the links of the finished flows, ``routes``
    (optional) those of the added ones.

    Parameters
    ----------
    table : netsim.engine.flows.FlowTable
    added, finished : list of int
        Flow slots.
    removed : list of int
        Links of the finished flows.
    routes : list of tuple, optional
        Links (no padding) of each added flow; default read from the table.

    Returns
    -------
    (list of int, list of int)
        Sorted: the flow slots whose rates may change, and the link directions whose
        load may change.

    Examples
    --------
    Two flows (slots 0, 1) share link 1; a third (slot 2) starts on links 2 and 1 and
    joins their component (link 3 pads a route):

    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> table = SimpleNamespace(L=3, on_link=None, link_sets=None, route={},
    ...                         fl_active=np.array([True, True, False]),
    ...                         fl_links=np.array([[0, 1], [1, 3], [3, 3]]))
    >>> component(table, [0, 1], [], [])
    ([0, 1], [0, 1])
    >>> table.fl_active[2] = True; table.fl_links[2] = [2, 1]
    >>> component(table, [2], [], [])
    ([0, 1, 2], [0, 1, 2])
    """
    on_link, route = table.on_link, table.route
    if on_link is None:
        on_link, route = index(table)
    if routes is not None and len(added) == 1 and not finished:
        # One flow starts, none ends (a message's latency is over): if it is alone
        # on its links, it is the component, its links the changed ones.
        slot, links = added[0], routes[0]
        route[slot] = links
        alone = True
        for k in links:
            flows = on_link[k]
            flows.add(slot)
            if len(flows) != 1:  # holds the slot: alone if nothing else
                alone = False
        if alone:
            return added, sorted(set(links))
        marked = set(links)
        return search(table, marked)
    L = table.L
    marked = set(removed)
    marked.discard(L)
    for slot in finished:
        for k in route.pop(slot, ()):
            on_link[k].discard(slot)
    for i, slot in enumerate(added):
        if routes is None:
            links = tuple(k for k in table.fl_links[slot].tolist() if k != L)
        else:
            links = routes[i]
        route[slot] = links
        for k in links:
            on_link[k].add(slot)
        marked.update(links)
    # The usual desynchronised event touches a flow alone on its links: no search
    # (explicit loops: a generator in all() costs more than the test).
    if not added:
        for k in marked:
            if on_link[k]:
                break
        else:
            return [], sorted(marked)
    elif len(added) == 1:
        alone = set(added)
        for k in marked:
            if on_link[k] != alone:
                break
        else:
            return added, sorted(marked)
    return search(table, marked)

def search(table, marked):
    """The flows on links ``marked``, transitively, and their links (sorted lists).

    ``marked`` (a set of links) grows to every link of the component; the per-link
    index of ``table`` is current (:func:`component` calls it).

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> table = SimpleNamespace(L=3, on_link=None, link_sets=None, route={},
    ...                         fl_active=np.array([True, True]),
    ...                         fl_links=np.array([[0, 1], [1, 2]]))
    >>> _ = index(table)
    >>> search(table, {0})
    ([0, 1], [0, 1, 2])
    """
    on_link, route = table.on_link, table.route
    comp = set()
    stack = list(marked)
    while stack:
        for slot in on_link[stack.pop()]:
            if slot not in comp:
                comp.add(slot)
                for k in route[slot]:
                    if k not in marked:
                        marked.add(k)
                        stack.append(k)
    return sorted(comp), sorted(marked)
