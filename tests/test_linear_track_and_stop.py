"""Linear Track-and-Stop: correctness, asymptotic optimality against the Gaussian lower bound,
convergence of the tracked allocation to the oracle design, and the two solver modes."""

from __future__ import annotations

import numpy as np
import pytest

import optdesign as od
from bandits.core.environments import LinearBandit
from bandits.instances import soare
from bandits.linear import LinearTrackAndStop
from bandits.run import run
from optdesign.errors import InvalidInputError
from optdesign.information import kl_delta


def lower_bound(env, delta: float) -> float:
    """E[tau] >= T* kl(delta, 1 - delta) with T* = 2 sigma^2 rho* (Garivier–Kaufmann's T* for Gaussian noise)."""
    rho = od.transductive(env.X, env.Z, env.theta).value
    return 2.0 * env.sigma**2 * rho * kl_delta(delta)


def drive(algo, env, n_samples: int, seed: int):
    """Run the sampling rule alone (no stopping) for ``n_samples`` pulls; returns the policy."""
    env_rng, alg_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    policy = algo.start(env, 0.05, alg_rng)
    while policy.counts.sum() < n_samples:
        counts = policy.next_batch(n_samples - int(policy.counts.sum()))
        policy.observe(counts, env.pull(counts, env_rng))
    return policy


def correct_fraction(d: int, runs: int) -> float:
    env = soare(d, omega=0.1)
    results = [run(LinearTrackAndStop(), env, 0.05, seed=s, max_samples=10**7) for s in range(runs)]
    assert all(r.stopped_by == "stopping_rule" for r in results)
    return np.mean([r.correct for r in results])


@pytest.mark.parametrize("d", [2, 3])
def test_identifies_best_arm_on_soare_fast(d):
    assert correct_fraction(d, 10) >= 0.9


@pytest.mark.slow
@pytest.mark.parametrize("d", [2, 3, 4, 5])
def test_identifies_best_arm_on_soare(d):
    assert correct_fraction(d, 40) >= 0.95


@pytest.mark.slow
def test_sample_complexity_approaches_the_lower_bound():
    # Lambda_n <= n / (2 sigma^2 rho*(theta_hat_n)) whatever the counts, so no GLRT stops before
    # 2 sigma^2 rho* log(1/delta) (1 + o(1)); an asymptotically optimal sampling rule attains it:
    # mean samples / (T* kl(delta, 1-delta)) -> 1 as delta -> 0 (the practical threshold adds
    # log(1 + log t), a vanishing fraction). Static XY allocation has ratio 2.7 on this instance.
    env = soare(3, omega=0.1)
    deltas = [1e-3, 1e-6, 1e-20]
    runs = [run(LinearTrackAndStop(), env, deltas, seed=s) for s in range(20)]
    ratio = {}
    for i, delta in enumerate(deltas):
        assert all(r[i].correct and r[i].stopped_by == "stopping_rule" for r in runs)
        ratio[delta] = np.mean([r[i].samples for r in runs]) / lower_bound(env, delta)
    assert 0.9 <= ratio[1e-6] <= 2.0
    assert 0.9 <= ratio[1e-20] <= 1.25
    xy_static = od.minmax_value(env.X, od.transductive(env.X, env.Z).weights,
                                od.oracle_directions(env.Z, env.theta)[0])
    assert xy_static / od.transductive(env.X, env.Z, env.theta).value > 2.0  # the bound separates


@pytest.mark.slow
@pytest.mark.parametrize("tracking", ["C", "D"])
def test_empirical_allocation_converges_to_the_oracle_design(tracking):
    # with theta_hat -> theta (sqrt(n) forced exploration) and w*(theta) unique, N(n)/n -> w*(theta)
    env = soare(3, omega=0.5)
    w_star = od.transductive(env.X, env.Z, env.theta).weights
    errors = {}
    for n in (10**4, 10**5):
        errors[n] = max(np.abs(drive(LinearTrackAndStop(tracking=tracking), env, n, s).counts / n - w_star).max()
                        for s in range(3))
    assert errors[10**5] < 0.02
    assert errors[10**5] < errors[10**4]


def test_forced_exploration_grows_like_sqrt_n():
    # items e_1, e_2 in R^3: the oracle design ignores e_3, yet forced exploration (mass
    # d / (2 sqrt(d^2 + s)) on the G-optimal design, here uniform) pulls it ~ g_3 d sqrt(n) = sqrt(n)
    # times, so lambda_min(A_n) grows like sqrt(n) and theta_hat is consistent in every direction
    env = LinearBandit(np.eye(3), np.array([1.0, 0.5, 0.0]), Z=np.eye(3)[:2])
    for n in (2500, 40000):
        counts = drive(LinearTrackAndStop(), env, n, seed=1).counts
        assert 0.7 * np.sqrt(n) <= counts[2] <= 1.3 * np.sqrt(n) + 3


@pytest.mark.parametrize("items", ["X", "transductive"])
def test_model_mode_matches_fast_path(items):
    rng = np.random.default_rng(7)
    X = rng.standard_normal((8, 3))
    Z = X if items == "X" else rng.standard_normal((6, 3))
    env = LinearBandit(X, rng.standard_normal(3), Z=None if items == "X" else Z)
    fast = LinearTrackAndStop().start(env, 0.05, rng)
    model = LinearTrackAndStop(solver_mode="model").start(env, 0.05, rng)
    for _ in range(4):
        theta = rng.standard_normal(3)
        Y = od.oracle_directions(env.Z, theta)[0]
        v_fast = od.minmax_value(X, fast.state.oracle_design(theta).weights, Y)
        v_model = od.minmax_value(X, model.state.oracle_design(theta).weights, Y)
        assert abs(v_fast - v_model) <= 1e-3 * v_model
    assert model.solve_time > 0 and fast.solve_time > 0


def test_empirical_tie_keeps_previous_design():
    # items 1 and 2 coincide: when theta_hat makes them the empirical best, optdesign refuses the
    # oracle design (no unique best); the policy keeps its previous design and carries on
    X = np.eye(2)
    Z = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    env = LinearBandit(X, np.array([1.0, 0.2]), Z=Z)
    policy = LinearTrackAndStop().start(env, 0.05, np.random.default_rng(0))
    first = policy.next_batch(100)
    policy.observe(first, np.array([0.0, 5.0]) * first)  # theta_hat = (0, 5): items 1 and 2 tie
    before = policy.state.design.copy()
    batch = policy.next_batch(100)
    assert policy.state.ties == 1 and np.array_equal(policy.state.design, before)
    assert batch.sum() >= 1 and not policy.stopped(0.05)
    res = run(LinearTrackAndStop(), env, 0.05, seed=3)
    assert res.correct and res.stopped_by == "stopping_rule"


def test_delta_list_gives_monotone_stopping_times():
    env = soare(2, omega=0.3)
    res = run(LinearTrackAndStop(), env, [0.1, 1e-3], seed=0)
    assert res[0].samples <= res[1].samples and res[0].algorithm == "lin-tas"


@pytest.mark.parametrize("threshold", ["theory", "soare"])
def test_other_thresholds_stop_correctly(threshold):
    env = soare(2, omega=0.5)
    res = run(LinearTrackAndStop(threshold=threshold), env, 0.05, seed=0)
    assert res.correct and res.stopped_by == "stopping_rule"
    assert res.samples >= lower_bound(env, 0.05)


@pytest.mark.parametrize("kwargs", [
    {"growth": 0.0}, {"growth": 1.5}, {"replan_growth": -0.1}, {"replan_growth": float("nan")},
    {"threshold": "nope"}, {"solver_mode": "cvx"}, {"tracking": "E"},
])
def test_bad_options_raise(kwargs):
    with pytest.raises(InvalidInputError):
        LinearTrackAndStop(**kwargs)
