"""Pseudo-Bayesian A- and I-optimal designs of GLMs (optdesign.glm): one draw against the locally optimal design, the
identity link against the linear design and its closed forms, the fast path against the cvxpy model, the
certificate Phi* >= Phi(w)^2 / max h and the prices and Hessian against direct formulas, and refused input."""

from __future__ import annotations

import numpy as np
import pytest
from test_bayesian_designs import draws, quadratic

import optdesign as od
from optdesign.errors import InvalidInputError
from optdesign.glm.trace_bound import certify_trace
from optdesign.glm.trace_prior import trace_problem
from optdesign.glm.traces import trace_prices, trace_support_terms
from optdesign.glm.variances import draw_factors

LINKS = ["logit", "probit", "cloglog", "log"]


def design(criterion, *args, **kwargs):
    return (od.bayesian_a_optimal if criterion == "A" else od.bayesian_i_optimal)(*args, **kwargs)


def phi(problem, w):
    """sum_s pi_s tr(B_s M_s(w)^{-1}), directly."""
    base = problem.base
    B = np.broadcast_to(problem.moments, (base.n_draws, *problem.moments.shape[1:]))
    return sum(pi * np.trace(B[s] @ np.linalg.inv((base.X * (w * base.nu[:, s])[:, None]).T @ base.X))
               for s, pi in enumerate(base.prior))


# ---------------------------------------------------------------- special cases with known answers
@pytest.mark.parametrize("link", LINKS)
@pytest.mark.parametrize("criterion", ["A", "I"])
def test_one_draw_is_the_locally_optimal_design(link, criterion):
    X, theta = quadratic(31), np.array([0.3, 1.2, -0.4])
    bayes = design(criterion, X, theta[None], link, tol=1e-10)
    local = od.glm_design(X, theta, link, criterion, tol=1e-10)
    assert bayes.weights == pytest.approx(local.weights, abs=1e-6)
    assert bayes.value == pytest.approx(local.value, rel=1e-8)
    assert bayes.criterion == f"bayesian-{criterion.lower()}" and bayes.gap <= 1e-10
    assert bayes.lower_bound <= local.value * (1 + 1e-10) and local.lower_bound <= bayes.value * (1 + 1e-10)


def test_one_draw_with_a_region_is_the_locally_i_optimal_design_over_it():
    X, theta = quadratic(25), np.array([0.5, -1.0, 0.3])
    B = X.T @ X / X.shape[0]  # the variance of the linear predictor over the candidates
    bayes = od.bayesian_i_optimal(X, theta[None], "probit", moments=B, tol=1e-10)
    local = od.glm_design(X, theta, "probit", "I", moments=B, tol=1e-10)
    assert bayes.weights == pytest.approx(local.weights, abs=1e-6)
    assert bayes.value == pytest.approx(local.value, rel=1e-8)


@pytest.mark.parametrize("method", ["fast", "cvxpy"])
def test_straight_line_on_the_interval_puts_half_the_weight_at_each_end(method):
    """Identity link (weight 1 whatever the draws), x in [-1, 1]: the A-optimal design is uniform on {-1, 1} with
    tr M^{-1} = 2, and the I-optimal one over the uniform grid too (B = diag(1, mean x^2))."""
    x = np.linspace(-1, 1, 21)
    X = np.column_stack([np.ones_like(x), x])
    theta = np.random.default_rng(1).normal(size=(40, 2))
    res = od.bayesian_a_optimal(X, theta, "identity", method=method, tol=1e-10)
    assert res.weights[[0, 20]] == pytest.approx([0.5, 0.5], abs=1e-6)
    assert res.value == pytest.approx(2.0, rel=1e-8) and res.lower_bound <= 2.0 * (1 + 1e-12)
    i_res = od.bayesian_i_optimal(X, theta, "identity", method=method, tol=1e-10)
    assert i_res.weights[[0, 20]] == pytest.approx([0.5, 0.5], abs=1e-6)
    assert i_res.value == pytest.approx(1.0 + np.mean(x**2), rel=1e-8)  # tr(diag(1, mean x^2) I^{-1})


def test_identity_link_gives_the_linear_designs_whatever_the_draws():
    X = np.column_stack([np.ones(3), [-1.0, 0.0, 1.0], [1.0, 0.0, 1.0]])
    theta = draws(30, scale=3.0)
    a = od.bayesian_a_optimal(X, theta, "identity", tol=1e-10)
    assert a.weights == pytest.approx([0.25, 0.5, 0.25], abs=1e-8) and a.value == pytest.approx(8.0, rel=1e-9)
    Xq = quadratic(11)
    i_res = od.bayesian_i_optimal(Xq, theta, "identity", tol=1e-10)
    linear = od.i_optimal(Xq, tol=1e-10)
    assert i_res.weights == pytest.approx(linear.weights, abs=1e-7)
    assert i_res.value == pytest.approx(linear.value, rel=1e-8)


# ---------------------------------------------------------------- fast path against the cvxpy model
@pytest.mark.parametrize("link", LINKS)
@pytest.mark.parametrize("criterion", ["A", "I"])
def test_fast_path_and_cvxpy_model_agree_to_the_gap(link, criterion):
    X, theta = quadratic(), draws(5, seed=1)
    fast = design(criterion, X, theta, link, method="fast", tol=1e-10)
    model = design(criterion, X, theta, link, method="cvxpy")
    assert fast.method == "exchange" and fast.solver == "numpy" and model.method == "cvxpy"
    assert fast.status == "optimal" and fast.gap <= 1e-10 and model.gap <= 1e-4
    # both values lie above both certified bounds, so they agree within the larger gap
    for res in (fast, model):
        assert max(fast.lower_bound, model.lower_bound) <= res.value * (1 + 1e-12)
    assert fast.value == pytest.approx(model.value, rel=max(model.gap, 1e-9))
    problem = trace_problem(X, theta, link, criterion)
    assert fast.value == pytest.approx(phi(problem, fast.weights), rel=1e-10)


def test_auto_returns_the_certified_fast_path_on_a_candidate_set():
    cs = od.candidates("~ x1 + x2 + x1:x2", {"x1": (-1, 1, 31), "x2": (-1, 1, 31)})
    theta = np.random.default_rng(5).normal([0.5, 2.0, -1.5, 1.0], 0.5, size=(100, 4))
    for criterion in "AI":
        res = design(criterion, cs, theta, "logit", tol=1e-8)
        assert res.method == "exchange" and res.status == "optimal" and res.gap <= 1e-8
        assert res.extras == {"draws": 100} and res.link == "logit"
        assert res.weights.sum() == pytest.approx(1.0, rel=1e-14) and np.all(res.weights >= 0)


def test_prior_weights_are_repeated_draws():
    X, theta = quadratic(), draws(4, seed=3)
    weighted = od.bayesian_i_optimal(X, theta, "cloglog", prior_weights=[1, 2, 1, 3], tol=1e-10)
    repeated = od.bayesian_i_optimal(X, theta[[0, 1, 1, 2, 3, 3, 3]], "cloglog", tol=1e-10)
    assert weighted.weights == pytest.approx(repeated.weights, abs=1e-7)
    assert weighted.value == pytest.approx(repeated.value, rel=1e-12)


# ---------------------------------------------------------------- the certificate and its pieces
@pytest.mark.parametrize("criterion", ["A", "I"])
def test_prices_are_the_gradient_and_sum_to_phi(criterion):
    X, theta = quadratic(), draws(5, seed=2)
    problem = trace_problem(X, theta, "logit", criterion)
    base = problem.base
    w = np.random.default_rng(0).dirichlet(np.ones(X.shape[0]))
    h, value = trace_prices(X, base.nu, base.prior, problem.moments, draw_factors(X, base.nu, w))
    assert value == pytest.approx(phi(problem, w), rel=1e-12)
    assert w @ h == pytest.approx(value, rel=1e-10)  # Euler: Phi is homogeneous of degree -1
    step = 1e-6
    for i in (0, 7, 20):
        e = np.zeros_like(w)
        e[i] = step
        slope = (phi(problem, w + e) - phi(problem, w - e)) / (2 * step)
        assert -slope == pytest.approx(h[i], rel=1e-6)


def test_support_hessian_is_the_derivative_of_the_prices():
    X, theta = quadratic(9), draws(7, seed=4)
    problem = trace_problem(X, theta, "probit", "I")
    base = problem.base
    w = np.random.default_rng(1).dirichlet(np.ones(9))
    h, hess = trace_support_terms(X, base.nu, base.prior, problem.moments, w)
    assert h == pytest.approx(trace_prices(X, base.nu, base.prior, problem.moments,
                                           draw_factors(X, base.nu, w))[0], rel=1e-12)
    step = 1e-7
    for j in (0, 4, 8):
        e = np.zeros(9)
        e[j] = step
        up = trace_support_terms(X, base.nu, base.prior, problem.moments, w + e)[0]
        down = trace_support_terms(X, base.nu, base.prior, problem.moments, w - e)[0]
        assert -(up - down) / (2 * step) == pytest.approx(hess[:, j], rel=1e-5, abs=1e-8)
    assert np.all(np.linalg.eigvalsh(hess) >= -1e-10 * np.abs(hess).max())  # Phi is convex


@pytest.mark.parametrize("criterion", ["A", "I"])
def test_certificate_bounds_the_optimum_from_any_design(criterion):
    X, theta = quadratic(), draws(6, seed=6)
    problem = trace_problem(X, theta, "logit", criterion)
    best = design(criterion, X, theta, "logit", tol=1e-11).value
    for seed in range(5):
        w = np.random.default_rng(seed).dirichlet(np.ones(X.shape[0]))
        value, ratio = certify_trace(problem, w)
        assert value == pytest.approx(phi(problem, w), rel=1e-11)
        lower = value / ratio
        assert lower <= best * (1 + 1e-9)  # Phi* >= Phi(w)^2 / max h, at least Frank–Wolfe's Phi - (max h - Phi)
        assert lower >= value - (ratio * value - value) - 1e-12 * value


# ---------------------------------------------------------------- the model, limits, refused input
def test_model_resolves_with_new_draws():
    X = quadratic(15)
    model = od.BayesianTraceModel(X, 4, "logit", "I")
    first, second = model.solve(draws(4, seed=7)), model.solve(draws(4, seed=8))
    assert second.value == pytest.approx(od.bayesian_i_optimal(X, draws(4, seed=8), "logit", tol=1e-10).value,
                                         rel=1e-6)
    assert first.value != pytest.approx(second.value, rel=1e-3)
    with pytest.raises(InvalidInputError, match="built for 4"):
        model.solve(draws(5))


def test_time_limit_returns_a_certified_design():
    X, theta = quadratic(201), draws(30)
    with pytest.warns(RuntimeWarning, match="certified gap"):
        res = od.bayesian_a_optimal(X, theta, "logit", method="fast", tol=1e-12, time_limit=1e-9)
    assert res.status == "not_converged" and np.isfinite(res.gap) and res.lower_bound <= res.value


def test_bad_input_is_refused_with_a_message():
    X, theta = quadratic(), draws(3)
    B = X.T @ X / X.shape[0]
    cases = [
        (lambda: od.bayesian_a_optimal(X, np.zeros((0, 3)), "logit"), "at least 1 row"),
        (lambda: od.bayesian_a_optimal(X, np.where(theta > 0, np.nan, theta), "logit"), "draws contains NaN"),
        (lambda: od.bayesian_i_optimal(X, theta[:, :2], "logit"), "draws must have 3 columns"),
        (lambda: od.bayesian_i_optimal(X, theta[0], "logit"), "draws must be 2-D"),
        (lambda: od.bayesian_i_optimal(X, theta, "logit", moments=B[:2, :2]), "moments must have 3 columns"),
        (lambda: od.bayesian_i_optimal(X, theta, "logit", moments=B[:, :]), None),
        (lambda: od.bayesian_i_optimal(X, theta, "logit", moments=-B), "positive semidefinite"),
        (lambda: od.bayesian_a_optimal(X, theta, "logit", prior_weights=[1, 2]), "prior_weights has 2 entries"),
        (lambda: od.bayesian_a_optimal(X, theta, "logistic"), "link must be one of"),
        (lambda: od.bayesian_a_optimal(X, theta, "logit", method="newton"), "method must be one of"),
        (lambda: od.BayesianTraceModel(X, 3, "logit", "D"), "criterion must be one of"),
        (lambda: od.BayesianTraceModel(X, 3, "logit", "A", moments=B), "moments= is the region"),
    ]
    for call, message in cases:
        if message is None:  # a good region: no error
            assert call().gap is not None
            continue
        with pytest.raises(InvalidInputError, match=message):
            call()
