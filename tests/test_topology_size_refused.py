"""A topology spec too large for memory is refused before it is built (issue 33)."""

import math

import pytest

import topologies
from conftest import one_line_error
from netsim.errors import TopologyError
from studies.registry import _check_size


@pytest.mark.parametrize("spec, option", [("star:n=99999999999", "n"), ("fat_tree:k=1000", "k")])
def test_a_spec_beyond_memory_is_one_line(capsys, tmp_path, spec, option):
    one_line_error(capsys, ["topology", spec, "--png", str(tmp_path / "t.png")],
                   "nodes and edges", f"use a smaller {option}")


def test_the_estimate_follows_the_graphs_growth():
    # A fat tree of k-port switches has k^3/4 hosts, 5 k^2/4 switches and 3 k^3/4 links:
    # k^3 + 5 k^2 / 4 elements: about 1.0e9 at k = 1000. The power law through k = 8 and 16
    # gives 7.1e8 (the k^2 term slows the growth there): the same order, refused under 1 GB.
    with pytest.raises(TopologyError, match=r"about [0-9.]+e\+0[89] nodes and edges"):
        _check_size("fat_tree", topologies.fat_tree, {"k": 1000}, limit=10**9)
    # A star of 5,000 hosts (10,001 elements) fits in 1 GB: no refusal; the estimate is
    # returned: the straight line through 17 elements at n = 8 and 33 at n = 16 (2 a host,
    # plus the switch), out to 5000, where the power law through them gives only
    # 33 (33 / 17)^log2(5000 / 16) = 8,052.
    assert _check_size("star", topologies.star, {"n": 5000}, limit=10**9) == pytest.approx(
        1 + 2 * 5000, rel=1e-12)
    assert 33 * (33 / 17) ** math.log2(5000 / 16) < 8053
