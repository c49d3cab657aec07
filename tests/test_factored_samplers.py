"""The factored rules are sampling rules: one GLR stop, the run options of every sampler (threshold, growth, and
glrt, the factored problem's statistic), the ``factor_graph`` capability, and the deprecated spelling of the run
options given to the rule itself."""

from __future__ import annotations

import warnings

import pytest

from bandits.experiment import Experiment
from bandits.instances import parse_instance
from bandits.instances import resolve as resolve_target
from bandits.multiagent import instances as inst
from bandits.multiagent.algorithms import ExactTaS, MFTaS, UniformSampling
from bandits.multiagent.sampling import FactoredSampler, glrt_problem
from bandits.pure_exploration import PureExploration
from bandits.pure_exploration.capabilities import MissingCapability
from bandits.pure_exploration.stop import GLRStop
from bandits.registry import ALGORITHMS, make_algorithm
from bandits.run import run
from optdesign.errors import InvalidInputError

FACTORED_NAMES = [name for name, spec in ALGORITHMS.items() if spec.kinds == ("factored",)]


def test_every_factored_rule_is_a_sampler_that_plays_joint_actions():
    assert set(FACTORED_NAMES) >= {"mf-tas", "mf-tas-oracle", "tas", "uniform", "joint-top-two", "joint-fws",
                                   "joint-lingame", "gk-tas"}
    for name in FACTORED_NAMES:
        spec = ALGORITHMS[name]
        cls = resolve_target(spec.target)
        assert spec.sampler and issubclass(cls, FactoredSampler), name
        algorithm = make_algorithm(name)
        assert isinstance(algorithm, PureExploration) and algorithm.sampler.requires() == ("factor_graph",)


def test_a_factored_rule_on_k_armed_arms_names_the_missing_capability():
    env = parse_instance("gaussian:means=1/0.8/0.5")
    with pytest.raises(MissingCapability, match=r"mf-tas needs factor_graph.*FactoredProblem"):
        run(MFTaS(), env, 0.1, seed=0)


@pytest.mark.parametrize("seed", range(3))
def test_the_run_options_mean_the_same_in_every_spelling(seed):
    """threshold, glrt and growth after the name, in the stop, in Python, or (deprecated) given to the rule: the
    same run."""
    env = inst.line(4, 3, seed=2, means="planted", gap=0.5)
    named = run(make_algorithm("mf-tas:threshold=theory,glrt=conservative,growth=0.02"), env, 0.05, seed=seed)
    stop = run(make_algorithm("mf-tas:glrt=conservative", stop="glr:threshold=theory,growth=0.02"), env, 0.05,
               seed=seed)
    python = run(PureExploration(MFTaS(), GLRStop("theory"), 0.02, problem=glrt_problem("conservative")), env, 0.05,
                 seed=seed)
    with pytest.warns(DeprecationWarning, match=r"MFTaS\(threshold, glrt, growth=\.\.\.\)") as caught:
        legacy = MFTaS(threshold="theory", glrt="conservative", growth=0.02)
    assert caught[0].filename == __file__  # the warning points at the code that built the rule
    old = run(legacy, env, 0.05, seed=seed)
    runs = [named, stop, python, old]
    assert len({(r.rounds, r.recommendation, r.stopped_by) for r in runs}) == 1
    exact = run(make_algorithm("mf-tas:threshold=theory,growth=0.02"), env, 0.05, seed=seed)
    assert exact.rounds <= named.rounds  # the conservative statistic is a lower bound of the exact one


def test_the_conservative_statistic_is_the_problem_s():
    env = inst.line(4, 3, seed=2, means="planted", gap=0.5)
    algorithm = make_algorithm("uniform:glrt=conservative")
    problem = algorithm.question(env)
    assert problem is not None and problem.mode == "conservative"
    assert algorithm.describe()["problem"] == glrt_problem("conservative")
    assert "glrt" not in UniformSampling().describe()


def test_bad_run_options_are_refused():
    with pytest.raises(InvalidInputError, match="glrt"):
        make_algorithm("mf-tas:glrt=approx")
    with pytest.raises(InvalidInputError, match="not both"):
        make_algorithm("mf-tas:glrt=exact,problem=top-m:m=2")
    with pytest.raises(InvalidInputError, match="factored"):  # the factored problem's option asked of K-armed arms
        run(make_algorithm("top-two:glrt=conservative"), parse_instance("gaussian:means=1/0.5"), 0.1, seed=0)
    with pytest.raises(InvalidInputError, match="threshold"), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ExactTaS(threshold="kk21")


def test_rules_without_run_options_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        built = [make_algorithm(f"{name}:threshold=theory,growth=0.05,glrt=conservative") for name in FACTORED_NAMES]
    assert all(algorithm.sampler.run_options() == {} for algorithm in built)


def test_records_show_joint_actions_under_either_statistic():
    """The factored problem shows its answers (decoded joint actions), whichever statistic the run asks of it."""
    rows = [Experiment(text, "line:N=4,K=3,means=planted,gap=0.5", deltas=(0.1,), seed=0).execute()[0]
            for text in ("uniform", "uniform:glrt=conservative")]
    env = inst.line(4, 3, seed=0, means="planted", gap=0.5)
    best = "(" + ",".join(str(int(a)) for a in env.best_action) + ")"
    assert [row["best"] for row in rows] == [best, best]
    assert all(row["recommendation"].startswith("(") for row in rows)
