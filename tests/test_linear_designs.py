"""Linear designs against known mathematical truths (Kiefer–Wolfowitz, Soare's Lemma 2, GK16)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import soare_arms
from scipy.optimize import brentq

import optdesign as od
from optdesign.linear.criteria import minmax_value

RANDOM_SIZES = [(12, 3), (30, 4), (60, 5)]


def _random_arms(K, d, seed):
    return np.random.default_rng(seed).standard_normal((K, d))


# ---------------------------------------------------------------- Kiefer–Wolfowitz
@pytest.mark.parametrize("K,d", RANDOM_SIZES)
@pytest.mark.parametrize("method", ["cvxpy", "auto"])
def test_g_optimal_value_is_d(K, d, method):
    X = _random_arms(K, d, K + d)
    res = od.g_optimal(X, method=method)
    assert res.status == "optimal"
    assert res.value == pytest.approx(d, rel=1e-4)
    assert res.weights.sum() == pytest.approx(1.0)
    assert np.all(res.weights >= 0)


@pytest.mark.parametrize("K,d", RANDOM_SIZES)
def test_g_and_d_optimal_designs_have_same_value(K, d):
    X = _random_arms(K, d, 7 * K + d)
    g = od.g_optimal(X, method="cvxpy")
    dd = od.d_optimal(X, method="cvxpy")
    assert g.value == pytest.approx(dd.g_value, rel=1e-4)
    assert dd.g_value == pytest.approx(d, rel=1e-4)
    # d_optimal reports det A(w)^(-1/d), certified by Atwood's bound value d / G
    assert dd.value == pytest.approx(od.criterion_value(X, dd.weights, "d"), rel=1e-10)
    assert dd.lower_bound == pytest.approx(dd.value * d / dd.g_value, rel=1e-12)
    # the D-optimal model's log det cannot be beaten by the G-optimal weights
    logdet_g = np.linalg.slogdet(X.T @ (g.weights[:, None] * X))[1]
    assert dd.extras["log_det"] >= logdet_g - 1e-5


def test_kiefer_wolfowitz_with_duplicated_arms():
    X = _random_arms(8, 3, 1)
    Xdup = np.vstack([X, X, X[:3]])
    for method in ("cvxpy", "auto"):
        res = od.g_optimal(Xdup, method=method)
        assert res.value == pytest.approx(3, rel=1e-4)


def test_kiefer_wolfowitz_many_more_arms_than_dimensions():
    X = _random_arms(3000, 4, 2)
    res = od.g_optimal(X)
    assert res.value == pytest.approx(4, rel=1e-4)
    assert res.gap <= 1e-4
    assert od.g_value(X, res.weights) == pytest.approx(res.value)


def test_d_optimal_meets_a_tight_tolerance_without_the_conic_fallback():
    """Degree-6 polynomial regression on 401 points at tol 1e-11: ``auto`` certifies the gap itself (the conic
    model, which plain Frank–Wolfe short of 1e-11 used to fall back to, stops near 1e-5)."""
    x = np.linspace(-1.0, 1.0, 401)
    res = od.d_optimal(np.column_stack([x**k for k in range(7)]), tol=1e-11)
    assert res.status == "optimal" and res.gap <= 1e-11 and res.solver == "numpy"
    assert res.g_value <= 7.0 * (1 + 1e-11) and res.fallback is None


def test_g_optimal_on_canonical_basis_is_uniform():
    res = od.g_optimal(np.eye(5), method="cvxpy")
    np.testing.assert_allclose(res.weights, np.full(5, 0.2), atol=1e-5)


# ---------------------------------------------------------------- bad input
def test_non_spanning_arms_name_the_rank():
    X = np.array([[1.0, 0, 0], [2.0, 0, 0], [0, 1.0, 0]])
    with pytest.raises(od.InvalidInputError, match="rank 2"):
        od.g_optimal(X)


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.array([[1.0, np.nan], [0.0, 1.0]]), "NaN"),
        (np.array([[1.0, np.inf], [0.0, 1.0]]), "NaN or infinite"),
        (np.array([1.0, 2.0]), "2-D"),
        (np.zeros((2, 2, 2)), "2-D"),
        ([["a", "b"]], "numeric"),
    ],
)
def test_bad_arms(bad, match):
    for fn in (od.g_optimal, od.d_optimal, od.xy_allocation):
        with pytest.raises(od.InvalidInputError, match=match):
            fn(bad)


def test_empty_direction_set_is_rejected():
    with pytest.raises(od.InvalidInputError, match="at least 1 row"):
        od.xy_allocation(np.eye(2), np.zeros((0, 2)))


def test_theta_of_wrong_length():
    with pytest.raises(od.InvalidInputError, match="theta must have length 3"):
        od.xy_oracle(np.eye(3), np.ones(2))


def test_tie_for_best_arm_is_rejected():
    with pytest.raises(od.InvalidInputError, match="not unique"):
        od.xy_oracle(np.eye(3), np.array([1.0, 1.0, 0.0]))
    with pytest.raises(od.InvalidInputError, match="not unique"):
        od.transductive(np.eye(2), np.array([[1.0, 0.0], [0.0, 1.0]]), theta=np.array([1.0, 1.0]))


@pytest.mark.parametrize("scale", [1e-12, 1e12])
def test_oracle_value_scales_as_inverse_square_of_theta(scale):
    """H_LB(c theta) = H_LB(theta) / c^2 with the same best arm: untied scores of order 1e-12 are not ties."""
    X = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.4]])
    theta = np.array([1.0, 0.5])
    ref, scaled = od.xy_oracle(X, theta), od.xy_oracle(X, theta * scale)
    assert scaled.extras["best_arm"] == ref.extras["best_arm"] == 0
    assert scaled.value * scale**2 == pytest.approx(ref.value, rel=1e-6)


def test_public_helpers_reject_bad_input():
    with pytest.raises(od.InvalidInputError, match="NaN"):
        od.pairwise_differences(np.array([[1.0, np.nan], [0.0, 1.0]]))
    with pytest.raises(od.InvalidInputError, match="at least two items"):
        od.oracle_directions(np.eye(2)[:1], np.ones(2))
    with pytest.raises(od.InvalidInputError, match="theta must have length 2"):
        od.oracle_directions(np.eye(2), np.ones(3))
    with pytest.raises(od.InvalidInputError, match="one weight per arm"):
        od.minmax_value(np.eye(2), np.ones(3), np.eye(2))
    with pytest.raises(od.InvalidInputError, match="nonnegative"):
        od.g_value(np.eye(2), np.array([1.0, -0.5]))
    with pytest.raises(od.InvalidInputError, match="one weight per direction"):
        od.minmax_lower_bound(np.eye(2), np.ones(2), np.eye(2), np.ones(3))
    with pytest.raises(od.InvalidInputError, match="w0 must have one weight per arm"):
        od.minmax_design(np.eye(2), np.eye(2), w0=np.ones(3))
    with pytest.raises(od.InvalidInputError, match="w0 contains NaN"):
        od.minmax_design(np.eye(2), np.eye(2), w0=np.array([np.nan, 1.0]))


def test_unknown_method_and_bad_tol():
    with pytest.raises(od.InvalidInputError, match="method must be one of"):
        od.g_optimal(np.eye(2), method="newton")
    with pytest.raises(od.InvalidInputError, match="tol"):
        od.xy_allocation(np.eye(2), tol=-1.0)


# ---------------------------------------------------------------- XY / oracle: Soare's Lemma 2
def _lemma2_bounds(X, theta):
    scores = X @ theta
    best = int(np.argmax(scores))
    Y = X[best] - np.delete(X, best, axis=0)
    gaps = Y @ theta
    L2 = np.max(np.sum(X**2, axis=1))
    lower = np.max(np.sum(Y**2, axis=1) / (L2 * gaps**2))
    upper = 4 * X.shape[1] / gaps.min() ** 2
    return lower, upper


@pytest.mark.parametrize("seed", range(4))
def test_soare_lemma2_random(seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((10, 3))
    theta = rng.standard_normal(3)
    res = od.xy_oracle(X, theta, method="cvxpy")
    lower, upper = _lemma2_bounds(X, theta)
    assert lower * (1 - 1e-6) <= res.value <= upper * (1 + 1e-6)
    assert res.extras["best_arm"] == int(np.argmax(X @ theta))


@pytest.mark.parametrize("d,omega", [(2, 0.1), (3, 0.1), (5, 0.3)])
def test_soare_lemma2_soare_instance(d, omega):
    X = soare_arms(d, omega)
    theta = np.zeros(d)
    theta[0] = 2.0
    res = od.xy_oracle(X, theta, method="cvxpy")
    lower, upper = _lemma2_bounds(X, theta)
    assert lower * (1 - 1e-6) <= res.value <= upper * (1 + 1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_canonical_basis_oracle_between_h_mab_and_twice(seed):
    # means spread over [0, 1] (gap ratios up to ~50; near-ties are exercised in test_fastpath)
    rng = np.random.default_rng(seed)
    mu = rng.permutation(np.linspace(0.0, 1.0, 6)) + rng.uniform(-0.05, 0.05, size=6)
    res = od.xy_oracle(np.eye(6), mu, method="cvxpy")
    gaps = mu.max() - mu
    gaps[np.argmax(mu)] = np.sort(gaps)[1]  # the best arm's gap is Delta_min
    h_mab = np.sum(gaps**-2.0)
    assert h_mab * (1 - 1e-6) <= res.value <= 2 * h_mab * (1 + 1e-6)


def test_xy_value_is_attained_by_reported_weights():
    X = _random_arms(10, 3, 3)
    res = od.xy_allocation(X, method="cvxpy")
    assert minmax_value(X, res.weights, od.pairwise_differences(X)) == pytest.approx(res.value)
    assert res.lower_bound <= res.value * (1 + 1e-9)
    assert res.gap < 1e-5  # the dual certificate of the SOCP is tight


# ---------------------------------------------------------------- transductive
def test_transductive_with_z_equal_x_is_xy_allocation():
    X = _random_arms(9, 3, 4)
    a = od.transductive(X, X, method="cvxpy")
    b = od.xy_allocation(X, method="cvxpy")
    assert a.value == pytest.approx(b.value, rel=1e-5)
    theta = np.random.default_rng(4).standard_normal(3)
    c = od.transductive(X, X, theta, method="cvxpy")
    e = od.xy_oracle(X, theta, method="cvxpy")
    assert c.value == pytest.approx(e.value, rel=1e-5)


def gk_gaussian_characteristic_time(mu: np.ndarray) -> float:
    """Garivier–Kaufmann T*(mu) for unit-variance Gaussians by their 1-D root-finding scheme.

    g_a(x) = d(mu_1, m) + x d(mu_a, m), m = (mu_1 + x mu_a)/(1 + x); x_a(y) solves g_a(x) = y;
    y* solves F(y) = sum_a d(mu_1, m_a)/d(mu_a, m_a) = 1; T* = (1 + sum_a x_a(y*)) / y*.
    """
    mu = np.sort(mu)[::-1]

    def kl(p, q):
        return 0.5 * (p - q) ** 2

    def x_of(y, a):
        g = lambda x: kl(mu[0], (mu[0] + x * mu[a]) / (1 + x)) + x * kl(mu[a], (mu[0] + x * mu[a]) / (1 + x)) - y  # noqa: E731
        hi = 1.0
        while g(hi) < 0:
            hi *= 2
        return brentq(g, 0.0, hi, xtol=1e-14, rtol=1e-14)

    def F(y):
        total = 0.0
        for a in range(1, len(mu)):
            x = x_of(y, a)
            m = (mu[0] + x * mu[a]) / (1 + x)
            total += kl(mu[0], m) / kl(mu[a], m)
        return total - 1.0

    ymax = kl(mu[0], mu[1])  # g_a is bounded by d(mu_1, mu_a)
    y = brentq(F, 1e-14 * ymax, ymax * (1 - 1e-12), xtol=1e-16, rtol=1e-14)
    return (1 + sum(x_of(y, a) for a in range(1, len(mu)))) / y


@pytest.mark.parametrize(
    "mu",
    [np.array([0.5, 0.45, 0.43, 0.4]), np.array([0.3, 0.21, 0.2, 0.19, 0.18]), np.array([1.0, 0.2, 0.1])],
)
def test_transductive_multi_armed_equals_garivier_kaufmann(mu):
    K = len(mu)
    res = od.transductive(np.eye(K), np.eye(K), mu, method="cvxpy")
    assert 2 * res.value == pytest.approx(gk_gaussian_characteristic_time(mu), rel=1e-5)


# ---------------------------------------------------------------- parameterised models
def test_oracle_model_is_dpp_and_resolve_equals_fresh_build():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((12, 3))
    model = od.OracleDesignModel(X)
    assert model.problem.is_dpp()
    theta1, theta2 = rng.standard_normal(3), rng.standard_normal(3)
    first = model.solve(theta1)
    again = model.solve(theta2)
    fresh = od.OracleDesignModel(X).solve(theta2)
    assert again.value == pytest.approx(fresh.value, rel=1e-6)
    assert again.value == pytest.approx(od.xy_oracle(X, theta2, method="cvxpy").value, rel=1e-6)
    assert first.extras["best"] == int(np.argmax(X @ theta1))
    assert again.extras["best"] == int(np.argmax(X @ theta2))


def test_transductive_oracle_model_matches_one_shot_function():
    rng = np.random.default_rng(6)
    X, Z = rng.standard_normal((10, 3)), rng.standard_normal((14, 3))
    model = od.OracleDesignModel(X, Z)
    for _ in range(2):
        theta = rng.standard_normal(3)
        assert model.solve(theta).value == pytest.approx(od.transductive(X, Z, theta).value, rel=2e-4)


def test_minmax_model_has_no_parameters_and_resolves_identically():
    X = np.random.default_rng(7).standard_normal((10, 3))
    model = od.MinMaxDesignModel(X, od.pairwise_differences(X))
    assert model.problem.is_dpp() and not model.problem.parameters()
    first, second = model.solve(), model.solve()
    assert first.value == pytest.approx(second.value, rel=1e-9)
    assert first.value == pytest.approx(od.xy_allocation(X).value, rel=1e-4)


def test_models_reject_bad_parameters():
    with pytest.raises(od.InvalidInputError, match="Y must have 3 columns"):
        od.MinMaxDesignModel(np.eye(3), np.ones((2, 4)))
    with pytest.raises(od.InvalidInputError, match="theta must have length 3"):
        od.OracleDesignModel(np.eye(3)).solve(np.ones(4))


def _drifting_estimates(rng, d, n, step=0.05):
    """theta_{t+1} = theta_t + small noise, as a plug-in estimate drifts between bandit rounds."""
    theta, out = rng.standard_normal(d), []
    for _ in range(n):
        theta = theta + step * rng.standard_normal(d)
        out.append(theta.copy())
    return out


def test_oracle_model_resolves_along_a_drifting_estimate_like_fresh_builds():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((15, 4))
    model = od.OracleDesignModel(X)
    for theta in _drifting_estimates(rng, 4, 5):
        again = model.solve(theta)
        fresh = od.OracleDesignModel(X).solve(theta)
        assert again.status == "optimal"
        assert again.value == pytest.approx(fresh.value, rel=1e-6)
        assert again.extras["best"] == int(np.argmax(X @ theta))


def test_clarabel_session_reproduces_cvxpy_resolve():
    # the kept CLARABEL solver sees the same data as cvxpy's warm-started re-solve: same iterates
    rng = np.random.default_rng(9)
    X, Z = rng.standard_normal((8, 3)), rng.standard_normal((11, 3))
    fast = od.OracleDesignModel(X, Z, solver="CLARABEL", polish=False)
    slow = od.OracleDesignModel(X, Z, solver="CLARABEL", polish=False)
    slow._use_session = False  # cvxpy's own path: problem.solve through optdesign.runtime.solvers.solve
    thetas = [rng.standard_normal(3), *_drifting_estimates(rng, 3, 3)]
    for theta in thetas:
        a, b = fast.solve(theta), slow.solve(theta)
        assert fast.problem.solver_stats.num_iters == slow.problem.solver_stats.num_iters
        np.testing.assert_allclose(a.weights, b.weights, rtol=0, atol=1e-12)
        assert a.value == pytest.approx(b.value, rel=1e-12)
        assert a.lower_bound == pytest.approx(b.lower_bound, rel=1e-12)
        assert a.solver == "CLARABEL" and a.status == "optimal"
    assert fast._session is not None and fast._session._map is not None  # the direct parameter map is used


def test_unsolved_clarabel_session_falls_back_to_the_solver_chain(monkeypatch):
    from optdesign.runtime import session, solvers

    rng = np.random.default_rng(10)
    X, theta = rng.standard_normal((9, 3)), rng.standard_normal(3)
    expected = od.OracleDesignModel(X).solve(theta).value
    monkeypatch.setattr(session.ClarabelSession, "solve", lambda self: "AlmostSolved")
    calls, real = [], solvers.solve

    def recording(problem, solver=None, **kwargs):
        calls.append(solver)
        return real(problem, solver, **kwargs)

    monkeypatch.setattr(solvers, "solve", recording)
    res = od.OracleDesignModel(X, solver="CLARABEL").solve(theta)
    assert calls == ["CLARABEL"]
    assert res.status == "optimal" and res.value == pytest.approx(expected, rel=1e-6)


def test_oracle_model_refuses_instances_above_its_size_limit():
    from optdesign.linear.models import ORACLE_MAX_CONES, oracle_model_size

    X = np.random.default_rng(11).standard_normal((223, 3))  # 223^2 = 49,729 cones: builds
    assert oracle_model_size(223, 223, 3)[0] <= ORACLE_MAX_CONES
    od.OracleDesignModel(X)
    with pytest.raises(od.InstanceTooLargeError, match=r"xy_oracle\(X, theta\)"):
        od.OracleDesignModel(np.vstack([X, X[:1] + 1.0]))  # 224^2 = 50,176 cones
    Z = np.random.default_rng(12).standard_normal((4000, 3))  # 40,000 cones, 3.2e8 compile entries
    with pytest.raises(od.InstanceTooLargeError, match="method='barrier'"):
        od.OracleDesignModel(X[:10], Z)


def _square_with_condition(d: int, cond: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    U, _ = np.linalg.qr(rng.standard_normal((d, d)))
    V, _ = np.linalg.qr(rng.standard_normal((d, d)))
    return (U * np.geomspace(1.0, 1.0 / cond, d)) @ V.T


NEARLY_DEPENDENT = [
    np.array([[1.0, 1.0], [1.0, 1.0 + 1e-8]]),  # condition 4e8
    np.array([[31287668.0, 15426000.0], [29916315.0, 14749871.0]]),  # condition 2.8e8 at scale 3e7
    _square_with_condition(5, 1e9, 0),
]


@pytest.mark.parametrize("X", NEARLY_DEPENDENT, ids=["1e-8", "large-scale", "d5-cond1e9"])
@pytest.mark.parametrize("method", ["auto", "frank-wolfe", "multiplicative", "barrier", "exchange"])
def test_nearly_dependent_square_arms_give_the_uniform_design(X, method):
    """K = d invertible arms: h_k = 1 / w_k, so the G-optimal design is uniform with value d exactly. The Gram
    matrix has condition 1e17 here (its Cholesky fails or loses every digit); the leverages must not."""
    d = X.shape[1]
    res = od.g_optimal(X, method=method)
    assert res.status == "optimal"
    assert res.value == pytest.approx(d, rel=1e-6) and res.lower_bound == d
    assert res.weights == pytest.approx(np.full(d, 1.0 / d), rel=1e-5)


@pytest.mark.parametrize("X", NEARLY_DEPENDENT[:2], ids=["1e-8", "large-scale"])
def test_nearly_dependent_pair_xy_closed_form(X):
    """Two arms, one direction y = x_1 - x_2 = X^T (e_1 - e_2): y^T A(w)^{-1} y = 1/w_1 + 1/w_2, minimum 4."""
    res = od.xy_allocation(X)
    assert res.value == pytest.approx(4.0, rel=1e-6)
    # both sides are exact up to the rounding cond(X) eps ~ 1e-7 of the leverages
    assert res.lower_bound <= res.value * (1 + 1e-6) and res.lower_bound == pytest.approx(4.0, rel=1e-4)


def test_ill_conditioned_arms_beyond_a_square_set():
    """[[1, 0], [0, 1e-7], [1, 1e-7]]: the column scaling (1, 1e7) maps it to [[1, 0], [0, 1], [1, 1]], whose
    G-optimal design is uniform with every leverage 2 (A^{-1} = [[2, -1], [-1, 2]])."""
    X = np.array([[1.0, 0.0], [0.0, 1e-7], [1.0, 1e-7]])
    for method in ("auto", "barrier", "frank-wolfe"):
        res = od.g_optimal(X, method=method)
        assert res.value == pytest.approx(2.0, rel=1e-7), method
        assert res.weights == pytest.approx(np.full(3, 1 / 3), rel=1e-4), method


def test_models_used_directly_check_the_direction_scale():
    from optdesign.linear.models import MinMaxDesignModel, OracleDesignModel

    with pytest.raises(od.InvalidInputError, match="underflow or overflow"):
        MinMaxDesignModel(np.eye(3), np.eye(3) * 1e200)
    with pytest.raises(od.InvalidInputError, match="underflow or overflow"):
        OracleDesignModel(np.eye(2), np.array([[1e-150, 0.0], [0.0, 1e-150]]))
