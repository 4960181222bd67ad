"""Megatron-LM's overlaps of communication with compute in the transformer's trace and closed form.

:mod:`workloads.transformer.overlaps.tp` runs the tensor-parallel collectives beside the
GEMMs (``--tp-comm-overlap``); :mod:`workloads.transformer.overlaps.param_gather` gathers
ZeRO-1/2's parameters under the next forward (``--overlap-param-gather``).
"""
