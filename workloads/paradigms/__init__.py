"""The founding papers' training paradigms, one module each, and what the parameter-server ones share.

Modules
-------
admm             Consensus ADMM (Boyd et al. 2011, "Distributed Optimization and Statistical
allreduce        Synchronous data parallelism with gradients combined by an allreduce (BSP-SGD).
dgc              Deep Gradient Compression (DGC): top-k sparsified gradients exchanged by allgather.
model_averaging  Model averaging (parallel SGD with periodic averaging, "local SGD").
pf               Parameter Flow (PF): an update-centric parameter server with a value-bounded filter.
ps               The parameter-server exchange that the parameter-server paradigms share.
ps_async         Asynchronous parameter server: Downpour SGD (Dean et al. 2012, "Large Scale
ps_partitioned   Parameter server on sparse data, with samples and parameters placed by graph partitioning.
ps_sync          Parameter server, bulk-synchronous (BSP): push gradients, average, pull weights.
ringsteps        The training steps of RingTMP's two partitions (:mod:`workloads.paradigms.ringtmp`).
ringtmp          RingTMP: the model is partitioned across P nodes in a ring; activations travel
schemes          Synchronisation scheme x architecture, chosen independently: one training run per
single           Single node: one rank trains alone and sends nothing (the baseline).
slimdp           Slim-DP: data parallelism that pushes and pulls only a core and an explored subset.
"""
