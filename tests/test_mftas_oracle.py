"""The paper's Oracle baseline (MF-TaS with theta_hat replaced by theta, Vannella et al. 2023 §7.1) and the U(0, M)
scale of the synthetic instances.

Known truths checked here: the Oracle's group frequencies converge to the product marginals of the MF allocation
at the TRUE a*, whatever the observations say (MF-TaS's follow the empirical best); the Oracle is delta-correct
on seeded runs; scaling the means by M scales Delta_min by M and T^MF by 1 / M^2.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import optdesign as od
from bandits.instances import parse_instance
from bandits.multiagent import MFTaS, MFTaSOracle, UniformSampling
from bandits.multiagent import instances as inst
from bandits.multiagent.sampling import glrt_problem
from bandits.pure_exploration.algorithm import as_algorithm
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign.errors import InvalidInputError
from optdesign.factored import MeanFieldModel


def product_marginals(env, local) -> np.ndarray:
    """wbar_{e,b} = prod_{i in S_e} v_{i,b_i}, flat in the layout of ``env.means``."""
    return np.concatenate([functools.reduce(np.multiply.outer, [local[i] for i in scope]).ravel()
                           for scope in env.structure.scopes])


def frequencies(algo, env, observed, rounds: int, seed: int = 0) -> np.ndarray:
    """N_{e,b}(t) / t after ``rounds`` rounds of ``algo`` started on ``env`` while ``observed`` draws the rewards."""
    rng = np.random.default_rng(seed)
    policy = as_algorithm(algo).start(env, 0.01, rng)
    total = np.zeros(env.n_arms, dtype=np.int64)
    while policy.rounds < rounds:
        counts = policy.next_batch(10**9)
        policy.observe(counts, observed.pull(counts, rng))
        total += counts
    return total / policy.rounds


def test_registry_names_the_oracle():
    algo = make_algorithm("mf-tas-oracle:glrt=conservative")
    assert isinstance(algo.sampler, MFTaSOracle) and algo.name == "mf-tas-oracle"
    assert algo.problem == glrt_problem("conservative")


def test_oracle_tracks_the_mean_field_allocation_at_the_true_theta():
    env = inst.ring(3, 3, seed=1)
    other = next(e for e in (inst.ring(3, 3, seed=s) for s in range(2, 20))
                 if not np.array_equal(e.best_action, env.best_action))
    model = MeanFieldModel.for_structure(env.structure)
    at_true = product_marginals(env, model.local_allocations(env.best_action))
    at_other = product_marginals(env, model.local_allocations(other.best_action))
    assert np.abs(at_true - at_other).max() > 0.05  # ten times the tolerance below
    # rewards drawn from ``other``: MF-TaS follows the empirical best, the Oracle keeps the true a*
    oracle = frequencies(MFTaSOracle(), env, other, 400_000)
    mf = frequencies(MFTaS(), env, other, 400_000)
    # at t = 4e5 every tracked count (wbar >= 0.09) is far above the forced-exploration level sqrt(t / |A0|) = 211,
    # and the sampling noise of a frequency is about 5e-4
    np.testing.assert_allclose(oracle, at_true, atol=0.005)
    np.testing.assert_allclose(mf, at_other, atol=0.005)
    # on its own environment MF-TaS tracks the same allocation as the Oracle
    np.testing.assert_allclose(frequencies(MFTaS(), env, env, 400_000), at_true, atol=0.005)


def test_oracle_stops_on_the_estimates_and_recommends_the_best_action():
    env = inst.ring(4, 3, seed=2, means="planted", gap=0.5)
    for seed in range(3):
        r = run(MFTaSOracle(), env, 0.05, seed=seed, trace=True)
        assert r.correct and r.stopped_by == "stopping_rule"
        assert r.samples == r.rounds * env.n_factors
        last = r.trace[-1]  # the policy's statistics after the last batch
        assert last["rounds"] == r.rounds and 0 <= last["forced_rounds"] < r.rounds
        assert last["t_mf"] == pytest.approx(od.mf_characteristic_time(env.fg).value, rel=1e-5)


@pytest.mark.slow
def test_oracle_is_delta_correct():
    env, delta, runs = inst.ring(3, 3, seed=3, scale=4.0), 0.1, 300
    results = [run(MFTaSOracle(), env, delta, seed=s) for s in range(runs)]
    errors = sum(not r.correct for r in results)
    print(f"\n{env.name}: Oracle errors {errors}/{runs} at delta = {delta}, "
          f"mean rounds {np.mean([r.rounds for r in results]):.0f}")
    assert all(r.stopped_by == "stopping_rule" for r in results)
    assert errors <= delta * runs


def test_scale_multiplies_the_means_gap_and_divides_t_mf_by_m_squared():
    base, scaled = inst.ring(4, 3, seed=5), inst.ring(4, 3, seed=5, scale=7.5)
    np.testing.assert_allclose(scaled.means, 7.5 * base.means)
    assert scaled.gap_min == pytest.approx(7.5 * base.gap_min)
    np.testing.assert_array_equal(scaled.best_action, base.best_action)
    t_base, t_scaled = od.mf_characteristic_time(base.fg).value, od.mf_characteristic_time(scaled.fg).value
    assert t_scaled == pytest.approx(t_base / 7.5**2, rel=1e-5)
    text = parse_instance("ring:N=4,K=3,seed=5,scale=7.5")
    np.testing.assert_allclose(text.means, scaled.means)
    assert "scale=7.5" in text.name and "scale" not in base.name
    np.testing.assert_allclose(inst.line(4, 3, seed=5, scale=2).means, 2 * inst.line(4, 3, seed=5).means)


@pytest.mark.parametrize("bad", [0, -1.0, float("inf"), True, "big"])
def test_scale_must_be_a_positive_number(bad):
    with pytest.raises(InvalidInputError, match="scale"):
        inst.ring(3, 3, scale=bad)


def test_scale_is_refused_for_planted_means():
    with pytest.raises(InvalidInputError, match="scale"):
        inst.ring(3, 3, means="planted", gap=0.5, scale=2.0)
    assert inst.ring(3, 3, means="planted", gap=0.5, scale=1.0).gap_min == pytest.approx(0.5)


def test_uniform_is_the_random_baseline():
    env = inst.ring(3, 3, seed=0)
    freq = frequencies(UniformSampling(), env, env, 90_000)
    np.testing.assert_allclose(freq, np.full(env.n_arms, 1 / 9), atol=0.01)


def test_mean_field_models_are_shared_by_structures_with_equal_scopes():
    a, b = inst.ring(4, 3, seed=0), inst.ring(4, 3, seed=1, scale=3.0)  # other means, other objects
    shared = MeanFieldModel.for_structure
    assert a.structure is not b.structure
    assert shared(a.structure) is shared(b.structure)
    assert shared(inst.line(4, 3, seed=0).structure) is not shared(a.structure)
    # the shared model gives each instance its own T^MF = t* / Delta_min^2
    for env in (a, b):
        assert shared(env.structure).solve().t / env.gap_min**2 == pytest.approx(
            od.mf_characteristic_time(env.fg).value, rel=1e-5)
