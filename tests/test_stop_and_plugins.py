"""Stopping as its own choice (--stop, WithStop), the kk21 threshold, and algorithms or thresholds from outside the
package (package.module:Class paths, the bandits.samplers entry points)."""

from __future__ import annotations

import shutil
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from bandits.cli import app
from bandits.core.entries import group, split_algorithm, split_options
from bandits.core.stopping import Kk21Threshold, gaussian_calibration
from bandits.experiment import Experiment
from bandits.pure_exploration import GLRStop, PureExploration
from bandits.pure_exploration.with_stop import WithStop, WithStopPolicy, parse_stop
from bandits.registry import ALGORITHMS, algorithm_spec, make_algorithm
from optdesign.errors import InvalidInputError

ROOT = Path(__file__).resolve().parents[1]
LINEAR = "soare:d=2,omega=0.5"
KARMED = "gaussian:means=1/0.6/0.3"
#: c in C_G(x) = x + log(2x) / 2 + c + o(1) (the minimiser lambda ~ 1 - 1 / (2x) in the definition)
C_LIMIT = 2.5 - 2 * np.log(4) + np.log(np.pi**2 / 6)


# --- the kk21 threshold -------------------------------------------------------------------------------------------

def _brute_calibration(x: float) -> float:
    """C_G(x) by a fine grid over lambda in (1/2, 1), independent of the implementation's parametrisation."""
    from scipy.special import zeta

    lam = np.linspace(0.5 + 1e-6, 1 - 1e-7, 400_001)
    g = 2 * lam - 2 * lam * np.log(4 * lam) + np.log(zeta(2 * lam)) - 0.5 * np.log1p(-lam)
    return float(np.min((g + x) / lam))


@pytest.mark.parametrize("x", [0.0, 0.5, 1.0, 3.0, 10.0, 50.0])
def test_calibration_is_the_minimum_over_lambda(x):
    assert gaussian_calibration(x) == pytest.approx(_brute_calibration(x), abs=1e-6)
    assert gaussian_calibration(x) <= _brute_calibration(x) + 1e-9


def test_calibration_asymptotics():
    # the expansion x + log(2x)/2 + c: the error decreases like log(x) / x
    errors = [gaussian_calibration(x) - x - 0.5 * np.log(2 * x) - C_LIMIT for x in (1e2, 1e4, 1e6, 1e8)]
    assert all(e > 0 for e in errors) and errors == sorted(errors, reverse=True)
    assert errors[1] < 1e-3 and errors[3] < 1e-6
    # the approximation x + log x quoted for it is conservative from moderate x on, and C_G(x) > x
    for x in (10.0, 100.0, 1e4):
        assert x < gaussian_calibration(x) < x + np.log(x)


def test_calibration_is_increasing_and_refuses_bad_input():
    values = [gaussian_calibration(x) for x in np.linspace(0, 20, 41)]
    assert np.all(np.diff(values) > 0)
    with pytest.raises(InvalidInputError):
        gaussian_calibration(-1.0)


def test_kk21_threshold_formula():
    beta = Kk21Threshold(5)
    x = 0.5 * np.log(4 / 0.01)
    assert beta(1000, 0.01) == pytest.approx(2 * gaussian_calibration(x) + 4 * np.log(4 + np.log(500)))
    assert beta(10**6, 0.01) > beta(1000, 0.01) > beta(1000, 0.1)
    assert beta(1000, 1e-10) > np.log(1e10)  # above log(1/delta), as a delta-correct threshold must be
    assert beta.describe() == {"threshold": "kk21", "n_arms": 5}


def test_kk21_on_karmed_only():
    r = Experiment("round-robin", KARMED, deltas=(0.05,), stop="glr:threshold=kk21").execute()[0]
    assert r["correct"] and r["stopped_by"] == "stopping_rule" and r["config"]["threshold"] == "kk21"
    practical = Experiment("round-robin", KARMED, deltas=(0.05,)).execute()[0]
    assert r["samples"] > practical["samples"]  # the proven threshold is the larger one
    with pytest.raises(InvalidInputError, match="for K-armed problems, not linear"):
        Experiment("round-robin", LINEAR, deltas=(0.05,), stop="glr:threshold=kk21").check()


# --- stop = glr on every registered fixed-confidence algorithm -------------------------------------------------

GLR_ALGORITHMS = sorted(name for name, spec in ALGORITHMS.items()
                        if {"karmed", "linear"} & set(spec.kinds) and not spec.budget)  # budget rules never stop


@pytest.mark.parametrize("name", GLR_ALGORITHMS)
def test_glr_stop_on_every_algorithm(name):
    instance = LINEAR if "linear" in ALGORITHMS[name].kinds else KARMED
    algo = make_algorithm(name, stop="glr:threshold=practical")
    assert isinstance(algo, (WithStop, PureExploration))
    record = Experiment(name, instance, deltas=(0.1,), seed=1, max_samples=200_000,
                        stop="glr:threshold=practical").execute()[0]
    assert record["stopped_by"] == "stopping_rule" and record["correct"]
    assert record["config"]["stop"] == "glr" and record["config"]["threshold"] == "practical"


def test_own_stop_is_the_default():
    assert make_algorithm("lin-tas", stop="own") == make_algorithm("lin-tas")
    assert not isinstance(make_algorithm("xy-adaptive", stop=None), WithStop)
    assert make_algorithm("round-robin", stop="glr:threshold=kk21,growth=0") == PureExploration(
        make_algorithm("round-robin").sampler, GLRStop("kk21"), growth=0.0)


def test_with_stop_records_the_algorithms_own_threshold():
    config = make_algorithm("lin-tas:threshold=soare", stop="glr").describe()
    assert config["own_threshold"] == "soare" and config["threshold"] == "practical" and config["stop"] == "glr"


class _Finished:
    """A policy whose elimination has ended after its first phase (one survivor): next_batch must not be asked."""

    solve_time = 0.0

    def __init__(self):
        self.active = np.array([0, 1, 2])
        self.observed = 0

    def next_batch(self, budget):
        assert self.active.size > 1
        return np.array([3, 1, 0])

    def observe(self, counts, sums):
        self.observed += int(counts.sum())
        self.active = np.array([0])

    def survivors(self):
        return self.active

    def recommend(self):
        return 0


def test_after_the_last_survivor_the_last_phase_repeats():
    from bandits.pure_exploration import KArmedProblem

    policy = WithStopPolicy(KArmedProblem(3), _Finished(), GLRStop(), growth=0.5)  # type: ignore[arg-type]
    first = policy.next_batch(100)
    policy.observe(first, np.zeros(3))
    assert policy.finished()
    for _ in range(10):  # the wrapper samples alone, in the last phase's proportions 3 : 1 : 0
        policy.observe(policy.next_batch(100), np.zeros(3))
    assert policy.inner.observed == 4 and policy.counts[2] == 0
    assert policy.counts[0] / policy.counts.sum() == pytest.approx(0.75, abs=0.05)


# --- plug-ins -------------------------------------------------------------------------------------------------------

@pytest.fixture
def plugin_dir(tmp_path, monkeypatch):
    """A temporary directory on sys.path with the guide's example and a few broken modules."""
    shutil.copy(ROOT / "examples" / "own_sampler.py", tmp_path / "my_rules.py")
    (tmp_path / "broken_rules.py").write_text("raise RuntimeError('boom')\n")
    (tmp_path / "my_thresholds.py").write_text(textwrap.dedent("""
        from dataclasses import dataclass
        from bandits.core.stopping import Threshold

        @dataclass(frozen=True)
        class Flat(Threshold):
            def __call__(self, t, delta, A=None):
                return 3.0

        NOT_A_THRESHOLD = 1
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in ("my_rules", "broken_rules", "my_thresholds"):
        sys.modules.pop(name, None)


def test_split_algorithm():
    assert split_algorithm("xy-oracle:variant=fiez") == ("xy-oracle", {"variant": "fiez"})
    assert split_algorithm("pkg.mod:Rule") == ("pkg.mod:Rule", {})
    assert split_algorithm("pkg.mod:Rule:a=1,b=x") == ("pkg.mod:Rule", {"a": 1, "b": "x"})


def test_a_value_in_parentheses_holds_commas():
    assert split_options("top-two:problem=(top-m:m=2,known=true),beta=0.5") == (
        "top-two", {"problem": "top-m:m=2,known=true", "beta": 0.5})
    assert split_algorithm("pkg.mod:Rule:problem=(a:b=1,c=(d:e=2,f=3))") == (
        "pkg.mod:Rule", {"problem": "a:b=1,c=(d:e=2,f=3)"})
    assert split_options("x:a=(1)-(2)") == ("x", {"a": "(1)-(2)"})  # not one group: kept as it reads
    assert split_options(f"x:a={group('b:c=1,d=2')},e={group(True)}") == ("x", {"a": "b:c=1,d=2", "e": True})
    for text in ("x:a=(1,b=2", "x:a=1),b=(2"):
        with pytest.raises(InvalidInputError, match="parentheses"):
            split_options(text)


def test_plugin_sampler_runs_with_options_and_stop(plugin_dir):
    algo = make_algorithm("my_rules:MostConfusing:explore=0.5,threshold=practical")
    assert isinstance(algo, PureExploration) and algo.name == "most-confusing"
    record = Experiment("my_rules:MostConfusing", LINEAR, deltas=(0.1,), stop="glr:threshold=theory").execute()[0]
    assert record["correct"] and record["config"]["threshold"] == "theory"
    assert algorithm_spec("my_rules:MostConfusing").origin == "path"


def test_plugin_threshold(plugin_dir):
    record = Experiment("round-robin", KARMED, deltas=(0.1,), stop="glr:threshold=my_thresholds:Flat").execute()[0]
    assert record["config"]["threshold"] == "flat"
    with pytest.raises(InvalidInputError, match="not a Threshold"):
        GLRStop("my_thresholds:NOT_A_THRESHOLD")


def test_plugin_in_a_study_beside_built_in_samplers(plugin_dir):
    from bandits.studies import parse_study, read_entries, run_study

    doc = {"study": {"name": "own", "seed": 1, "runs": 12, "delta": 0.1, "stop": "glr:threshold=kk21"},
           "instances": [{"family": "gaussian", "means": "1/0.6/0.3"}],
           "algorithms": [{"name": "my_rules:MostConfusing", "label": "mine"}, {"name": "round-robin"},
                          {"name": "oracle-weights", "stop": "own"}]}
    study = parse_study(doc)
    report = run_study(study, plugin_dir / "res", progress=False)
    assert report is not None
    entries = read_entries(plugin_dir / "res")
    records = [r for e in entries for r in e["records"]]
    assert len(records) == 36
    mine = [r for r in records if r["algorithm"] == "most-confusing"]
    assert len(mine) == 12 and all(r["stopped_by"] == "stopping_rule" for r in mine)
    assert sum(not r["correct"] for r in mine) <= 2  # delta = 0.1 on 12 runs
    assert {r["config"]["threshold"] for r in records if r["algorithm"] != "oracle-weights"} == {"kk21"}
    assert {r["config"]["threshold"] for r in records if r["algorithm"] == "oracle-weights"} == {"practical"}


def test_entry_point_plugins(plugin_dir, monkeypatch):
    eps = [metadata.EntryPoint("mine", "my_rules:MostConfusing", "bandits.samplers"),
           metadata.EntryPoint("gone", "broken_rules:Rule", "bandits.samplers")]
    monkeypatch.setattr(metadata, "entry_points", lambda group=None: [e for e in eps if e.group == group])
    record = Experiment("mine", KARMED, deltas=(0.1,)).execute()[0]
    assert record["algorithm"] == "most-confusing" and record["correct"]
    out = CliRunner().invoke(app, ["list"])
    assert out.exit_code == 0
    assert "mine" in out.output and "my_rules:MostConfusing" in out.output and "gone" in out.output
    assert "does not load" in out.output


# --- bad input: one line, exit status 2 ---------------------------------------------------------------------------

@pytest.mark.parametrize(("args", "message"), [
    (["round-robin", "-i", KARMED, "--stop", "bogus"], "unknown stopping rule"),
    (["round-robin", "-i", KARMED, "--stop", "glr:threshold=nope"], "unknown GLR threshold"),
    (["round-robin", "-i", KARMED, "--stop", "glr:limit=3"], "unknown option"),
    (["xy-adaptive", "-i", LINEAR, "--stop", "glr:threshold=kk21"], "K-armed problems"),
    (["apt", "-i", "gaussian", "--stop", "glr"], "thresholding"),
    (["no_such_module_here:Rule", "-i", KARMED], "does not import"),
    (["broken_rules:Rule", "-i", KARMED], "does not import"),
    (["my_rules:Missing", "-i", KARMED], "no attribute"),
    (["bandits.core.stopping:PracticalThreshold", "-i", KARMED], "not a Sampler or Algorithm"),
    (["no-such-name", "-i", KARMED], "unknown algorithm"),
    (["round-robin", "-i", KARMED, "--stop", "glr:threshold=my_thresholds:NOT_A_THRESHOLD"], "not a Threshold"),
])
def test_bad_input_exits_2_with_one_line(plugin_dir, args, message):
    result = CliRunner().invoke(app, ["run", *args])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0]


def test_bad_stop_in_a_study():
    from bandits.studies import parse_study

    base = {"study": {"runs": 1}, "instances": [{"family": "soare", "d": 2, "omega": 0.5}]}
    with pytest.raises(InvalidInputError, match="unknown stopping rule"):
        parse_study({**base, "algorithms": [{"name": "rage", "stop": "bogus"}]})
    with pytest.raises(InvalidInputError, match="must be a string"):
        parse_study({**base, "algorithms": [{"name": "rage", "stop": 1}]})
    with pytest.raises(InvalidInputError, match="K-armed problems"):
        parse_study({**base, "study": {"runs": 1, "stop": "glr:threshold=kk21"}, "algorithms": [{"name": "rage"}]})
    assert parse_stop("own") is None


def test_soare_threshold_under_the_glr_stop():
    from bandits.core.stopping import SoareThreshold
    from bandits.pure_exploration import LinearProblem

    record = Experiment("round-robin", LINEAR, deltas=(0.1,), stop="glr:threshold=soare").execute()[0]
    assert record["config"]["threshold"] == "soare" and record["correct"]
    practical = Experiment("round-robin", LINEAR, deltas=(0.1,)).execute()[0]
    assert record["samples"] > practical["samples"]  # 4 log(c' t^2 K^2 / delta) > log((1 + log t) / delta)
    problem = LinearProblem([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    assert GLRStop("soare").make(problem, np.ones(3, dtype=np.int64)) == SoareThreshold(3)
    with pytest.raises(InvalidInputError, match="for linear problems"):
        Experiment("round-robin", KARMED, deltas=(0.1,), stop="glr:threshold=soare").check()
