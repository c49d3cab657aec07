"""A problem written outside the package (``examples/unequal_variances.py``): every generic rule runs on it, and its
oracle and capabilities meet closed forms and the built-in K-armed problem where the two coincide."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

from bandits.pure_exploration import Gaussian, KArmedProblem
from bandits.pure_exploration.capabilities import CAPABILITIES, offered
from bandits.registry import ALGORITHMS, make_algorithm
from bandits.run import run

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from unequal_variances import UnequalGaussian, UnequalVariances

#: every built-in sampling rule that runs on K-armed instances
RULES = sorted(name for name, spec in ALGORITHMS.items() if spec.sampler and "karmed" in spec.kinds)


def test_the_example_offers_every_capability_of_the_karmed_rules():
    karmed = frozenset(CAPABILITIES) - {"design_inverse", "factor_graph"}
    assert offered(UnequalVariances) == offered(KArmedProblem) == karmed
    assert len(RULES) == 8


@pytest.mark.parametrize("rule", RULES)
def test_every_generic_rule_runs_on_the_example(rule):
    env = UnequalGaussian([1.0, 0.5, 0.2], [0.5, 1.0, 2.0])
    algorithm = dataclasses.replace(make_algorithm(rule), problem=UnequalVariances)
    results = [run(algorithm, env, 0.05, seed=seed, max_samples=200_000) for seed in range(3)]
    assert all(r.stopped_by == "stopping_rule" and r.correct and r.best == 0 for r in results)


def test_equal_variances_give_the_karmed_problem():
    """With one sigma the example is the built-in Gaussian problem: the same pieces, T*, w* and capabilities."""
    rng = np.random.default_rng(0)
    mine, theirs = UnequalVariances(np.full(4, 0.7)), KArmedProblem(4, Gaussian(0.7))
    for _ in range(5):
        mu, w = rng.normal(size=4), rng.uniform(0.1, 2.0, size=4)
        a, b = mine.pieces(mu, w), theirs.pieces(mu, w)
        np.testing.assert_allclose(a.values, b.values, rtol=1e-12)
        np.testing.assert_allclose(a.gradients, b.gradients, rtol=1e-12, atol=1e-15)
        leader = int(rng.integers(4))
        np.testing.assert_allclose(mine.pair_costs(mu, w, leader), theirs.pair_costs(mu, w, leader), rtol=1e-12)
        challenger = (leader + 1) % 4
        assert mine.pair_share(mu, w, leader, challenger) == pytest.approx(
            theirs.pair_share(mu, w, leader, challenger), rel=1e-12)
        np.testing.assert_allclose(mine.upper_indices(mu, w, 2.0), theirs.upper_indices(mu, w, 2.0), rtol=1e-12)
        ours, built_in = mine.optimism(mu, w, 1.5), theirs.optimism(mu, w, 1.5)
        np.testing.assert_allclose(ours.gains(w), built_in.gains(w), rtol=1e-12)
        np.testing.assert_allclose(ours.at_estimate(), built_in.at_estimate(), rtol=1e-12)
    mu = np.array([1.0, 0.6, 0.5, 0.1])
    ours, built_in = mine.oracle(mu), theirs.oracle(mu)
    assert ours.T == pytest.approx(built_in.T, rel=1e-6)
    np.testing.assert_allclose(ours.weights, built_in.weights, atol=1e-4)  # F is flat in w at its maximum


def test_two_arms_have_the_closed_form():
    """Two arms: w_k proportional to sigma_k and T* = 2 (sigma_1 + sigma_2)^2 / gap^2, certified."""
    sigmas, mu = np.array([0.5, 2.0]), np.array([1.0, 0.4])
    oracle = UnequalVariances(sigmas).oracle(mu)
    assert oracle.T == pytest.approx(2 * sigmas.sum() ** 2 / 0.6**2, rel=1e-6)
    np.testing.assert_allclose(oracle.weights, sigmas / sigmas.sum(), atol=1e-4)
    assert oracle.lower_bound <= oracle.T * (1 + 1e-12) and oracle.lower_bound >= oracle.T * (1 - 1e-4)
