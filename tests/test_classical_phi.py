"""Kiefer's phi_p family: A at p = 1, D as p -> 0, E as p -> inf, monotone in p, against its closed-form bounds."""

from __future__ import annotations

import numpy as np
import pytest

import optdesign as od

X = np.random.default_rng(11).standard_normal((40, 3))


@pytest.fixture(scope="module")
def ends():
    """The D-, A- and E-optimal values of X (det^{-1/d}, tr(A^{-1}) / d, 1 / lambda_min)."""
    return {"d": od.phi_optimal(X, 0, tol=1e-8).value, "a": od.a_optimal(X, tol=1e-8).value / 3,
            "e": od.e_optimal(X, tol=1e-7).value}


def test_p_one_is_a_over_d_and_the_kiefer_path_agrees_near_it(ends):
    assert od.phi_optimal(X, 1, tol=1e-8).value == pytest.approx(ends["a"], rel=1e-7)
    near = od.phi_optimal(X, 1.001, tol=1e-8)  # the eigenvalue path (Brent's step), not the linear one
    assert near.method == "exchange" and near.value == pytest.approx(ends["a"], rel=1e-3)


def test_small_p_tends_to_d(ends):
    gaps = [od.phi_optimal(X, p, tol=1e-8).value / ends["d"] - 1 for p in (0.1, 0.01, 0.001)]
    assert all(g >= -1e-7 for g in gaps)  # Phi_p >= Phi_0 for every design, so for the optima
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 1e-3


def test_large_p_tends_to_e_within_the_power_mean_bound(ends):
    """Phi_p <= Phi_inf <= d^{1/p} Phi_p for every A, so for the optima: Phi_p* <= E* <= 3^{1/p} Phi_p*."""
    for p in (4.0, 16.0, 64.0):
        value = od.phi_optimal(X, p, tol=1e-8).value
        assert value <= ends["e"] * (1 + 1e-6) <= 3 ** (1 / p) * value * (1 + 1e-6)
    assert od.phi_optimal(X, np.inf).value == pytest.approx(ends["e"], rel=1e-6)


def test_optimal_value_increases_with_p(ends):
    values = [od.phi_optimal(X, p, tol=1e-8).value for p in (0, 0.5, 1, 2, 8)]
    assert np.all(np.diff(values) > 0) and values[-1] <= ends["e"]


@pytest.mark.parametrize("p", [0.0, 2.0, np.inf])
def test_fast_and_conic_agree_where_the_model_exists(p):
    fast, model = od.phi_optimal(X, p, method="fast", tol=1e-7), od.phi_optimal(X, p, method="cvxpy")
    assert fast.value == pytest.approx(model.value, rel=1e-4)
    assert fast.lower_bound <= model.value * (1 + 1e-9) and model.lower_bound <= fast.value * (1 + 1e-9)
