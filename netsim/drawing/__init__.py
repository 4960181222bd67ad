"""Pictures: time against P, and topologies drawn in rows by hops from the ranks.

Modules
-------
plot      Pictures: time against P, and (from :mod:`netsim.drawing.topology`) topologies.
row_arcs  Links within one row of a drawing: arcs that cross as little as the row's order allows.
topology  Drawing a topology: rows by hops from the ranks, links by bandwidth, crowded rows merged.
"""
