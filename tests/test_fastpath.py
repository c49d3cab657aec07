"""Fast paths against the cvxpy models and closed forms: value within 1e-3, gap bounds the error.

"gap bounds the true error" is equivalent to lower_bound <= F*; F* is bounded above by the value
of any design (cvxpy's, the fast path's) and known exactly for G/D (d) and for the multi-armed
oracle (half the Garivier–Kaufmann time).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from conftest import soare_arms
from test_linear_designs import gk_gaussian_characteristic_time

import optdesign as od
from optdesign.linear import dispatch
from optdesign.linear.barrier import minmax_barrier
from optdesign.result import FastPathResult


def _check_against(fast, ref, exact=None):
    assert fast.status == "optimal"
    assert abs(fast.value / ref.value - 1) <= 1e-3
    best_known = min(fast.value, ref.value) if exact is None else exact
    assert fast.lower_bound <= best_known * (1 + 1e-9)  # so gap >= true relative error
    assert fast.value / best_known - 1 <= fast.gap + 1e-12
    assert fast.gap <= 1e-4


@pytest.mark.parametrize("K,d", [(12, 3), (30, 4), (40, 5)])
def test_xy_barrier_matches_cvxpy(K, d):
    X = np.random.default_rng(100 + K).standard_normal((K, d))
    ref = od.xy_allocation(X, method="cvxpy")
    _check_against(od.xy_allocation(X, method="barrier"), ref)
    _check_against(od.xy_allocation(X), ref)  # auto


@pytest.mark.parametrize("d", [2, 3, 5])
@pytest.mark.parametrize("omega", [0.1, 0.5])
def test_soare_instance_xy_and_oracle(d, omega):
    X = soare_arms(d, omega)
    theta = np.zeros(d)
    theta[0] = 2.0
    _check_against(od.xy_allocation(X), od.xy_allocation(X, method="cvxpy"))
    _check_against(od.xy_oracle(X, theta), od.xy_oracle(X, theta, method="cvxpy"))


@pytest.mark.parametrize("d", [2, 5, 10])
def test_ill_conditioned_oracle_is_still_certified(d):
    """omega = 0.01: Delta_min ~ 1e-4 and optimal weights near 1e-8; both paths must certify."""
    X = soare_arms(d, 0.01)
    theta = np.zeros(d)
    theta[0] = 2.0
    fast, ref = od.xy_oracle(X, theta), od.xy_oracle(X, theta, method="cvxpy")
    _check_against(fast, ref)
    assert ref.gap <= 1e-5  # the cvxpy design after polishing


@pytest.mark.parametrize("mu", [np.array([0.5, 0.45, 0.43, 0.4]), np.array([0.9, 0.1, 0.899, 0.3, 0.2, 0.5])])
def test_multi_armed_oracle_against_garivier_kaufmann(mu):
    K = len(mu)
    exact = gk_gaussian_characteristic_time(mu) / 2
    fast = od.transductive(np.eye(K), np.eye(K), mu)
    ref = od.transductive(np.eye(K), np.eye(K), mu, method="cvxpy")
    _check_against(fast, ref, exact=exact)
    assert ref.value == pytest.approx(exact, rel=1e-5)


@pytest.mark.parametrize("method", ["frank-wolfe", "multiplicative", "barrier"])
@pytest.mark.parametrize("K,d", [(15, 3), (200, 6)])
def test_g_and_d_fast_paths(method, K, d):
    X = np.random.default_rng(K * d).standard_normal((K, d))
    for fn in (od.g_optimal, od.d_optimal):
        res = fn(X, method=method)
        assert res.method == method
        assert res.g_value == pytest.approx(od.g_value(X, res.weights))
        assert d <= res.g_value <= d * (1 + 1e-4) + 1e-12  # Kiefer–Wolfowitz
        assert res.gap == pytest.approx(res.g_value / d - 1)
        assert res.value / res.lower_bound == pytest.approx(res.g_value / d)  # G: d; D: Atwood's bound


def test_transductive_fast_path_with_distinct_item_set():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((15, 4))
    Z = rng.standard_normal((25, 4))
    theta = rng.standard_normal(4)
    _check_against(od.transductive(X, Z, theta), od.transductive(X, Z, theta, method="cvxpy"))
    _check_against(od.transductive(X, Z), od.transductive(X, Z, method="cvxpy"))


def test_many_arms_use_column_generation():
    """K > 400 makes the barrier work on an arm subset; the certificate is still on all arms."""
    X = np.random.default_rng(3).standard_normal((600, 3))
    Y = X[:40] - X[40:80]
    res = od.minmax_design(X, Y, method="barrier")
    assert res.gap <= 1e-4
    cert = od.minmax_lower_bound(X, res.weights, Y, np.ones(len(Y)))
    assert cert <= res.value


def test_auto_falls_back_to_cvxpy_when_not_certified(monkeypatch):
    X = np.random.default_rng(4).standard_normal((8, 3))

    def stalled(X, Y, **kwargs):
        w = np.full(X.shape[0], 1 / X.shape[0])
        return FastPathResult(w, od.minmax_value(X, w, Y), 0.0, 1, False)

    monkeypatch.setattr(dispatch, "minmax_barrier", stalled)
    res = od.xy_allocation(X)
    assert res.method == "cvxpy" and res.gap <= 1e-4
    forced = od.xy_allocation(X, method="barrier")
    assert forced.status == "not_converged" and forced.gap == float("inf")


def test_frank_wolfe_is_refused_for_minmax_designs():
    with pytest.raises(od.InvalidInputError, match="G/D-optimal designs only"):
        od.xy_allocation(np.eye(3), method="frank-wolfe")


def test_warm_start_is_accepted_and_certified():
    X = np.random.default_rng(5).standard_normal((30, 4))
    Y = od.pairwise_differences(X)
    first = od.minmax_design(X, Y)
    again = od.minmax_design(X, Y * 1.01, w0=first.weights)
    assert again.gap <= 1e-4
    assert again.value == pytest.approx(first.value * 1.01**2, rel=2e-4)


@pytest.mark.parametrize("d", [30, 40])
@pytest.mark.parametrize("tol", [1e-4, 1e-6])
def test_many_tied_active_directions_converge_without_overflow(d, tol):
    """RAGE's first phase on Soare's instance (omega = 0.01): Y = all differences of the d + 1 arms.

    The d (d - 1) / 2 differences e_i - e_j (i, j >= 3) tie at the optimum, more than the
    ``hessian_directions`` default 12 d once d > 24: a Hessian truncated to 12 d of them was
    indefinite, Newton stalled, tau grew unchecked until the slacks underflowed (overflow, divide by
    zero and NaN warnings) and the fast path gave up at a 1e-2 gap after 500 steps.
    """
    X = soare_arms(d, 0.01)
    Y = od.pairwise_differences(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        res = minmax_barrier(X, Y, tol=tol)
    assert res.converged and res.iterations < 100
    assert res.value / res.lower_bound - 1 <= tol
    assert res.value == pytest.approx(od.minmax_value(X, res.weights, Y), rel=1e-12)
    auto = od.minmax_design(X, Y, tol=tol)  # no cvxpy fallback, same certified answer
    assert auto.method == "barrier" and auto.gap <= tol


def test_fast_paths_and_study_workers_do_not_load_cvxpy():
    """cvxpy is loaded on first use (optdesign._lazy): a G/XY design on the barrier path and a bandit run
    leave it unexecuted, so study workers start about 0.7 s sooner; a cvxpy model then loads it."""
    code = textwrap.dedent("""
        import sys
        import numpy as np
        import optdesign as od
        import bandits.studies.execute
        from bandits.experiment import Experiment
        X = np.random.default_rng(0).standard_normal((12, 3))
        od.g_optimal(X); od.xy_allocation(X)
        Experiment("xy-static", "soare:d=3,omega=0.3", deltas=(0.1,), seed=1).execute()
        assert "cvxpy.atoms" not in sys.modules, "cvxpy was executed"
        res = od.xy_allocation(X, method="cvxpy")
        assert "cvxpy.atoms" in sys.modules and res.gap < 1e-4
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr


# --------------------------------------------------------------------------------------------
# K close to d: the co-rank variances (optdesign.linear.corank)


def _naive_corank_variances(L, w):
    """1 / w_k - l_k^T G^{-1} l_k / w_k^2, G = L^T W^{-1} L: exact in exact arithmetic, cancels as w_k -> 0."""
    G = (L / w[:, None]).T @ L
    q = np.einsum("ij,ij->i", L @ np.linalg.inv(G), L)
    return 1.0 / w - q / w**2


@pytest.mark.parametrize("d,r", [(5, 1), (30, 3), (200, 5)])
def test_corank_variances_match_the_d_dimensional_factor(d, r):
    """v_k = x_k^T A(w)^{-1} x_k from the left null basis equals ||R^{-T} x_k||^2 for the QR factor R of
    diag(sqrt w) X (rounding cond(diag(sqrt w) X) eps), for positive, tiny (down to 1e-15) and zero weights; the
    naive formula loses digits as w_k -> 0."""
    from scipy.linalg import solve_triangular

    from optdesign.linear.corank import corank_variances, left_null_basis
    from optdesign.linear.criteria import triangular_factor

    rng = np.random.default_rng(d + r)
    X = rng.standard_normal((d + r, d))
    L = left_null_basis(X)
    assert L.shape == (d + r, r)
    assert np.abs(X.T @ L).max() < 1e-13 * np.abs(X).max() * d
    assert L.T @ L == pytest.approx(np.eye(r), abs=1e-14)
    for tiny in (None, 1e-4, 5e-6, 1e-6, 1e-9, 1e-12, 1e-15, 0.0):  # both sides of TINY_WEIGHT / K
        w = rng.random(d + r)
        if tiny is not None:
            w[rng.choice(d + r, r, replace=False)] = tiny  # at most r zeros: A(w) stays nonsingular
        w /= w.sum()
        Z = solve_triangular(triangular_factor(X, w), X.T, trans="T")
        ref = np.einsum("ij,ij->j", Z, Z)
        err = np.max(np.abs(corank_variances(L, w) / ref - 1))
        assert err <= 1e-11
        if tiny == 1e-12:  # the stable formula is needed: the naive one loses about eps / w_k
            assert np.max(np.abs(_naive_corank_variances(L, w) / ref - 1)) > 1e3 * max(err, 1e-16)


def test_corank_variance_at_weight_zero_is_the_variance_without_the_arm():
    """At w_k = 0, v_k = x_k^T A_{-k}^{-1} x_k with A_{-k} built from the other arms (brute force)."""
    from optdesign.linear.corank import corank_variances, left_null_basis

    rng = np.random.default_rng(5)
    X = rng.standard_normal((9, 6))
    w = rng.random(9)
    w[[2, 7]] = 0.0
    w /= w.sum()
    A = X.T @ (w[:, None] * X)
    brute = np.einsum("ij,ij->i", X, np.linalg.solve(A, X.T).T)
    assert corank_variances(left_null_basis(X), w) == pytest.approx(brute, rel=1e-10)


@pytest.mark.parametrize("d", [2, 7, 60])
def test_square_arms_are_the_uniform_closed_form(d):
    """K = d: every arm is needed (leverage 1, v_k = 1 / w_k), so w = 1/d with every variance d is optimal."""
    X = np.random.default_rng(d).standard_normal((d, d))
    for fn in (od.g_optimal, od.d_optimal):
        res = fn(X)
        assert res.method == "corank" and res.iterations == 0 and res.gap == 0.0
        assert res.weights == pytest.approx(np.full(d, 1.0 / d), rel=1e-15)
        assert od.g_value(X, res.weights) == pytest.approx(d, rel=1e-10)


@pytest.mark.parametrize("d", [2, 5, 50])
@pytest.mark.parametrize("omega", [0.1, 1.0])
def test_soare_instance_g_optimal_closed_form(d, omega):
    """Soare's e_1..e_d and x_{d+1} = (cos w, sin w, 0, ...): A = I/d gives v_k = d ||x_k||^2 = d for every arm,
    so the uniform design on e_1..e_d (weight 0 on x_{d+1}) is optimal, and unique (A* = I/d needs
    w_{d+1} cos w sin w = 0). The extra arm has variance d at weight 0 (no strict complementarity)."""
    X = soare_arms(d, omega)
    res = od.g_optimal(X, tol=1e-10)
    assert res.method == "corank" and res.status == "optimal"
    assert res.value == pytest.approx(d, rel=1e-9) and res.lower_bound == d
    exact = np.r_[np.full(d, 1.0 / d), 0.0]
    assert np.abs(res.weights - exact).max() <= 1e-4 / d
    logdet = np.linalg.slogdet(X.T @ (res.weights[:, None] * X))[1]
    assert logdet <= -d * np.log(d) + 1e-12  # log det A* = log det (I/d): no design does better
    assert od.g_value(X, res.weights) == pytest.approx(res.value, rel=1e-9)


@pytest.mark.parametrize("r", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("d", [8, 12, 40])
def test_corank_agrees_with_frank_wolfe_and_multiplicative(d, r):
    """Random K = d + r: the co-rank path is chosen by ``auto``, reaches G-value d (Kiefer–Wolfowitz) and the same
    log det as the existing Frank–Wolfe and multiplicative paths (D-efficiency >= d / max v_k)."""
    rng = np.random.default_rng(100 * d + r)
    X = rng.standard_normal((d + r, d))
    m = min(2 * r, d)
    X[:m] *= rng.uniform(0.2, 1.0, (m, 1))  # short arms: some weights are 0 at the optimum
    res = od.d_optimal(X)
    assert res.method == "corank" and res.status == "optimal" and res.gap == pytest.approx(res.g_value / d - 1)
    assert d <= res.g_value <= d * (1 + 1e-4)
    assert od.g_value(X, res.weights) == pytest.approx(res.g_value, rel=1e-9)  # the true G-value
    logdet = np.linalg.slogdet(X.T @ (res.weights[:, None] * X))[1]
    for method in ("frank-wolfe", "multiplicative"):
        ref = od.d_optimal(X, method=method)
        assert ref.method == method
        assert logdet == pytest.approx(np.linalg.slogdet(X.T @ (ref.weights[:, None] * X))[1], abs=2 * d * 1e-4)


@pytest.mark.parametrize("eps", [1e-6, 1e-9])
def test_corank_nearly_dependent_arms(eps):
    """e_1..e_d, a near copy of e_1 and e_1 + e_2: the near copy and e_1 share weight, the G-value is still d
    (checked by the QR leverages) and matches Frank–Wolfe."""
    d = 6
    X = np.vstack([np.eye(d), [1.0, eps, 0, 0, 0, 0], [1.0, 1.0, 0, 0, 0, 0]])
    res = od.g_optimal(X)
    assert res.method == "corank" and res.status == "optimal"
    assert od.g_value(X, res.weights) == pytest.approx(res.value, rel=1e-6)
    assert res.value == pytest.approx(d, rel=1e-4)
    assert res.value == pytest.approx(od.g_optimal(X, method="frank-wolfe").value, rel=1e-4)


def test_corank_exact_duplicates_and_large_scale():
    """An arm repeated, at scale 1e8: the variances do not depend on the scale of X (L is orthonormal)."""
    d = 5
    X = 1e8 * np.vstack([np.eye(d), np.eye(d)[:2]])
    res = od.g_optimal(X)
    assert res.method == "corank" and res.value == pytest.approx(d, rel=1e-4)
    assert res.weights[[0, 5]].sum() == pytest.approx(1 / d, rel=1e-3)
    assert res.weights[2:5] == pytest.approx(np.full(3, 1 / d), rel=1e-3)


def test_corank_dispatch_rule_and_stopped_run_is_certified():
    """``auto`` takes the co-rank path iff (K - d)^2 <= CORANK_RATIO d; a run stopped early still reports the true
    G-value of its design."""
    from optdesign.linear.corank import d_optimal_corank

    d = 25
    r_max = int(np.sqrt(dispatch.CORANK_RATIO * d))
    rng = np.random.default_rng(3)
    assert od.g_optimal(rng.standard_normal((d + r_max, d))).method == "corank"
    # one arm more: the Frank–Wolfe paths (plain below EXCHANGE_MIN_ARMS arms, the active-set exchange from it)
    outside = "exchange" if d + r_max + 1 >= dispatch.EXCHANGE_MIN_ARMS else "frank-wolfe"
    assert od.g_optimal(rng.standard_normal((d + r_max + 1, d))).method == outside
    many = rng.standard_normal((4 * d, d))  # by name outside the rule: slower, still exact (Kiefer–Wolfowitz)
    for design in (od.g_optimal, od.d_optimal):
        res = design(many, method="corank")
        assert res.method == "corank" and res.status == "optimal"
        assert d <= res.g_value <= d * (1 + 1e-4) and od.g_value(many, res.weights) == pytest.approx(res.g_value)
    X = soare_arms(8, 0.1)
    res = d_optimal_corank(X, tol=1e-10, max_iter=0, max_multiplicative=1)
    assert not res.converged and res.value > 8 * (1 + 1e-10)
    assert od.g_value(X, res.weights) == pytest.approx(res.value, rel=1e-9)


def test_corank_respects_the_time_limit():
    """A spent budget stops the co-rank Frank–Wolfe after its warm start: best design, its true G-value, a
    warning, and no cvxpy fallback."""
    X = soare_arms(30, 0.05)
    with pytest.warns(RuntimeWarning, match="time limit"):
        res = od.g_optimal(X, tol=1e-12, time_limit=1e-9)
    assert res.method == "corank" and res.status == "not_converged" and res.gap > 1e-12
    assert od.g_value(X, res.weights) == pytest.approx(res.value, rel=1e-9)


@pytest.mark.parametrize("X", [np.zeros((3, 3)), np.vstack([np.eye(3), [1.0, np.nan, 0.0]]), np.ones((4, 2)),
                               np.eye(3)[:2]], ids=["zero-square", "nan", "rank-1", "fewer-arms-than-d"])
def test_corank_called_directly_refuses_bad_arms(X):
    """Without a null basis from the caller, the co-rank path checks the arms itself: the K = d closed form must
    not certify a singular square X."""
    from optdesign.linear.corank import d_optimal_corank

    with pytest.raises(od.InvalidInputError):
        d_optimal_corank(X)
