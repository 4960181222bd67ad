"""A term's law: "constant" below its noise floor, and one law for a binomial tree at any P set.

Hand-constructed curves of known law (netsim.analysis.scaling_laws.fit_law), and MST broadcast through the
two paths that label it: `netsim scale` (netsim.analysis.collectives.scale_terms / fit_scaling) and the
claims row (studies.claims.reproduce.lp_claims) on the same PCIe tree and the same P.
"""

import json

import numpy as np
import pytest

from netsim.analysis.collectives import fit_scaling, scale, scale_terms
from netsim.analysis.scaling_laws import NOISE, fit_law, fit_terms
from studies.claims.reproduce import lp_claims
from studies.cli.parser import main
from topologies.machines import pcie_tree

P = np.arange(2, 17, dtype=float)


def test_exactly_constant_is_constant():
    fit = fit_law(P, np.full(len(P), 4.06e-3))
    assert fit["law"] == "constant" and fit["a"] == pytest.approx(4.06e-3) and fit["b"] == 0.0


def test_constant_with_relative_noise_of_1e_6_is_constant():
    # +-1e-6 relative, alternating: the span is 2e-6 of the value, far below the 0.1 % floor.
    y = 3.0 * (1 + 1e-6 * (-1.0) ** np.arange(len(P)))
    assert fit_law(P, y)["law"] == "constant"


def test_a_true_log2_P_and_a_true_P_minus_1_over_P():
    assert fit_law(P, 1e-3 + 2e-4 * np.log2(P))["law"] == "log2 P"
    assert fit_law(P, 5e-3 * (P - 1) / P)["law"] == "(P-1)/P"


def test_ceil_log2_rounds_are_log2_P():
    # A binomial tree's ceil(log2 P) rounds: a staircase that is log2 P at the powers of two.
    rounds = np.ceil(np.log2(P))
    assert fit_law(P, 4.06e-3 * rounds)["law"] == "log2 P"
    assert fit_scaling(P, 4.06e-3 * rounds)["law"] == "log2 P"


def test_a_residual_below_the_floor_of_its_total_is_constant():
    # A contention residual growing to -0.03 % of a 4 ms time: linear in P on its own scale,
    # but it moves the time by less than NOISE = 0.1 %, so it is noise on that time.
    total = np.full(len(P), 4e-3)
    residual = -3e-4 * 4e-3 * (P - 2) / 14
    assert fit_law(P, residual)["law"] == "P"
    fit = fit_terms(P, {"contention": residual}, totals={"contention": total})["contention"]
    assert fit["law"] == "constant" and fit["floor"] == pytest.approx(NOISE * 4e-3)
    # Above the floor (1 % of the time) the law is read.
    assert fit_law(P, 100 * residual / 3, total=total)["law"] == "P"


def test_mst_gets_one_law_in_scale_and_claims(capsys):
    workers = (2, 3, 4, 5, 6, 7, 8)
    G = pcie_tree()
    laws = scale_terms(scale("mst", list(workers), 64e6, G, saturation=False))["mst"]
    assert laws["latency"]["law"] == laws["bandwidth"]["law"] == "log2 P"
    row = lp_claims(nbytes=64e6, workers=workers, ratio_n=1e7)[1]
    assert "latency term log2 P, bandwidth term log2 P" in row["measured"]
    assert row["passed"]
    assert main(["scale", "-a", "mst", "-P", ",".join(map(str, workers)), "--topology",
                 "pcie_tree", "--bytes", "64MB", "--json", "--png", "/dev/null"]) in (0, None)
    fits = json.loads(capsys.readouterr().out)["fits"]["mst"]
    assert fits["law"] == "log2 P"
    assert fits["terms"]["latency"]["law"] == fits["terms"]["bandwidth"]["law"] == "log2 P"
