"""Validation against measurements: NCCL, gloo, Megatron-LM and imported profiles.

Modules
-------
device_scale   ``--device-from A100 --device-to H100``: an imported profile's compute on another GPU.
gloo           netsim's gloo model against published gloo benchmark runs: the machines, the errors, the table.
megatron       Narayanan et al.'s measured GPT throughput (SC'21, Table 1) against the transformer closed form.
nccl           netsim.comm.nccl against published nccl-tests measurements: the machines, the errors, the table.
profile_check  The text of a replay checked against its profile (``netsim replay --compare``).
transformer_layouts         published runs where the layout matters (Megatron-Core, torchtitan) against the simulation.
transformer_layouts_report  their errors, rankings against the null model, and the documentation's table.
"""
