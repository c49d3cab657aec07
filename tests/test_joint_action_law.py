"""The law over joint actions of consistent clique tables (the distribution ancestral sampling draws from, with the
tables' factor marginals), and exact TaS tracking it where the joint actions can be listed, drawing beyond."""

from __future__ import annotations

import numpy as np
import pytest

import bandits.multiagent.tracking as tracking
from bandits.multiagent import ExactTaS
from bandits.multiagent import instances as inst
from bandits.run import run
from optdesign import FactorGraph, InstanceTooLargeError, InvalidInputError
from optdesign.factored import joint_action_probabilities, sample_joint_actions
from optdesign.factored.inference.marginals import consistent_clique_weights, marginal_maps


def random_tables(fg: FactorGraph, seed: int) -> np.ndarray:
    """Consistent clique tables of ``fg.plan()`` from random positive weights (zero rows included)."""
    rng = np.random.default_rng(seed)
    y = rng.random(fg.plan().n_rows) * (rng.random(fg.plan().n_rows) > 0.2)
    return consistent_clique_weights(fg.plan(), y, 1.0)


INSTANCES = [FactorGraph.ring(4, 3, seed=0), FactorGraph.star(4, [2, 3, 2, 4], seed=1), FactorGraph.line(5, 2, seed=2),
             FactorGraph.grid(2, 3, 2, seed=3)]


@pytest.mark.parametrize("fg", INSTANCES, ids=repr)
def test_the_law_is_a_distribution_with_the_tables_factor_marginals(fg):
    weights = random_tables(fg, 0)
    law = joint_action_probabilities(fg.plan(), weights)
    A = fg.joint_actions()
    codes = np.ravel_multi_index(tuple(A.T), fg.n_actions)
    assert law.shape == (A.shape[0],) and np.all(law >= 0) and law.sum() == pytest.approx(1.0, abs=1e-12)
    marginals = np.bincount(fg.group_indices(A).ravel(), weights=np.repeat(law[codes], fg.n_factors),
                            minlength=fg.abar)
    np.testing.assert_allclose(marginals, marginal_maps(fg.plan())[0] @ weights, atol=1e-12)


@pytest.mark.parametrize("fg", INSTANCES[:2], ids=repr)
def test_ancestral_draws_follow_the_law(fg):
    weights = random_tables(fg, 1)
    law = joint_action_probabilities(fg.plan(), weights)
    n = 200_000
    A = sample_joint_actions(fg.plan(), weights, n, np.random.default_rng(0))
    empirical = np.bincount(np.ravel_multi_index(tuple(A.T), fg.n_actions), minlength=law.size) / n
    # every joint action's frequency within 5 binomial standard errors of its probability
    assert np.all(np.abs(empirical - law) <= 5 * np.sqrt(law * (1 - law) / n) + 1e-12)


def test_the_law_refuses_bad_tables_and_too_many_joint_actions():
    fg = FactorGraph.ring(4, 3, seed=0)
    good = random_tables(fg, 0)
    for weights, word in ((good[:-1], "length"), (np.full(fg.plan().n_rows, np.nan), "NaN"), (-good - 1, "nonneg")):
        with pytest.raises(InvalidInputError, match=word):
            joint_action_probabilities(fg.plan(), weights)
    with pytest.raises(InstanceTooLargeError, match="joint action"):
        joint_action_probabilities(fg.plan(), good, max_joint_actions=80)
    with pytest.raises(InvalidInputError, match="EliminationPlan"):
        joint_action_probabilities(fg, good)
    with pytest.raises(InvalidInputError, match="EliminationPlan"):
        sample_joint_actions(fg, good, 3, np.random.default_rng(0))


def test_exact_tas_tracks_the_law_within_the_rounding_of_its_batches(monkeypatch):
    """With the allocation held after the first solve, C-tracking keeps every joint action's tracked plays within
    the number of joint actions of t P(a) after every batch (drawing i.i.d. would drift by sqrt(t P(a)))."""
    env = inst.line(3, 2, seed=2, means="planted", gap=0.1)  # thousands of rounds
    resolve = tracking.JointTracker.resolve
    plan = tracking.JointTracker.plan
    worst: list[float] = []

    def once(self, theta_hat):  # type: ignore[no-untyped-def]
        if self.solves == 0:
            resolve(self, theta_hat)

    def checked(self, counts, rounds):  # type: ignore[no-untyped-def]
        out = plan(self, counts, rounds)
        if self.law is not None:
            deviation = np.abs(self.joint_counts - self.joint_counts.sum() * self.law).max()
            worst.append(deviation / self.law.size)
        return out

    monkeypatch.setattr(tracking.JointTracker, "resolve", once)
    monkeypatch.setattr(tracking.JointTracker, "plan", checked)
    r = run(ExactTaS(), env, 0.05, seed=0)
    assert r.correct and len(worst) > 20
    assert max(worst) <= 1.0


def test_exact_tas_draws_past_the_tracked_size(monkeypatch):
    """Past TRACKED_JOINT_ACTIONS the rounds draw joint actions down the clique tree; the runs still stop right."""
    env = inst.line(3, 2, seed=2, means="planted", gap=0.3)
    monkeypatch.setattr(tracking, "TRACKED_JOINT_ACTIONS", 0)
    draws = []
    sample = tracking.sample_joint_actions

    def counted(*args):  # type: ignore[no-untyped-def]
        draws.append(args[2])
        return sample(*args)

    monkeypatch.setattr(tracking, "sample_joint_actions", counted)
    results = [run(ExactTaS(), env, 0.05, seed=s) for s in range(4)]
    assert all(r.correct for r in results) and sum(draws) > 0
