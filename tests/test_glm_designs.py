"""Locally optimal designs of GLMs (optdesign.glm) against mathematical truths: the weights nu(eta) against the
derivative of the inverse link and independent formulas, their values at eta = 0, the two-point D-optimal designs
of simple logistic (eta = +-1.5434, c tanh(c / 2) = 1) and Poisson (x = 0 and -2 / theta_1) regression, the general
equivalence theorem at the design found, and refused input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import expit, ndtr
from scipy.stats import norm

import optdesign as od
from optdesign.errors import InvalidInputError
from optdesign.glm import GLM_CRITERIA, link_weights
from optdesign.vocabulary import GLM_LINKS

# the inverse links mu(eta) and variance functions V(mu): nu = (dmu/deta)^2 / V(mu)
MEANS = {
    "logit": (expit, lambda mu: mu * (1 - mu)),
    "probit": (ndtr, lambda mu: mu * (1 - mu)),
    "cloglog": (lambda eta: -np.expm1(-np.exp(eta)), lambda mu: mu * (1 - mu)),
    "log": (np.exp, lambda mu: mu),
    "identity": (lambda eta: eta, lambda mu: np.ones_like(mu)),
}


def line(x):
    x = np.asarray(x, dtype=float)
    return np.column_stack([np.ones_like(x), x])


def information(X, w, nu):
    return (X * (w * nu)[:, None]).T @ X


# ---------------------------------------------------------------- the weights
@pytest.mark.parametrize("link", GLM_LINKS)
def test_weights_are_the_squared_derivative_of_the_mean_over_its_variance(link):
    # where mu is near 1 the reference loses its accuracy (1 - mu, and differences of mu, round at 1e-16): the tails
    # are checked against independent formulas below
    mean, variance = MEANS[link]
    eta = np.linspace(-4, 4, 33) if link != "cloglog" else np.linspace(-6, 1.5, 31)
    h = 1e-5
    slope = (mean(eta + h) - mean(eta - h)) / (2 * h)  # central difference: error ~ h^2
    assert link_weights(eta, link) == pytest.approx(slope**2 / variance(mean(eta)), rel=1e-7)


def test_weights_at_eta_zero_are_the_closed_forms():
    zero = np.zeros(1)
    assert link_weights(zero, "logit")[0] == pytest.approx(0.25, rel=1e-15)
    assert link_weights(zero, "probit")[0] == pytest.approx(2 / np.pi, rel=1e-14)  # phi(0)^2 / (1/2 1/2)
    # cloglog: mu = 1 - 1/e, dmu/deta = 1/e, so nu = e^-2 / ((1 - 1/e) / e) = 1 / (e - 1)
    assert link_weights(zero, "cloglog")[0] == pytest.approx(1 / (np.e - 1), rel=1e-14)
    assert link_weights(zero, "log")[0] == 1.0 and link_weights(zero, "identity")[0] == 1.0


def test_weights_are_accurate_and_positive_far_in_the_tails():
    eta = np.linspace(-30, 30, 241)
    reference = {
        "logit": expit(eta) * expit(-eta),
        # phi^2 / (Phi Phi(-)) as two Mills-type ratios, each representable up to |eta| = 37
        "probit": (norm.pdf(eta) / ndtr(-np.abs(eta))) * (norm.pdf(eta) / ndtr(np.abs(eta))),
        "log": np.exp(eta),
    }
    for link, ref in reference.items():
        nu = link_weights(eta, link)
        assert np.all(nu > 0), link
        assert nu == pytest.approx(ref, rel=1e-12), link
    # cloglog decays as exp(-e^eta) above 0: positive from -30 up to 6.5 (about 1e-283 there)
    eta = np.linspace(-30, 6.5, 147)
    t = np.exp(eta)
    nu = link_weights(eta, "cloglog")
    assert np.all(nu > 0) and nu[-1] < 1e-280
    assert nu == pytest.approx(np.exp(2 * eta) * np.exp(-t) / -np.expm1(-t), rel=1e-12)


def test_logit_and_probit_weights_are_symmetric_and_underflow_to_zero():
    eta = np.linspace(0, 40, 81)
    for link in ("logit", "probit"):
        assert np.array_equal(link_weights(eta, link), link_weights(-eta, link))
    assert link_weights(np.array([800.0]), "logit")[0] == 0.0
    assert link_weights(np.array([1e200, -1e200]), "probit").tolist() == [0.0, 0.0]  # no inf - inf
    assert link_weights(np.array([50.0, -1e300]), "cloglog").tolist() == [0.0, 0.0]


def test_glm_weights_evaluate_the_linear_predictor_and_take_a_candidate_set():
    cs = od.candidates("~ x1 + x2", {"x1": [-1, 0, 1], "x2": [0, 2]})
    theta = np.array([0.5, -1.0, 0.25])
    nu = od.glm_weights(cs, theta, "probit")
    assert nu == pytest.approx(link_weights(cs.X @ theta, "probit"), rel=1e-15)
    F = od.glm_model_matrix(cs, theta, "probit")
    assert F == pytest.approx(np.sqrt(nu)[:, None] * cs.X, rel=1e-15)


# ---------------------------------------------------------------- two-point designs in closed form
def test_logistic_d_optimal_design_puts_half_the_weight_at_eta_plus_minus_1_5434():
    # the symmetric two-point design at eta = +-c has det M = nu(c)^2 c^2 in eta coordinates; its maximum solves
    # 1/c = 2 mu(c) - 1, i.e. c tanh(c / 2) = 1
    c = brentq(lambda c: c * np.tanh(c / 2) - 1, 0.5, 3.0)
    assert c == pytest.approx(1.5434, abs=1e-4) and expit(c) == pytest.approx(0.824, abs=1e-3)
    theta = np.array([1.0, 2.0])
    x = np.linspace(-5, 5, 10_001)  # step 0.001
    res = od.glm_design(line(x), theta, "logit", tol=1e-10)
    assert res.criterion == "d-optimal" and res.gap <= 1e-10 and res.link == "logit"
    targets = (np.array([-c, c]) - theta[0]) / theta[1]
    for target in targets:
        near = np.abs(x - target) <= 0.001 + 1e-9
        assert res.weights[near].sum() == pytest.approx(0.5, abs=1e-6)
        assert res.weights[near] @ x[near] / res.weights[near].sum() == pytest.approx(target, abs=5e-4)
    assert res.weights[np.abs(x - targets[0]) > 0.002].sum() == pytest.approx(0.5, abs=1e-6)
    # the grid design is within grid resolution of the continuous optimum det M* = nu(c)^2 c^2 / theta_1^2
    nu = od.glm_weights(line(x), theta, "logit")
    det = np.linalg.det(information(line(x), res.weights, nu))
    best = link_weights(np.array([c]), "logit")[0] ** 2 * c**2 / theta[1] ** 2
    assert best * (1 - 1e-5) <= det <= best * (1 + 1e-12)


def test_the_logistic_two_point_design_is_optimal_over_the_whole_line():
    # the equivalence theorem checked directly: nu(x) (1, x) M^{-1} (1, x)^T <= 2 everywhere, = 2 at the points
    c = brentq(lambda c: c * np.tanh(c / 2) - 1, 0.5, 3.0)
    points = line([-c, c])
    nu = link_weights(np.array([-c, c]), "logit")
    M = information(points, np.array([0.5, 0.5]), nu)
    eta = np.append(np.linspace(-40, 40, 80_001), [-c, c])
    variance = link_weights(eta, "logit") * np.einsum("ij,jk,ik->i", line(eta), np.linalg.inv(M), line(eta))
    assert variance.max() == pytest.approx(2.0, rel=1e-9)
    assert np.all(variance <= 2.0 * (1 + 1e-9))


def test_poisson_d_optimal_design_is_x_0_and_minus_2_over_theta_1():
    # det M of the design {0, a} with weights 1/2: e^{2 theta_0 + theta_1 a} a^2 / 4, largest at a = -2 / theta_1
    theta = np.array([1.0, -0.5])
    x = np.linspace(0, 10, 1001)  # contains 0 and 4
    res = od.glm_design(line(x), theta, "log", tol=1e-10)
    assert res.gap <= 1e-10
    assert res.weights[x == 0].sum() == pytest.approx(0.5, abs=1e-5)
    assert res.weights[np.abs(x - 4) <= 0.01 + 1e-9].sum() == pytest.approx(0.5, abs=1e-5)
    # and over all of [0, inf): the variance function of the exact design stays below 2
    M = information(line([0.0, 4.0]), np.array([0.5, 0.5]), np.exp(theta[0] + theta[1] * np.array([0.0, 4.0])))
    t = np.linspace(0, 100, 100_001)
    variance = np.exp(theta[0] + theta[1] * t) * np.einsum("ij,jk,ik->i", line(t), np.linalg.inv(M), line(t))
    assert variance.max() == pytest.approx(2.0, rel=1e-12) and np.all(variance <= 2.0 * (1 + 1e-12))


def test_exact_poisson_design_has_five_runs_at_each_point():
    x = np.linspace(0, 10, 101)
    res = od.glm_design(line(x), [1.0, -0.5], "log", n=10, tol=1e-10)
    assert x[res.support].tolist() == [0.0, 4.0] and res.counts[res.support].tolist() == [5, 5]
    assert res.efficiency == pytest.approx(1.0, abs=1e-9) and res.link == "log"


# ---------------------------------------------------------------- the equivalence theorem at the design found
@pytest.mark.parametrize("link", ["logit", "probit", "cloglog", "log"])
def test_general_equivalence_theorem_at_the_d_optimum(link):
    cs = od.candidates("~ x1 + x2 + x1:x2", {"x1": (-1, 1, 21), "x2": (-1, 1, 21)})
    theta = np.array([0.3, 1.5, -1.0, 0.8])
    res = od.glm_design(cs, theta, link, tol=1e-8)
    nu = od.glm_weights(cs, theta, link)
    M = information(cs.X, res.weights, nu)
    variance = nu * np.einsum("ij,jk,ik->i", cs.X, np.linalg.inv(M), cs.X)
    p = cs.X.shape[1]
    assert res.weights @ variance == pytest.approx(p, rel=1e-10)  # sum_i w_i nu_i x_i^T M^-1 x_i = tr I = p
    assert p <= variance.max() <= p * (1 + res.gap) * (1 + 1e-9)
    assert res.g_value == pytest.approx(variance.max(), rel=1e-8)  # the design's G-value
    assert res.gap <= 1e-8


def test_every_criterion_is_the_linear_design_of_the_linearised_candidates():
    x = np.linspace(-2, 2, 41)
    X = np.column_stack([np.ones_like(x), x, x**2])
    theta = [0.2, 1.0, -0.7]
    F = od.glm_model_matrix(X, theta, "cloglog")
    pairs = [("D", od.d_optimal(F, tol=1e-8)), ("A", od.a_optimal(F, tol=1e-8)), ("I", od.i_optimal(F, tol=1e-8))]
    for criterion, direct in pairs:
        res = od.glm_design(X, theta, "cloglog", criterion.lower(), tol=1e-8)
        assert res.value == pytest.approx(direct.value, rel=1e-7), criterion
    # I averages over the linearised candidates by default; moments= replaces the region
    B = X.T @ X / X.shape[0]
    res = od.glm_design(X, theta, "cloglog", "I", moments=B, tol=1e-8)
    assert res.value == pytest.approx(od.i_optimal(F, moments=B, tol=1e-8).value, rel=1e-7)
    exact = od.glm_design(X, theta, "cloglog", "A", n=6)
    assert exact.counts.sum() == 6 and exact.value == pytest.approx(od.exact_design(F, 6, "A").value, rel=1e-12)
    assert GLM_CRITERIA == ("D", "A", "I")


def test_identity_link_is_the_linear_model():
    X = line(np.linspace(-1, 1, 11))
    assert od.glm_model_matrix(X, [3.0, -2.0], "identity") == pytest.approx(X, rel=0)
    assert od.glm_design(X, [3.0, -2.0], "identity").weights == pytest.approx(od.d_optimal(X).weights, abs=1e-12)


@pytest.mark.parametrize("method", ["auto", "exchange", "frank-wolfe", "barrier", "cvxpy"])
def test_method_is_passed_to_the_linear_design(method):
    """OptimalDesign's Fx_glm example (logistic, full quadratic on the 21 x 21 grid): every D method gives the
    design of od.d_optimal on the linearised rows, certified, and reports itself; A and I take their own methods."""
    g = np.linspace(-1, 1, 21)
    x1, x2 = (a.ravel() for a in np.meshgrid(g, g))
    X = np.column_stack([np.ones_like(x1), x1, x2, x1**2, x2**2, x1 * x2])
    theta = [1.0, 2.0, 2.0, -1.0, -1.5, 1.5]
    res = od.glm_design(X, theta, "logit", tol=1e-6, method=method)
    assert res.method == ("exchange" if method == "auto" else method)  # auto: 441 candidates take the exchange
    assert res.gap <= (1e-3 if method == "cvxpy" else 1e-6)  # cvxpy's design is certified, not driven to tol
    ref = od.d_optimal(od.glm_model_matrix(X, theta, "logit"), tol=1e-6, method=method)
    assert res.weights == pytest.approx(ref.weights, abs=1e-12)
    assert res.link == "logit"
    for criterion in ("A", "I"):
        fast = od.glm_design(X, theta, "logit", criterion, tol=1e-6, method="fast")
        assert fast.gap <= 1e-6


def test_unknown_or_misplaced_methods_are_refused():
    X = line(np.linspace(-1, 1, 5))
    with pytest.raises(InvalidInputError, match="method must be one of auto, cvxpy, barrier"):
        od.glm_design(X, [0.0, 1.0], "logit", method="rex")
    with pytest.raises(InvalidInputError, match="method must be one of auto, fast, cvxpy"):
        od.glm_design(X, [0.0, 1.0], "logit", "A", method="exchange")
    with pytest.raises(InvalidInputError, match="with n=4 only 'auto'"):
        od.glm_design(X, [0.0, 1.0], "logit", n=4, method="exchange")


# ---------------------------------------------------------------- refused input
def test_bad_input_is_refused_with_a_message():
    X = line(np.linspace(-1, 1, 5))
    with pytest.raises(InvalidInputError, match="link must be one of") as info:
        od.glm_weights(X, [0.0, 1.0], "logistic")
    assert all(link in str(info.value) for link in GLM_LINKS)
    with pytest.raises(InvalidInputError, match="theta0 must have length 2"):
        od.glm_weights(X, [0.0, 1.0, 2.0], "logit")
    with pytest.raises(InvalidInputError, match="theta0 contains NaN"):
        od.glm_model_matrix(X, [np.nan, 1.0], "logit")
    with pytest.raises(InvalidInputError, match="X contains NaN"):
        od.glm_design(np.vstack([X, [1.0, np.inf]]), [0.0, 1.0], "probit")
    with pytest.raises(InvalidInputError, match="Poisson weight e\\^eta overflows"):
        od.glm_weights(X, [0.0, 800.0], "log")
    with pytest.raises(InvalidInputError, match="linear predictor"):
        od.glm_weights(X * 1e300, [1e300, 1e300], "logit")
    with pytest.raises(InvalidInputError, match="sqrt\\(nu\\) X"):  # every logit weight underflows to 0
        od.glm_model_matrix(line([1.0, 2.0, 3.0]), [1e4, 1e4], "logit")
    with pytest.raises(InvalidInputError, match="criterion must be one of D, A, I"):
        od.glm_design(X, [0.0, 1.0], "logit", "E")
    with pytest.raises(InvalidInputError, match="moments= is the region of the I-criterion"):
        od.glm_design(X, [0.0, 1.0], "logit", "D", moments=np.eye(2))
    with pytest.raises(InvalidInputError, match="span"):  # only one candidate keeps a weight: rank 1
        od.glm_design(line([0.0, 50.0, 100.0]), [0.0, 20.0], "probit")
