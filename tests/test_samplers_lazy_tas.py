"""Lazy Track-and-Stop (Jedra & Proutière 2020): its Frank–Wolfe target reaches the oracle value, its spanning set
spans, it stops correctly under the GLR stop, and its error rate stays below delta."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import beta as beta_dist

from bandits.instances import parse_instance
from bandits.pure_exploration import Gaussian, KArmedProblem, LinearProblem, Observations
from bandits.pure_exploration.samplers.lazy_tas import LazyTrackAndStop
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign.errors import InvalidInputError


@pytest.mark.parametrize("instance", ["soare:d=4,omega=0.2", "gaussian:means=1/0.7/0.6/0.2"])
def test_the_lazy_update_approaches_the_characteristic_time(instance):
    """One update of many Frank–Wolfe steps at the true parameter: F(w) T*(mu) close to 1 (it is <= 1 always)."""
    env = parse_instance(instance)
    problem = LinearProblem.of_environment(env) if hasattr(env, "X") else KArmedProblem.of_environment(env)
    mu = env.theta if hasattr(env, "theta") else env.means
    state = LazyTrackAndStop(fw_steps=20_000, tolerance=1e-9).start(problem, env, np.random.default_rng(0))
    counts = np.ones(problem.n_arms, dtype=np.int64)
    state.plan(Observations(problem, counts, np.zeros(problem.n_arms), mu), 1)
    T = problem.oracle(mu).T
    ratio = problem.pieces(mu, state.target, gradients=False).value * T
    assert 0.97 <= ratio <= 1 + 1e-9


def test_updates_happen_at_powers_of_two_only():
    env = parse_instance("gaussian:means=1/0.7/0.6/0.2")
    state = LazyTrackAndStop().start(KArmedProblem(4), env, np.random.default_rng(0))
    problem = KArmedProblem(4)
    updates = {}
    for t in range(4, 70):
        counts = np.full(4, t // 4, dtype=np.int64)
        counts[: t % 4] += 1
        state.plan(Observations(problem, counts, counts * env.means, env.means), 1)
        updates[t] = state.updates
    assert [t for t in range(5, 70) if updates[t] > updates[t - 1]] == [8, 16, 32, 64]
    assert updates[4] == 1  # the first batch after the initial pulls


def test_the_spanning_set_spans():
    env = parse_instance("soare:d=5,omega=0.1")
    arms = LinearProblem.of_environment(env).exploration_arms()
    assert arms.size == 5 and np.linalg.matrix_rank(env.X[arms]) == 5
    assert list(KArmedProblem(3, Gaussian()).exploration_arms()) == [0, 1, 2]


def test_runs_under_the_glr_stop_and_refuses_bad_options():
    for instance in ("soare:d=3,omega=0.3", "bernoulli:means=0.6/0.4/0.3"):
        r = run(make_algorithm("lazy-tas"), parse_instance(instance), [0.1, 0.01], seed=1)
        assert all(x.correct and x.stopped_by == "stopping_rule" for x in r) and r[0].samples <= r[1].samples
    with pytest.raises(InvalidInputError, match="fw_steps"):
        LazyTrackAndStop(fw_steps=0)
    with pytest.raises(InvalidInputError, match="tolerance"):
        LazyTrackAndStop(tolerance=-1.0)


@pytest.mark.slow
@pytest.mark.parametrize("instance", ["gaussian:means=0.6/0.4/0.35", "soare:d=2,omega=0.3"])
def test_lazy_tas_error_rate_is_at_most_delta(instance):
    """Practical threshold, delta = 0.1: the one-sided 95 % Clopper–Pearson upper bound on the error rate over 150
    seeded runs is <= delta."""
    env = parse_instance(instance)
    delta, runs = 0.1, 150
    errors = sum(not run(make_algorithm("lazy-tas"), env, delta, seed=s).correct for s in range(runs))
    assert beta_dist.ppf(0.95, errors + 1, runs - errors) <= delta
