"""Pseudo-Bayesian D-optimal designs of GLMs (optdesign.glm): the fast path against the cvxpy model, one draw against
the local D-optimal design, the identity link against the linear one, the certificate Phi* <= Phi(w) + p log(max d / p)
and the prices and Hessian against direct formulas, prior weights as repeated draws, and refused input."""

from __future__ import annotations

import numpy as np
import pytest

import optdesign as od
from optdesign.errors import InstanceTooLargeError, InvalidInputError
from optdesign.glm.certificate import certify
from optdesign.glm.prior import bayesian_problem
from optdesign.glm.variances import draw_factors, prices, support_terms


def quadratic(n=21, low=-2.0, high=2.0):
    x = np.linspace(low, high, n)
    return np.column_stack([np.ones_like(x), x, x**2])


def phi(X, nu, prior, w):
    """sum_s pi_s log det M_s(w), directly."""
    return sum(pi * np.linalg.slogdet((X * (w * nu[:, s])[:, None]).T @ X)[1] for s, pi in enumerate(prior))


DRAW_MEAN = np.array([0.2, 1.0, -0.5])


def draws(n, seed=0, scale=0.4):
    return np.random.default_rng(seed).normal(DRAW_MEAN, scale, size=(n, 3))


# ---------------------------------------------------------------- fast path against the cvxpy model
@pytest.mark.parametrize("link", ["logit", "probit", "cloglog", "log"])
def test_fast_path_and_cvxpy_model_agree(link):
    X, theta = quadratic(), draws(6, seed=1)
    fast = od.bayesian_d_optimal(X, theta, link, method="fast", tol=1e-10)
    model = od.bayesian_d_optimal(X, theta, link, method="cvxpy")
    assert fast.method == "exchange" and fast.solver == "numpy" and model.method == "cvxpy"
    assert fast.status == "optimal" and fast.gap <= 1e-10 and model.gap <= 1e-4
    assert fast.value == pytest.approx(model.value, rel=1e-6)
    assert fast.extras["log_det"] == pytest.approx(model.extras["log_det"], abs=1e-6)
    # each design's value lies above both certified bounds: the optimum is bracketed
    for res in (fast, model):
        assert max(fast.lower_bound, model.lower_bound) <= res.value * (1 + 1e-12)
        assert res.extras["log_det"] <= min(fast.extras["log_det_upper"], model.extras["log_det_upper"]) + 1e-12


def test_auto_returns_the_certified_fast_path():
    res = od.bayesian_d_optimal(quadratic(), draws(10), "logit", tol=1e-9)
    assert res.method == "exchange" and res.gap <= 1e-9 and res.criterion == "bayesian-d"
    assert res.extras["draws"] == 10 and res.link == "logit"
    assert res.weights.sum() == pytest.approx(1.0, rel=1e-14) and np.all(res.weights >= 0)


# ---------------------------------------------------------------- special cases
@pytest.mark.parametrize("link", ["logit", "probit", "cloglog", "log"])
def test_one_draw_is_the_local_d_optimal_design(link):
    X, theta = quadratic(31), np.array([0.3, 1.2, -0.4])
    bayes = od.bayesian_d_optimal(X, theta[None], link, tol=1e-10)
    F = od.glm_model_matrix(X, theta, link)
    local = od.d_optimal(F, tol=1e-10)
    assert bayes.weights == pytest.approx(local.weights, abs=1e-6)
    # value det M^{-1/p} and the Kiefer–Wolfowitz gap of d_optimal (its G-value max h / p ...)
    assert bayes.value == pytest.approx(local.value, rel=1e-9)
    assert bayes.gap == pytest.approx(local.g_value / 3 - 1, abs=1e-9)


def test_identity_link_gives_the_d_optimal_design_whatever_the_draws():
    X = quadratic(11)
    res = od.bayesian_d_optimal(X, draws(50, scale=3.0), "identity", tol=1e-10)
    assert res.weights == pytest.approx(od.d_optimal(X, tol=1e-10).weights, abs=1e-8)
    assert res.weights[[0, 5, 10]] == pytest.approx([1 / 3] * 3, abs=1e-8)  # quadratic on [-2, 2]: -2, 0, 2


def test_prior_weights_are_repeated_draws():
    X, theta = quadratic(), draws(4, seed=3)
    weighted = od.bayesian_d_optimal(X, theta, "probit", prior_weights=[1, 2, 1, 3], tol=1e-10)
    repeated = od.bayesian_d_optimal(X, theta[[0, 1, 1, 2, 3, 3, 3]], "probit", tol=1e-10)
    assert weighted.weights == pytest.approx(repeated.weights, abs=1e-7)
    assert weighted.value == pytest.approx(repeated.value, rel=1e-12)


def test_a_candidate_set_and_a_larger_instance_are_certified():
    cs = od.candidates("~ x1 + x2 + x1:x2", {"x1": (-1, 1, 41), "x2": (-1, 1, 41)})
    theta = np.random.default_rng(5).normal([0.5, 2.0, -1.5, 1.0], 0.5, size=(200, 4))
    res = od.bayesian_d_optimal(cs, theta, "logit", tol=1e-8)
    assert res.status == "optimal" and res.gap <= 1e-8 and res.iterations >= 1
    problem = bayesian_problem(cs, theta, "logit")
    d = prices(cs.X, problem.nu, problem.prior, draw_factors(cs.X[res.support], problem.nu[res.support],
                                                             res.weights[res.support])[1])
    assert d.max() <= 4 * (1 + res.gap) * (1 + 1e-12) and res.weights @ d == pytest.approx(4, rel=1e-10)


# ---------------------------------------------------------------- the certificate and its pieces
def test_prices_sum_to_p_and_match_the_inverse_information():
    X, theta = quadratic(), draws(5, seed=2)
    problem = bayesian_problem(X, theta, "cloglog")
    w = np.random.default_rng(0).dirichlet(np.ones(X.shape[0]))
    d = prices(X, problem.nu, problem.prior, draw_factors(X, problem.nu, w)[1])
    direct = sum(pi * problem.nu[:, s] * np.einsum("ij,jk,ik->i", X, np.linalg.inv(
        (X * (w * problem.nu[:, s])[:, None]).T @ X), X) for s, pi in enumerate(problem.prior))
    assert d == pytest.approx(direct, rel=1e-10)
    assert w @ d == pytest.approx(3.0, rel=1e-12)
    # d_i is the derivative of Phi along w_i (central differences)
    h, i = 1e-6, 7
    e = np.zeros_like(w)
    e[i] = h
    slope = (phi(X, problem.nu, problem.prior, w + e) - phi(X, problem.nu, problem.prior, w - e)) / (2 * h)
    assert slope == pytest.approx(d[i], rel=1e-6)


def test_support_hessian_is_the_derivative_of_the_prices():
    X, theta = quadratic(9), draws(7, seed=4)
    problem = bayesian_problem(X, theta, "logit")
    w = np.random.default_rng(1).dirichlet(np.ones(9))
    d, hess = support_terms(X, problem.nu, problem.prior, w)
    assert d == pytest.approx(prices(X, problem.nu, problem.prior, draw_factors(X, problem.nu, w)[1]), rel=1e-12)
    h = 1e-7
    for j in (0, 4, 8):
        e = np.zeros(9)
        e[j] = h
        up = support_terms(X, problem.nu, problem.prior, w + e)[0]
        down = support_terms(X, problem.nu, problem.prior, w - e)[0]
        assert -(up - down) / (2 * h) == pytest.approx(hess[:, j], rel=1e-5, abs=1e-8)  # Hessian of -Phi
    assert np.all(np.linalg.eigvalsh(hess) >= -1e-10)  # -Phi is convex


def test_certificate_bounds_the_optimum_from_any_design():
    X, theta = quadratic(), draws(8, seed=6)
    problem = bayesian_problem(X, theta, "logit")
    best = od.bayesian_d_optimal(X, theta, "logit", tol=1e-11).extras["log_det"]
    p = X.shape[1]
    for seed in range(5):
        w = np.random.default_rng(seed).dirichlet(np.ones(X.shape[0]))
        log_det, ratio = certify(problem, w)
        assert log_det == pytest.approx(phi(X, problem.nu, problem.prior, w), abs=1e-10)
        upper = log_det + p * np.log(ratio)
        assert best <= upper + 1e-9  # Phi* <= Phi(w) + p log(max d / p) ...
        assert upper <= log_det + p * (ratio - 1) + 1e-12  # ... sharper than Frank–Wolfe's Phi(w) + max d - p


# ---------------------------------------------------------------- the model, limits, refused input
def test_model_resolves_with_new_draws():
    X = quadratic(15)
    model = od.BayesianDModel(X, 4, "logit")
    first, second = model.solve(draws(4, seed=7)), model.solve(draws(4, seed=8))
    assert second.value == pytest.approx(od.bayesian_d_optimal(X, draws(4, seed=8), "logit", tol=1e-10).value,
                                         rel=1e-6)
    assert first.value != pytest.approx(second.value, rel=1e-3)
    with pytest.raises(InvalidInputError, match="built for 4"):
        model.solve(draws(5))


def test_time_limit_returns_the_best_certified_design():
    X, theta = quadratic(201), draws(30)
    with pytest.warns(RuntimeWarning, match="certified gap"):
        res = od.bayesian_d_optimal(X, theta, "logit", method="fast", tol=1e-12, time_limit=1e-9)
    assert res.status == "not_converged" and np.isfinite(res.gap) and res.lower_bound <= res.value


def test_sizes_are_refused_before_allocating():
    X = np.column_stack([np.ones(10_000), np.linspace(-1, 1, 10_000)])
    with pytest.raises(InstanceTooLargeError, match="prior draws"):
        od.bayesian_d_optimal(X, np.zeros((30_000, 2)), "logit")  # K S = 3e8 weights
    with pytest.raises(InstanceTooLargeError, match="method='fast'"):
        od.BayesianDModel(X, 300, "logit")


def test_bad_input_is_refused_with_a_message():
    X, theta = quadratic(), draws(3)
    cases = [
        (lambda: od.bayesian_d_optimal(X, theta, "logistic"), "link must be one of"),
        (lambda: od.bayesian_d_optimal(X, theta[:, :2], "logit"), "draws must have 3 columns"),
        (lambda: od.bayesian_d_optimal(X, theta[0], "logit"), "draws must be 2-D"),
        (lambda: od.bayesian_d_optimal(X, np.where(theta > 0, np.nan, theta), "logit"), "draws contains NaN"),
        (lambda: od.bayesian_d_optimal(X, theta, "logit", prior_weights=[1, 2]), "prior_weights has 2 entries"),
        (lambda: od.bayesian_d_optimal(X, theta, "logit", prior_weights=[1, -1, 1]), "nonnegative"),
        (lambda: od.bayesian_d_optimal(X, theta, "logit", method="newton"), "method must be one of"),
        (lambda: od.bayesian_d_optimal(X, theta * 1e3, "log"), "Poisson weight"),
        (lambda: od.bayesian_d_optimal(X[:, :2], [[0.0, 1e4]], "logit"), "singular"),
        (lambda: od.bayesian_d_optimal(X[:, [0, 0, 1]], theta, "logit"), "span"),
    ]
    for call, message in cases:
        with pytest.raises(InvalidInputError, match=message):
            call()
