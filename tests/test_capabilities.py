"""Capabilities instead of class tests: what each built-in problem offers, what each rule needs, and the one clear
error when a rule meets a problem without what it needs."""

from __future__ import annotations

import numpy as np
import pytest

from bandits.core.entries import load_object
from bandits.instances import parse_instance
from bandits.kinds import PURE_EXPLORATION, kind_of
from bandits.multiagent.problem import FactoredProblem
from bandits.pure_exploration import Bernoulli, Gaussian, KArmedProblem, LinearProblem
from bandits.pure_exploration.capabilities import CAPABILITIES, MissingCapability, offered
from bandits.pure_exploration.epsilon_good import EpsilonGoodProblem
from bandits.pure_exploration.policy import BUILT_IN_PROBLEMS
from bandits.registry import ALGORITHMS, make_algorithm
from bandits.run import run
from optdesign import FactorGraph
from optdesign.errors import InvalidInputError

#: the problem class of every pure-exploration kind (a factored instance builds its own)
PROBLEMS = {**BUILT_IN_PROBLEMS, "factored": FactoredProblem}


def test_what_the_built_in_problems_offer():
    assert offered(KArmedProblem) == {"arm_pull", "optimism", "pair_costs", "challenger", "penalised_challenger",
                                      "pair_share", "posterior_draws", "upper_indices", "fw_directions",
                                      "allocation_tracker"}
    assert offered(LinearProblem) == {"arm_pull", "optimism", "design_inverse", "challenger", "penalised_challenger",
                                      "posterior_draws", "fw_directions", "allocation_tracker"}
    # joint LinGame, joint Top-Two, joint FWS and exact TaS: the generic rules on the factored problem
    assert offered(FactoredProblem) == {"optimism", "challenger", "pair_share", "posterior_draws", "factor_graph",
                                        "fw_directions", "allocation_tracker"}
    assert offered(KArmedProblem(3, Bernoulli())) == offered(KArmedProblem(3, Gaussian()))
    assert set(CAPABILITIES) == offered(KArmedProblem) | offered(LinearProblem) | {"factor_graph"}


def test_each_kind_names_the_problem_class_it_builds():
    """``Kind.problem_class`` (what an experiment checks a rule's needs against) names the class that
    :func:`bandits.pure_exploration.policy.problem_of` builds for the kind, or the one its instances give."""
    for kind in PURE_EXPLORATION:
        assert load_object(kind_of(kind).problem_class, "problem class") is PROBLEMS[kind]


@pytest.mark.parametrize("name", sorted(n for n, spec in ALGORITHMS.items() if spec.sampler))
def test_a_rule_is_listed_on_exactly_the_kinds_whose_problem_offers_what_it_needs(name):
    """``bandits list`` shows the kinds a rule runs on; they are those whose problem offers the rule's needs (with
    its default options)."""
    needs = set(make_algorithm(name).sampler.requires())
    offering = {kind for kind in PURE_EXPLORATION if needs <= offered(PROBLEMS[kind])}
    assert set(ALGORITHMS[name].kinds) == offering


@pytest.mark.parametrize(("text", "instance", "need", "problem"), [
    ("top-two:beta=ids", "soare:d=2,omega=0.5", "pair_share", "LinearProblem"),
    ("top-two:leader=ucb", "soare:d=2,omega=0.5", "upper_indices", "LinearProblem"),
    ("fws:inverse_update=as-published", "gaussian:means=1/0.5/0.2", "design_inverse", "KArmedProblem"),
])
def test_a_missing_capability_is_one_error_naming_rule_and_problem(text, instance, need, problem):
    with pytest.raises(MissingCapability, match=f"{text.split(':')[0]} needs {need} .* which {problem} does not"):
        run(make_algorithm(text), parse_instance(instance), 0.1, seed=0)


def test_the_options_decide_the_needs():
    assert make_algorithm("top-two").sampler.requires() == ("challenger",)
    assert set(make_algorithm("top-two:leader=ts,beta=ids").sampler.requires()) == {
        "challenger", "posterior_draws", "pair_share"}
    assert make_algorithm("top-two:leader=ucb").sampler.requires() == ("challenger", "upper_indices")
    assert make_algorithm("top-two:challenger=tci").sampler.requires() == ("penalised_challenger",)
    assert make_algorithm("top-two:challenger=ts").sampler.requires() == ("challenger", "posterior_draws")
    assert make_algorithm("fws").sampler.requires() == ("arm_pull",)
    assert make_algorithm("fws:steps=batch").sampler.requires() == ("fw_directions",)  # factored problems too
    assert make_algorithm("lingame").sampler.requires() == ("optimism",)  # its pulls: the problem's (factored too)
    assert make_algorithm("track-and-stop").sampler.requires() == ("arm_pull",)  # D-tracking's forced exploration
    assert make_algorithm("track-and-stop:tracking=C").sampler.requires() == ("allocation_tracker",)


def test_a_problem_refuses_a_capability_it_lacks():
    problem = LinearProblem(np.eye(2))
    with pytest.raises(MissingCapability, match="LinearProblem does not offer pair_costs"):
        problem.pair_costs(np.zeros(2), np.ones(2), 0)
    assert issubclass(MissingCapability, InvalidInputError)


def test_an_unknown_capability_name_is_one_clear_error():
    from bandits.pure_exploration.requirements import require

    with pytest.raises(InvalidInputError, match="unknown capability 'optimsm'"):
        require(KArmedProblem(3), "my-rule", ("optimsm",))


@pytest.mark.parametrize("make", [
    lambda: KArmedProblem(3, Gaussian()),
    lambda: EpsilonGoodProblem(3, 0.1),
])
@pytest.mark.parametrize("call", [
    lambda p, mu, n: p.challenger(mu, n, 7),
    lambda p, mu, n: p.penalised_challenger(mu, n, -1),
    lambda p, mu, n: p.pair_costs(mu, n, 3),
    lambda p, mu, n: p.pair_share(mu, n, 0, 5),
])
def test_a_leader_or_challenger_out_of_range_is_one_clear_error(make, call):
    with pytest.raises(InvalidInputError, match=r"an index in \[0, 3\)"):
        call(make(), np.array([1.0, 0.5, 0.2]), np.ones(3))


def test_a_joint_action_code_out_of_range_is_one_clear_error():
    problem = FactoredProblem(FactorGraph.line(3, 2, seed=0))
    mu, counts = np.zeros(problem.n_arms), np.ones(problem.n_arms)
    for call in (lambda: problem.challenger(mu, counts, 8), lambda: problem.decode(-1),
                 lambda: problem.answer_pull(True)):
        with pytest.raises(InvalidInputError, match=r"an index in \[0, 8\)"):
            call()
