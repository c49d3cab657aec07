"""N-run pseudo-Bayesian designs of GLMs (optdesign.glm.bayesian_exact): one draw gives the locally optimal N-run
design, S equal draws one draw, the logistic model's two-point D-optimum (eta = +-1.5434) taken by 2 and by 6 runs,
the criterion recomputed from the runs by hand, the certified bound against every N-run design enumerated, seeded
reproducibility, and one clear error per bad input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import brentq

import optdesign as od
from optdesign.errors import InvalidInputError

QUADRATIC_THETA = [0.5, 1.0, -0.5]


def _quadratic(points: int = 31) -> np.ndarray:
    """1, x, x^2 on [-3, 3]."""
    x = np.linspace(-3.0, 3.0, points)
    return np.column_stack([np.ones_like(x), x, x**2])


def _by_hand(X: np.ndarray, draws: np.ndarray, link: str, counts: np.ndarray, criterion: str) -> float:
    """The criterion of the design w = counts / N from its information under each draw, built draw by draw:
    D: exp(-mean_s log det M_s / p); A: mean_s tr M_s^{-1}; I: mean_s tr(B_s M_s^{-1}), B_s = X^T diag(nu_s) X / K."""
    w = counts / counts.sum()
    K, p = X.shape
    values = []
    for theta in draws:
        nu = od.glm_weights(X, theta, link)
        M = X.T @ ((w * nu)[:, None] * X)
        if criterion == "D":
            values.append(np.linalg.slogdet(M)[1])
        elif criterion == "A":
            values.append(np.trace(np.linalg.inv(M)))
        else:
            values.append(np.trace(np.linalg.solve(M, X.T @ (nu[:, None] * X) / K)))
    mean = float(np.mean(values))
    return float(np.exp(-mean / p)) if criterion == "D" else mean


# ---------------------------------------------------------------- one draw, equal draws, prior weights
@pytest.mark.parametrize("criterion", ["D", "A", "I"])
@pytest.mark.parametrize("n", [3, 7])
def test_one_draw_gives_the_locally_optimal_exact_design(criterion, n):
    X = _quadratic()
    local = od.glm_design(X, QUADRATIC_THETA, "logit", criterion, n=n)
    ours = od.bayesian_exact_design(X, [QUADRATIC_THETA], "logit", n, criterion)
    assert ours.criterion == f"bayesian-{criterion.lower()}" and ours.n == n and ours.counts.sum() == n
    assert ours.value == pytest.approx(local.value, rel=1e-9)


@pytest.mark.parametrize("criterion", ["D", "I"])
def test_equal_draws_and_a_prior_on_one_draw_give_the_one_draw_design(criterion):
    X = _quadratic()
    one = od.bayesian_exact_design(X, [QUADRATIC_THETA], "probit", 8, criterion)
    same = od.bayesian_exact_design(X, np.tile(QUADRATIC_THETA, (6, 1)), "probit", 8, criterion)
    assert same.value == pytest.approx(one.value, rel=1e-9)
    assert np.array_equal(same.counts, one.counts)
    others = np.array([QUADRATIC_THETA, [0.0, -1.0, 0.3], [1.0, 0.5, -1.0]])
    weighted = od.bayesian_exact_design(X, others, "probit", 8, criterion, prior_weights=[1.0, 0.0, 0.0])
    assert weighted.value == pytest.approx(one.value, rel=1e-9)


@pytest.mark.parametrize("criterion", ["D", "A"])
def test_the_identity_link_gives_the_linear_exact_design(criterion):
    X = _quadratic(21)
    draws = np.random.default_rng(2).normal(size=(10, 3))  # the identity link weighs every draw alike
    linear = od.exact_design(X, 6, criterion)
    ours = od.bayesian_exact_design(X, draws, "identity", 6, criterion)
    assert ours.value == pytest.approx(linear.value, rel=1e-9)


# ---------------------------------------------------------------- the gains of the exchange
@pytest.mark.parametrize("criterion", ["D", "A", "I"])
def test_single_and_pair_move_gains_equal_the_loss_change_recomputed(criterion):
    from optdesign.glm.draw_exchange import DrawSearch, Whitening
    from optdesign.glm.draw_pairs import SIGNS, pair_candidates, pair_gains
    from optdesign.glm.prior import bayesian_problem
    from optdesign.glm.trace_prior import trace_problem

    X = _quadratic(15)
    draws = np.random.default_rng(0).normal(QUADRATIC_THETA, 0.4, size=(20, 3))
    if criterion == "D":
        problem, B = bayesian_problem(X, draws, "logit"), None
    else:
        trace = trace_problem(X, draws, "logit", criterion)
        problem, B = trace.base, trace.moments
    counts = np.zeros(15, dtype=np.int64)
    counts[[0, 3, 7, 11, 14]] = [2, 1, 2, 1, 2]

    def loss(change: np.ndarray, signs: np.ndarray) -> float:
        search = DrawSearch(problem, B, True, counts.copy())
        np.add.at(search.counts, change, signs)
        factors = search.factors()
        assert factors is not None
        return search.loss_and_prices(factors)[0]

    search = DrawSearch(problem, B, True, counts.copy())
    factors = search.factors()
    assert factors is not None
    base = search.loss_and_prices(factors)[0]
    whitening = Whitening(problem, factors, B)
    points = np.flatnonzero(counts)
    rows, everyone = whitening.rows(points), whitening.rows(np.arange(15))
    for a, i in enumerate(points):
        gains = search.gains(rows, a, everyone, -np.inf)
        for j in np.flatnonzero(np.arange(15) != i):
            assert gains[j] == pytest.approx(base - loss(np.array([j, i]), SIGNS[:2]), rel=1e-9, abs=1e-12)
    pairs = pair_candidates(counts, np.repeat(points, 3), np.tile([1, 5, 9], points.size), True)
    involved, local = np.unique(pairs, return_inverse=True)
    picked = whitening.rows(involved)
    gains = pair_gains(picked.y, picked.nu, picked.z, problem.prior, local.reshape(pairs.shape))
    assert pairs.shape[0] > 50
    for pair, gain in zip(pairs, gains, strict=True):
        assert gain == pytest.approx(base - loss(pair, SIGNS), rel=1e-9, abs=1e-12)


# ---------------------------------------------------------------- the logistic two-point design
def _logistic_optimum() -> float:
    """c > 0 with c tanh(c / 2) = 1: the locally D-optimal design of the simple logistic model puts half its weight
    at each of eta = +-c (c = 1.5434)."""
    return float(brentq(lambda c: c * np.tanh(c / 2.0) - 1.0, 0.5, 3.0, xtol=1e-14))


@pytest.mark.parametrize("n", [2, 6])
def test_logistic_two_point_design_is_reached_when_its_points_are_candidates(n):
    c = _logistic_optimum()
    assert c == pytest.approx(1.5434, abs=1e-4)
    theta = np.array([0.4, 1.6])
    optimum = np.array([-c - theta[0], c - theta[0]]) / theta[1]  # x with eta = +-c
    x = np.sort(np.r_[np.linspace(-4.0, 3.0, 36), optimum])
    X = np.column_stack([np.ones_like(x), x])
    res = od.bayesian_exact_design(X, [theta], "logit", n)
    assert x[res.support] == pytest.approx(optimum, abs=1e-12)
    assert res.counts[res.support].tolist() == [n // 2, n // 2]
    assert res.value == pytest.approx(res.approximate_value, rel=1e-6)  # the approximate optimum itself
    assert 1.0 - 1e-6 <= res.efficiency <= 1.0


# ---------------------------------------------------------------- certificate and value
@pytest.mark.parametrize("criterion", ["D", "A", "I"])
def test_reported_value_matches_the_runs_and_the_efficiency_is_certified(criterion):
    X = _quadratic()
    draws = np.random.default_rng(4).normal(QUADRATIC_THETA, 0.4, size=(60, 3))
    res = od.bayesian_exact_design(X, draws, "logit", 9, criterion, restarts=4, seed=2)
    assert res.value == pytest.approx(_by_hand(X, draws, "logit", res.counts, criterion), rel=1e-9)
    assert res.approximate_value == pytest.approx(_by_hand(X, draws, "logit", res.approximate_weights, criterion),
                                                  rel=1e-9)
    assert res.lower_bound <= res.approximate_value <= res.value
    assert 0.9 < res.efficiency <= 1.0
    if criterion == "D":
        assert res.extras["log_det"] == pytest.approx(-3 * np.log(res.value), rel=1e-12)


@pytest.mark.parametrize("criterion", ["D", "A"])
def test_the_bound_holds_for_every_n_run_design_and_the_search_finds_the_best(criterion):
    x = np.linspace(-2.0, 2.0, 7)
    X = np.column_stack([np.ones_like(x), x, x**2])
    draws = np.random.default_rng(1).normal([0.2, 1.0, -0.6], 0.5, size=(25, 3))
    res = od.bayesian_exact_design(X, draws, "probit", 4, criterion, restarts=6)
    values = []
    for rows in itertools.combinations_with_replacement(range(7), 4):  # all 210 designs of 4 runs
        counts = np.bincount(rows, minlength=7)
        if np.linalg.matrix_rank(X[counts > 0]) == 3:
            values.append(_by_hand(X, draws, "probit", counts, criterion))
    best = min(values)
    assert res.lower_bound <= best
    assert res.value == pytest.approx(best, rel=1e-9)


def test_without_replicates_every_candidate_holds_one_run_at_most():
    X = _quadratic()
    draws = np.random.default_rng(0).normal(QUADRATIC_THETA, 0.3, size=(20, 3))
    res = od.bayesian_exact_design(X, draws, "logit", 8, replicates=False)
    assert res.counts.max() == 1 and res.counts.sum() == 8 and not res.replicates


# ---------------------------------------------------------------- seeds
def test_the_same_seed_gives_the_same_design():
    X = _quadratic(41)
    draws = np.random.default_rng(9).normal(QUADRATIC_THETA, 0.5, size=(40, 3))
    first = od.bayesian_exact_design(X, draws, "cloglog", 10, "A", restarts=5, seed=7)
    again = od.bayesian_exact_design(X, draws, "cloglog", 10, "A", restarts=5, seed=7)
    assert np.array_equal(first.counts, again.counts) and first.value == again.value
    assert first.starts == again.starts == 6 and first.moves == again.moves


# ---------------------------------------------------------------- bad input: one clear error each
def test_draws_of_the_wrong_width_are_refused():
    with pytest.raises(InvalidInputError, match="draws must have 3 columns"):
        od.bayesian_exact_design(_quadratic(), [[0.0, 1.0]], "logit", 5)


def test_fewer_runs_than_parameters_are_refused():
    with pytest.raises(InvalidInputError, match="n = 2 runs cannot estimate the p = 3 parameters"):
        od.bayesian_exact_design(_quadratic(), [QUADRATIC_THETA], "logit", 2)


def test_nan_draws_are_refused():
    with pytest.raises(InvalidInputError, match="draws contains NaN"):
        od.bayesian_exact_design(_quadratic(), [[0.0, np.nan, 1.0]], "logit", 5)


def test_an_unknown_link_is_refused():
    with pytest.raises(InvalidInputError, match="link must be one of"):
        od.bayesian_exact_design(_quadratic(), [QUADRATIC_THETA], "logistic", 5)  # type: ignore[arg-type]


def test_an_unknown_criterion_and_moments_with_d_are_refused():
    with pytest.raises(InvalidInputError, match="criterion must be one of D, A, I"):
        od.bayesian_exact_design(_quadratic(), [QUADRATIC_THETA], "logit", 5, "E")
    with pytest.raises(InvalidInputError, match="moments= is the region of the I-criterion"):
        od.bayesian_exact_design(_quadratic(), [QUADRATIC_THETA], "logit", 5, "D", moments=np.eye(3))


def test_more_runs_than_candidates_without_replicates_are_refused():
    with pytest.raises(InvalidInputError, match="without replicates need n <= 31"):
        od.bayesian_exact_design(_quadratic(), [QUADRATIC_THETA], "logit", 40, replicates=False)
