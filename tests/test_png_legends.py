"""Every legend entry of every paradigm's scaling PNG names exactly what is drawn under it: the drawn data of
each labelled artist is the quantity its label claims, and no entry puts a closed-form and a
simulated quantity under one name (DGC's closed-form communication, all of it, is not the
simulated exposed communication; RingTMP's critical-path compute is not a worker's compute)."""

import pytest
from matplotlib.figure import Figure

from studies.scaling.paradigm import plot_study, study
from topologies import star


@pytest.fixture
def figures(monkeypatch):
    """Every matplotlib figure saved while the test runs, in order."""
    saved, real = [], Figure.savefig

    def spy(self, *args, **kwargs):
        saved.append(self)
        return real(self, *args, **kwargs)
    monkeypatch.setattr(Figure, "savefig", spy)
    return saved


CLAIMS = {  # legend entry (its start) -> the record field it must draw
    "time per iteration, simulated": "time",
    "time per iteration, closed form": "closed_form",
    "compute per worker, simulated": "compute",
    "closed form's compute term": "closed_compute",
    "exposed communication per worker, simulated": "exposed",
    "closed form's communication term": "closed_communication",
}


@pytest.mark.parametrize("paradigm", ["dgc", "ringtmp", "ps-sync", "allreduce", "pf", "slimdp",
                                      "model-averaging", "admm", "ps-async", "ps-partitioned"])
def test_each_legend_entry_draws_the_quantity_it_names(paradigm, tmp_path, figures):
    st = study(paradigm, [2, 4], star, dataset="iris", iterations=1)
    plot_study(st, tmp_path / "s.png")
    (fig,) = figures
    (ax,) = [a for a in fig.axes if a.get_visible()]
    handles, labels = ax.get_legend_handles_labels()
    shown = [t.get_text() for t in ax.get_legend().get_texts()]
    drawn = {}
    for h, label in zip(handles, labels):
        assert label in shown
        assert not ("simulated" in label and "closed form" in label), label
        (key,) = [k for k in CLAIMS if label.startswith(k)]
        drawn[key] = h
        assert list(h.get_xdata()) == [2, 4]
        assert list(h.get_ydata()) == pytest.approx([r[CLAIMS[key]] for r in st["records"]])
        # a simulated quantity as markers alone, a closed form as a line alone
        assert (h.get_linestyle() == "None") == ("simulated" in label)
    assert set(drawn) == set(CLAIMS)
    if paradigm == "ringtmp":
        assert "critical path" in next(x for x in labels if x.startswith("closed form's compute"))
    # the old catch-all key is gone where every entry names itself
    assert "markers: simulated, lines: closed form" not in shown
