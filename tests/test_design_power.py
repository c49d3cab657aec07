"""The power of a design's F tests (optdesign.power) against mathematical truths: the noncentral F law with
lambda = beta_T^T (C_TT)^{-1} beta_T / sigma^2 written out for an orthogonal design, a Monte Carlo of the OLS F
test, the nested-regression form of lambda, alpha at beta = 0, monotonicity, and numbers published by R's skpr."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import f, ncf

import optdesign as od
from optdesign.errors import InvalidInputError
from optdesign.power import TermPower, noncentral_f_power

# the 2^3 full factorial in -1/+1 coding, with an intercept: X^T X = 8 I
FACTORIAL = np.array([[1.0, *levels] for levels in itertools.product([-1.0, 1.0], repeat=3)])


def _f_test_rejections(X_runs, mean, sigma, columns, alpha, reps, seed):
    """Monte Carlo: the fraction of reps in which OLS's F test of H0: beta_columns = 0 rejects at level alpha."""
    n, p = X_runs.shape
    Y = mean + sigma * np.random.default_rng(seed).standard_normal((reps, n))

    def rss(Z):
        residual = Y - (Y @ np.linalg.pinv(Z).T) @ Z.T  # each row of Y less its projection on the columns of Z
        return np.sum(residual**2, axis=1)

    full = rss(X_runs)
    reduced = rss(np.delete(X_runs, columns, axis=1))
    F = ((reduced - full) / len(columns)) / (full / (n - p))
    return float(np.mean(F > f.ppf(1 - alpha, len(columns), n - p)))


def _nested_noncentrality(X_runs, beta, columns, sigma):
    """lambda as the drop in the residual sum of squares of the noise-free response when the term leaves the model
    (the full model fits it exactly), over sigma^2."""
    mu = X_runs @ beta
    Z = np.delete(X_runs, columns, axis=1)
    residual = mu - Z @ np.linalg.lstsq(Z, mu, rcond=None)[0]
    return float(residual @ residual) / sigma**2


# ---------------------------------------------------------------- the 2^3 factorial, by the closed form
@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.2])
def test_factorial_power_is_the_noncentral_f_tail_with_lambda_8_beta_squared_over_sigma_squared(alpha):
    assert FACTORIAL.T @ FACTORIAL == pytest.approx(8 * np.eye(4))
    beta, sigma = np.array([0.4, 1.0, -0.7, 0.5]), 1.3
    res = od.design_power(FACTORIAL, None, beta, alpha=alpha, sigma=sigma)
    assert res.n == 8 and res.alpha == alpha and res.sigma == sigma
    assert [t.term for t in res.terms] == ["Intercept", "x1", "x2", "x3"]
    for t, b in zip(res.terms, beta, strict=True):
        lam = 8 * b**2 / sigma**2
        critical = f.ppf(1 - alpha, 1, 4)
        assert (t.df1, t.df2) == (1, 4)
        assert t.noncentrality == pytest.approx(lam, rel=1e-12)
        assert t.critical_value == pytest.approx(critical, rel=1e-12)
        assert t.power == pytest.approx(1 - ncf.cdf(critical, 1, 4, lam), rel=1e-10)
    lam_model = 8 * np.sum(beta[1:] ** 2) / sigma**2  # the whole model: the three slopes, not the intercept
    assert (res.model.df1, res.model.df2) == (3, 4)
    assert res.model.noncentrality == pytest.approx(lam_model, rel=1e-12)
    assert res.model.power == pytest.approx(1 - ncf.cdf(f.ppf(1 - alpha, 3, 4), 3, 4, lam_model), rel=1e-10)


def test_counts_on_candidates_an_exact_design_and_the_run_matrix_give_the_same_answer():
    counts = np.array([2, 0, 1, 1, 3, 1, 0, 2])
    runs = np.repeat(FACTORIAL, counts, axis=0)
    beta = [0.0, 0.8, -0.3, 0.5]
    by_counts = od.design_power(FACTORIAL, counts, beta)
    by_runs = od.design_power(runs, None, beta)
    pd.testing.assert_frame_equal(by_counts.to_frame(), by_runs.to_frame(), rtol=1e-10)
    exact = od.exact_design(FACTORIAL, 12)
    via_result = od.design_power(FACTORIAL, exact, beta)
    assert via_result.n == 12
    pd.testing.assert_frame_equal(via_result.to_frame(), od.design_power(FACTORIAL, exact.counts, beta).to_frame())


# ---------------------------------------------------------------- Monte Carlo of the F test itself
def test_factorial_power_agrees_with_a_monte_carlo_of_the_ols_f_test():
    beta, sigma, alpha, reps = np.array([0.0, 0.9, 0.6, -1.2]), 1.0, 0.05, 4000
    res = od.design_power(FACTORIAL, None, beta, alpha=alpha, sigma=sigma)  # 8 runs, df2 = 4
    runs = FACTORIAL
    checks = [(t.power, [j]) for j, t in enumerate(res.terms) if j > 0] + [(res.model.power, [1, 2, 3])]
    for seed, (power, columns) in enumerate(checks):
        hit = _f_test_rejections(runs, runs @ beta, sigma, columns, alpha, reps, seed)
        assert 0.2 < power < 0.95  # where a wrong noncentrality would show
        assert abs(hit - power) <= 4 * np.sqrt(power * (1 - power) / reps), (columns, hit, power)


def test_a_categorical_term_on_an_unbalanced_design_agrees_with_a_monte_carlo():
    """x and c correlated on the runs: lambda needs (C_TT)^{-1}; the information's own block of the term (which
    ignores x) would give power 0.72 here, against 0.25."""
    formula = "~ x + C(c)"
    cs = od.candidates(formula, {"x": [-1.0, 0.0, 1.0], "c": ["a", "b", "c"]})
    counts = np.array([4, 1, 0, 1, 2, 1, 0, 1, 4])  # c = a mostly at x = -1, c = c at x = +1
    beta = np.array([0.0, 0.5, 1.2, 0.8])
    res = od.design_power(cs, counts, beta, terms=formula, sigma=0.9)
    runs = np.repeat(cs.X, counts, axis=0)
    term = res.test("C(c)")
    assert term.df1 == 2 and 0.2 < term.power < 0.3
    hit = _f_test_rejections(runs, runs @ beta, 0.9, [2, 3], 0.05, 4000, seed=11)
    assert abs(hit - term.power) <= 4 * np.sqrt(term.power * (1 - term.power) / 4000)


# ---------------------------------------------------------------- alpha at beta = 0
@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.1, 0.5, 1e-4])
def test_power_at_zero_effect_is_alpha(alpha):
    for effects in (0.0, np.zeros(4)):
        res = od.design_power(FACTORIAL, np.array([1, 2, 1, 1, 1, 1, 3, 1]), effects, alpha=alpha)
        for t in res.tests:
            assert t.noncentrality == 0.0
            assert abs(t.power - alpha) <= 1e-12
    critical, power = noncentral_f_power(3, 7, 0.0, alpha)
    assert critical == pytest.approx(f.ppf(1 - alpha, 3, 7), rel=1e-12) and abs(power - alpha) <= 1e-12


# ---------------------------------------------------------------- multi-column terms: df1 and nested regressions
@pytest.mark.parametrize("levels", [3, 4])
def test_categorical_term_has_levels_minus_one_df_and_lambda_from_nested_regressions(levels):
    formula = "~ x + C(c) + x:C(c)"
    names = [f"l{i}" for i in range(levels)]
    cs = od.candidates(formula, {"x": [-1.0, 0.0, 1.0], "c": names})
    rng = np.random.default_rng(levels)
    counts = rng.integers(1, 4, size=cs.X.shape[0])
    beta, sigma = rng.normal(size=cs.X.shape[1]), 1.7
    res = od.design_power(cs, counts, beta, sigma=sigma, terms=formula)
    assert [t.term for t in res.terms] == ["Intercept", "x", "C(c)", "x:C(c)"]
    assert [t.df1 for t in res.terms] == [1, 1, levels - 1, levels - 1]
    assert all(t.df2 == counts.sum() - cs.X.shape[1] for t in res.tests)
    runs = np.repeat(cs.X, counts, axis=0)
    for t in res.terms:
        columns = [cs.columns.index(c) for c in t.columns]
        assert t.noncentrality == pytest.approx(_nested_noncentrality(runs, beta, columns, sigma), rel=1e-9)
    slopes = list(range(1, cs.X.shape[1]))  # the whole model against the intercept alone
    assert res.model.df1 == len(slopes)
    assert res.model.noncentrality == pytest.approx(_nested_noncentrality(runs, beta, slopes, sigma), rel=1e-9)


def test_terms_by_mapping_or_formula_agree_and_default_to_one_test_per_column():
    formula = "~ x + C(c)"
    cs = od.candidates(formula, {"x": [-1.0, 1.0], "c": ["a", "b", "c"]})
    counts, beta = np.full(6, 2), [0.0, 0.5, 0.5, -0.5]
    by_formula = od.design_power(cs, counts, beta, terms=formula)
    by_names = od.design_power(cs, counts, beta, terms={"Intercept": "Intercept", "x": "x", "C(c)": cs.columns[2:]})
    by_index = od.design_power(cs.X, counts, beta, terms={"Intercept": 0, "x": [1], "C(c)": [2, 3]})
    pd.testing.assert_frame_equal(by_formula.to_frame(), by_names.to_frame())
    assert by_index.power == pytest.approx(by_formula.power)
    per_column = od.design_power(cs, counts, beta)
    assert [t.term for t in per_column.terms] == cs.columns and all(t.df1 == 1 for t in per_column.terms)
    plain = od.design_power(cs.X, counts, beta)
    assert [t.term for t in plain.terms] == ["Intercept", "x1", "x2", "x3"]
    partial = od.design_power(cs, counts, beta, terms={"C(c)": [2, 3]})  # x stays in the model, untested
    assert [t.term for t in partial.terms] == ["C(c)"]
    assert partial.test("C(c)").noncentrality == pytest.approx(by_formula.test("C(c)").noncentrality, rel=1e-12)


def test_no_intercept_model_tests_every_column_as_the_whole_model():
    X = FACTORIAL[:, 1:]  # no constant column
    res = od.design_power(X, None, 0.5)
    assert res.model.df1 == 3 and res.model.df2 == 5
    assert res.coefficients.tolist() == [0.5, 0.5, 0.5]  # a number goes to every coefficient: none is an intercept
    only_intercept = od.design_power(np.ones((5, 1)), None, [1.0])
    assert only_intercept.model is None and [t.term for t in only_intercept.tests] == ["Intercept"]


# ---------------------------------------------------------------- monotonicity
def test_power_grows_with_the_effect_and_with_replication():
    formula = "~ x + C(c)"
    cs = od.candidates(formula, {"x": [-1.0, 0.0, 1.0], "c": ["a", "b", "c"]})
    counts = np.array([1, 0, 1, 1, 1, 0, 0, 1, 1])
    beta = od.anticipated_coefficients(cs, 1.0, terms=formula)
    scales = np.linspace(0.0, 3.0, 13)
    by_scale = np.array([list(od.design_power(cs, counts, s * beta, terms=formula).power.values()) for s in scales])
    assert np.all(np.diff(by_scale, axis=0) > 0)
    by_runs = np.array([list(od.design_power(cs, r * counts, beta, terms=formula).power.values())
                        for r in range(1, 6)])
    assert np.all(np.diff(by_runs, axis=0) > 0)
    curve = od.power_curve(cs, counts, beta, scales, terms=formula)
    assert list(curve.columns) == ["Intercept", "x", "C(c)", "whole model"] and curve.index.name == "scale"
    np.testing.assert_allclose(curve.to_numpy(), by_scale, rtol=1e-12)
    assert np.all(np.abs(curve.iloc[0] - 0.05) <= 1e-12)


def test_power_falls_as_sigma_grows_and_rises_with_alpha():
    base = od.design_power(FACTORIAL, None, 1.0).test("x1").power
    assert od.design_power(FACTORIAL, None, 1.0, sigma=2.0).test("x1").power < base
    assert od.design_power(FACTORIAL, None, 1.0, alpha=0.1).test("x1").power > base
    # sigma scales lambda as 1 / sigma^2: doubling sigma is halving the coefficients
    assert od.design_power(FACTORIAL, None, 1.0, sigma=2.0).power == pytest.approx(
        od.design_power(FACTORIAL, None, 0.5).power, rel=1e-12)


# ---------------------------------------------------------------- a published number: skpr's README
# The README of R's skpr (github.com/tylermorganwall/skpr, README.md at commit 23932a26e0962bf8b65674d91dac4da69883bbfd)
# prints a 12-run design in full and eval_design(design, ~temp + type + beansize, alpha = 0.05) with the default
# effectsize = 2 and sum contrasts: effect power 0.8424665 (temp, type), 0.5165386 (beansize, 2 df); parameter power
# 0.5593966 (beansize1, beansize2). skpr scales temp from [80, 100] to [-1, 1].
SKPR_RUNS = [(80, "Kona", "Medium"), (100, "Java", "Small"), (80, "Java", "Large"), (100, "Kona", "Large"),
             (100, "Java", "Medium"), (80, "Kona", "Small"), (100, "Kona", "Small"), (80, "Kona", "Large"),
             (100, "Java", "Large"), (80, "Java", "Medium"), (100, "Kona", "Medium"), (80, "Java", "Small")]


def test_skpr_readme_effect_and_parameter_power_to_1e_6():
    runs = pd.DataFrame(SKPR_RUNS, columns=["temp", "type", "beansize"])
    runs["temp"] = (runs["temp"] - 90) / 10
    formula = "~ temp + C(type, contr.sum) + C(beansize, contr.sum)"
    cs = od.candidates(formula, runs)
    beta = od.anticipated_coefficients(cs, 2.0, terms=formula)
    effect = od.design_power(cs, None, beta, terms=formula).power
    assert effect["temp"] == pytest.approx(0.8424665, abs=1e-6)
    assert effect["C(type, contr.sum)"] == pytest.approx(0.8424665, abs=1e-6)
    assert effect["C(beansize, contr.sum)"] == pytest.approx(0.5165386, abs=1e-6)
    assert effect["Intercept"] == pytest.approx(0.8424665, abs=1e-6)
    parameter = od.design_power(cs, None, beta).power  # one test per column
    assert [parameter[c] for c in cs.columns[3:]] == pytest.approx([0.5593966, 0.5593966], abs=1e-6)


def test_anticipated_coefficients_alternate_within_a_term():
    formula = "~ x + C(c, contr.sum)"
    cs = od.candidates(formula, {"x": [-1.0, 1.0], "c": ["a", "b", "c", "d"]})
    assert od.anticipated_coefficients(cs, 3.0, terms=formula).tolist() == [1.5, 1.5, 1.5, -1.5, 1.5]
    assert od.anticipated_coefficients(cs, 3.0).tolist() == [1.5] * 5  # one term per column: all +
    # in sum coding the four level effects are then +-1.5: the levels differ by at most the effect size, 3
    levels = cs.X[:, 2:] @ np.array([1.5, -1.5, 1.5])
    assert levels.max() - levels.min() == pytest.approx(3.0)


# ---------------------------------------------------------------- the result
def test_result_table_and_dictionary():
    res = od.design_power(FACTORIAL, None, [0.0, 1.0, 0.5, 0.25])
    frame = res.to_frame()
    assert list(frame.columns) == ["term", "df1", "df2", "noncentrality", "critical_value", "power"]
    assert frame["term"].tolist() == ["Intercept", "x1", "x2", "x3", "whole model"]
    assert frame["power"].tolist() == list(res.power.values())
    assert isinstance(res.terms[0], TermPower) and res.terms[1].columns == ("x1",)
    data = json.loads(json.dumps(res.to_dict()))
    assert data["n"] == 8 and data["tests"][-1]["term"] == "whole model" and data["coefficients"][1] == 1.0
    with pytest.raises(InvalidInputError, match="no term 'x9'"):
        res.test("x9")


# ---------------------------------------------------------------- refused input, one clear error each
CS = od.candidates("~ x + C(c)", {"x": [-1.0, 1.0], "c": ["a", "b", "c"]})
BAD = {
    "no error df": (lambda: od.design_power(FACTORIAL[:4], None, 1.0), "N > p"),
    "N below p": (lambda: od.design_power(FACTORIAL, np.array([1, 1, 0, 0, 0, 0, 0, 0]), 1.0), "N > p"),
    "singular": (lambda: od.design_power(FACTORIAL, np.array([3, 3, 0, 0, 0, 0, 0, 0]), 1.0),
                 "singular.*rank 2 < p = 4"),
    "aliased columns": (lambda: od.design_power(np.column_stack([FACTORIAL, FACTORIAL[:, 1]]), np.full(8, 2), 1.0),
                        "singular"),
    "design length": (lambda: od.design_power(FACTORIAL, np.ones(7, dtype=int), 1.0), "7 run counts for 8"),
    "fractional runs": (lambda: od.design_power(FACTORIAL, np.full(8, 1.5), 1.0), "whole numbers"),
    "negative runs": (lambda: od.design_power(FACTORIAL, np.array([2, 2, 2, 2, 2, 2, 2, -1]), 1.0), "nonnegative"),
    "NaN runs": (lambda: od.design_power(FACTORIAL, np.array([1, 1, 1, 1, 1, 1, 1, np.nan]), 1.0), "NaN"),
    "weights": (lambda: od.design_power(FACTORIAL, od.d_optimal(FACTORIAL), 1.0), "approximate design"),
    "effects length": (lambda: od.design_power(FACTORIAL, None, [1.0, 2.0]), "effects must have length 4"),
    "NaN effects": (lambda: od.design_power(FACTORIAL, None, [0.0, np.nan, 1.0, 1.0]), "effects contains NaN"),
    "inf effect": (lambda: od.design_power(FACTORIAL, None, np.inf), "effects must be a finite number"),
    "text effect": (lambda: od.design_power(FACTORIAL, None, "big"), "effects"),
    "inf in X": (lambda: od.design_power(np.where(FACTORIAL == 1, np.inf, FACTORIAL), None, 1.0), "X contains NaN"),
    "X not 2-D": (lambda: od.design_power(np.ones(5), None, 1.0), "X must be 2-D"),
    "alpha 0": (lambda: od.design_power(FACTORIAL, None, 1.0, alpha=0.0), "alpha must be .* between 0 and 1"),
    "alpha 1": (lambda: od.design_power(FACTORIAL, None, 1.0, alpha=1), "alpha must be"),
    "alpha NaN": (lambda: od.design_power(FACTORIAL, None, 1.0, alpha=float("nan")), "alpha must be"),
    "alpha bool": (lambda: od.design_power(FACTORIAL, None, 1.0, alpha=True), "alpha must be"),
    "sigma 0": (lambda: od.design_power(FACTORIAL, None, 1.0, sigma=0.0), "sigma must be a positive number"),
    "sigma negative": (lambda: od.design_power(FACTORIAL, None, 1.0, sigma=-1.0), "sigma must be"),
    "sigma inf": (lambda: od.design_power(FACTORIAL, None, 1.0, sigma=float("inf")), "sigma must be"),
    "formula without candidates": (lambda: od.design_power(CS.X, None, 1.0, terms="~ x + C(c)"), "CandidateSet"),
    "another formula": (lambda: od.design_power(CS, None, 1.0, terms="~ x"), "not the candidates'"),
    "unknown column": (lambda: od.design_power(CS, None, 1.0, terms={"t": ["z"]}), "'z' is not a column"),
    "column index": (lambda: od.design_power(CS, None, 1.0, terms={"t": [4]}), "4 is not a column"),
    "column twice": (lambda: od.design_power(CS, None, 1.0, terms={"t": [1], "u": [1, 2]}), "one term only"),
    "no terms": (lambda: od.design_power(CS, None, 1.0, terms={}), "empty mapping"),
    "terms type": (lambda: od.design_power(CS, None, 1.0, terms=[1, 2]), "terms must be"),
    "effect size": (lambda: od.anticipated_coefficients(CS, float("nan")), "effect_size must be a finite"),
    "negative scale": (lambda: od.power_curve(CS, None, 1.0, [1.0, -1.0]), "scales must be nonnegative"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_gives_one_clear_error(case):
    call, message = BAD[case]
    with pytest.raises(InvalidInputError, match=message):
        call()


@pytest.mark.parametrize(("args", "message"), [((0, 4, 1.0, 0.05), "df1"), ((1, 2.5, 1.0, 0.05), "df2"),
                                               ((1, 4, -1.0, 0.05), "noncentrality"),
                                               ((1, 4, float("nan"), 0.05), "noncentrality"),
                                               ((1, 4, 1.0, 1.5), "alpha")])
def test_noncentral_f_power_refuses_bad_arguments(args, message):
    with pytest.raises(InvalidInputError, match=message):
        noncentral_f_power(*args)
