"""The power of the F tests with runs in random groups (optdesign.power.strata): the GLS information against
X^T V^{-1} X built densely, eta = 0 against independent runs, the balanced split plot's whole-plot test as the F
test of the whole-plot means, the between-within degrees of freedom against nlme's for its Oats split plot, skpr's
rule, BlockedDesignResult inputs, and one clear error per bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import f, ncf

import optdesign as od
from optdesign.errors import InvalidInputError
from optdesign.power.strata import gls_information, run_groups

SPLIT = "~ w + s + w:s"


def _dense_v(labels: list[np.ndarray], etas: list[float]) -> np.ndarray:
    """V = I + sum_l eta_l Z_l Z_l^T, built from the indicator matrices."""
    N = labels[0].size
    V = np.eye(N)
    for codes, eta in zip(labels, etas, strict=True):
        Z = (codes[:, None] == np.unique(codes)[None, :]).astype(float)
        V += eta * Z @ Z.T
    return V


def _split_plot(W: int, k: int) -> pd.DataFrame:
    """W whole plots of k runs (k even): w = -1 on the first half of the plots, +1 on the rest; s alternating -1, +1
    within every plot (balanced, so the whole-plot means do not depend on s)."""
    return pd.DataFrame({"w": np.repeat(np.where(np.arange(W) < W // 2, -1.0, 1.0), k),
                         "s": np.tile([-1.0, 1.0], W * k // 2)})


# ---------------------------------------------------------------- the GLS information
@pytest.mark.parametrize("crossed", [False, True])
def test_gls_information_equals_x_transpose_v_inverse_x_built_densely(crossed):
    rng = np.random.default_rng(3)
    N, p = 24, 5
    X = rng.standard_normal((N, p))
    if crossed:  # rows and columns of a 4 x 6 strip layout
        labels = [np.arange(N) // 6, np.arange(N) % 6]
    else:  # whole plots of 6, sub-plots of 2 nested in them
        labels = [np.arange(N) // 6, np.arange(N) // 2]
    etas = [0.7, 1.9]
    groups = run_groups({"a": labels[0], "b": labels[1]}, N, {"a": etas[0], "b": etas[1]})
    dense = X.T @ np.linalg.solve(_dense_v(labels, etas), X)
    assert gls_information(X, groups) == pytest.approx(dense, rel=1e-11, abs=1e-11)


def test_noncentrality_is_beta_c_inverse_beta_with_the_dense_gls_covariance():
    rng = np.random.default_rng(5)
    N = 18
    X = np.column_stack([np.ones(N), rng.standard_normal((N, 3))])
    labels = np.repeat(np.arange(6), 3)
    beta, sigma, eta = np.array([0.3, 0.8, -0.5, 0.4]), 1.7, 2.5
    res = od.design_power(X, None, beta, sigma=sigma, groups=labels, eta=eta, terms={"ab": [1, 2], "c": 3})
    C = np.linalg.inv(X.T @ np.linalg.solve(_dense_v([labels], [eta]), X))
    for test, columns in zip(res.terms, ([1, 2], [3]), strict=True):
        b = beta[columns]
        assert test.noncentrality == pytest.approx(b @ np.linalg.solve(C[np.ix_(columns, columns)], b) / sigma**2,
                                                   rel=1e-10)
    assert res.eta == {"block": eta} and res.df_method == "between-within"
    assert res.to_dict()["eta"] == {"block": eta}


def test_eta_zero_with_residual_df_is_the_unblocked_power_and_no_groups_is_unchanged():
    data = _split_plot(8, 4)
    cs = od.candidates(SPLIT, data)
    beta = np.array([0.2, 0.6, 0.4, -0.3])
    plain = od.design_power(cs, None, beta, alpha=0.1, terms=SPLIT)
    zero = od.design_power(cs, None, beta, alpha=0.1, terms=SPLIT, groups=np.repeat(np.arange(8), 4), eta=0.0,
                           df_method="residual")
    for a, b in zip(plain.tests, zero.tests, strict=True):
        assert (a.term, a.df1, a.df2) == (b.term, b.df1, b.df2)
        assert b.noncentrality == pytest.approx(a.noncentrality, rel=1e-12)
        assert b.power == pytest.approx(a.power, rel=1e-12)
    assert plain.eta is None and plain.df_method is None and "eta" not in plain.to_dict()


# ---------------------------------------------------------------- closed forms
@pytest.mark.parametrize(("W", "k", "eta", "sigma"), [(8, 2, 1.0, 1.0), (10, 4, 0.5, 1.5), (6, 6, 3.0, 0.8)])
def test_balanced_split_plot_whole_plot_test_is_the_f_test_of_the_whole_plot_means(W, k, eta, sigma):
    """The W whole-plot means follow mu + w_i beta_w + N(0, sigma^2 (eta + 1/k)): w's F test on them has df
    (1, W - 2) and lambda = W beta_w^2 / (sigma^2 (eta + 1/k)). s and w:s, orthogonal to the whole plots, keep
    lambda = N beta^2 / sigma^2 with df2 = N - W - 2."""
    data = _split_plot(W, k)
    cs = od.candidates(SPLIT, data)
    N, alpha = W * k, 0.05
    beta = np.array([0.5, 0.9, 0.4, -0.35])
    res = od.design_power(cs, None, beta, alpha=alpha, sigma=sigma, terms=SPLIT, groups=np.repeat(np.arange(W), k),
                          eta=eta)
    w, s, ws = res.test("w"), res.test("s"), res.test("w:s")
    lam = W * beta[1] ** 2 / (sigma**2 * (eta + 1 / k))
    assert (w.df1, w.df2) == (1, W - 2)
    assert w.noncentrality == pytest.approx(lam, rel=1e-10)
    assert w.power == pytest.approx(ncf.sf(f.isf(alpha, 1, W - 2), 1, W - 2, lam), rel=1e-9)
    for test, b in ((s, beta[2]), (ws, beta[3])):
        assert (test.df1, test.df2) == (1, N - W - 2)
        assert test.noncentrality == pytest.approx(N * b**2 / sigma**2, rel=1e-10)
    assert res.test("Intercept").df2 == N - W - 2  # the innermost stratum, as nlme
    assert res.model is not None and res.model.df2 == W - 2  # the smallest of its columns' strata
    skpr = od.design_power(cs, None, beta, alpha=alpha, sigma=sigma, terms=SPLIT,
                           groups=np.repeat(np.arange(W), k), eta=eta, df_method="skpr")
    assert [t.df2 for t in skpr.terms] == [W - 1, W - 1, N - W, N - W]  # no columns subtracted; intercept: min
    assert skpr.test("w").noncentrality == w.noncentrality


def test_between_within_df_are_nlmes_for_the_oats_split_plot():
    """Pinheiro & Bates's Oats: 6 blocks, 3 varieties on the plots of each block, 4 nitrogen levels on the runs of
    each plot; nlme's anova of yield ~ nitro * Variety, random = ~1 | Block/Variety gives denDF 45 (intercept), 45
    (nitro), 10 (Variety), 45 (nitro:Variety)."""
    f_ = "~ C(nitro, contr.sum) * C(variety, contr.sum)"
    runs = pd.DataFrame([(b, v, n) for b in range(6) for v in "ABC" for n in range(4)],
                        columns=["block", "variety", "nitro"])
    cs = od.candidates(f_, runs[["nitro", "variety"]])
    plots = runs["block"].astype(str) + runs["variety"]
    res = od.design_power(cs, None, 0.5, terms=f_, groups={"plot": plots, "block": runs["block"]}, eta=[0.3, 1.2])
    assert [(t.df1, t.df2) for t in res.terms] == [(1, 45), (3, 45), (2, 10), (6, 45)]
    assert list(res.eta) == ["block", "plot"] and res.eta == {"block": 1.2, "plot": 0.3}  # coarsest first


def test_a_stratum_without_degrees_of_freedom_has_no_power():
    data = _split_plot(2, 4)  # two whole plots: nothing left to test w against
    res = od.design_power(od.candidates("~ w + s", data), None, 1.0, terms="~ w + s",
                          groups=np.repeat([0, 1], 4))
    assert res.test("w").df2 == 0 and np.isnan(res.test("w").power) and np.isnan(res.test("w").critical_value)
    assert res.test("s").df2 == 8 - 2 - 1 and 0 < res.test("s").power < 1
    curve = od.power_curve(od.candidates("~ w + s", data), None, 1.0, scales=[0.0, 1.0], terms="~ w + s",
                           groups=np.repeat([0, 1], 4))
    assert curve["w"].isna().all() and curve["s"].iloc[0] == pytest.approx(0.05)


def test_power_curve_with_groups_passes_through_design_power():
    data = _split_plot(8, 2)
    cs = od.candidates(SPLIT, data)
    kw = {"terms": SPLIT, "groups": np.repeat(np.arange(8), 2), "eta": 2.0}
    curve = od.power_curve(cs, None, 0.7, scales=[0.5, 1.0], **kw)
    assert curve.loc[1.0].to_dict() == pytest.approx(od.design_power(cs, None, 0.7, **kw).power, rel=1e-12)


# ---------------------------------------------------------------- BlockedDesignResult inputs
def test_split_plot_result_brings_its_whole_plots_and_eta():
    formula = "~ w + s + I(s**2)"
    res = od.split_plot_design(formula, {"w": [-1, 1]}, {"s": [-1, 0, 1]}, [3] * 6, eta=1.5, restarts=1)
    cs = od.candidates(formula, res.points)
    ours = od.design_power(cs, res, 1.0, terms=formula)
    at_runs = od.candidates(formula, res.points.iloc[res.rows].reset_index(drop=True))
    direct = od.design_power(at_runs, None, 1.0, terms=formula, groups=res.groupings["whole_plot"], eta=1.5)
    assert ours.eta == {"whole_plot": 1.5}
    assert [t.power for t in ours.tests] == pytest.approx([t.power for t in direct.tests], rel=1e-12)
    assert ours.test("w").df2 == 6 - 1 - 1 and ours.test("s").df2 == 18 - 6 - 2


def test_random_blocks_result_and_strip_plot_result():
    cs = od.candidates("~ a + b", od.cube(["a", "b"], 3))
    blocked = od.blocked_design(cs.X, [3] * 4, block_effects="random", eta=0.8, restarts=1)
    res = od.design_power(cs, blocked, 1.0, terms="~ a + b")
    assert res.eta == {"block": 0.8} and res.test("a").df2 == 12 - 4 - 2  # a and b vary within blocks
    strip = od.strip_plot_design("~ w + s", {"w": [-1, 1]}, {"s": [-1, 1]}, 4, 4, restarts=1)
    scs = od.candidates("~ w + s", strip.points)
    with pytest.raises(InvalidInputError, match="do not nest"):
        od.design_power(scs, strip, 1.0)
    residual = od.design_power(scs, strip, 1.0, df_method="residual")
    assert residual.eta == {"row": 1.0, "column": 1.0} and {t.df2 for t in residual.tests} == {16 - 3}


# ---------------------------------------------------------------- bad input: one clear error each
def _runs() -> tuple[od.CandidateSet, np.ndarray]:
    return od.candidates("~ w + s", _split_plot(4, 4)), np.repeat(np.arange(4), 4)


def test_negative_or_non_finite_eta_is_refused():
    cs, groups = _runs()
    for bad in (-0.1, np.inf, np.nan, "1"):
        with pytest.raises(InvalidInputError, match="eta"):
            od.design_power(cs, None, 1.0, groups=groups, eta=bad)
    with pytest.raises(InvalidInputError, match="2 ratios for 1 groupings"):
        od.design_power(cs, None, 1.0, groups=groups, eta=[1.0, 2.0])


def test_labels_of_the_wrong_length_are_refused():
    cs, groups = _runs()
    with pytest.raises(InvalidInputError, match="one group label per run"):
        od.design_power(cs, None, 1.0, groups=groups[:-1])
    with pytest.raises(InvalidInputError, match="one group label per run"):
        od.design_power(cs, None, 1.0, groups=[groups, groups[:5]])


def test_crossed_groupings_are_refused_by_the_stratum_rules():
    cs, _ = _runs()
    rows, columns = np.arange(16) // 4, np.arange(16) % 4
    for method in ("between-within", "skpr"):
        with pytest.raises(InvalidInputError, match="do not nest"):
            od.design_power(cs, None, 1.0, groups=[rows, columns], df_method=method)  # type: ignore[arg-type]
    assert od.design_power(cs, None, 1.0, groups=[rows, columns], df_method="residual").n == 16


def test_groups_need_the_runs_in_order_and_eta_needs_groups():
    cs, groups = _runs()
    with pytest.raises(InvalidInputError, match="label the runs in order"):
        od.design_power(cs, np.ones(16), 1.0, groups=groups)
    with pytest.raises(InvalidInputError, match="already exact"):
        od.design_power(cs, None, 1.0, groups=groups, runs=16)
    with pytest.raises(InvalidInputError, match="give groups"):
        od.design_power(cs, None, 1.0, eta=1.0)
    with pytest.raises(InvalidInputError, match="df_method"):
        od.design_power(cs, None, 1.0, groups=groups, df_method="kenward-roger")  # type: ignore[arg-type]


def test_groups_given_twice_are_refused():
    cs = od.candidates("~ a + b", od.cube(["a", "b"], 3))
    random = od.blocked_design(cs.X, [3] * 4, block_effects="random", restarts=1)
    with pytest.raises(InvalidInputError, match="give them once"):
        od.design_power(cs, random, 1.0, groups=np.arange(12) // 3)


def test_a_singular_gls_information_names_the_aliased_columns():
    w = np.repeat([-1.0, 1.0, -1.0, 1.0], 2)
    X = np.column_stack([np.ones(8), w, np.tile([-1.0, 1.0], 4), w])  # x3 repeats x1
    with pytest.raises(InvalidInputError, match=r"singular.*x1, x3"):
        od.design_power(X, None, 1.0, groups=np.arange(8) // 2)


def test_split_split_plot_result_takes_each_factor_in_its_stratum():
    f_ = "~ a + b + c"
    res = od.split_split_plot_design(f_, {"a": [-1, 1]}, {"b": [-1, 1]}, {"c": [-1, 1]}, [4] * 6, 2, restarts=1,
                                     eta_whole=2.0, eta_sub=0.5)
    cs = od.candidates(f_, res.points)
    power = od.design_power(cs, res, 1.0, terms=f_)
    assert power.eta == {"whole_plot": 2.0, "subplot": 0.5}
    # 6 whole plots, 12 sub-plots, 24 runs: a 6 - 1 - 1, b 12 - 6 - 1, c and the intercept 24 - 12 - 1
    assert [t.df2 for t in power.terms] == [11, 4, 5, 11]
    skpr = od.design_power(cs, res, 1.0, terms=f_, df_method="skpr")
    assert [t.df2 for t in skpr.terms] == [5, 5, 6, 12]
