"""Context parallelism of the transformer: each sequence split over ``cp`` ranks.

:mod:`workloads.transformer.context.ring` is Megatron-Core's with Transformer Engine's ring
attention (``cp_comm_type="p2p"``): keys and values passed round the ``cp`` ranks beside the
attention core, in the trace and in the closed form.
"""
