"""The power of the F tests with FIXED block effects (optdesign.power.grouped): orthogonally blocked two-level
factorials against the closed form (the unblocked noncentrality, the residual df reduced by b - 1), a non-orthogonal
blocked design against least squares on [X, block dummies] and against a seeded Monte Carlo of the F test itself,
the blocked design's own information, crossed fixed groupings, and one clear error per bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import f, ncf

import optdesign as od
from optdesign.errors import InvalidInputError

ALPHA = 0.05


def _factorial(k: int) -> np.ndarray:
    """The 2^k runs in +-1 coding, one per row."""
    return np.array(list(itertools.product([-1.0, 1.0], repeat=k)))


def _closed_form(lam: float, df1: int, df2: int, alpha: float = ALPHA) -> float:
    """P(F(df1, df2, lam) > f_{1-alpha}(df1, df2)) by scipy."""
    return float(ncf.sf(f.isf(alpha, df1, df2), df1, df2, lam))


def _dummies(labels: np.ndarray) -> np.ndarray:
    """One indicator column per distinct label."""
    return (labels[:, None] == np.unique(labels)[None, :]).astype(float)


# ---------------------------------------------------------------- (a) orthogonal blocking: the closed form
@pytest.mark.parametrize(("generators", "n_blocks"), [((0, 1, 2, 3), 2), ((0, 1, 2), 2), (((0, 1, 2), (0, 1, 3)), 4)])
def test_orthogonally_blocked_2_4_main_effects_match_the_unblocked_noncentrality_with_df_reduced(generators,
                                                                                                   n_blocks):
    F = _factorial(4)
    gens = generators if isinstance(generators[0], tuple) else (generators,)
    signs = [np.prod(F[:, list(g)], axis=1) > 0 for g in gens]  # blocks confounded with these interactions
    blocks = sum((s.astype(int) << i) for i, s in enumerate(signs))
    assert np.unique(blocks).size == n_blocks and np.all(np.bincount(blocks) == 16 // n_blocks)
    X = np.column_stack([np.ones(16), F])
    beta = np.array([3.0, 0.4, -0.3, 0.5, 0.25])
    sigma = 0.8
    res = od.design_power(X, None, beta, sigma=sigma, groups=blocks, block_effects="fixed")
    plain = od.design_power(X, None, beta, sigma=sigma)
    assert [t.term for t in res.terms] == ["x1", "x2", "x3", "x4"] and res.absorbed == ("Intercept",)
    for t in res.terms:
        reference = plain.test(t.term)
        lam = 16 * beta[int(t.term[1:])] ** 2 / sigma**2  # X^T X = 16 I: nothing lost to the blocks
        assert t.noncentrality == pytest.approx(lam, rel=1e-12) == reference.noncentrality
        assert t.df1 == 1 and t.df2 == reference.df2 - (n_blocks - 1) == 16 - 5 - (n_blocks - 1)
        assert t.power == pytest.approx(_closed_form(lam, 1, t.df2), rel=1e-10)
        assert t.power < reference.power  # the same signal, fewer error degrees of freedom
    whole = res.model
    assert whole is not None and whole.df1 == 4 and whole.df2 == 16 - 5 - (n_blocks - 1)
    assert whole.noncentrality == pytest.approx(16 * beta[1:] @ beta[1:] / sigma**2, rel=1e-12)


def test_the_blocked_design_result_brings_its_fixed_blocks_and_its_own_information():
    F = _factorial(3)
    X = np.column_stack([np.ones(8), F])
    design = od.blocked_design(X, [4, 4], replicates=False)  # the optimum confounds abc with the blocks
    assert design.block_effects == "fixed" and np.allclose(design.information, 8 * np.eye(3))
    beta = np.array([0.0, 1.0, 0.5, -0.75])
    res = od.design_power(X, design, beta)
    assert res.block_effects == "fixed" and res.eta is None and res.df_method is None
    assert [t.df2 for t in res.tests] == [8 - 2 - 3] * 4
    for j, t in enumerate(res.terms, start=1):
        assert t.power == pytest.approx(_closed_form(8 * beta[j] ** 2, 1, 3), rel=1e-10)
    # the whole model's noncentrality is beta^T M beta with M the design's information (the search's definition)
    slopes = beta[design.parameters]
    assert res.model is not None
    assert res.model.noncentrality == pytest.approx(slopes @ design.information @ slopes, rel=1e-12)
    data = res.to_dict()
    assert data["block_effects"] == "fixed" and data["absorbed"] == ["Intercept"] and "eta" not in data


# ---------------------------------------------------------------- (b) a non-orthogonal design: direct computation
FORMULA = "~ a + b + a:b + I(a**2)"


def _blocked_problem():
    cs = od.candidates(FORMULA, od.cube(["a", "b"], 3))
    design = od.blocked_design(cs.X, [5, 5, 4], restarts=3, seed=1)
    runs = cs.X[design.rows]
    return cs, design, runs, design.blocks


def _direct(runs: np.ndarray, blocks: np.ndarray, beta: np.ndarray, sigma: float) -> dict[int, tuple[float, int]]:
    """Column j (not the intercept) -> (lambda, df2) of its F test from least squares on [X without the intercept,
    the block dummies]: lambda is the noise-free increase of the residual sum of squares when the column is
    dropped, over sigma^2."""
    A = np.column_stack([runs[:, 1:], _dummies(blocks)])
    df2 = runs.shape[0] - np.linalg.matrix_rank(A)
    mean = runs @ beta
    out = {}
    for j in range(1, runs.shape[1]):
        reduced = np.delete(A, j - 1, axis=1)
        fit = reduced @ np.linalg.lstsq(reduced, mean, rcond=None)[0]
        out[j] = (float(np.sum((mean - fit) ** 2)) / sigma**2, int(df2))
    return out


def test_a_non_orthogonal_blocked_design_matches_least_squares_on_x_and_block_dummies():
    cs, design, runs, blocks = _blocked_problem()
    beta = np.array([1.0, 0.6, -0.4, 0.5, 0.3])
    sigma = 1.3
    res = od.design_power(cs, design, beta, sigma=sigma)
    direct = _direct(runs, blocks, beta, sigma)
    assert len(res.terms) == 4  # the intercept is absorbed by the blocks
    for t in res.terms:
        lam, df2 = direct[cs.columns.index(t.term)]
        assert t.df2 == df2 == 14 - 3 - 4
        assert t.noncentrality == pytest.approx(lam, rel=1e-9)
        assert t.power == pytest.approx(_closed_form(lam, 1, df2), rel=1e-9)
    # C restricted to the slopes is the inverse of the blocked design's information: the whole-model lambda
    b = beta[design.parameters]
    assert res.model is not None
    assert res.model.noncentrality == pytest.approx(b @ design.information @ b / sigma**2, rel=1e-9)


def _rejections(runs: np.ndarray, blocks: np.ndarray, beta: np.ndarray, sigma: float, column: int,
                n_sim: int, seed: int) -> np.ndarray:
    """Whether the level-ALPHA F test of one column rejects, in each of n_sim data sets simulated from
    y = X beta + Z gamma + eps (gamma arbitrary block effects) and fitted by OLS on [X without the intercept, Z]."""
    rng = np.random.default_rng(seed)
    Z = _dummies(blocks)
    gamma = np.array([2.0, -1.0, 0.5])[: Z.shape[1]]
    Y = (runs @ beta + Z @ gamma)[:, None] + sigma * rng.standard_normal((runs.shape[0], n_sim))
    full = np.column_stack([runs[:, 1:], Z])
    reduced = np.delete(full, column - 1, axis=1)

    def rss(A: np.ndarray) -> np.ndarray:
        coef = np.linalg.lstsq(A, Y, rcond=None)[0]
        return np.sum((Y - A @ coef) ** 2, axis=0)

    df2 = runs.shape[0] - np.linalg.matrix_rank(full)
    statistic = (rss(reduced) - rss(full)) / (rss(full) / df2)
    return statistic > f.isf(ALPHA, 1, df2)


@pytest.mark.parametrize("term", ["a", "a:b"])
def test_monte_carlo_of_the_f_test_agrees_with_the_reported_power(term):
    # 14 runs on the 3^2 grid in blocks of 5, 5, 4 (a D-optimal blocking), given as the runs and their blocks
    points = od.cube(["a", "b"], 3).iloc[[0, 2, 5, 6, 8, 0, 2, 5, 6, 8, 0, 2, 3, 8]].reset_index(drop=True)
    cs = od.candidates(FORMULA, points)
    runs, blocks = cs.X, np.repeat([0, 1, 2], [5, 5, 4])
    beta = np.array([1.0, 0.6, -0.4, 0.8, 0.9])  # columns Intercept, a, b, I(a ** 2), a:b
    sigma = 1.0
    reported = od.design_power(cs, None, beta, sigma=sigma, groups=blocks, block_effects="fixed").test(term).power
    assert 0.2 < reported < 0.9  # a power the simulation can tell apart from alpha and from 1
    n_sim = 4000
    hits = _rejections(runs, blocks, beta, sigma, cs.columns.index(term), n_sim, seed=11)
    se = np.sqrt(reported * (1 - reported) / n_sim)
    assert abs(hits.mean() - reported) < 4 * se


def test_crossed_fixed_groupings_take_the_rank_of_all_their_indicators():
    # a 4 x 4 grid of cells, rows and columns as fixed effects (a row-column design), two slopes varying in cells
    rng = np.random.default_rng(5)
    rows, cols = np.repeat(np.arange(4), 4), np.tile(np.arange(4), 4)
    X = np.column_stack([np.ones(16), rng.choice([-1.0, 1.0], size=(16, 2))])
    beta = np.array([0.0, 0.7, -0.5])
    res = od.design_power(X, None, beta, groups={"row": rows, "column": cols}, block_effects="fixed")
    A = np.column_stack([X[:, 1:], _dummies(rows), _dummies(cols)])
    df2 = 16 - np.linalg.matrix_rank(A)
    assert df2 == 16 - 7 - 2
    C = np.linalg.pinv(A.T @ A)[:2, :2]  # the slopes' block: estimable, so the pseudo-inverse gives it
    for j, t in enumerate(res.terms):
        assert t.df2 == df2 and t.noncentrality == pytest.approx(beta[j + 1] ** 2 / C[j, j], rel=1e-9)


def test_block_effects_override_the_results_own_and_feed_the_power_curve():
    cs, design, _, blocks = _blocked_problem()
    as_random = od.design_power(cs, design, 0.5, block_effects="random")
    by_groups = od.design_power(od.candidates(FORMULA, od.cube(["a", "b"], 3).iloc[design.rows]), None, 0.5,
                                groups=blocks, eta=1.0)
    assert as_random.block_effects == "random" and as_random.eta == {"block": 1.0}
    assert [t.power for t in as_random.tests] == pytest.approx([t.power for t in by_groups.tests], rel=1e-12)
    fixed = od.design_power(cs, design, 0.5)
    curve = od.power_curve(cs, design, 0.5, scales=[0.0, 1.0], block_effects="fixed")
    assert curve.loc[1.0].to_dict() == pytest.approx(fixed.power, rel=1e-12)
    assert curve.loc[0.0].to_numpy() == pytest.approx(ALPHA, rel=1e-9)


# ---------------------------------------------------------------- (c) bad input: one clear error each
def _runs() -> tuple[np.ndarray, np.ndarray]:
    F = _factorial(3)
    return np.column_stack([np.ones(8), F]), (np.prod(F, axis=1) > 0).astype(int)


def test_eta_with_fixed_effects_is_refused():
    X, blocks = _runs()
    with pytest.raises(InvalidInputError, match="block_effects='fixed' takes none"):
        od.design_power(X, None, 1.0, groups=blocks, eta=1.0, block_effects="fixed")


def test_an_unknown_block_effects_is_refused():
    X, blocks = _runs()
    with pytest.raises(InvalidInputError, match="block_effects"):
        od.design_power(X, None, 1.0, groups=blocks, block_effects="mixed")  # type: ignore[arg-type]


def test_block_effects_without_groups_is_refused():
    X, _ = _runs()
    with pytest.raises(InvalidInputError, match="give groups"):
        od.design_power(X, None, 1.0, block_effects="fixed")


def test_a_factor_confounded_with_the_blocks_is_refused_by_name():
    X, _ = _runs()
    with pytest.raises(InvalidInputError, match=r"singular.*x1.*aliased with the group effects"):
        od.design_power(X, None, 1.0, groups=(X[:, 1] > 0).astype(int), block_effects="fixed")


def test_no_error_degrees_of_freedom_left_is_refused():
    X, _ = _runs()
    pairs = [0, 1, 2, 3, 3, 2, 1, 0]  # the fold-over pairs: every slope estimated within them, 8 - 4 - 3 = 1 left
    assert od.design_power(X, None, 1.0, groups=pairs, block_effects="fixed").terms[0].df2 == 1
    with pytest.raises(InvalidInputError, match=r"8 - 5 - 3 = 0 degrees of freedom for the error"):
        od.design_power(X, None, 1.0, groups=[0, 1, 2, 3, 3, 2, 1, 4], block_effects="fixed")


def test_a_term_mixing_the_intercept_with_other_columns_is_refused():
    X, blocks = _runs()
    with pytest.raises(InvalidInputError, match="mixes the intercept"):
        od.design_power(X, None, 1.0, groups=blocks, block_effects="fixed", terms={"both": [0, 1], "b": 2})


def test_x_of_the_intercept_alone_is_refused():
    with pytest.raises(InvalidInputError, match="only the intercept"):
        od.design_power(np.ones((6, 1)), None, 1.0, groups=[0, 0, 0, 1, 1, 1], block_effects="fixed")


def test_a_whole_plot_factor_under_fixed_whole_plot_effects_is_refused_by_name():
    res = od.split_plot_design("~ w + s", {"w": [-1, 1]}, {"s": [-1, 1]}, [2] * 6, restarts=1)
    cs = od.candidates("~ w + s", res.points)
    assert od.design_power(cs, res, 1.0).block_effects == "random"  # the split plot's own: random whole plots
    with pytest.raises(InvalidInputError, match=r"combination of w is constant within every group of whole_plot"):
        od.design_power(cs, res, 1.0, block_effects="fixed")
