"""G/D-optimal designs on many arms: the active-set exchange path (optdesign.linear.exchange) and its dispatch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import optdesign as od
from optdesign.linear import dispatch
from optdesign.linear.exchange import d_optimal_exchange, price, spanning_arms, spanning_factor
from optdesign.validation import RANK_QR_MIN, as_arms

TOL = 1e-4


def _gaussian(n, d, seed=0):
    return np.random.default_rng(seed).standard_normal((n, d))


def _check_kiefer_wolfowitz(X, res, tol=TOL):
    d = X.shape[1]
    assert res.status == "optimal" and res.gap <= tol
    assert res.g_value == pytest.approx(d, rel=tol)
    assert res.value / res.lower_bound == pytest.approx(res.g_value / d, rel=1e-12)  # G: d; D: Atwood's bound
    assert res.weights.sum() == pytest.approx(1.0) and np.all(res.weights >= 0)
    assert od.g_value(X, res.weights) == pytest.approx(res.g_value, rel=1e-9)  # the true G-value


@pytest.mark.parametrize("n,d", [(20_000, 10), (50_000, 20)])
def test_auto_uses_exchange_and_certifies_kiefer_wolfowitz(n, d):
    X = _gaussian(n, d, n + d)
    res = od.g_optimal(X)
    assert res.method == "exchange"
    _check_kiefer_wolfowitz(X, res)
    assert res.support.size < 20 * d  # an active set, not all arms


def test_d_optimal_exchange_matches_g_optimal():
    X = _gaussian(20_000, 12, 3)
    g, dd = od.g_optimal(X), od.d_optimal(X)
    assert dd.criterion == "d-optimal" and dd.method == "exchange"
    _check_kiefer_wolfowitz(X, dd)
    logdet = [np.linalg.slogdet(X.T @ (r.weights[:, None] * X))[1] for r in (g, dd)]
    assert logdet[0] == pytest.approx(logdet[1], abs=12 * TOL)  # D-efficiency >= d / max h_k


@pytest.mark.parametrize("K,d", [(12, 3), (60, 5), (300, 8)])
def test_exchange_agrees_with_frank_wolfe_and_cvxpy_on_small_instances(K, d):
    X = _gaussian(K, d, 7 * K + d)
    ex = od.g_optimal(X, method="exchange")
    fw = od.g_optimal(X, method="frank-wolfe")
    _check_kiefer_wolfowitz(X, ex)
    assert ex.value == pytest.approx(fw.value, rel=TOL)
    if K <= 60:
        assert ex.value == pytest.approx(od.g_optimal(X, method="cvxpy").value, rel=TOL)


def test_small_instances_keep_the_existing_path():
    # below EXCHANGE_MIN_ARMS and outside the co-rank rule: plain Frank–Wolfe (K was 500 while the threshold was
    # 2,000 arms; benchmarks/bench_dispatch.py measured the exchange faster from about 50)
    K, d = 40, 5
    assert K < dispatch.EXCHANGE_MIN_ARMS and not dispatch.corank_applies(K, d)
    res = od.g_optimal(_gaussian(K, d, 1))
    assert res.method == "frank-wolfe" and res.gap <= TOL


def test_duplicated_arms():
    X = _gaussian(5_000, 8, 4)
    Xdup = np.vstack([X, X, X[:1000]])
    res = od.g_optimal(Xdup)
    _check_kiefer_wolfowitz(Xdup, res)
    assert res.value == pytest.approx(od.g_optimal(X).value, rel=TOL)


def test_a_few_arms_with_huge_norm():
    X = _gaussian(30_000, 10, 5)
    X[:5] *= 1e4
    res = od.g_optimal(X)
    _check_kiefer_wolfowitz(X, res)
    assert np.all(res.weights[:5] > 0)  # the far arms are in every optimal design's support


def test_integer_grid_with_ties():
    g = np.arange(-3, 4, dtype=float)
    X = np.array(np.meshgrid(g, g, g, g, g, indexing="ij")).reshape(5, -1).T  # 16,807 arms, many tied leverages
    res = od.d_optimal(X)
    _check_kiefer_wolfowitz(X, res)
    # the D-optimal design of the cube [-3, 3]^5 lives on its 2^5 vertices (uniform weights)
    assert res.weights[np.abs(X).min(axis=1) == 3].sum() == pytest.approx(1.0, abs=1e-3)


def test_canonical_basis_repeated_is_uniform_over_directions():
    X = np.tile(np.eye(6), (500, 1))
    res = od.g_optimal(X)
    _check_kiefer_wolfowitz(X, res)
    per_axis = np.array([res.weights[j::6].sum() for j in range(6)])
    assert per_axis == pytest.approx(np.full(6, 1 / 6), abs=1e-4)


@pytest.mark.parametrize("method", ["auto", "exchange"])
def test_arms_in_a_subspace_raise(method):
    X = _gaussian(20_000, 3, 6) @ _gaussian(3, 6, 7)  # rank 3 in R^6
    with pytest.raises(od.InvalidInputError, match=r"must span R\^6.*found rank 3"):
        od.g_optimal(X, method=method)


def test_spanning_arms_matches_as_arms():
    X = _gaussian(10_000, 7, 8)
    assert spanning_arms(X, chunk=999) is X or np.shares_memory(spanning_arms(X), X)  # no copy
    Y = X.copy()
    Y[:, 6] = Y[:, 0] - 2 * Y[:, 3]
    with pytest.raises(od.InvalidInputError, match="found rank 6"):
        spanning_arms(Y, chunk=777)


@pytest.mark.parametrize("scale", [1e-3, 1e-9, 1e-11, 1e-12, 1e-13, 1e-14, 1e-15, 1e-16, 0.0])
@pytest.mark.parametrize(("check", "shape"), [(spanning_arms, (2_500, 12)), (as_arms, (400, 210))],
                         ids=["spanning_arms", "as_arms"])
def test_rank_checks_decide_as_matrix_rank_across_its_tolerance(scale, check, shape):
    """The condition-estimate shortcut of triangular_rank and its SVD give numpy's matrix_rank decision, including
    next to its tolerance sigma_max max(K, d) eps, where only the SVD may decide (as_arms takes the QR route
    from RANK_QR_MIN rows and columns)."""
    rng = np.random.default_rng(11)
    X = rng.standard_normal(shape)
    d = shape[1]
    assert check is spanning_arms or min(shape) >= RANK_QR_MIN
    X[:, d - 1] = X[:, 2] - X[:, 5] + scale * rng.standard_normal(X.shape[0])
    if np.linalg.matrix_rank(X) == d:
        assert np.array_equal(check(X), X)
    else:
        with pytest.raises(od.InvalidInputError, match=f"found rank {d - 1}"):
            check(X)


@pytest.mark.parametrize("scale", [1.0, 1e-7])
def test_spanning_factor_is_the_gram_factor_on_both_routes(scale):
    """L L^T = X^T X whether the Gram matrix decides the rank (well conditioned) or the TSQR factor does (a column
    within 1e-7 of the span of two others: cond(X^T X) ~ 1e14)."""
    rng = np.random.default_rng(12)
    X = rng.standard_normal((3_000, 8))
    X[:, 7] = X[:, 1] + X[:, 4] + scale * rng.standard_normal(3_000)
    arms, L = spanning_factor(X, chunk=700)
    assert arms is X and np.allclose(L, np.tril(L))
    G = X.T @ X
    assert L @ L.T == pytest.approx(G, abs=1e-9 * np.abs(G).max())


def test_i_optimal_default_region_from_the_factor_matches_the_listed_region():
    X = _gaussian(5_000, 6, 13)
    res = od.i_optimal(X, tol=1e-8)
    listed = od.i_optimal(X, region=X, tol=1e-8)  # region given: its own QR factor
    assert res.value == pytest.approx(listed.value, rel=1e-7)
    assert res.lower_bound <= listed.value * (1 + 1e-12) and listed.lower_bound <= res.value * (1 + 1e-12)


def test_pricing_is_chunk_independent():
    X = _gaussian(3_001, 9, 9)
    L = np.linalg.cholesky(X.T @ X / X.shape[0])
    h = price(X, L, chunk=250)
    assert h == pytest.approx(price(X, L), rel=1e-12)
    assert h == pytest.approx(np.einsum("ij,jk,ik->i", X, np.linalg.inv(L @ L.T), X), rel=1e-9)


def test_time_limit_returns_best_priced_design_uncertified():
    X = _gaussian(20_000, 15, 10)
    res = d_optimal_exchange(X, time_limit=0.0)
    assert not res.converged and res.iterations == 1
    assert res.value == pytest.approx(od.g_value(X, res.weights), rel=1e-9) and res.value > 15 * (1 + TOL)


def test_auto_warns_instead_of_falling_back_to_cvxpy(monkeypatch):
    monkeypatch.setattr(dispatch, "EXCHANGE_TIME_LIMIT", 0.0)
    X = _gaussian(20_000, 15, 11)
    with pytest.warns(RuntimeWarning, match="time limit"):
        res = od.g_optimal(X)
    assert res.status == "not_converged" and res.method == "exchange" and res.gap > TOL
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        monkeypatch.setattr(dispatch, "EXCHANGE_TIME_LIMIT", 60.0)
        assert od.g_optimal(X).status == "optimal"


@pytest.mark.parametrize("d", [20, 50])
def test_g_optimal_on_100k_arms_is_certified(d):
    X = _gaussian(100_000, d, 12)
    res = od.g_optimal(X)
    assert res.method == "exchange" and res.status == "optimal"  # speed is measured in bench_designs_scale.py
    _check_kiefer_wolfowitz(X, res)


@pytest.mark.slow
def test_g_optimal_on_a_million_arms_is_certified():
    X = _gaussian(1_000_000, 20, 13)
    res = od.g_optimal(X)
    assert res.method == "exchange" and res.gap <= TOL and res.status == "optimal"


def test_barrier_arm_subset_stays_small_on_many_arms():
    """XY-oracle on 50,000 Gaussian arms in R^20: arms join the barrier's subset only when they are most of the
    certified gap, so the subset (every arm the interior point keeps positive) stays near its initial 300 arms
    (it grew to about 1,500 when every stage added violators), and the design is certified on all arms."""
    X = _gaussian(50_000, 20, 14)
    theta = np.random.default_rng(15).standard_normal(20)
    res = od.xy_oracle(X, theta)
    assert res.status == "optimal" and res.gap <= TOL
    assert res.support.size < 600
    Y, _ = od.oracle_directions(X, theta)
    assert res.value == pytest.approx(od.minmax_value(X, res.weights, Y), rel=1e-9)


def test_auto_keeps_the_fast_design_when_the_cvxpy_model_would_not_fit(monkeypatch):
    """An uncertified Frank–Wolfe design is handed to cvxpy only if the conic model fits; otherwise ``auto``
    returns it (with its certificate and a warning) instead of raising InstanceTooLargeError."""
    from functools import partial

    from optdesign.errors import InstanceTooLargeError
    from optdesign.linear import firstorder, models

    X = _gaussian(300, 8, 16)
    # 300 arms take plain Frank–Wolfe under the former threshold (the exchange never falls back to cvxpy)
    monkeypatch.setattr(dispatch, "EXCHANGE_MIN_ARMS", 2_000)
    monkeypatch.setattr(firstorder, "d_optimal_fw", partial(firstorder.d_optimal_fw, max_iter=0))
    monkeypatch.setattr(models, "D_OPTIMAL_MAX_DIM", 5)
    monkeypatch.setattr(models, "MINMAX_MAX_CONES", 1000)
    for design in (od.d_optimal, od.g_optimal):
        with pytest.warns(RuntimeWarning, match="returning the best design"):
            res = design(X)
        assert res.method == "frank-wolfe" and res.status == "not_converged"
        assert res.fallback == "the cvxpy model would not fit"
        assert 8 < res.g_value == pytest.approx(od.g_value(X, res.weights), rel=1e-9)
    with pytest.raises(InstanceTooLargeError, match="log det cone"):
        models.DOptimalModel(X)


def test_k_close_to_d_takes_the_corank_path_above_exchange_min_arms():
    """Soare's instance with d = 2000 (K = 2001 >= EXCHANGE_MIN_ARMS): ``auto`` takes the co-rank path (not the
    exchange) and its value is the true G-value. The closed form A* = I/d (1/d on e_1..e_d) bounds its log det
    from above, and the D-efficiency bound det(A(w) / A*)^{1/d} >= d / value from below."""
    from bandits.instances import soare

    d = 2000
    X = soare(d=d).X
    res = od.g_optimal(X)
    assert X.shape[0] >= dispatch.EXCHANGE_MIN_ARMS and res.method == "corank"
    _check_kiefer_wolfowitz(X, res)
    logdet = np.linalg.slogdet(X.T @ (res.weights[:, None] * X))[1]
    optimum = -d * np.log(d)
    assert optimum + d * np.log(d / res.value) - 1e-9 <= logdet <= optimum + 1e-9
