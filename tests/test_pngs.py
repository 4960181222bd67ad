"""Every PNG the CLI writes is a picture a researcher can read, not trivially broken.

For each: a plausible size, a drawing that is not blank, nothing running off the
edge of the image (no ink in its outermost pixels: a legend or title that does
not fit would touch them), and, for the time-against-P plots, every legend
inside the figure and clear of every axes' data area.
"""

import json

import numpy as np
import pytest

from netsim import TraceBuilder, save_trace
from netsim.plot import plot_series
from studies.cli import main


def _check_png(path, min_ink=0.01):
    from matplotlib.image import imread

    img = imread(str(path))
    h, w = img.shape[:2]
    assert 300 <= w <= 4000 and 250 <= h <= 4000, (path, w, h)
    rgb = img[..., :3]
    ink = (rgb < 0.9).any(axis=-1)  # anything that is not white or near-white
    assert min_ink < ink.mean() < 0.6, (path, ink.mean())  # neither blank nor a solid block
    border = np.concatenate([ink[:3].ravel(), ink[-3:].ravel(), ink[:, :3].ravel(),
                             ink[:, -3:].ravel()])
    assert not border.any(), f"{path}: something runs off the edge of the image"
    return ink


@pytest.fixture
def trace_file(tmp_path):
    b = TraceBuilder(3)
    c = b.compute(0, seconds=1e-3)
    b.message(0, 2, 1.25e6, deps=[c])
    b.message(1, 2, 2.5e6)
    p = tmp_path / "t.npz"
    save_trace(b.build(), p)
    return str(p)


def test_cli_pngs_are_not_trivially_broken(tmp_path, trace_file, capsys):
    pngs = {
        "scale": ["scale", "-a", "ring,rabenseifner,ps", "-P", "2..16", "-n", "1MB", "--logy"],
        "topology": ["topology", "two_tier:n=8,per_rack=4"],
        "load": ["topology", "star", "--result", trace_file, "--metric", "bytes"],
        "dgx1": ["topology", "dgx1"],
    }
    for name, argv in pngs.items():
        path = tmp_path / f"{name}.png"
        assert main(argv + ["--png", str(path), "-q"]) == 0, name
        _check_png(path)
    capsys.readouterr()


def test_identical_series_stay_visible_and_legends_sit_outside_the_data(tmp_path):
    # Two identical curves (ring and Rabenseifner on a star coincide) in one panel and a second
    # panel: each legend is inside the figure and overlaps no axes.
    series = [{"label": name, "P": [2, 4, 8, 16], "simulated": [1.0, 2.0, 3.0, 4.0],
               "closed_form": [1.0, 2.0, 3.0, 4.0], "panel": panel,
               "saturation": 4 if name == "ps" else None}
              for panel in ("collectives on star", "collectives on two_tier")
              for name in ("ring", "rabenseifner", "ps")]
    path = tmp_path / "s.png"
    fig = plot_series(series, path, title="a title long enough to be clipped if the layout "
                                          "did not make room for it, " * 2)
    _check_png(path)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    fig.draw(renderer)  # the layout engine places the legends as when the PNG was written
    figbox = fig.bbox  # the figure's own canvas, before bbox_inches="tight" cropped it
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == 2
    for ax in axes:
        legend = ax.get_legend()
        box = legend.get_window_extent(renderer)
        # Inside the figure: the layout made room for it.
        assert figbox.x0 <= box.x0 and box.x1 <= figbox.x1, (box, figbox)
        assert figbox.y0 <= box.y0 and box.y1 <= figbox.y1, (box, figbox)
        for other in axes:
            assert not box.overlaps(other.get_window_extent(renderer)), "legend over the data"
        # One entry per series, the saturation circle and the marker/line key.
        assert [t.get_text() for t in legend.get_texts()][:3] == ["ring", "rabenseifner", "ps"]
        # The three series use three markers: none hides behind another of the same shape.
        markers = {line.get_marker() for line in ax.get_lines() if line.get_linestyle() == "None"
                   and line.get_markersize() < 14}
        assert len(markers) == 3


def test_scale_png_title_names_n_and_topology(tmp_path, monkeypatch, capsys):
    import netsim.plot

    titles = []
    real = netsim.plot.plot_series

    def spy(series, path, title="", **kw):
        titles.append(title)
        return real(series, path, title=title, **kw)
    monkeypatch.setattr("netsim.plot.plot_series", spy)
    assert main(["scale", "-a", "ring", "-P", "2,4", "-n", "1MB", "--topology",
                 "star:bandwidth=10Gbps", "--png", str(tmp_path / "s.png"), "-q"]) == 0
    assert titles == ["ring: n = 1 MB on star:bandwidth=10Gbps"]
    capsys.readouterr()


def test_topology_result_png_title_names_the_metric_and_trace(tmp_path, trace_file, monkeypatch,
                                                              capsys):
    import netsim.plot

    titles = []
    real = netsim.plot.draw_topology

    def spy(G, title=None, **kw):
        titles.append(title)
        return real(G, title=title, **kw)
    monkeypatch.setattr(netsim.plot, "draw_topology", spy)
    assert main(["topology", "star", "--result", trace_file, "--png", str(tmp_path / "t.png"),
                 "--json"]) == 0
    assert titles == ["star(3 hosts, 10 Gbps): links by mean_util replaying t.npz"]
    assert json.loads(capsys.readouterr().out)["nodes"] == 4
