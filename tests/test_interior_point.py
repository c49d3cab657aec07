"""The primal-dual Newton solve of a design restricted to a support (optdesign.linear.interior) against mathematical
truths: Kiefer–Wolfowitz, the cvxpy models, certificates on both sides of the optimum, closed forms."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.polynomial import legendre

import optdesign as od
from optdesign.linear.classical.linear import LinearCriterion
from optdesign.linear.criteria import cholesky_factor
from optdesign.linear.interior import hadamard_terms, support_interior_point
from optdesign.runtime.deadline import Deadline


def _d_terms(X):
    def terms(w):
        L = cholesky_factor(X, w)
        return None if L is None else hadamard_terms(X, L, None, 1.0)

    return terms


def _solve(terms, m, tol):
    out = support_interior_point(terms, np.full(m, 1.0 / m), tol=tol, deadline=Deadline(60.0))
    assert out is not None
    return out


@pytest.mark.parametrize("seed", range(4))
def test_d_optimal_support_solve_meets_kiefer_wolfowitz_and_the_cvxpy_model(seed):
    X = np.random.default_rng(seed).standard_normal((40, 5))
    w, converged = _solve(_d_terms(X), 40, 1e-9)
    assert converged and w.sum() == pytest.approx(1.0) and np.all(w >= 0)
    assert od.g_value(X, w) <= 5 * (1 + 1e-9)  # max_k x_k^T A^{-1} x_k = d at the optimum, never below
    assert od.g_value(X, w) >= 5 * (1 - 1e-12)
    model = od.d_optimal(X, method="cvxpy", solver="CLARABEL")
    logdet = [np.linalg.slogdet(X.T @ (v[:, None] * X))[1] for v in (w, model.weights)]
    assert logdet[0] >= logdet[1] - 1e-6  # at least as good as the conic solution (which is within its own tol)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("kind", ["a", "i"])
def test_linear_criterion_support_solve_brackets_the_cvxpy_optimum(seed, kind):
    rng = np.random.default_rng(10 + seed)
    X = rng.standard_normal((30, 4))
    C = np.eye(4) if kind == "a" else np.linalg.qr(X / np.sqrt(30), mode="r")  # I over the candidates: C^T C = B
    crit = LinearCriterion(C, kind)
    w, converged = _solve(lambda v: crit.second_order(X, v), 30, 1e-9)
    assert converged
    g = crit.gradient(X, w)
    prices = np.sum((X @ g.M.T) ** 2, axis=1)
    lower = g.value**2 / prices.max()  # the equivalence-theorem bound Phi^2 / max_k h_k
    truth = od.ClassicalDesignModel.for_criterion(X, "a" if kind == "a" else "i", solver="CLARABEL").solve()
    optimum = crit.value(X, truth.weights)
    assert lower <= optimum * (1 + 1e-7) and optimum <= g.value * (1 + 1e-7)
    assert g.value / lower - 1 <= 1e-9


def test_second_order_is_the_derivative_of_the_prices():
    """h_k = ||M x_k||^2 and d h_i / d w_j = -Hessian_ij for the linear criteria (central differences)."""
    rng = np.random.default_rng(3)
    X, w = rng.standard_normal((12, 3)), rng.uniform(0.5, 1.5, 12)
    crit = LinearCriterion(rng.standard_normal((2, 3)), "l")
    h, hess = crit.second_order(X, w)
    assert h == pytest.approx(np.sum((X @ crit.gradient(X, w).M.T) ** 2, axis=1), rel=1e-12)
    eps = 1e-6
    for j in (0, 5, 11):
        e = np.zeros(12)
        e[j] = eps
        dh = (crit.second_order(X, w + e)[0] - crit.second_order(X, w - e)[0]) / (2 * eps)
        assert -dh == pytest.approx(hess[:, j], rel=1e-5, abs=1e-8)


def test_arms_leaving_the_support_are_set_to_zero():
    """Degree 2 on 41 points of [-1, 1]: the D-optimal design is 1/3 at -1, 0, 1 (Guest 1958), every other weight 0."""
    x = np.linspace(-1, 1, 41)
    X = np.vander(x, 3, increasing=True)
    w, converged = _solve(_d_terms(X), 41, 1e-10)
    assert converged
    assert np.flatnonzero(w).tolist() == [0, 20, 40]
    assert w[[0, 20, 40]] == pytest.approx(np.full(3, 1 / 3), abs=1e-9)


@pytest.mark.parametrize("degree", [3, 4, 6])
def test_exchange_on_a_fine_grid_sits_on_the_roots_of_1_minus_x2_times_legendre_derivative(degree):
    """The active set with Newton steps (from 2,000 arms) on polynomial regression: weights 1 / (k + 1) at -1, 1 and
    the roots of P'_k (Guest 1958), and G-value k + 1 (Kiefer–Wolfowitz)."""
    roots = np.concatenate([[-1.0, 1.0], legendre.Legendre.basis(degree).deriv().roots()])
    x = np.union1d(np.linspace(-1, 1, 4_001), roots)
    X = np.vander(x, degree + 1, increasing=True)
    res = od.d_optimal(X, tol=1e-8)
    assert res.method == "exchange" and res.gap <= 1e-8
    assert od.g_value(X, res.weights) == pytest.approx(degree + 1, rel=1e-8)
    near = np.array([res.weights[np.abs(x - r) < 1e-3].sum() for r in roots])
    assert near == pytest.approx(np.full(roots.size, 1 / (degree + 1)), abs=1e-4)


def test_singular_start_and_spent_deadline():
    X = np.random.default_rng(5).standard_normal((10, 3))
    X[:, 2] = X[:, 0]
    assert support_interior_point(_d_terms(X), np.full(10, 0.1), tol=1e-6, deadline=Deadline(60.0)) is None
    Y = np.random.default_rng(6).standard_normal((10, 3))
    w0 = np.full(10, 0.1)
    w, converged = support_interior_point(_d_terms(Y), w0, tol=1e-12, deadline=Deadline(0.0))
    assert not converged and w == pytest.approx(w0)  # no step after the deadline: the starting mix


@pytest.mark.parametrize("fn", [od.d_optimal, od.a_optimal])
def test_supports_past_the_newton_limit_are_solved_by_frank_wolfe(monkeypatch, fn):
    """Both inner solves certify the same design: Newton (default) and Frank–Wolfe (every support past the limit)."""
    from optdesign.linear import interior

    X = np.random.default_rng(7).standard_normal((5_000, 6))
    newton = fn(X, tol=1e-7)
    monkeypatch.setattr(interior, "MAX_SUPPORT", 0)
    frank_wolfe = fn(X, tol=1e-7)
    for res in (newton, frank_wolfe):
        assert res.method == "exchange" and res.gap <= 1e-7 and res.lower_bound <= res.value * (1 + 1e-12)
    assert newton.value == pytest.approx(frank_wolfe.value, rel=3e-7)
