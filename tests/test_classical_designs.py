"""The classical designs (A, I, c/L, E, Ds) against closed forms and against each other: polynomial regression on
[-1, 1], Elfving's theorem, the equivalence theorem at the optimum, each fast path against its cvxpy model."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.polynomial import legendre

import optdesign as od
from optdesign.linear.classical.linear import LinearCriterion
from optdesign.linear.classical.subset import SubsetCriterion

GRID = np.linspace(-1, 1, 201)


def _poly(degree, x=GRID):
    return np.vander(x, degree + 1, increasing=True)


def _weights_at(res, points, x=GRID, within=0.025):
    """The weight of the design near each point (summed over the candidates within ``within``: near the optimum the
    criteria hardly tell a support point from its neighbours on the grid, 0.01 apart)."""
    return np.array([res.weights[np.abs(x - p) < within].sum() for p in points])


def _check_certified(res, tol=1e-4):
    assert res.lower_bound <= res.value * (1 + 1e-12)
    assert res.gap <= tol
    assert res.weights.sum() == pytest.approx(1.0) and np.all(res.weights >= 0)


# ---------------------------------------------------------------- closed forms on [-1, 1]
@pytest.mark.parametrize("degree", [1, 2, 3, 4])
def test_d_optimal_polynomial_regression_sits_on_the_roots_of_1_minus_x2_times_legendre_derivative(degree):
    """Guest (1958): support {-1, 1} and the roots of P'_k, weights 1 / (k + 1) (Pukelsheim 1993, §9.5)."""
    roots = np.concatenate([[-1.0, 1.0], legendre.Legendre.basis(degree).deriv().roots()])
    x = np.union1d(GRID, roots)
    X = _poly(degree, x)
    for res in (od.phi_optimal(X, 0), od.ds_optimal(X, list(range(degree + 1)))):
        _check_certified(res)
        assert _weights_at(res, roots, x) == pytest.approx(np.full(degree + 1, 1 / (degree + 1)), abs=5e-3)
        design = np.zeros(x.size)
        design[np.isin(x, roots)] = 1.0
        assert res.value == pytest.approx(od.criterion_value(X, design, "d"), rel=1e-4)


@pytest.mark.parametrize("method", ["fast", "cvxpy"])
def test_a_optimal_quadratic_regression(method):
    """Weights 1/4, 1/2, 1/4 at -1, 0, 1: tr A^{-1} = 1 / (a (1 - 2a)) for the symmetric design, least at a = 1/4."""
    res = od.a_optimal(_poly(2), method=method)
    _check_certified(res)
    assert res.value == pytest.approx(8.0, rel=1e-4)
    assert _weights_at(res, [-1, 0, 1]) == pytest.approx([0.25, 0.5, 0.25], abs=1e-3)
    assert od.a_optimal(_poly(1), method=method).value == pytest.approx(2.0, rel=1e-4)  # half at each end: A = I


@pytest.mark.parametrize("method", ["fast", "cvxpy"])
def test_e_optimal_quadratic_regression(method):
    """Weights 1/5, 3/5, 1/5 (Pukelsheim 1993, §9.13): lambda_min = 1/5, so the value 1 / lambda_min is 5."""
    res = od.e_optimal(_poly(2), method=method)
    _check_certified(res)
    assert res.value == pytest.approx(5.0, rel=1e-4)
    assert _weights_at(res, [-1, 0, 1]) == pytest.approx([0.2, 0.6, 0.2], abs=1e-3)


@pytest.mark.parametrize("x0", [1.5, 2.0, 4.0])
def test_c_optimal_extrapolation_by_elfving(x0):
    """c = (1, x0), x0 > 1: c / x0 is on the segment from (1, -1) to (1, 1) scaled by x0, so the value is x0^2 and
    the weights are (x0 - 1) / (2 x0) at -1 and (x0 + 1) / (2 x0) at 1 (Elfving 1952)."""
    for method in ("fast", "cvxpy"):
        res = od.c_optimal(_poly(1), [1.0, x0], method=method)
        _check_certified(res)
        assert res.value == pytest.approx(x0**2, rel=1e-5)
        assert _weights_at(res, [-1, 1]) == pytest.approx([(x0 - 1) / (2 * x0), (x0 + 1) / (2 * x0)], abs=1e-4)


def test_c_optimal_singular_optimum_and_rank_deficient_candidates():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    res = od.c_optimal(X, [1.0, 0.0])  # Elfving: c itself is a candidate, the design on it alone is optimal
    assert res.value == pytest.approx(1.0) and res.weights == pytest.approx([1.0, 0.0, 0.0], abs=1e-9)
    assert res.method == "lp" and res.gap <= 1e-9
    assert od.c_optimal(X, [1.0, 0.0], method="cvxpy").value == pytest.approx(1.0, rel=1e-6)
    Z = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]])  # rank 2 in R^3
    res = od.c_optimal(Z, [1.0, 1.0, 0.0])
    assert res.value == pytest.approx(1.0) and res.extras["rank"] == 2


def test_ds_optimal_quadratic_coefficient_and_subset_all_is_d():
    res = od.ds_optimal(_poly(2), [2])
    _check_certified(res)
    assert res.value == pytest.approx(4.0, rel=1e-4)  # (A^{-1})_22 = 1 / (2a (1 - 2a)), least at a = 1/4
    X = np.random.default_rng(0).standard_normal((40, 4))
    ds, d = od.ds_optimal(X, [0, 1, 2, 3]), od.phi_optimal(X, 0)
    assert ds.value == pytest.approx(d.value, rel=1e-4)
    assert od.criterion_value(X, ds.weights, "g") == pytest.approx(4.0, rel=1e-4)  # Kiefer–Wolfowitz


def test_i_optimal_default_region_is_the_candidates_uniformly():
    X = np.random.default_rng(1).standard_normal((30, 3))
    res = od.i_optimal(X)
    _check_certified(res)
    assert od.i_optimal(X, region=X).value == pytest.approx(res.value, rel=1e-4)
    assert od.i_optimal(X, moments=X.T @ X / 30).value == pytest.approx(res.value, rel=1e-4)
    assert od.i_optimal(X, region=X[:3], region_weights=[2, 0, 0]).value == pytest.approx(
        od.c_optimal(X, X[0]).value, rel=1e-4)  # one region point: c-optimality
    line = od.i_optimal(np.column_stack([np.ones(3), [-1.0, 0.0, 1.0]]))  # straight line, averaged over 3 points
    assert line.value == pytest.approx(5 / 3, rel=1e-4) and line.weights == pytest.approx([0.5, 0, 0.5], abs=1e-3)


# ---------------------------------------------------------------- equivalence theorem, fast against cvxpy
CASES = {
    "a": (od.a_optimal, {}),
    "i": (od.i_optimal, {"region": np.random.default_rng(9).standard_normal((6, 4))}),
    "c": (od.c_optimal, {"c": [1.0, -2.0, 0.5, 0.0]}),
    "l": (od.c_optimal, {"c": [[1.0, -2.0, 0.5, 0.0], [0.0, 0.0, 1.0, 1.0]]}),
    "e": (od.e_optimal, {}),
    "ds": (od.ds_optimal, {"subset": [1, 3]}),
}


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", sorted(CASES))
def test_fast_path_agrees_with_the_cvxpy_model_and_each_bound_is_below_the_other_value(name, seed):
    fn, kwargs = CASES[name]
    X = np.random.default_rng(seed).standard_normal((50 + 10 * seed, 4))
    fast, model = fn(X, **kwargs, method="fast", tol=1e-6), fn(X, **kwargs, method="cvxpy")
    assert fast.method != "cvxpy" and model.method == "cvxpy"
    assert fast.value == pytest.approx(model.value, rel=1e-4)
    assert fast.lower_bound <= model.value * (1 + 1e-9) and model.lower_bound <= fast.value * (1 + 1e-9)
    assert fast.gap <= 1e-6 and model.gap <= 1e-4


@pytest.mark.parametrize("crit", [LinearCriterion(np.eye(4), "a"), LinearCriterion(np.ones((1, 4)), "c"),
                                  SubsetCriterion(np.eye(4)[:, [0, 1]], "ds")])
def test_equivalence_theorem_at_the_optimum(crit):
    """max_k h_k = Phi at the optimum, with h_k = Phi on the support (Kiefer 1974)."""
    from optdesign.linear.classical.frankwolfe import smooth_design

    X = np.random.default_rng(5).standard_normal((80, 4))
    with od.single_threaded_blas():
        res = smooth_design(X, crit, tol=1e-9)
    g = crit.gradient(X, res.weights)
    h = np.sum((X @ g.M.T) ** 2, axis=1)
    assert h.max() == pytest.approx(g.value, rel=1e-8)
    support = res.weights > 1e-4
    assert h[support] == pytest.approx(np.full(support.sum(), g.value), rel=1e-5)


def test_large_candidate_sets_use_the_active_set_and_price_every_candidate():
    X = np.random.default_rng(7).standard_normal((30_000, 8))
    for fn, kwargs in ((od.a_optimal, {}), (od.i_optimal, {}), (od.c_optimal, {"c": np.ones(8)})):
        res = fn(X, **kwargs, tol=1e-6)
        _check_certified(res, tol=1e-6)
        assert res.support.size < 200
        assert od.criterion_value(X, res.weights, fn.__name__[0], **kwargs) == pytest.approx(res.value, rel=1e-12)


def test_time_limit_returns_the_best_certified_design_so_far():
    X = np.random.default_rng(8).standard_normal((200_000, 10))
    with pytest.warns(RuntimeWarning, match="time limit"):
        res = od.a_optimal(X, tol=1e-14, time_limit=0.01)  # the whole solve takes several times longer
    assert res.status == "not_converged" and np.isfinite(res.gap) and res.lower_bound <= res.value


def test_the_model_re_solves_with_new_parameter_values():
    """One compiled model, new c and new right-hand sides: the same answers as fresh solves."""
    X = np.random.default_rng(12).standard_normal((40, 3))
    model = od.ClassicalDesignModel.for_criterion(X, "c", c=[1.0, 0.0, 0.0], constraints=od.caps(np.full(40, 0.2)))
    model.solve()
    again = model.solve(C=np.array([[0.0, 1.0, 1.0]]), rhs=np.full(40, 0.1))
    fresh = od.c_optimal(X, [0.0, 1.0, 1.0], constraints=od.caps(np.full(40, 0.1)), method="cvxpy")
    assert od.criterion_value(X, again.weights, "c", c=[0.0, 1.0, 1.0]) == pytest.approx(fresh.value, rel=1e-5)


# ---------------------------------------------------------------- auto: which design is kept
def _fixed_result(gap, method, n=20):
    return od.DesignResult(weights=np.full(n, 1.0 / n), value=1.0, status="optimal", solver="numpy", solve_time=0.0,
                           gap=gap, method=method, criterion="A-optimal", lower_bound=1.0)


def test_auto_keeps_a_conic_design_certified_with_gap_exactly_zero(monkeypatch):
    """Regression: the hand-over compared ``conic.gap or inf``, so a conic gap of exactly 0.0 counted as inf and lost
    to a fast design with a worse (positive) gap. Gap 0 must win; a missing gap (None) must still lose."""
    from optdesign.linear.classical import dispatch

    X = np.random.default_rng(3).standard_normal((20, 3))
    monkeypatch.setattr(dispatch, "_fast", lambda problem, tol, solver: _fixed_result(0.5, "exchange"))
    monkeypatch.setattr(dispatch, "_conic", lambda problem, solver, constraints=None: _fixed_result(0.0, "cvxpy"))
    res = od.a_optimal(X)
    assert res.method == "cvxpy" and res.gap == 0.0
    monkeypatch.setattr(dispatch, "_conic", lambda problem, solver, constraints=None: _fixed_result(None, "cvxpy"))
    assert od.a_optimal(X).method == "exchange"
    monkeypatch.setattr(dispatch, "_conic", lambda problem, solver, constraints=None: _fixed_result(0.7, "cvxpy"))
    assert od.a_optimal(X).method == "exchange"
