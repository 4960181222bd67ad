"""Analysis of results: closed forms beside simulations, saturation, and scaling laws by term.

Modules
-------
collectives   Analysis: each collective's closed form next to its simulation, and scaling laws.
saturation    Saturation and scaling analysis over simulation results: which link saturates, and when.
scaling_laws  Scaling laws by term: split a time T(P) into its alpha-beta terms and give each its law.
"""
