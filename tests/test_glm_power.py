"""The Monte Carlo power of GLM designs (optdesign.power.glm_power) and the power curves, against mathematical
truths: the normal model's Wald and likelihood-ratio tests are the exact F test (noncentral F), the level at a zero
effect, the large-sample Wald power, the saturated model's closed-form estimate, the probability that a data set is
separated, monotonicity in the effect and in N, and reproducibility from the seed. First, the link functions the
simulation and the fits use (optdesign.links) against their definitions."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit, ndtri

import optdesign as od
from optdesign.errors import InvalidInputError
from optdesign.links import get_link
from optdesign.power import GlmPowerResult, GlmTermPower, glm_power, glm_power_curve, power_curve_plot
from optdesign.power.irls import fit

# the 2^3 full factorial in -1/+1 coding, with an intercept: X^T X = 8 I
FACTORIAL = np.array([[1.0, *levels] for levels in itertools.product([-1.0, 1.0], repeat=3)])
T4 = np.linspace(-1.0, 1.0, 4)
LINE = np.column_stack([np.ones(4), T4])  # simple regression on 4 points of [-1, 1]


def _within(estimate: float, truth: float, n_sim: int, k: float = 4.0) -> bool:
    """|estimate - truth| within k binomial standard errors sqrt(truth (1 - truth) / n_sim)."""
    return abs(estimate - truth) <= k * np.sqrt(truth * (1 - truth) / n_sim)


# ---------------------------------------------------------------- the link functions
@pytest.mark.parametrize("link", ["logit", "probit", "cloglog", "log", "identity"])
def test_link_functions_agree_with_their_definitions(link):
    """g(g^{-1}(eta)) = eta, mu' is the derivative of the mean, and the stable forms of the weight and the score
    factor are mu'^2 / V(mu) and mu' / V(mu) where those quotients lose no digits."""
    forms = get_link(link)
    eta = np.linspace(-4.0, 2.0, 25)
    mu = forms.mean(eta)
    np.testing.assert_allclose(forms.predictor(mu), eta, rtol=1e-10, atol=1e-10)
    h = 1e-6
    np.testing.assert_allclose(forms.derivative(eta), (forms.mean(eta + h) - forms.mean(eta - h)) / (2 * h),
                               rtol=1e-7, atol=1e-12)
    quotient = forms.derivative(eta) / forms.variance(mu)
    np.testing.assert_allclose(forms.weight(eta), forms.derivative(eta) * quotient, rtol=1e-12)
    np.testing.assert_allclose(forms.score(eta), quotient, rtol=1e-12)
    assert forms.weight(eta).tobytes() == od.glm.link_weights(eta, link).tobytes()  # the glm's weights are these


def test_link_functions_stay_finite_in_the_tails():
    eta = [-800.0, -40.0, 0.0, 6.5, 40.0, 800.0]
    for link in ("logit", "probit", "cloglog"):
        with np.errstate(over="raise", divide="raise", invalid="raise"):  # underflow to 0 is as documented
            weight, score = get_link(link).weight(eta), get_link(link).score(eta)
        assert np.all(np.isfinite(weight) & (weight >= 0)) and np.all(np.isfinite(score) & (score > 0)), link
    assert get_link("cloglog").score(-800.0) == 1.0  # r = e^eta / mu tends to 1 where e^eta underflows
    with pytest.raises(InvalidInputError, match="link must be one of"):
        get_link("logistic")


# ---------------------------------------------------------------- the normal model: the exact F test
@pytest.mark.parametrize("test", ["wald", "lr"])
def test_normal_model_monte_carlo_agrees_with_the_noncentral_f_power(test):
    """With the identity link both tests are the F test, whose power is the noncentral F tail (design_power)."""
    counts = np.array([2, 1, 1, 2, 1, 2, 1, 2])
    beta, sigma, n_sim = np.array([0.3, 0.7, -0.5, 0.4]), 1.2, 4000
    exact = od.design_power(FACTORIAL, counts, beta, sigma=sigma)
    res = glm_power(FACTORIAL, counts, beta, "identity", sigma=sigma, n_sim=n_sim, seed=7, test=test)
    assert res.n == 12 and res.n_sim == n_sim and res.n_failed == 0 and res.sigma == sigma
    for mc, f in zip(res.tests, exact.tests, strict=True):
        assert mc.term == f.term and mc.df == f.df1
        assert mc.asymptotic_power == pytest.approx(f.power, rel=1e-12)  # the exact power, for this model
        assert mc.noncentrality == pytest.approx(f.noncentrality, rel=1e-10)
        assert 0.1 < f.power < 0.95 and _within(mc.power, f.power, n_sim), (mc.term, mc.power, f.power)


def test_normal_model_wald_and_likelihood_ratio_tests_coincide():
    """For a linear hypothesis in the normal linear model the Wald F and the F of the residual sums of squares are
    the same statistic, so they reject on the same data sets."""
    kw = {"n_sim": 1500, "seed": 3, "sigma": 0.8}
    wald = glm_power(FACTORIAL, None, [0.0, 0.5, 0.5, -0.5], "identity", **kw)
    lr = glm_power(FACTORIAL, None, [0.0, 0.5, 0.5, -0.5], "identity", test="lr", **kw)
    assert [t.rejections for t in wald.tests] == [t.rejections for t in lr.tests]


# ---------------------------------------------------------------- the level at a zero effect
@pytest.mark.parametrize(("link", "intercept"), [("identity", 0.5), ("logit", 0.3), ("probit", 0.3),
                                                 ("cloglog", -0.3), ("log", 1.0)])
@pytest.mark.parametrize("test", ["wald", "lr"])
def test_power_at_zero_effect_is_alpha_within_its_standard_error(link, intercept, test):
    """theta_1 = 0: the slope's test rejects with probability alpha (exactly for the normal model, to O(1/N) for
    the others, here with 100 runs per point)."""
    n_sim, alpha = 3000, 0.05
    counts = np.full(4, 100)
    res = glm_power(LINE, counts, [intercept, 0.0], link, alpha=alpha, n_sim=n_sim, seed=11, test=test)
    slope = res.test("x1")
    assert slope.noncentrality == 0.0 and slope.asymptotic_power == pytest.approx(alpha, abs=1e-12)
    assert slope.failed == 0
    assert _within(slope.power, alpha, n_sim), slope.power


# ---------------------------------------------------------------- the large-sample Wald power
@pytest.mark.parametrize("link", ["logit", "probit", "cloglog", "log"])
def test_many_runs_agree_with_the_large_sample_wald_power(link):
    """Near H0 with many runs (a local alternative, theta_T ~ 1 / sqrt(N)) the Wald statistic is noncentral
    chi^2(df, lambda), lambda = theta_T^T (C_TT)^{-1} theta_T with C the inverse Fisher information at theta."""
    X = np.column_stack([np.ones(4), T4, T4**2])
    theta = {"logit": [0.3, 0.09, -0.07], "probit": [0.2, 0.06, -0.045], "cloglog": [-0.3, 0.07, 0.045],
             "log": [1.0, 0.03, -0.02]}[link]
    counts, n_sim = np.full(4, 2000), 3000
    res = glm_power(X, counts, theta, link, n_sim=n_sim, seed=5)
    info = (X * (counts * od.glm_weights(X, theta, link))[:, None]).T @ X
    C = np.linalg.inv(info)
    for t, cols in ((res.test("x1"), [1]), (res.test("x2"), [2]), (res.model, [1, 2])):
        b = np.asarray(theta)[cols]
        assert t.noncentrality == pytest.approx(b @ np.linalg.solve(C[np.ix_(cols, cols)], b), rel=1e-8)
        assert 0.2 < t.asymptotic_power < 0.95
        assert abs(t.power - t.asymptotic_power) <= 4 * t.se + 0.01, (t.term, t.power, t.asymptotic_power)


# ---------------------------------------------------------------- the fit itself, and separation
@pytest.mark.parametrize("link", ["logit", "probit", "cloglog", "log"])
def test_batched_fit_of_a_saturated_model_returns_the_observed_means(link):
    """Two support points and two coefficients: the fitted means are the observed y_k / n_k, so
    eta_k = g(y_k / n_k) and beta = X^{-1} g(ybar) for every data set at once."""
    X = np.array([[1.0, -1.0], [1.0, 1.0]])
    n = np.array([5.0, 7.0])
    y = np.array([[1.0, 3.0], [4.0, 6.0], [2.0, 2.0], [3.0, 5.0]])
    g = {"logit": logit, "probit": ndtri,
         "cloglog": lambda m: np.log(-np.log1p(-m)), "log": np.log}[link]
    fits = fit(X, n, y, link, max_iter=50, tol=1e-10)
    assert fits.converged.all()
    expected = np.linalg.solve(X, g(y / n).T).T
    np.testing.assert_allclose(fits.coef, expected, rtol=1e-7, atol=1e-9)


def test_a_separated_data_set_does_not_converge():
    X = np.array([[1.0, -1.0], [1.0, 1.0]])
    n = np.array([3.0, 3.0])
    y = np.array([[0.0, 3.0], [1.0, 2.0], [0.0, 2.0], [3.0, 3.0]])  # complete, none, quasi-complete, all ones
    fits = fit(X, n, y, "logit", max_iter=50, tol=1e-8)
    assert fits.converged.tolist() == [False, True, False, False]


def test_failed_fits_occur_at_the_probability_of_separation():
    """Saturated logistic model on x = -1, +1 with 3 runs each: the estimate exists iff 0 < y_k < 3 at both
    points, so P(failed) = 1 - prod_k (1 - mu_k^3 - (1 - mu_k)^3). Failed data sets never reject."""
    X = np.array([[1.0, -1.0], [1.0, 1.0]])
    theta, n_sim = np.array([0.2, 0.5]), 4000
    mu = expit(X @ theta)
    p_fail = 1 - np.prod(1 - mu**3 - (1 - mu) ** 3)
    res = glm_power(X, [3, 3], theta, "logit", n_sim=n_sim, seed=2)
    assert res.n_failed == res.test("x1").failed
    assert _within(res.n_failed / n_sim, p_fail, n_sim)
    assert res.test("x1").rejections <= n_sim - res.n_failed


# ---------------------------------------------------------------- reproducibility
def test_the_same_seed_gives_the_same_numbers():
    kw = {"n_sim": 500, "test": "lr"}
    first = glm_power(LINE, [3, 2, 2, 3], [0.2, 1.0], "logit", seed=42, **kw)
    again = glm_power(LINE, [3, 2, 2, 3], [0.2, 1.0], "logit", seed=42, **kw)
    other = glm_power(LINE, [3, 2, 2, 3], [0.2, 1.0], "logit", seed=43, **kw)
    assert first.to_dict() == again.to_dict()
    assert first.seed == 42 and first.to_dict() != other.to_dict()


def test_design_forms_agree_counts_exact_result_run_matrix_and_rounded_weights():
    counts = np.array([2, 1, 1, 2])
    base = glm_power(LINE, counts, [0.0, 1.0], "log", n_sim=300, seed=1)
    runs = glm_power(np.repeat(LINE, counts, axis=0), None, [0.0, 1.0], "log", n_sim=300, seed=1)
    assert base.power == runs.power  # the same totals at the same support points
    exact = od.exact_design(LINE, 6)
    assert glm_power(LINE, exact, [0.0, 1.0], "log", n_sim=300, seed=1).power == \
        glm_power(LINE, exact.counts, [0.0, 1.0], "log", n_sim=300, seed=1).power
    approximate = od.d_optimal(LINE)
    rounded = glm_power(LINE, approximate, [0.0, 1.0], "log", n_sim=300, seed=1, runs=10)
    assert rounded.n == 10
    assert rounded.power == glm_power(LINE, od.round_design(approximate.weights, 10), [0.0, 1.0], "log",
                                      n_sim=300, seed=1).power


# ---------------------------------------------------------------- curves
def test_f_power_grows_with_n_and_the_runs_curve_is_the_rounded_design():
    weights = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0])  # a half fraction's four points
    X = FACTORIAL[:, :3]
    curve = od.power_curve(X, weights, 0.6, runs=[4, 8, 12, 16, 40])
    assert curve.index.name == "runs" and curve.attrs["alpha"] == 0.05
    assert np.all(np.diff(curve[["x1", "x2", "whole model"]].to_numpy(), axis=0) > 0)
    assert np.allclose(curve["Intercept"], 0.05, atol=1e-12)  # one number is every coefficient but the intercept's
    for N in (8, 40):  # N / 4 replicates of the four points
        expected = od.design_power(X, weights * N / 4, 0.6).power
        assert curve.loc[N].to_dict() == pytest.approx(expected, rel=1e-12)


def test_f_power_grows_with_the_effect_size_along_the_scale_curve():
    curve = od.power_curve(FACTORIAL, None, [0.2, 0.5, -0.4, 0.3], np.linspace(0, 3, 13))
    assert np.all(np.diff(curve.to_numpy(), axis=0) > 0)
    assert np.allclose(curve.iloc[0], 0.05, atol=1e-12)


def test_monte_carlo_curve_over_the_scale_starts_at_alpha_and_grows():
    n_sim = 800
    curve = glm_power_curve(LINE, np.full(4, 10), [0.4, 1.0], "logit", [0.0, 1.0, 2.0], n_sim=n_sim, seed=4)
    assert list(curve.columns.levels[0]) == ["power", "se"] and curve.index.name == "scale"
    power = curve["power"]
    assert _within(power.loc[0.0, "x1"], 0.05, n_sim)  # the intercept is kept: only the slope is scaled
    assert power["x1"].is_monotonic_increasing and power.loc[2.0, "x1"] > 0.05 + 8 * curve["se"].loc[2.0, "x1"]
    se = curve["se"].to_numpy()
    np.testing.assert_allclose(se, np.sqrt(power.to_numpy() * (1 - power.to_numpy()) / n_sim))
    single = glm_power(LINE, np.full(4, 10), [0.4, 2.0], "logit", n_sim=n_sim, seed=4)
    assert power.loc[2.0].to_dict() == single.power


def test_monte_carlo_curve_over_n_grows():
    curve = glm_power_curve(LINE, None, [0.0, 0.3], "log", runs=[8, 40, 200], n_sim=600, seed=9)
    assert curve.index.tolist() == [8, 40, 200]
    assert curve["power"]["x1"].is_monotonic_increasing


def test_plots_write_both_kinds_of_curve(tmp_path):
    f_curve = od.power_curve(FACTORIAL, None, 1.0, np.linspace(0, 2, 5))
    mc_curve = glm_power_curve(LINE, np.full(4, 5), [0.0, 1.0], "logit", [0.0, 1.0], n_sim=100, seed=0)
    for name, curve in (("f.png", f_curve), ("mc.png", mc_curve)):
        fig = power_curve_plot(curve, path=tmp_path / name, title=name)
        assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG"
        assert len(fig.axes) == 1
    with pytest.raises(InvalidInputError, match="nonempty DataFrame"):
        power_curve_plot(pd.DataFrame())


# ---------------------------------------------------------------- results, diagnostics
def test_result_table_and_dictionary():
    res = glm_power(LINE, np.full(4, 5), [0.0, 1.0], "probit", n_sim=200, seed=0)
    assert isinstance(res, GlmPowerResult) and isinstance(res.terms[0], GlmTermPower)
    frame = res.to_frame()
    assert list(frame.columns) == ["term", "df", "power", "se", "rejections", "failed", "noncentrality",
                                   "asymptotic_power"]
    assert frame["term"].tolist() == ["Intercept", "x1", "whole model"]
    assert frame["power"].tolist() == list(res.power.values())
    data = json.loads(json.dumps(res.to_dict()))
    assert data["link"] == "probit" and data["test_statistic"] == "wald" and data["sigma"] is None
    assert data["tests"][1]["rejections"] == res.test("x1").rejections
    with pytest.raises(InvalidInputError, match="no term 'x9'"):
        res.test("x9")


def test_diagnostics_report_the_power_of_the_design():
    exact = od.exact_design(FACTORIAL, 12)
    diag = od.design_diagnostics(FACTORIAL, exact, effects=[0.0, 1.0, 0.5, 0.5], alpha=0.1, sigma=1.5)
    expected = od.design_power(FACTORIAL, exact, [0.0, 1.0, 0.5, 0.5], alpha=0.1, sigma=1.5)
    assert diag.power is not None and diag.power.power == expected.power
    assert diag.to_dict()["power"] == expected.to_dict()
    assert od.design_diagnostics(FACTORIAL, exact).power is None
    approximate = od.d_optimal(FACTORIAL)
    rounded = od.design_diagnostics(FACTORIAL, approximate, effects=1.0, runs=16)
    assert rounded.power.n == 16
    assert rounded.power.power == od.design_power(FACTORIAL, np.full(8, 2), 1.0).power
    with pytest.raises(InvalidInputError, match="runs=N"):
        od.design_diagnostics(FACTORIAL, approximate, effects=1.0)


# ---------------------------------------------------------------- refused input, one clear error each
CALL = {"X": LINE, "design": np.full(4, 5), "theta": [0.0, 1.0], "link": "logit"}
BAD = {
    "theta length": ({"theta": [0.0, 1.0, 2.0]}, "theta must have length 2"),
    "NaN theta": ({"theta": [np.nan, 1.0]}, "theta contains NaN"),
    "alpha above 1": ({"alpha": 1.5}, "alpha must be a number strictly between 0 and 1"),
    "alpha 0": ({"alpha": 0.0}, "alpha must be"),
    "n_sim 0": ({"n_sim": 0}, "n_sim must be a positive integer"),
    "n_sim float": ({"n_sim": 10.5}, "n_sim must be a positive integer"),
    "negative seed": ({"seed": -1}, "seed must be an integer >= 0"),
    "unknown link": ({"link": "inverse"}, "link must be one of"),
    "sigma with logit": ({"sigma": 2.0}, "sigma is the noise standard deviation of the normal model"),
    "bad sigma": ({"link": "identity", "sigma": -1.0}, "sigma must be a positive number"),
    "unknown test": ({"test": "score"}, "test must be one of"),
    "weights without runs": ({"design": od.d_optimal(LINE)}, "runs=N"),
    "too few runs": ({"design": [1, 0, 0, 1]}, "N > p"),
    "singular": ({"design": [3, 0, 0, 0]}, "singular"),
    "design length": ({"design": [1, 1, 1]}, "3 run counts for 4"),
    "overflow": ({"theta": [0.0, 1e308], "X": LINE * 10}, "overflows"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_gives_one_clear_error(case):
    change, message = BAD[case]
    with pytest.raises(InvalidInputError, match=message):
        glm_power(**{**CALL, **change})


@pytest.mark.parametrize(("call", "message"), [
    (lambda: od.power_curve(FACTORIAL, None, 1.0), "exactly one of them"),
    (lambda: od.power_curve(FACTORIAL, None, 1.0, [1.0], runs=[8]), "exactly one of them"),
    (lambda: od.power_curve(FACTORIAL, None, 1.0, runs=[8.5]), "runs must be positive whole numbers"),
    (lambda: od.power_curve(FACTORIAL, None, 1.0, runs=[4]), "N > p"),
    (lambda: od.design_power(FACTORIAL, None, [1.0, 2.0]), "effects must have length 4"),
    (lambda: od.design_power(FACTORIAL, None, 1.0, runs=0), "runs must be a positive integer"),
    (lambda: glm_power_curve(LINE, None, [0.0, 1.0], "logit", [-1.0]), "scales must be nonnegative"),
    (lambda: glm_power_curve(LINE, None, [0.0, np.nan], "logit", [1.0]), "theta contains NaN"),
])
def test_curves_refuse_bad_input(call, message):
    with pytest.raises(InvalidInputError, match=message):
        call()
