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
        assert res.lower_bound == d  # Kiefer–Wolfowitz
        assert res.value == pytest.approx(od.g_value(X, res.weights))
        assert d <= res.value <= d * (1 + 1e-4) + 1e-12
        assert res.gap == pytest.approx(res.value / d - 1)


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
