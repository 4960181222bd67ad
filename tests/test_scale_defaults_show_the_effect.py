"""`netsim scale` with no options shows each paper's effect: ps-partitioned records on sparse
data and puts METIS beside random placement, ringtmp deepens where its default model is too
shallow for the P range; each default chosen is said in the output."""

import json

from studies.cli.parser import main
from studies.scaling.defaults import study_defaults


def test_defaults_are_chosen_only_where_the_user_chose_nothing():
    assert study_defaults("ps-partitioned", [2], {})[0] == "sparse"
    assert study_defaults("ps-partitioned", [2], {}, dataset="digits") == ("digits", {}, [])
    assert study_defaults("ps-sync", [2], {})[0] == "digits"
    # RingTMP's default model has 3 hidden layers: 4 dense layers, one per node up to P = 4.
    assert study_defaults("ringtmp", [2, 4], {})[1] == {}
    assert study_defaults("ringtmp", [2, 8], {})[1] == {"deepen": True}
    for given in ({"deepen": False}, {"hidden": (16,) * 9}, {"partition": "neuron"}):
        assert study_defaults("ringtmp", [2, 8], given) == ("digits", given, [])


def test_ringtmp_beyond_four_nodes_runs_deepened_and_says_so(tmp_path, capsys):
    main(["scale", "ringtmp", "-P", "2,8", "--iterations", "1", "--png", str(tmp_path / "r.png")])
    out = capsys.readouterr().out
    assert "default for ringtmp: deepen=true" in out
    assert [line.split()[0] for line in out.splitlines()[2:4]] == ["2", "8"]


def test_ps_partitioned_puts_metis_beside_random_on_sparse_data(tmp_path, capsys):
    main(["scale", "ps-partitioned", "-P", "4", "--iterations", "1", "--json",
          "--png", str(tmp_path / "p.png")])
    st = json.loads(capsys.readouterr().out)
    (metis,), (rand,) = st["records"], st["baseline"]["records"]
    assert st["baseline"]["partition"] == "random" and "dataset sparse" in st["defaults"][0]
    # On clustered sparse data METIS keeps a worker's rows on one server: fewer bytes, less time.
    assert rand["bytes_per_iteration"] > 1.5 * metis["bytes_per_iteration"]
    assert rand["time"] > 1.5 * metis["time"]


def test_ps_partitioned_with_a_placement_named_runs_it_alone(tmp_path, capsys):
    main(["scale", "ps-partitioned", "-P", "2", "--iterations", "1", "--set", "partition=random",
          "--png", str(tmp_path / "p.png")])
    out = capsys.readouterr().out
    assert "random/METIS" not in out and "default for ps-partitioned: dataset sparse" in out
