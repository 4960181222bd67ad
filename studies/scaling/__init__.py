"""Scaling studies: a paradigm's or a transformer's time per iteration against P, and what bounds the runs.

Modules
-------
closed_forms  The alpha-beta closed form of one iteration of a paradigm's trace: the generic dispatch.
library       One paradigm's scaling on a GPU cluster under each communication library, side by side.
overlap       Overlap study: time per iteration against P with communication hidden behind computation.
paradigm      Scaling studies of a training paradigm: time per iteration against the worker count P.
run_length    Long runs chosen by a count option, refused before any work: work = unit cost x count.
study_run     The run a paradigm's scaling study stands for, and the paradigm options bounded by it.
throughput    Throughput of a replayed parameter-server run: samples/s, updates/s and time to N updates.
trace_size    How big a collective's trace would be, known before it is generated.
traces        A paradigm's trace at each worker count P: recorded there, or recorded once and projected.
transformer   Transformer training on a GPU cluster: time per iteration, MFU and its losses against P, and
windows       The window of a run a scaling study measures, chosen from the paradigm's declared phases.
"""
