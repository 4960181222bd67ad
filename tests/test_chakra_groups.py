"""Chakra export of a TP x PP x DP trace: every sub-group collective keeps its group."""

import collections

import numpy as np

from netsim.formats.chakra import load_chakra, save_chakra
from workloads.transformer.iteration import schedule
from workloads.transformer.flops import config


def _collectives(t):
    return collections.Counter(
        (t.specs.row(int(t.spec[i])).op, tuple(t.group(i).tolist()), float(t.size[i]))
        for i in np.flatnonzero(t.is_collective))


def test_tensor_and_data_parallel_groups_survive_chakra(tmp_path):
    t = schedule(config(2, 64, 4, 32, 0, global_batch=4), tp=2, pp=2, dp=2,
                 sequence_parallel=True)
    save_chakra(t, str(tmp_path))
    back = load_chakra(str(tmp_path))
    want = _collectives(t)
    # tensor-parallel pairs of adjacent ranks and data-parallel pairs two apart
    assert {g for _, g, _ in want} == {(0, 1), (2, 3), (4, 5), (6, 7), (0, 2), (1, 3), (4, 6),
                                       (5, 7)}
    assert _collectives(back) == want
    assert back.num_messages == t.num_messages
