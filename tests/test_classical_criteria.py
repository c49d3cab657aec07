"""The classical criteria in numpy (optdesign.linear.classical.criteria, linear, subset, kiefer) against independent
formulas: pseudo-inverses and eigenvalues, finite differences of the criterion, brute-force line searches."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

import optdesign as od
from optdesign.linear.classical.certify import certified_bound
from optdesign.linear.classical.criteria import quasiconvex_step
from optdesign.linear.classical.kiefer import KieferCriterion, kiefer_mean
from optdesign.linear.classical.linear import LinearCriterion
from optdesign.linear.classical.subset import SubsetCriterion


def _instance(n=12, d=4, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)), rng.dirichlet(np.ones(n))


def _info(X, w):
    return X.T @ (w[:, None] * X)


def _criteria(d, seed=0):
    rng = np.random.default_rng(seed)
    return [
        LinearCriterion(np.eye(d), "a"),
        LinearCriterion(rng.standard_normal((2, d)), "l"),
        LinearCriterion(rng.standard_normal((1, d)), "c"),
        SubsetCriterion(np.eye(d)[:, [0, 2]], "ds"),
        SubsetCriterion(np.eye(d), "d"),
        KieferCriterion(0.5, "phi"),
        KieferCriterion(3.0, "phi"),
    ]


def _closed_form(crit, A):
    """Phi from its definition, with numpy's inverse and determinant."""
    Ainv = np.linalg.inv(A)
    if isinstance(crit, LinearCriterion):
        return np.trace(crit.C @ Ainv @ crit.C.T)
    if isinstance(crit, SubsetCriterion):
        return np.linalg.det(crit.K.T @ Ainv @ crit.K) ** (1 / crit.s)
    lam = np.linalg.eigvalsh(A)
    return np.mean(lam ** -crit.p) ** (1 / crit.p)


@pytest.mark.parametrize("index", range(7))
def test_value_matches_the_definition_at_nonsingular_designs(index):
    X, w = _instance()
    crit = _criteria(X.shape[1])[index]
    assert crit.value(X, w) == pytest.approx(_closed_form(crit, _info(X, w)), rel=1e-10)
    assert crit.gradient(X, w).value == pytest.approx(_closed_form(crit, _info(X, w)), rel=1e-10)


@pytest.mark.parametrize("index", range(7))
def test_prices_are_minus_the_gradient_and_sum_to_the_value(index):
    """h_k = -dPhi/dw_k (central differences of the definition) and sum_k w_k h_k = Phi (Euler, degree -1)."""
    X, w = _instance(seed=1)
    crit = _criteria(X.shape[1], seed=1)[index]
    g = crit.gradient(X, w)
    h = np.sum((X @ g.M.T) ** 2, axis=1)
    step = 1e-6
    for k in range(X.shape[0]):
        e = np.zeros_like(w)
        e[k] = step
        fd = (_closed_form(crit, _info(X, w + e)) - _closed_form(crit, _info(X, w - e))) / (2 * step)
        assert -fd == pytest.approx(h[k], rel=1e-5, abs=1e-9)
    assert w @ h == pytest.approx(g.value, rel=1e-10)


@pytest.mark.parametrize("index", range(7))
def test_pairwise_step_minimises_along_the_segment(index):
    """The closed-form (or Brent) step against a bounded scalar minimisation of the definition."""
    X, w = _instance(seed=2)
    crit = _criteria(X.shape[1], seed=2)[index]
    g = crit.gradient(X, w)
    h = np.sum((X @ g.M.T) ** 2, axis=1)
    j, i = int(np.argmax(h)), int(np.argmin(h))

    def along(a):
        v = w.copy()
        v[j] += a
        v[i] -= a
        return _closed_form(crit, _info(X, v))

    a = crit.pair_step(g, X[j], X[i], float(w[i]))
    ref = minimize_scalar(along, bounds=(0, w[i]), method="bounded", options={"xatol": 1e-12})
    assert along(a) <= ref.fun * (1 + 1e-10)
    assert 0 < a <= w[i]


def test_quasiconvex_step_finds_the_sign_change():
    # derivative sign (t - 0.3)(t + 5): negative on [0, 0.3), positive after
    assert quasiconvex_step(1.0, 4.7, -1.5, 0.0, 1.0) == pytest.approx(0.3)
    assert quasiconvex_step(1.0, 4.7, -1.5, 0.5, 1.0) == 0.5  # increasing on the whole interval
    assert quasiconvex_step(1.0, 4.7, -1.5, 0.0, 0.2) == 0.2  # decreasing on the whole interval


def test_singular_designs_are_inf_unless_the_functions_are_estimable():
    X = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    w = np.array([0.5, 0.5, 0.0])  # A(w) = diag(1/2, 1/2, 0)
    assert LinearCriterion(np.eye(3), "a").value(X, w) == np.inf
    assert LinearCriterion(np.array([[1.0, 2.0, 0.0]]), "c").value(X, w) == pytest.approx(2 * (1 + 4))
    assert LinearCriterion(np.array([[0.0, 0.0, 1.0]]), "c").value(X, w) == np.inf
    assert SubsetCriterion(np.eye(3)[:, [0, 1]], "ds").value(X, w) == pytest.approx(2.0)  # det(diag(2, 2))^(1/2)
    assert SubsetCriterion(np.eye(3)[:, [2]], "ds").value(X, w) == np.inf
    assert KieferCriterion(1.0, "phi").value(X, w) == np.inf
    assert LinearCriterion(np.eye(3), "a").gradient(X, w) is None


def test_kiefer_mean_limits_and_monotonicity():
    lam = np.array([0.3, 1.0, 2.5, 7.0])
    ps = [1e-4, 0.5, 1.0, 2.0, 10.0, 100.0]
    values = [kiefer_mean(lam, p) for p in ps]
    assert kiefer_mean(lam, 1.0) == pytest.approx(np.mean(1 / lam))
    assert kiefer_mean(lam, 0.0) == pytest.approx(np.prod(lam) ** -0.25)
    assert values[0] == pytest.approx(kiefer_mean(lam, 0.0), rel=1e-3)
    assert kiefer_mean(lam, np.inf) == pytest.approx(1 / 0.3)
    assert np.all(np.diff(values) > 0)  # power means increase with the order
    for p, v in zip(ps[1:], values[1:], strict=True):  # Phi_p <= Phi_inf <= d^(1/p) Phi_p
        assert v <= 1 / 0.3 <= 4 ** (1 / p) * v * (1 + 1e-12)
    assert np.isfinite(kiefer_mean(lam, 1e4)) and kiefer_mean(lam * 1e-200, 50.0) > 0


@pytest.mark.parametrize("index", range(7))
def test_certificate_of_any_design_is_below_the_optimum(index):
    """The bound at a random design never exceeds the optimum (found by the fast path to 1e-8)."""
    X, _ = _instance(n=20, d=3, seed=3)
    crit = _criteria(3, seed=3)[index]
    from optdesign.linear.classical.frankwolfe import smooth_design

    with od.single_threaded_blas():
        best = smooth_design(X, crit, tol=1e-8)
    for seed in range(5):
        w = np.random.default_rng(seed).dirichlet(np.ones(20))
        assert certified_bound(X, crit, w) <= best.value * (1 + 1e-9)
    assert best.lower_bound <= best.value


def test_criterion_value_evaluates_each_criterion():
    x = np.linspace(-1, 1, 5)
    X = np.column_stack([np.ones(5), x, x**2])
    w = np.array([0.25, 0, 0.5, 0, 0.25])
    A = _info(X, w)
    Ainv = np.linalg.inv(A)
    assert od.criterion_value(X, w, "a") == pytest.approx(np.trace(Ainv))
    assert od.criterion_value(X, 2 * w, "a") == pytest.approx(np.trace(Ainv))  # normalised first
    assert od.criterion_value(X, w, "e") == pytest.approx(1 / np.linalg.eigvalsh(A)[0])
    assert od.criterion_value(X, w, "d") == pytest.approx(np.linalg.det(A) ** (-1 / 3))
    assert od.criterion_value(X, w, "g") == pytest.approx(np.max(np.einsum("ij,jk,ik->i", X, Ainv, X)))
    assert od.criterion_value(X, w, "ds", subset=[2]) == pytest.approx(Ainv[2, 2])
    assert od.criterion_value(X, w, "phi", p=2) == pytest.approx(np.sqrt(np.trace(Ainv @ Ainv) / 3))
    assert od.criterion_value(X, w, "c", c=[[1, 0, 0], [0, 0, 1]]) == pytest.approx(Ainv[0, 0] + Ainv[2, 2])
    B = X.T @ X / 5
    assert od.criterion_value(X, w, "i") == pytest.approx(np.trace(Ainv @ B))
    assert od.criterion_value(X, w, "i", moments=B) == pytest.approx(np.trace(Ainv @ B))
    Z = X[[0, 4]]
    assert od.criterion_value(X, w, "i", region=Z, region_weights=[1, 3]) == pytest.approx(
        np.trace(Ainv @ (Z.T @ np.diag([0.25, 0.75]) @ Z)))
