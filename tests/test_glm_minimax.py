"""Standardised maximin (and minimax) D-optimal designs of GLMs (optdesign.glm) against truths: one parameter value
gives the local D-optimal design, the identity link the linear one; the duality certificate brackets the optimum and
agrees with a brute-force search over a grid of the simplex; the least favourable prior equalises the efficiencies it
weighs and makes the design pseudo-Bayesian optimal; more values never raise the maximin efficiency; the box's grid
and refinement; and refused input."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest

import optdesign as od
from optdesign.errors import InvalidInputError
from optdesign.glm import box_grid
from optdesign.glm.certificate import certify
from optdesign.glm.duality import certify_maximin
from optdesign.glm.maximin import solve_maximin
from optdesign.glm.prior import bayesian_problem
from optdesign.glm.standardise import maximin_problem

LINKS = ["logit", "probit", "cloglog", "log"]


def line(x):
    x = np.asarray(x, dtype=float)
    return np.column_stack([np.ones_like(x), x])


def quadratic(n=21):
    x = np.linspace(-2.0, 2.0, n)
    return np.column_stack([np.ones_like(x), x, x**2])


THETAS3 = np.array([[0.2, 1.0, -0.5], [-0.3, 1.5, -1.0], [0.5, 0.5, 0.0], [0.0, 2.0, -0.8]])


def log_det(X, w, nu):
    return np.linalg.slogdet((X * (w * nu)[:, None]).T @ X)[1]


def efficiency(X, w, theta, link):
    """(det M(w) / det M(w*))^(1/p) at theta, w* from od.d_optimal on the linearised candidates (tight)."""
    nu = od.glm_weights(X, theta, link)
    local = od.d_optimal(np.sqrt(nu)[:, None] * X, method="exchange", tol=1e-12).weights
    return np.exp((log_det(X, w, nu) - log_det(X, local, nu)) / X.shape[1])


# ---------------------------------------------------------------- special cases
@pytest.mark.parametrize("link", LINKS)
def test_one_value_is_the_local_d_optimal_design(link):
    X, theta = quadratic(31), np.array([0.3, 1.2, -0.4])
    res = od.maximin_d_optimal(X, theta[None], link, tol=1e-10)
    F = od.glm_model_matrix(X, theta, link)
    local = od.d_optimal(F, tol=1e-10)
    assert res.status == "optimal" and res.criterion == "standardised-maximin-d"
    assert res.weights == pytest.approx(local.weights, abs=1e-6)
    assert res.value == pytest.approx(1.0, abs=1e-9) and res.extras["efficiency"] == pytest.approx(1.0, abs=1e-9)
    assert res.extras["least_favourable"] == pytest.approx([1.0])
    # not standardised: value = det M(w)^(-1/p), the D-criterion of the local design
    raw = od.maximin_d_optimal(X, theta[None], link, standardised=False, tol=1e-10)
    assert raw.criterion == "minimax-d" and raw.weights == pytest.approx(local.weights, abs=1e-6)
    assert raw.value == pytest.approx(od.criterion_value(F, local.weights, "d"), rel=1e-9)


def test_identity_link_gives_the_d_optimal_design_whatever_the_values():
    X = quadratic(11)
    thetas = np.random.default_rng(0).normal(0.0, 3.0, size=(6, 3))
    linear = od.d_optimal(X, tol=1e-10)
    for standardised in (True, False):
        res = od.maximin_d_optimal(X, thetas, "identity", standardised=standardised, tol=1e-10)
        assert res.weights == pytest.approx(linear.weights, abs=1e-7)
        assert res.weights[[0, 5, 10]] == pytest.approx([1 / 3] * 3, abs=1e-7)  # quadratic on [-2, 2]: -2, 0, 2
    assert res.value == pytest.approx(od.criterion_value(X, linear.weights, "d"), rel=1e-9)


# ---------------------------------------------------------------- fast path, cvxpy model, certificate
@pytest.mark.parametrize("link", LINKS)
def test_fast_path_and_cvxpy_model_agree(link):
    X = quadratic()
    fast = od.maximin_d_optimal(X, THETAS3, link, method="fast", tol=1e-9)
    model = od.maximin_d_optimal(X, THETAS3, link, method="cvxpy")
    assert fast.method == "exchange" and fast.solver == "numpy" and model.method == "cvxpy"
    assert fast.status == "optimal" and fast.gap <= 1e-9 and model.gap <= 1e-5
    assert fast.value == pytest.approx(model.value, rel=1e-6)
    for res in (fast, model):  # each design's value lies above both certified bounds: the optimum is bracketed
        assert max(fast.lower_bound, model.lower_bound) <= res.value * (1 + 1e-12)
        assert res.extras["efficiency"] <= min(fast.extras["efficiency_upper"], model.extras["efficiency_upper"])
        assert res.weights.sum() == pytest.approx(1.0, rel=1e-12) and np.all(res.weights >= 0)


def test_auto_returns_the_certified_fast_path_and_its_extras():
    res = od.maximin_d_optimal(quadratic(), THETAS3, "probit", tol=1e-8)
    assert res.method == "exchange" and res.status == "optimal" and res.gap <= 1e-8
    assert res.extras["values"] == 4 and res.link == "probit"
    effs = res.extras["efficiencies"]
    assert effs.shape == (4,) and np.all(effs <= 1.0) and res.extras["efficiency"] == pytest.approx(effs.min())
    assert res.extras["efficiency"] == pytest.approx(1 / res.value, rel=1e-14)
    assert res.extras["efficiency_upper"] == pytest.approx(1 / res.lower_bound, rel=1e-14)
    assert np.all(res.extras["local_gaps"] <= 1e-9)
    # the efficiencies are those computed independently
    direct = [efficiency(quadratic(), res.weights, theta, "probit") for theta in THETAS3]
    assert effs == pytest.approx(direct, rel=1e-8)


@pytest.mark.parametrize("standardised", [True, False])
def test_brute_force_over_the_simplex_agrees_with_the_certificate(standardised):
    """K = 4 candidates, p = 2, S = 3: the best design of a grid of step 1/200 over the simplex lies below the
    certified upper bound, and the maximin design is at least as good as it (within the grid's resolution)."""
    X = line([-2.0, -0.5, 0.7, 2.5])
    thetas = np.array([[0.0, 1.0], [0.5, 2.0], [-0.5, 0.6]])
    res = od.maximin_d_optimal(X, thetas, "logit", standardised=standardised, tol=1e-10)
    n = 200
    grid = np.array([(a, b, c, n - a - b - c) for a, b, c in itertools.product(range(n + 1), repeat=3)
                     if a + b + c <= n], dtype=float) / n
    crit = np.full(grid.shape[0], np.inf)
    for theta in thetas:
        nu = od.glm_weights(X, theta, "logit")
        m11, m12, m22 = (grid * nu) @ X[:, 0] ** 2, (grid * nu) @ (X[:, 0] * X[:, 1]), (grid * nu) @ X[:, 1] ** 2
        with np.errstate(divide="ignore", invalid="ignore"):
            g = 0.5 * np.log(np.maximum(m11 * m22 - m12**2, 0.0))
        if standardised:
            g -= 0.5 * log_det(X, od.d_optimal(np.sqrt(nu)[:, None] * X, tol=1e-12).weights, nu)
        crit = np.minimum(crit, g)
    brute = float(np.max(np.exp(crit)))  # the best least efficiency (or least det^(1/p)) on the grid
    best = 1.0 / res.value  # the maximin design's, certified from below
    assert brute <= 1.0 / res.lower_bound * (1 + 1e-12)  # no design beats the certified bound
    assert best >= brute * (1 - 1e-12) and best <= brute * (1 + 1e-3)  # the optimum is within the grid's resolution


def test_duality_bound_holds_for_any_design_and_any_prior():
    X, link = quadratic(), "cloglog"
    problem = maximin_problem(X, THETAS3, link, tol=1e-10)
    best = od.maximin_d_optimal(X, THETAS3, link, tol=1e-10)
    rng = np.random.default_rng(3)
    for _ in range(10):
        w, q = rng.dirichlet(np.ones(X.shape[0])), rng.dirichlet(np.ones(4))
        bounds = certify_maximin(problem, w, q)
        assert bounds.lower <= bounds.upper
        assert np.log(best.extras["efficiency"]) <= bounds.upper + 1e-12  # every (w, q) bounds the optimum ...
        assert bounds.lower <= np.log(best.extras["efficiency_upper"]) + 1e-12  # ... and no design beats it


def test_local_gaps_widen_the_bracket_in_the_right_direction():
    """Each local optimum c_s is only known within [offset_s, offset_s + slack_s]. Widened brackets that still hold
    c_s (offset lowered by a_s, slack raised by a_s + b_s) give efficiencies that are lower bounds of the true ones,
    an upper bound that still covers the maximin efficiency, and a gap that grows with the brackets."""
    X, link = quadratic(), "logit"
    tight = od.maximin_d_optimal(X, THETAS3, link, tol=1e-10)
    problem = maximin_problem(X, THETAS3, link, tol=1e-10)
    a, b = np.array([1e-3, 0.0, 2e-3, 5e-4]), np.array([0.0, 1e-3, 1e-3, 2e-3])
    wide = replace(problem, offset=problem.offset - a, slack=problem.slack + a + b)
    res = solve_maximin(wide, "fast", None, 1e-10)
    direct = np.array([efficiency(X, res.weights, theta, link) for theta in THETAS3])
    assert np.all(res.extras["efficiencies"] <= direct * (1 + 1e-12))
    assert res.extras["efficiencies"] == pytest.approx(direct * np.exp(-b), rel=1e-8)
    assert tight.extras["efficiency"] <= res.extras["efficiency_upper"] * (1 + 1e-12)
    assert res.extras["efficiency"] <= tight.extras["efficiency_upper"] * (1 + 1e-12)
    assert res.gap >= np.expm1(np.min(a + b)) and res.status != "optimal"


# ---------------------------------------------------------------- least favourable prior, monotonicity
@pytest.mark.parametrize("link", ["logit", "log"])
def test_least_favourable_prior_equalises_and_makes_the_design_bayes_optimal(link):
    X, thetas = quadratic(), THETAS3
    res = od.maximin_d_optimal(X, thetas, link, tol=1e-10)
    q = res.extras["least_favourable"]
    assert np.all(q >= 0) and q.sum() == pytest.approx(1.0, rel=1e-14)
    weighed = q > 1e-6
    effs = res.extras["efficiencies"]
    assert weighed.sum() >= 2 and np.ptp(effs[weighed]) <= 1e-8  # equalised where q weighs
    assert np.all(effs[~weighed] >= effs.min() - 1e-12)
    # under the prior q the maximin design is pseudo-Bayesian optimal: max_i d_i^q(w) = p
    log_det_q, ratio = certify(bayesian_problem(X, thetas, link, q), res.weights)
    assert ratio == pytest.approx(1.0, abs=1e-8)
    bayes = od.bayesian_d_optimal(X, thetas, link, prior_weights=q, tol=1e-11)
    assert log_det_q == pytest.approx(bayes.extras["log_det"], abs=1e-8)


def test_adding_a_value_never_raises_the_maximin_efficiency():
    X, link = quadratic(), "probit"
    thetas = np.random.default_rng(4).normal([0.2, 1.0, -0.5], 0.6, size=(6, 3))
    previous = None
    for S in range(1, 7):
        res = od.maximin_d_optimal(X, thetas[:S], link, tol=1e-10)
        if previous is not None:  # E*(T + theta) <= E*(T), certified: lower(T + theta) <= upper(T)
            assert res.extras["efficiency"] <= previous.extras["efficiency_upper"] * (1 + 1e-12)
        previous = res


def test_the_model_resolves_with_new_values():
    X = quadratic(15)
    model = od.MaximinDModel(X, 3, "logit")
    model.solve(THETAS3[:3])
    second = model.solve(THETAS3[1:])
    assert second.method == "cvxpy" and second.extras["least_favourable"].sum() == pytest.approx(1.0)
    assert second.value == pytest.approx(od.maximin_d_optimal(X, THETAS3[1:], "logit", tol=1e-10).value, rel=1e-6)
    with pytest.raises(InvalidInputError, match="built for 3"):
        model.solve_problem(maximin_problem(X, THETAS3, "logit"))


def test_a_spent_time_limit_still_returns_a_certified_bracket():
    X, thetas = quadratic(), np.random.default_rng(1).normal([0.2, 1.0, -0.5], 0.5, size=(20, 3))
    best = od.maximin_d_optimal(X, thetas, "logit", tol=1e-9)
    with pytest.warns(RuntimeWarning, match="certified gap"):
        cut = od.maximin_d_optimal(X, thetas, "logit", tol=1e-9, time_limit=1e-4)
    assert cut.status == "not_converged" and cut.gap > 1e-9
    assert cut.lower_bound <= best.value * (1 + 1e-12) and best.lower_bound <= cut.value * (1 + 1e-12)
    assert cut.to_dict()["least_favourable"] == pytest.approx(cut.extras["least_favourable"].tolist())


# ---------------------------------------------------------------- a box of parameter values
def test_box_grid_holds_the_corners_and_collapses_fixed_axes():
    grid = box_grid([0.0, 1.0, -1.0], [1.0, 1.0, 1.0], 3)
    assert grid.shape == (9, 3) and np.all(grid[:, 1] == 1.0)
    assert {tuple(row) for row in grid[:, [0, 2]]} == set(itertools.product([0.0, 0.5, 1.0], [-1.0, 0.0, 1.0]))


def test_box_refinement_finds_the_interior_worst_case():
    """Logistic slope in [0.25, 4]: the design for the two end slopes is 41% efficient near slope 1.2. The search
    finds it, the refined design agrees with a 41-point grid's, and no value of that grid is worse than the worst
    the search reports."""
    X = line(np.linspace(-6, 6, 121))
    ends = od.maximin_box_design(X, [0.5, 0.25], [0.5, 4.0], "logit", points=2, refine=0, tol=1e-6)
    assert ends.extras["refinements"] == 0 and ends.extras["box_efficiency"] < 0.45
    assert 1.1 < ends.extras["box_worst"][1] < 1.4
    res = od.maximin_box_design(X, [0.5, 0.25], [0.5, 4.0], "logit", points=2, refine=5, tol=1e-6)
    assert res.status == "optimal" and res.extras["refinements"] >= 1
    values = res.extras["parameter_values"]
    assert values.shape[0] > 2 and np.all((values >= [0.5, 0.25]) & (values <= [0.5, 4.0]))
    assert res.extras["box_efficiency"] <= res.extras["efficiency_upper"] * (1 + 1e-12)
    fine = od.maximin_d_optimal(X, box_grid([0.5, 0.25], [0.5, 4.0], 41), "logit", tol=1e-6)
    assert res.extras["efficiency"] == pytest.approx(fine.extras["efficiency"], abs=1e-3)
    checked = min(efficiency(X, res.weights, theta, "logit") for theta in box_grid([0.5, 0.25], [0.5, 4.0], 41))
    assert checked >= res.extras["box_efficiency"] - 1e-6


def test_minimax_box_reports_the_criterion():
    X = line(np.linspace(0, 10, 101))
    res = od.maximin_box_design(X, [0.0, -1.0], [0.5, -0.2], "log", standardised=False, points=3, refine=2)
    assert res.criterion == "minimax-d" and "box_criterion" in res.extras
    assert res.extras["box_criterion"] >= res.value * (1 - 1e-9)


# ---------------------------------------------------------------- refused input
@pytest.mark.parametrize(("thetas", "link", "match"), [
    (np.empty((0, 3)), "logit", "empty"),
    ([], "logit", "empty"),
    ([[0.0, 1.0]], "logit", "3 columns"),
    ([[0.0, np.nan, 1.0]], "logit", "NaN"),
    ([[0.0, 1.0, 0.0]], "logistic", "link"),
    ([[0.0, 1.0, 0.0], [0.0, 800.0, 0.0]], "logit", r"thetas\[\[1\]\].*singular"),
])
def test_bad_input_is_refused(thetas, link, match):
    with pytest.raises(InvalidInputError, match=match):
        od.maximin_d_optimal(quadratic(), thetas, link)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"standardised": "yes"}, "standardised"),
    ({"method": "simplex"}, "method"),
    ({"tol": -1.0}, "tol"),
])
def test_bad_options_are_refused(kwargs, match):
    with pytest.raises(InvalidInputError, match=match):
        od.maximin_d_optimal(quadratic(), THETAS3, "logit", **kwargs)


@pytest.mark.parametrize(("lower", "upper", "points", "match"), [
    ([1.0, 0.0], [0.0, 1.0], 3, "reversed"),
    ([0.0, 0.0], [1.0], 3, "length"),
    ([0.0, 0.0], [1.0, 1.0], 1, "points"),
])
def test_bad_boxes_are_refused(lower, upper, points, match):
    with pytest.raises(InvalidInputError, match=match):
        od.maximin_box_design(line([-1.0, 0.0, 1.0]), lower, upper, "logit", points=points)
