"""Moving code between modules changes no result: a set of result digests pinned as literals.

Each case below computes results end to end (a paradigm's recording, its schedule at another
P replayed on a star, a CLI table, a study over seeds) and reduces them to one SHA-256 digest
of their canonical text: floats by ``repr`` (the shortest string that reads back as the same
double), every other value by ``json.dumps`` with sorted keys. The digests were computed on
``main`` before the studies moved out of the paradigm modules and the parameter-server
exchange moved to :mod:`workloads.paradigms.ps`; a refactoring that changes any one bit of a result
fails here. Wall-clock fields (``seconds``, ``partition_seconds``, engine wall time) are left
out: they are measurements of this machine, not results.

A digest changes legitimately only when a result is meant to change; then recompute it
with ``python tests/test_results_unchanged_by_moves.py``, which prints every case's digest.
"""

import hashlib
import json

import numpy as np
import pytest

import topologies
import workloads
from netsim import simulate
from workloads.plan.projection import project


def _canon(x):
    """Plain, deterministic JSON-able form of ``x``: floats as their repr."""
    if isinstance(x, dict):
        return {str(k): _canon(v) for k, v in sorted(x.items(), key=lambda kv: str(kv[0]))}
    if isinstance(x, (list, tuple)):
        return [_canon(v) for v in x]
    if isinstance(x, np.ndarray):
        return _canon(x.tolist())
    if isinstance(x, (float, np.floating)):
        return repr(float(x))
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


def digest(x):
    """SHA-256 hex digest of the canonical JSON text of ``x``."""
    text = json.dumps(_canon(x), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _trace_rows(t):
    return {"ranks": t.ranks, "kind": t.kind, "rank": t.rank, "peer": t.peer, "size": t.size,
            "flops": t.flops, "iteration": t.iteration, "dep_ptr": t.dep_ptr,
            "dep_idx": t.dep_idx, "tags": [t.tags[i] if i >= 0 else None for i in t.tag]}


def _replayed(t):
    r = simulate(t, topologies.star(t.ranks))
    return {"makespan": r.makespan, "iteration_times": r.iteration_times,
            "link_bytes": r.links["bytes"], "exposed": r.ranks["exposed_communication"]}


# (paradigm, options): recorded at P = 2 for one epoch, scheduled at P = 4.
SCHEDULE_CASES = [
    ("single", {}),
    ("ps-sync", {"servers": 2}),
    ("ps-sync", {"overlap": False}),
    ("ps-async", {"n_fetch": 2, "n_push": 3, "servers": 2}),
    ("allreduce", {"collective": "ring"}),
    ("allreduce", {"collective": "lp", "segments": 3}),
    ("model-averaging", {"period": 3}),
    ("admm", {"local_steps": 2}),
    ("ringtmp", {"microbatches": 3}),
    ("pf", {"servers": 2}),
    ("slimdp", {"servers": 2}),
    ("dgc", {"epochs": 5}),
]


def schedule_case(name, options):
    """A recording, its accuracy and bytes, its schedule at P = 4, both replayed on a star."""
    r = workloads.record(name, **{"workers": 2, "epochs": 1, **options})
    big = project(r.trace, 4)
    return {"accuracy": r.accuracy, "bytes": r.total_bytes, "messages": r.messages,
            "recorded": _trace_rows(r.trace), "recorded_replay": _replayed(r.trace),
            "projected": _trace_rows(big), "projected_replay": _replayed(big)}


SCHEDULE_DIGESTS = {
    'single {}': '717a560624679697a7a99a38dead3e0ee72b1f06657c73bfa7ba29f15f30c33b',
    'ps-sync {"servers": 2}': '2447b86b61d7ba2d0de5ffe6f1c3f8bf13320ebaebec975453a6301051d089ce',
    'ps-sync {"overlap": false}': '8c3f51476a6287c89462fc79363d3b8817b0ba495ab3bc5b9dec4ac131f03c4e',
    'ps-async {"n_fetch": 2, "n_push": 3, "servers": 2}': '0b1ddcff638ac773be28e9b0d740e70ebad01192be23ebfc185af93465156e54',
    'allreduce {"collective": "ring"}': '7a6b1a9e8b0790474634df092125222415a4f58490d74daf2f71e9840cfed4d0',
    'allreduce {"collective": "lp", "segments": 3}': 'dfd54008131d624c69667fc5c5b194961ca4446d3420c3751a54e9d1eff798c7',
    'model-averaging {"period": 3}': '7cb8cb64b50f4601c499e0252de0adb63fe564c45f73fb0201f1c736f78ddcf8',
    'admm {"local_steps": 2}': 'fe8e033ee79f797fdf6bc7647e79ec80b7551b3e50ea4f16b05f49c2c2be3ea9',
    'ringtmp {"microbatches": 3}': 'e9fb271201cee908ee26c696459ad96b796b62f1a5324f96c5292428905a0015',
    'pf {"servers": 2}': 'ff860816ef61cfd1e9172d29385a20790d5d45d4b3b0397c71633f47661d8d70',
    'slimdp {"servers": 2}': '2f5344f70bf0ce1ec4d2e8a612096ab1fdf686ff960b6e59f6e9c237ff9d8356',
    'dgc {"epochs": 5}': '418eec03792f12a7f723d2a35195ba03033dd30fa21eaa1dc28d52749c85b45c',
}


@pytest.mark.parametrize("name, options", SCHEDULE_CASES)
def test_schedule_results_are_unchanged(name, options):
    key = f"{name} {json.dumps(options, sort_keys=True)}"
    assert digest(schedule_case(name, options)) == SCHEDULE_DIGESTS[key], key


def partitioned_case():
    r = workloads.record("ps-partitioned", workers=2, epochs=1, servers=2)
    return {"accuracy": r.accuracy, "bytes": r.total_bytes, "trace": _trace_rows(r.trace),
            "replay": _replayed(r.trace)}


def ringtmp_study():
    from studies.claims import ringtmp_vs_ps

    cfg = [{"dataset": "iris", "partition": "layer", "hidden": (8, 8), "epochs": 2},
           {"dataset": "iris", "partition": "neuron", "hidden": (8,), "epochs": 2}]
    rows = ringtmp_vs_ps.compare(seeds=2, workers=2, configs=cfg)
    for row in rows:
        del row["seconds"]
    return {"rows": rows, "table": ringtmp_vs_ps.format_table(rows)}


def partitioned_study():
    from studies.claims import metis_vs_random

    c = metis_vs_random.compare(workers=2, servers=2, epochs=1, topology=topologies.star)
    return {k: c[k] for k in ("traffic_ratio", "message_ratio", "accuracy_change",
                              "epoch_seconds", "saved_per_epoch")}


def pf_study():
    from studies.claims import pf_threshold

    return pf_threshold.sweep((0.0, 0.01, 0.1), workers=2, epochs=2)


STUDIES = {"ps-partitioned record": partitioned_case, "ringtmp compare": ringtmp_study,
           "ps-partitioned compare": partitioned_study, "pf sweep": pf_study}

STUDY_DIGESTS = {
    'ps-partitioned record': '37423cbf8e73da2e4ecec93579d975af4ed561f937fb47d88cec9345c86fa4a3',
    'ringtmp compare': '123b3e5bb20dc03d6260f1e4ccd76580a089725b7feee10a635595a300a06fc4',
    'ps-partitioned compare': 'd4a347e68bd0763dd5c6faffd9083c3c68c815f49d6cdda9534c768120eb783c',
    'pf sweep': 'c715a405d1f820c30f3c8389446f7f9a3dfb6e9ef75675bea57944e493b76c1c',
}


@pytest.mark.parametrize("name", list(STUDIES))
def test_study_results_are_unchanged(name):
    assert digest(STUDIES[name]()) == STUDY_DIGESTS[name], name


CLI_CASES = {
    "scale ps-sync": ["scale", "ps-sync", "-P", "2,4", "--iterations", "2"],
    "scale pf json": ["scale", "pf", "-P", "2,4", "--iterations", "2", "--json"],
    "scale collectives": ["scale", "-a", "ring,mst,lp", "-P", "2,4,8", "-n", "1MB"],
    "schemes": ["schemes", "--dataset", "iris", "--workers", "2", "--target", "0.5",
                "--max-epochs", "1"],
}

CLI_DIGESTS = {
    'scale ps-sync': '1635bfa1bbe0cf71b49ff4dd906111087cca5ed61e4ef7700eafafba2337bb9c',
    'scale pf json': 'ba8eaa34881a3dd5604891e249c28734ae244cd429e6c78f73e57ba27e09226d',
    'scale collectives': '1975ed8bf4bedbc0fe9e8a639550251c737d1517bb2b842ba51fb436487d0e96',
    'schemes': 'c9872199d279f5287a291e8e27093b09927c1f14a35cc26d76e068c0ae97e325',
}


def cli_output(argv, capsys):
    from studies.cli.parser import main

    assert main(argv) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("name", list(CLI_CASES))
def test_cli_tables_are_unchanged(name, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the commands write their figure to the working directory
    assert digest(cli_output(CLI_CASES[name], capsys)) == CLI_DIGESTS[name], name


if __name__ == "__main__":
    import contextlib
    import io
    import os
    import tempfile

    from studies.cli.parser import main

    for name, options in SCHEDULE_CASES:
        print(f"    {name + ' ' + json.dumps(options, sort_keys=True)!r}: "
              f"{digest(schedule_case(name, options))!r},")
    for name, study in STUDIES.items():
        print(f"    {name!r}: {digest(study())!r},")
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        for name, argv in CLI_CASES.items():
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                assert main(argv) == 0
            print(f"    {name!r}: {digest(out.getvalue())!r},")
