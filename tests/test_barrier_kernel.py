"""The barrier's compiled centring stage (optdesign.linear.barrier_kernel) against its numpy reference
(optdesign.linear.barrier_newton), and the certificate LP tried only where it could end a solve.

The compiled stage repeats the reference's arithmetic in another order (loops, a product with L^{-1} instead of a
triangular solve), so a solve follows the reference's iterates to rounding: the same Newton steps (at most one more or
less where a stop test sits at the rounding of psi), designs and values within 1e-10. The lower bounds agree to 1e-8:
the LP's p, a vertex of an LP whose data differ in the last bits, moves them more than the designs.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from conftest import soare_arms

import optdesign as od
from optdesign.linear import barrier, barrier_kernel
from optdesign.linear.barrier import minmax_barrier
from optdesign.linear.barrier_newton import _hessian_directions, _newton_direction, _reduced_barrier
from optdesign.linear.directions import oracle_directions


def _oracle(X, theta):
    return oracle_directions(X, theta)[0]


def _instance(kind: str, seed: int) -> tuple[np.ndarray, np.ndarray, dict]:
    """Arms, directions and solver options of one test instance."""
    rng = np.random.default_rng(seed)
    if kind == "oracle":  # linear Track-and-Stop's re-solve
        X = rng.standard_normal((50, 20))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        return X, _oracle(X, rng.standard_normal(20)), {}
    if kind == "xy":  # more directions than the Hessian keeps
        X = rng.standard_normal((30, 4))
        return X, od.pairwise_differences(X), {}
    if kind == "scaled":  # cond A(w) about 1e16: the QR factor
        X = rng.standard_normal((12, 3)) * np.array([1.0, 1e-4, 1e4])
        return X, od.pairwise_differences(X), {}
    if kind == "near-dependent":  # arms 1e-5 apart, one direction 1e-4 short: cond A(w) about 1e9
        B = rng.standard_normal((8, 4))
        X = np.vstack([B, B[:3] + 1e-5 * rng.standard_normal((3, 4))]) @ np.diag([1.0, 1.0, 1.0, 1e-4])
        return X, _oracle(X, rng.standard_normal(4)), {}
    if kind == "column-generation":
        X = rng.standard_normal((300, 6))
        return X, _oracle(X, rng.standard_normal(6)), {"max_arms": 40}
    if kind == "non-spanning-subset":  # the warm start's subset misses e_5: the barrier starts on every arm
        X = np.vstack([np.c_[rng.standard_normal((150, 4)), np.zeros((150, 1))],
                       np.c_[rng.standard_normal((3, 4)), np.full((3, 1), 1e-3)]])
        return X, _oracle(X, rng.standard_normal(5)), {"max_arms": 30}
    X = soare_arms(10, 0.01)  # weights near 1e-8 at the optimum
    return X, _oracle(X, np.r_[2.0, np.zeros(9)]), {}


KINDS = ("oracle", "xy", "scaled", "near-dependent", "column-generation", "non-spanning-subset", "soare")


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("kind", KINDS)
def test_compiled_solve_follows_the_numpy_reference(kind, seed):
    X, Y, options = _instance(kind, seed)
    ref = minmax_barrier(X, Y, compiled=False, **options)
    fast = minmax_barrier(X, Y, **options)
    assert ref.converged and fast.converged
    assert abs(fast.iterations - ref.iterations) <= 1
    assert np.abs(fast.weights - ref.weights).max() <= 1e-10
    assert fast.value == pytest.approx(ref.value, rel=1e-10)
    assert fast.lower_bound == pytest.approx(ref.lower_bound, rel=1e-8)
    assert fast.lower_bound <= fast.value and fast.value / fast.lower_bound - 1 <= 1e-4
    assert fast.value == pytest.approx(od.minmax_value(X, fast.weights, Y), rel=1e-12)


def _points(kind: str, seed: int, count: int = 4) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, float]]:
    """Interior points (arms, directions, weights, tau) of an instance: random weights, tau from 1 to 1e6."""
    X, Y, _ = _instance(kind, seed)
    rng = np.random.default_rng(seed)
    scale = np.sqrt(od.minmax_value(X, np.full(len(X), 1.0 / len(X)), Y))
    out = []
    for tau in np.logspace(0, 6, count):
        w = rng.dirichlet(np.full(len(X), 0.5)) + 1e-6
        out.append((np.ascontiguousarray(X), np.ascontiguousarray(Y / scale), w / w.sum(), float(tau)))
    return out


@pytest.mark.parametrize("kind", ["oracle", "xy", "scaled", "near-dependent", "soare"])
def test_compiled_point_and_newton_step_match_the_reference(kind):
    """psi, the variances, slacks and factor at a point, and the Newton step from it, on the Cholesky and the QR
    paths of the factor."""
    for X, Y, w, tau in _points(kind, 3):
        val, cache = _reduced_barrier(X, Y, w, tau)
        if cache is None:  # outside the domain at this tau (the level drowns in the rounding of max v)
            assert barrier_kernel.evaluate(X, np.ascontiguousarray(Y.T), w, tau)[0] == np.inf
            continue
        got, L, W, Zy, v, s = barrier_kernel.evaluate(X, np.ascontiguousarray(Y.T), w, tau)
        assert got == pytest.approx(val, rel=1e-10, abs=1e-10 * tau * v.max())
        np.testing.assert_allclose(v, cache[2], rtol=1e-9)
        np.testing.assert_allclose(s, cache[3], rtol=1e-6, atol=1e-9 * v.max())
        np.testing.assert_allclose(L @ L.T, (X * w[:, None]).T @ X, rtol=1e-9, atol=1e-12 * np.abs(X).max() ** 2)
        np.testing.assert_allclose(W @ L, np.eye(len(L)), atol=1e-6)
        q = max(60, 12 * X.shape[1])
        dw, decrement = _newton_direction(X, w, cache, q)
        dw_fast, decrement_fast = barrier_kernel._newton_direction(np.ascontiguousarray(X.T), w, W, Zy, s, q,
                                                                   max(q, barrier.HESSIAN_ENTRIES // len(w)))
        assert decrement_fast == pytest.approx(decrement, rel=1e-6, abs=1e-12)
        np.testing.assert_allclose(dw_fast, dw, rtol=1e-6, atol=1e-9 * np.abs(dw).max())


def test_hessian_directions_are_the_reference_set():
    rng = np.random.default_rng(0)
    for m, q in [(50, 60), (500, 60), (500, 400)]:
        s = rng.exponential(size=m)
        s[: m // 3] = s.min() * rng.uniform(1, 9, m // 3)  # a band of near-ties
        for cap in (q, 10_000):
            assert set(barrier_kernel._hessian_directions(s, q, cap)) == set(_hessian_directions(s, q, cap))


def test_singular_and_non_finite_kkt_systems():
    kkt = np.zeros((3, 3))
    kkt[0, 0] = kkt[0, 2] = kkt[2, 0] = 1.0
    np.testing.assert_allclose(kkt @ barrier_kernel._solve(kkt, np.array([1.0, 0.0, 1.0])), [1.0, 0.0, 1.0])
    kkt[1, 1] = np.nan
    assert np.isnan(barrier_kernel._solve(kkt, np.ones(3))).all()


def _soare_resolves(count: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Oracle directions of Soare's instance (d = 6, omega = 0.1) at noisy estimates of theta = 2 e_1, as Track-and-
    Stop re-solves them."""
    rng = np.random.default_rng(7)
    X = soare_arms(6, 0.1)
    return [(X, _oracle(X, np.r_[2.0, np.zeros(5)] + 0.3 * rng.standard_normal(6))) for _ in range(count)]


@pytest.mark.parametrize("compiled", [False, True])
def test_the_lp_runs_only_where_it_could_end_the_solve(monkeypatch, compiled):
    """LP_MARGIN = inf runs the LP at every late stage (the barrier as it was): the same iterates, designs and values
    bit for bit, and a lower bound at least as large; the default skips the LP where the next stage's design shows
    that no bound could close the gap, and its bound is still certified."""
    calls = []
    sharpened = barrier._sharpened
    monkeypatch.setattr(barrier, "_sharpened", lambda *a: calls.append(1) or sharpened(*a))
    problems = _soare_resolves(40)
    lazy = [minmax_barrier(X, Y, compiled=compiled) for X, Y in problems]
    lazy_calls = len(calls)
    monkeypatch.setattr(barrier, "LP_MARGIN", np.inf)
    eager = [minmax_barrier(X, Y, compiled=compiled) for X, Y in problems]
    assert len(calls) - lazy_calls > 3 * lazy_calls > 0  # most LPs were futile, a few were not
    for a, b in zip(lazy, eager, strict=True):
        assert np.array_equal(a.weights, b.weights) and a.value == b.value and a.iterations == b.iterations
        assert a.lower_bound <= b.lower_bound and a.converged and b.converged
        assert a.value / a.lower_bound - 1 <= 1e-4


def test_lower_bounds_stay_below_the_optimum():
    """lower_bound <= F* <= value against the cvxpy model's certified optimum."""
    for X, Y in _soare_resolves(6):
        fast = minmax_barrier(X, Y)
        ref = od.minmax_design(X, Y, method="cvxpy")
        assert fast.lower_bound <= min(ref.value, fast.value) * (1 + 1e-9)
        assert ref.lower_bound <= fast.value * (1 + 1e-9)


def test_kiefer_wolfowitz_bound_holds_on_the_compiled_path():
    """G-optimality (Y = X): F* = d exactly."""
    X = np.random.default_rng(5).standard_normal((80, 7))
    res = minmax_barrier(X, X)
    assert res.lower_bound <= 7.0 * (1 + 1e-12) <= res.value * (1 + 1e-12) and res.converged


def test_the_compiled_stage_is_loaded_before_the_clock_starts(monkeypatch):
    """A slow load (the first compile after installation takes about 25 s) must not eat the solve's time limit: the
    answer would then depend on the machine's speed."""
    X = soare_arms(3, 0.1)
    Y = od.pairwise_differences(X)
    expected = minmax_barrier(X, Y, compiled=True)
    monkeypatch.setattr(barrier_kernel, "load", lambda: time.sleep(0.5))
    res = minmax_barrier(X, Y, compiled=True, time_limit=0.4)
    assert res.converged and np.array_equal(res.weights, expected.weights)


def test_steps_per_call_bound_the_work_between_deadline_checks():
    assert barrier_kernel.steps_per_call(50, 49, 20, 49) == barrier.STAGE_STEPS
    assert barrier_kernel.steps_per_call(400, 2000, 20, 2000) == 1
    assert barrier_kernel.steps_per_call(10**6, 10**6, 100, 10**6) == 1


def test_a_time_limit_stops_the_compiled_stages():
    """On 300 arms and 2,000 directions a compiled call makes one Newton step (about 5 ms), then the deadline is read:
    a 0.05 s limit stops a solve that takes about 0.3 s well before its end."""
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((300, 20)), rng.standard_normal((2000, 20))
    minmax_barrier(X[:30], Y[:30])  # load the compiled code first
    start = time.perf_counter()
    res = minmax_barrier(X, Y, time_limit=0.05)
    assert time.perf_counter() - start < 1.0 and 0 < res.lower_bound <= res.value


def test_numba_is_imported_on_the_first_barrier_solve_outside_a_time_budget():
    """Inside a caller's time budget a process that has not loaded the compiled stage runs the numpy one (its first
    compile would overrun the budget); the first solve outside a budget loads it, and later budgets use it."""
    code = textwrap.dedent("""
        import sys
        import numpy as np
        import optdesign as od
        from optdesign.linear.barrier import minmax_barrier
        assert "numba" not in sys.modules
        X = np.random.default_rng(0).standard_normal((12, 3))
        minmax_barrier(X, X, compiled=False)
        budgeted = od.xy_allocation(X, time_limit=60)
        assert "numba" not in sys.modules
        free = od.xy_allocation(X)
        from optdesign.linear import barrier_kernel
        assert barrier_kernel.loaded()
        assert np.allclose(free.weights, budgeted.weights, atol=1e-10)
        assert np.allclose(od.xy_allocation(X, time_limit=60).weights, free.weights, atol=0)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
