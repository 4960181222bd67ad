"""What an adversarial user tries on the newer features (transformer, gloo, TCP, profiles,
Chakra, sweeps): one line `netsim: error: ...` and exit 2 before any work, or the right answer.

Each expected message is the value given, named as the user gave it; where a number is
expected, the comment says how it was worked by hand.
"""

import json

import pytest

from conftest import one_line_error
from netsim.errors import TraceError
from netsim.formats.kineto import load_kineto


def _kernel_doc(info=None, ranks="[0, 1]", ph="X", size=2):
    # One allreduce kernel of 1000 floats on rank 0 of a 2-rank job.
    args = {"Collective name": "allreduce", "In msg nelems": 1000, "Out msg nelems": 1000,
            "dtype": "Float", "Group size": size, "Process Group Name": "0", "stream": 20}
    if ranks is not None:
        args["Process Group Ranks"] = ranks
    ev = {"cat": "kernel", "name": "ncclKernel_AllReduce", "ts": 5, "dur": 50, "args": args}
    if ph is not None:
        ev["ph"] = ph
    return {"distributedInfo": {"rank": 0, "world_size": 2} if info is None else info,
            "traceEvents": [ev]}


def _write(tmp_path, doc, name="rank0.json"):
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return str(p)


def test_dataset_options_that_are_not_a_mapping_are_refused(capsys):
    # --set can only give a number or text; dataset_options is a dict (sweep config / API).
    one_line_error(capsys, ["scale", "ps-partitioned", "-P", "2,4", "--set",
                            "dataset_options=5"],
                   "dataset_options must be a mapping", "got 5")


def test_dataset_options_not_a_mapping_from_python_is_a_workload_error():
    import workloads
    from workloads.errors import WorkloadError

    with pytest.raises(WorkloadError, match="dataset_options must be a mapping.*got 5"):
        workloads.record("ps-partitioned", workers=2, epochs=1, dataset_options=5)


def test_an_unknown_matplotlib_backend_is_refused_before_drawing(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("MPLBACKEND", "bogus")
    one_line_error(capsys, ["topology", "star:n=4", "--png", str(tmp_path / "t.png")],
                   "MPLBACKEND='bogus' is not a backend matplotlib knows")
    assert not (tmp_path / "t.png").exists()


@pytest.mark.parametrize("info, needle", [
    ("rank0", "distributedInfo must be an object, got 'rank0'"),
    ({"rank": 0, "world_size": 2, "pg_config": "all"}, "pg_config must be a list"),
    ({"rank": 0, "world_size": 2, "pg_config": [{"ranks": "0,1"}]}, "pg_config must be a list"),
])
def test_a_malformed_distributed_info_is_refused(tmp_path, capsys, info, needle):
    path = _write(tmp_path, _kernel_doc(info))
    with pytest.raises(TraceError, match=needle):
        load_kineto(path)
    one_line_error(capsys, ["import", "kineto", path, "-o", str(tmp_path / "t.npz")], needle)


@pytest.mark.parametrize("ranks", ["[0, x", "[0, 1.5]", "0 1", "[true, false]"])
def test_garbage_process_group_ranks_are_refused_not_dropped(tmp_path, ranks):
    # Group size 2 = world 2 used to stand in silently for an unreadable list.
    with pytest.raises(TraceError, match=r"event #0.*unreadable 'Process Group Ranks'"):
        load_kineto(_write(tmp_path, _kernel_doc(ranks=ranks)))


def test_an_event_without_its_phase_is_refused_not_dropped(tmp_path):
    with pytest.raises(TraceError, match=r"event #0 'ncclKernel_AllReduce' has no 'ph'"):
        load_kineto(_write(tmp_path, _kernel_doc(ph=None)))


def test_a_well_formed_profile_still_loads(tmp_path):
    # 1000 floats = 4000 bytes over ranks 0, 1.
    t = load_kineto(_write(tmp_path, _kernel_doc()), symmetric=True)
    assert t.metadata["collectives"][0]["bytes"] == 4000.0
