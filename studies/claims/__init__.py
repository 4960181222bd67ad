"""The seed papers' claims reproduced, where each holds, and the studies behind them.

Modules
-------
metis_vs_random  METIS placement against random placement of the partitioned parameter server: a study.
partition_cost   What METIS placement costs, in modelled seconds: the same currency as simulated training.
pf_threshold     Parameter Flow's threshold sweep: bytes and accuracy against ``tau0``, a study.
regions          Where each seed claim holds: the claim over a grid of the two knobs that matter.
reproduce        The seed papers' claims, reproduced on stated topologies and sizes: PASS or FAIL per run.
ringtmp_vs_ps    RingTMP against the parameter server and a single node, over seeds: a study.
schemes          The traffic-convergence trade-off of the sync schemes across architectures.
tcp_startup      Where TCP's start-up matters: the ring and the parameter server over TCP against the fluid model.
verdicts         Verdicts over seeds: each claim's value as mean and spread, and whether it holds in k of N.
"""
