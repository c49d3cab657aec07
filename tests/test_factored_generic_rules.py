"""The generic sampling rules on factored problems: those written with the problem's pulls and capabilities (Top-Two,
LinGame) run on factor graphs under the GLR stop; the rules that pick arms are refused with one clear error."""

from __future__ import annotations

import numpy as np
import pytest

from bandits.instances import parse_instance
from bandits.multiagent import FactoredBandit
from bandits.multiagent import instances as inst
from bandits.multiagent.problem import FactoredProblem
from bandits.pure_exploration import PureExploration
from bandits.pure_exploration.capabilities import MissingCapability
from bandits.pure_exploration.samplers.frank_wolfe import FrankWolfe
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign import FactorGraph


@pytest.mark.parametrize("seed", range(4))
def test_one_agent_gives_the_k_armed_top_two_run(seed):
    """With one agent a joint action is an arm, the exact best response is the K-armed challenger and the factored
    pulls are the K-armed ones: the same draws give the same run."""
    fg = FactorGraph([4], [((0,), np.array([1.0, 0.8, 0.5, 0.2]))])
    factored = run(make_algorithm("top-two"), FactoredBandit(fg), 0.1, seed=seed)
    karmed = run(make_algorithm("top-two"), parse_instance("gaussian:means=1/0.8/0.5/0.2"), 0.1, seed=seed)
    assert (factored.samples, factored.recommendation) == (karmed.samples, karmed.recommendation)


@pytest.mark.parametrize(("text", "agents"), [("top-two", 8), ("top-two:leader=ts,beta=ids", 8), ("lingame", 4)])
def test_generic_rules_identify_the_best_joint_action(text, agents):
    env = inst.line(agents, 3, seed=0, means="planted", gap=0.5)
    for seed in range(2):
        result = run(make_algorithm(text), env, 0.1, seed=seed)
        assert result.correct, (text, seed)
        assert result.samples == env.structure.n_factors * result.rounds  # every round observes every factor


def test_the_first_pass_observes_every_group_action():
    problem = FactoredProblem(FactorGraph.line(6, 3, seed=1))
    pulls = problem.initial_pulls()
    assert pulls.shape == (problem.n_arms,) and pulls.min() >= 1
    assert problem.time(pulls) * problem.structure.n_factors == pulls.sum()  # whole joint actions


def test_a_rule_that_picks_arms_is_refused_on_a_factored_problem():
    env = inst.line(4, 2, seed=0)
    with pytest.raises(MissingCapability, match=r"fws needs arm_pull .* which FactoredProblem does not offer"):
        run(PureExploration(FrankWolfe()), env, 0.1, seed=0)
