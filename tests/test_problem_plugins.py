"""A sampling rule on a problem of one's own: the ``problem=package.module:Class`` option."""

from __future__ import annotations

import sys
import textwrap

import pytest
from typer.testing import CliRunner

from bandits.cli import app
from bandits.experiment import Experiment
from bandits.pure_exploration import PureExploration
from bandits.pure_exploration.problem import Problem
from bandits.registry import make_algorithm
from optdesign.errors import InvalidInputError

LINEAR = "soare:d=2,omega=0.5"
KARMED = "gaussian:means=1/0.6/0.3"


@pytest.fixture
def problems(tmp_path, monkeypatch):
    """A temporary module of problem classes on sys.path."""
    (tmp_path / "my_problems.py").write_text(textwrap.dedent("""
        from bandits.pure_exploration import KArmedProblem, LinearProblem

        class Same(LinearProblem):
            '''The linear problem, unchanged.'''

        class Stubborn(KArmedProblem):
            '''Always recommends the last arm, still asked which arm is best (so a run that uses it errs).'''

            def answer(self, mu):
                return self.n_arms - 1

            def correct(self, answer, mu):
                return answer == KArmedProblem.answer(self, mu)

        class Lenient(KArmedProblem):
            '''Any of the two best arms is a correct answer (a question with several correct answers).'''

            def correct(self, answer, mu):
                return answer in mu.argsort()[-2:]

        NOT_A_PROBLEM = 3
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("my_problems", None)


def test_an_unchanged_subclass_gives_the_same_run(problems):
    mine = Experiment("fws:problem=my_problems:Same", LINEAR, deltas=(0.1, 0.01), seed=4).execute()
    built_in = Experiment("fws", LINEAR, deltas=(0.1, 0.01), seed=4).execute()
    assert [(r["samples"], r["recommendation"]) for r in mine] == [(r["samples"], r["recommendation"])
                                                                    for r in built_in]
    assert mine[0]["config"]["problem"] == "my_problems:Same" and "problem" not in built_in[0]["config"]


def test_the_run_asks_the_plugged_problem(problems):
    for rule in ("round-robin", "track-and-stop", "top-two"):
        record = Experiment(f"{rule}:problem=my_problems:Stubborn", KARMED, deltas=(0.1,), seed=0).execute()[0]
        assert record["recommendation"] == "2" and not record["correct"]


def test_the_problem_scores_the_run(problems):
    """The runner judges a recommendation by the problem's own ``correct`` at the instance's true parameter."""
    from bandits.instances import parse_instance
    from bandits.run import run

    env = parse_instance(KARMED)
    strict = run(make_algorithm("round-robin:problem=my_problems:Stubborn"), env, 0.1, seed=0)
    # best: the problem's answer at the truth; correct: the problem's own judgement (the best arm is arm 0)
    assert (strict.best, strict.recommendation, strict.correct) == (2, 2, False)
    for seed in range(3):
        lenient = run(make_algorithm("round-robin:growth=0"), env, 0.5, seed=seed, max_samples=4)
        judged = run(make_algorithm("round-robin:growth=0,problem=my_problems:Lenient"), env, 0.5, seed=seed,
                     max_samples=4)
        assert judged.recommendation == lenient.recommendation
        assert judged.correct == (lenient.recommendation in (0, 1))


def test_a_class_given_directly():
    from bandits.pure_exploration import LinearProblem
    from bandits.pure_exploration.samplers.uniform import RoundRobin

    algorithm = PureExploration(RoundRobin(), problem=LinearProblem)
    assert algorithm.describe()["problem"] == "bandits.pure_exploration.linear:LinearProblem"
    with pytest.raises(InvalidInputError, match="not a Problem subclass"):
        PureExploration(RoundRobin(), problem=int)
    with pytest.raises(InvalidInputError, match="has kind ''"):
        PureExploration(RoundRobin(), problem=Problem)


def test_a_problem_in_a_study(problems):
    from bandits.studies import parse_study, read_entries, run_study

    doc = {"study": {"name": "own-problem", "seed": 1, "runs": 2, "delta": 0.1},
           "instances": [{"family": "gaussian", "means": "1/0.6/0.3"}],
           "algorithms": [{"name": "round-robin", "problem": "my_problems:Stubborn", "label": "stubborn"},
                          {"name": "round-robin"}]}
    report = run_study(parse_study(doc), problems / "res", progress=False)
    assert report.failed == 0
    records = [r for e in read_entries(problems / "res") for r in e["records"]]
    assert sorted(r["correct"] for r in records) == [False, False, True, True]


@pytest.mark.parametrize(("args", "message"), [
    (["fws:problem=bandits.pure_exploration.karmed:KArmedProblem", "-i", LINEAR], "runs on karmed instances"),
    (["fws:problem=my_problems:Stubborn", "-i", LINEAR], "runs on karmed instances"),
    (["fws:problem=my_problems:NOT_A_PROBLEM", "-i", LINEAR], "not a Problem subclass"),
    (["fws:problem=no_such_module_here:P", "-i", LINEAR], "does not import"),
    (["fws:problem=my_problems:Missing", "-i", LINEAR], "no attribute"),
    (["fws:problem=nocolon", "-i", LINEAR], "must read package.module:Name"),
])
def test_bad_problem_options_exit_2_with_one_line(problems, args, message):
    result = CliRunner().invoke(app, ["run", *args])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0]


def test_the_option_belongs_to_sampling_rules_only():
    with pytest.raises(InvalidInputError, match="problem"):
        make_algorithm("rage:problem=bandits.pure_exploration.linear:LinearProblem")
