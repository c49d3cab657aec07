"""LinGame over joint actions against independent truths: sum-product against enumeration of every joint action, the
implicit AdaHedge against the K-armed AdaHedge over the enumerated joint actions, one agent against the K-armed
LinGame given the same observations, delta-correctness over seeded runs, a planted line, bad options."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import clopper_pearson_upper
from scipy.special import logsumexp

from bandits.instances import soare
from bandits.multiagent import FactoredBandit, JointLinGame
from bandits.multiagent import instances as inst
from bandits.multiagent.gibbs import FactoredAdaHedge
from bandits.pure_exploration import Gaussian, KArmedProblem, Observations
from bandits.pure_exploration.adahedge import AdaHedge
from bandits.pure_exploration.algorithm import as_algorithm
from bandits.pure_exploration.samplers import LinGame
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign import FactorGraph
from optdesign.errors import InvalidInputError
from optdesign.factored import SumProduct, maximiser_terms

GRAPHS = {
    "line 4, K = 3": lambda: FactorGraph.line(4, 3, seed=1),
    "ring 5, K = 2": lambda: FactorGraph.ring(5, 2, seed=2),
    "star 4, mixed K": lambda: FactorGraph.star(4, [3, 2, 3, 2], seed=3),
    "grid 2 x 3": lambda: FactorGraph.grid(2, 3, 2, seed=4),
    "line 4, mixed K": lambda: FactorGraph.line(4, [2, 3, 2, 3], seed=5),
}


def enumerate_groups(fg: FactorGraph) -> np.ndarray:
    """The flat group action of every joint action in every factor, shape (prod K_i, F)."""
    actions = np.array(np.unravel_index(np.arange(math.prod(fg.n_actions)), fg.n_actions)).T
    return fg.plan().group_indices(actions)


def marginals_of(p: np.ndarray, groups: np.ndarray, size: int) -> np.ndarray:
    out = np.zeros(size)
    np.add.at(out, groups.ravel(), np.repeat(p, groups.shape[1]))
    return out


@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("compiled", [False, True], ids=["numpy", "compiled"])
def test_sum_product_equals_enumeration(name, seed, compiled):
    fg = GRAPHS[name]()
    plan, groups = fg.plan(), enumerate_groups(fg)
    values = np.random.default_rng(seed).normal(size=plan.table_size) * 3
    total = values[groups].sum(axis=1)
    sp = SumProduct(plan, values, compiled=compiled)
    assert sp.compiled == compiled
    assert sp.log_partition == pytest.approx(logsumexp(total), rel=1e-12)
    p = np.exp(total - logsumexp(total))
    np.testing.assert_allclose(sp.marginals(), marginals_of(p, groups, plan.table_size), atol=1e-12)
    assert SumProduct(plan, values, reduce="max", compiled=compiled).log_partition == pytest.approx(total.max(),
                                                                                                    rel=1e-12)
    draws = plan.group_indices(sp.sample(np.random.default_rng(seed), 4000))
    frequencies = np.bincount(draws.ravel(), minlength=plan.table_size) / 4000
    np.testing.assert_allclose(frequencies, sp.marginals(), atol=0.04)  # 4000 draws: sd <= 0.008


@pytest.mark.parametrize("name", GRAPHS)
@pytest.mark.parametrize("compiled", [False, True], ids=["numpy", "compiled"])
def test_the_maximiser_terms_select_the_maximisers(name, compiled):
    """Integer tables tie many joint actions: uniform on the maximisers, and the max of another table over them."""
    fg = GRAPHS[name]()
    plan, groups = fg.plan(), enumerate_groups(fg)
    rng = np.random.default_rng(0)
    values, other = rng.integers(0, 2, size=plan.table_size).astype(float), rng.normal(size=plan.table_size)
    total = values[groups].sum(axis=1)
    best = total == total.max()
    terms = maximiser_terms(plan, values)
    sp = SumProduct(plan, np.zeros(plan.table_size), row_terms=terms, compiled=compiled)
    assert math.exp(sp.log_partition) == pytest.approx(best.sum(), rel=1e-12)
    np.testing.assert_allclose(sp.marginals(), marginals_of(best / best.sum(), groups, plan.table_size), atol=1e-12)
    top = SumProduct(plan, other, row_terms=terms, reduce="max", compiled=compiled).log_partition
    assert top == pytest.approx(other[groups].sum(axis=1)[best].max(), rel=1e-12)


@pytest.mark.parametrize("name", GRAPHS)
def test_implicit_adahedge_plays_the_marginals_of_adahedge_over_joint_actions(name):
    """The exactness of the learner: the same loss sequence (a constant loss first: the leaders' phase), the same
    marginals and the same summed mixability gap as the K-armed AdaHedge over every joint action."""
    fg = GRAPHS[name]()
    plan, groups = fg.plan(), enumerate_groups(fg)
    rng = np.random.default_rng(1)
    implicit, explicit = FactoredAdaHedge(plan), AdaHedge(groups.shape[0])
    for step in range(30):
        loss = np.zeros(plan.table_size) if step == 0 else rng.normal(size=plan.table_size) * rng.uniform(0.1, 10)
        np.testing.assert_allclose(implicit.weights(), marginals_of(explicit.weights(), groups, plan.table_size),
                                   atol=1e-9)
        implicit.update(loss)
        explicit.update(loss[groups].sum(axis=1))
        assert implicit.gap == pytest.approx(explicit.gap, rel=1e-9, abs=1e-12)
    assert implicit.gap > 0


def test_one_agent_makes_the_pulls_of_the_k_armed_lingame():
    """One agent, one unary factor: batch after batch, given the same observations, the same pulls as the K-armed
    LinGame (both learners start at the first tracked batch from its counts). The two runners' batching differs
    (the factored loop plays A0 first and batches on its grid), so the choices are compared from shared statistics."""
    for seed in range(4):
        rng = np.random.default_rng(seed)
        K = 5
        mu_true = rng.normal(size=K) * 0.5
        env = FactoredBandit(FactorGraph([K], [((0,), mu_true)]))
        policy = as_algorithm(JointLinGame(exploration="none", steps="round")).start(env, 0.1, rng)
        karmed = KArmedProblem(K, Gaussian(1.0))
        state = LinGame().start(karmed, None, rng)
        N = rng.integers(1, 6, size=K)
        sums = N * mu_true + np.sqrt(N) * rng.normal(size=K)
        policy.observe(N, sums)
        for rounds in (1, 3, 10, 25, 40, 60):
            mine = policy.state.plan(policy.observations(), rounds)
            theirs = state.plan(Observations(karmed, N, sums, sums / N), rounds)
            np.testing.assert_array_equal(mine, theirs)
            new = mine * mu_true + np.sqrt(mine) * rng.normal(size=K)
            N, sums = N + mine, sums + new
            policy.observe(mine, new)


def test_identifies_the_best_joint_action_on_a_planted_line_of_30_agents():
    env = inst.line(30, 3, seed=0, means="planted", gap=0.5)
    result = run(make_algorithm("joint-lingame"), env, 0.01, seed=1)
    assert result.correct and result.stopped_by == "stopping_rule"


@pytest.mark.parametrize("steps", ["round", pytest.param("batch", marks=pytest.mark.slow)])
def test_delta_correct_over_seeded_runs_on_a_small_line(steps):
    """delta = 0.2, the threshold of the experiments, 40 runs of a step rule (``round``, the default on this small
    line; ``batch`` with --runslow): the Clopper-Pearson upper bound is at most delta."""
    env = inst.line(3, 2, seed=0, means="planted", gap=0.4)
    delta, runs = 0.2, 40
    errors = sum(not run(JointLinGame(steps=steps), env, delta, seed=s).correct for s in range(runs))
    assert clopper_pearson_upper(errors, runs) <= delta


@pytest.mark.slow
@pytest.mark.parametrize("make", [lambda: inst.line(6, 3, seed=0, means="planted", gap=0.5),
                                  lambda: inst.ring(5, 3, seed=0, means="planted", gap=0.5)], ids=["line6", "ring5"])
def test_delta_correct_with_the_practical_threshold_over_many_runs(make):
    """delta = 0.1, 200 runs on planted means (the uniform tables of these graphs take 10^5 to 10^6 samples a run):
    the Clopper-Pearson upper bound on the error rate is at most delta."""
    env, delta, runs = make(), 0.1, 200
    errors = sum(not run(JointLinGame(), env, delta, seed=s).correct for s in range(runs))
    assert clopper_pearson_upper(errors, runs) <= delta


def test_bad_options_and_inputs_are_refused():
    for options in ({"steps": "sometimes"}, {"exploration": "fws"}, {"growth": -0.1}, {"glrt": "approx"}):
        with pytest.raises(InvalidInputError):
            JointLinGame(**options)
    with pytest.raises(InvalidInputError, match="factored"):
        run(JointLinGame(), soare(d=2), 0.1, seed=0)
    plan = FactorGraph.line(3, 2, seed=0).plan()
    with pytest.raises(InvalidInputError):
        SumProduct(plan, np.zeros(plan.table_size - 1))
    with pytest.raises(InvalidInputError):
        SumProduct(plan, np.full(plan.table_size, np.nan))
    with pytest.raises(InvalidInputError):
        SumProduct(plan, np.zeros(plan.table_size), reduce="min")
    with pytest.raises(InvalidInputError, match="compiled"):
        SumProduct(plan, np.zeros(plan.table_size), compiled="yes")
    with pytest.raises(InvalidInputError):
        SumProduct(plan, np.zeros(plan.table_size), row_terms=[np.zeros(1)])
    with pytest.raises(InvalidInputError):
        SumProduct(plan, np.zeros(plan.table_size), reduce="max").marginals()
    with pytest.raises(InvalidInputError):
        SumProduct(plan, np.full(plan.table_size, -np.inf)).marginals()
    with pytest.raises(InvalidInputError):
        SumProduct(plan, np.zeros(plan.table_size)).sample(np.random.default_rng(0), -1)
    with pytest.raises(InvalidInputError):
        FactoredAdaHedge("not a plan")
    learner = FactoredAdaHedge(plan)
    with pytest.raises(InvalidInputError):
        learner.update(np.zeros(plan.table_size + 1))
