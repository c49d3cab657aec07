"""The kind table: every instance and algorithm names a known kind, and the kind decides the problem, the run and
the lower bound."""

from __future__ import annotations

import dataclasses

import pytest

from bandits.instances import INSTANCES, InstanceSpec, parse_instance, register
from bandits.kinds import KINDS, PURE_EXPLORATION, kind_of
from bandits.multiagent.problem import FactoredProblem
from bandits.pure_exploration import problem_of
from bandits.pure_exploration.karmed import KArmedProblem
from bandits.pure_exploration.linear import LinearProblem
from bandits.registry import ALGORITHMS, AlgorithmSpec
from bandits.studies.bounds import characteristic_time
from optdesign.errors import InvalidInputError


def test_every_instance_and_algorithm_names_a_known_kind():
    assert {spec.kind for spec in INSTANCES.values()} == set(KINDS)
    assert {k for spec in ALGORITHMS.values() for k in spec.kinds} == set(KINDS)
    assert set(PURE_EXPLORATION) == {"karmed", "linear", "heteroscedastic", "bounded", "factored"}
    assert [k for k in KINDS if kind_of(k).budgeted] == ["thresholding"]


@pytest.mark.parametrize("text, kind", [("gaussian:means=1/0.5", "karmed"), ("soare:d=2,omega=0.3", "linear"),
                                        ("line:N=2,K=2,seed=0", "factored"), ("gbb:d=2,m=2", "bilinear"),
                                        ("sbm:n=20", "thresholding")])
def test_environments_carry_the_kind_of_their_instance_name(text, kind):
    env = parse_instance(text)
    assert env.kind == kind == INSTANCES[text.partition(":")[0]].kind


def test_the_kind_builds_the_problem_from_what_a_learner_may_know():
    karmed = problem_of(parse_instance("bernoulli:means=0.5/0.4/0.3"))
    assert isinstance(karmed, KArmedProblem) and karmed.n_arms == 3 and karmed.family.name == "bernoulli"
    env = parse_instance("transductive:d=2,omega=0.2")
    linear = problem_of(env)
    assert isinstance(linear, LinearProblem) and (linear.Z == env.Z).all() and linear.sigma == env.sigma
    factored = problem_of(parse_instance("line:N=3,K=2,seed=0"))
    assert isinstance(factored, FactoredProblem) and factored.n_arms == 8 and factored.n_answers == 8
    assert not (factored.structure.means != 0).any()  # the learner's view: no true means
    with pytest.raises(InvalidInputError, match="no pure-exploration problem"):
        problem_of(parse_instance("gbb:d=2,m=2"))
    with pytest.raises(InvalidInputError, match="no pure-exploration problem"):
        problem_of(object())


def test_kinds_without_a_lower_bound_report_none():
    assert characteristic_time("gaussian:means=1/0")["value"] == pytest.approx(8.0)  # 8 sigma^2 / Delta^2
    entry = characteristic_time("sbm:n=20")
    assert entry["kind"] == "" and entry["value"] != entry["value"]  # NaN


def test_unknown_kinds_are_refused_where_they_are_declared():
    with pytest.raises(InvalidInputError, match="unknown instance kind 'nope'; valid kinds: karmed, linear"):
        kind_of("nope")
    with pytest.raises(InvalidInputError, match="unknown instance kind"):
        InstanceSpec("bandits.instances:soare", "nope", "x")
    with pytest.raises(InvalidInputError, match="unknown instance kind"):
        register("x-new", "bandits.instances:soare", "lineer", "x")
    with pytest.raises(InvalidInputError, match="unknown instance kind"):
        AlgorithmSpec("bandits.linear.rage:RAGE", ("linear", "nope"), "x")
    assert "x-new" not in INSTANCES


def test_a_factored_bound_not_settled_in_time_reports_the_certified_lower_end(monkeypatch):
    """T* not certified within the time limit: the lower end of its bracket is still a lower bound on the rounds."""
    import optdesign as od
    from bandits.multiagent import instances as inst
    from bandits.multiagent.problem import FactoredProblem

    env = inst.line(4, 2, seed=0)
    exact = od.characteristic_time(env.fg, solver="CLARABEL")
    unsettled = dataclasses.replace(exact, status="not_converged", lower_bound=0.9 * exact.value)
    monkeypatch.setattr(od, "characteristic_time", lambda *a, **k: unsettled)
    problem = FactoredProblem.of_environment(env)
    out = problem.lower_bound(problem.true_parameter(env))
    assert out["kind"] == "2 T* (certified lower end)"
    assert out["value"] == pytest.approx(2 * 0.9 * exact.value)
    monkeypatch.setattr(od, "characteristic_time", lambda *a, **k: dataclasses.replace(unsettled, lower_bound=None))
    assert problem.lower_bound(problem.true_parameter(env))["kind"] == "2 T^MF (reference)"
