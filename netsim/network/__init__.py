"""A networkx topology compiled for replay: link directions, routes, equal-cost paths, rank placement.

Modules
-------
compiled   A networkx topology compiled for simulation: link directions, routes, placement.
multipath  Equal-cost paths between two nodes: their number, the i-th in a fixed order, ECMP hashing.
placement  Where ranks go by default: the compute nodes of a topology.
"""
