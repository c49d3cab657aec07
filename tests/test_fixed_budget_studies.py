"""Fixed-budget mode end to end: a study that runs, resumes to the uninterrupted result, gives the same runs whatever
the job count and summarises P(error) with Clopper-Pearson intervals; ``bandits run --budget``; and one clear error
for each bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binomtest
from typer.testing import CliRunner

from bandits.cli import app
from bandits.experiment import Experiment
from bandits.studies import load_study, plot_study, read_entries, run_study, summarize, write_tables
from optdesign.errors import InvalidInputError

STUDY = """
[study]
name = "tiny-budget"
seed = 11
runs = 5
mode = "fixed-budget"
budgets = [9, 40, 120]

[[instances]]
family = "bernoulli"
means = "0.6/0.45/0.3"

[[algorithms]]
name = "round-robin"
label = "uniform"

[[algorithms]]
name = "successive-rejects"
label = "SR"

[[algorithms]]
name = "sequential-halving"
label = "SH"

[[algorithms]]
name = "top-two"
label = "EB-TC"

[quick]
runs = 2
budgets = [9, 40]
"""


def write(tmp_path: Path, text: str = STUDY) -> Path:
    path = tmp_path / "budget.toml"
    path.write_text(text)
    return path


def outcomes(out: Path) -> dict[str, list[tuple]]:
    """Run key -> (T, samples, recommendation, correct, simple regret) of each record."""
    return {e["key"]: [(r["T"], r["samples"], r["recommendation"], r["correct"], r["simple_regret"])
                       for r in e["records"]] for e in read_entries(out)}


def test_a_fixed_budget_study_runs_resumes_and_summarises(tmp_path):
    path = write(tmp_path)
    first = run_study(load_study(path, runs=2), tmp_path / "res", progress=False)
    assert (first.done, first.failed) == (8, 0)
    again = run_study(load_study(path), tmp_path / "res", resume=True, progress=False)
    assert (again.done, again.failed, again.skipped) == (12, 0, 8)  # the stored runs are kept, not run again
    whole = run_study(load_study(path), tmp_path / "whole", progress=False)
    assert whole.done == 20 and outcomes(tmp_path / "res") == outcomes(tmp_path / "whole")
    entries = read_entries(tmp_path / "res")
    assert all([r["T"] for r in e["records"]] == [9, 40, 120] for e in entries)  # one record per (run, budget)
    assert all(r["mode"] == "fixed-budget" and r["delta"] is None for e in entries for r in e["records"])
    summary = write_tables(tmp_path / "res")
    assert len(summary) == 4 * 3 and set(summary["runs"]) == {5}
    for row in summary.itertuples():
        records = [r for e in entries if e["label"] == row.algorithm for r in e["records"] if r["T"] == row.T]
        errors = sum(not r["correct"] for r in records)
        interval = binomtest(errors, 5).proportion_ci(0.95, method="exact")
        assert (row.errors, row.error_rate) == (errors, errors / 5)
        assert (row.error_ci_low, row.error_ci_high) == pytest.approx((interval.low, interval.high))
        assert row.mean_regret == pytest.approx(np.mean([r["simple_regret"] for r in records]))
        assert row.mean_samples <= row.T
    assert plot_study(tmp_path / "res").is_file() and (tmp_path / "res" / "summary.csv").is_file()


def test_the_same_runs_whatever_the_job_count(tmp_path):
    study = load_study(write(tmp_path), quick=True)
    run_study(study, tmp_path / "one", jobs=1, progress=False)
    run_study(study, tmp_path / "two", jobs=2, progress=False)
    assert outcomes(tmp_path / "one") == outcomes(tmp_path / "two")
    assert summarize(tmp_path / "one")["error_rate"].tolist() == summarize(tmp_path / "two")["error_rate"].tolist()


def test_the_study_command_prints_the_fixed_budget_table(tmp_path):
    out = CliRunner().invoke(app, ["study", str(write(tmp_path)), "--quick", "--out", str(tmp_path / "res"),
                                   "--no-plot"])
    assert out.exit_code == 0, out.output
    assert "P(err)" in out.output and "regret" in out.output and "SR" in out.output


MODE = 'mode = "fixed-budget"\n'


@pytest.mark.parametrize(("old", "new", "message"), [
    (MODE, "", "budgets is an option of fixed-budget studies"),
    (MODE, 'mode = "fixed_budget"\n', "mode must be one of fixed-confidence, fixed-budget"),
    (MODE, MODE + "delta = 0.1\n", "delta in [study]: option(s) of fixed-confidence studies"),
    (MODE, MODE + 'stop = "glr"\n', "stop in [study]: option(s) of fixed-confidence studies"),
    (MODE, MODE + "max_samples = 1000\n", "max_samples in [study]: option(s) of fixed-confidence studies"),
    ("budgets = [9, 40, 120]\n", "", "a fixed-budget study needs budgets"),
    ("[9, 40, 120]", "[40, 9, 120]", "budgets must increase strictly"),
    ("[9, 40, 120]", "[9, 40, 40]", "budgets must increase strictly"),
    ("[9, 40, 120]", "[9, 40.5, 120]", "budgets must be integers"),
    ("[9, 40, 120]", "[]", "give at least one budget"),
    ("[9, 40, 120]", "[3, 40]", "SR on bernoulli:means=0.6/0.45/0.3: budget T = 3 is below the smallest budget 4 "
     "(successive-rejects on 3 arms)"),
    ("[9, 40, 120]", "[5, 40]", "below the smallest budget 6 (sequential-halving on 3 arms)"),
    ("[9, 40, 120]", "[2, 40]", "below the smallest budget 3 (round-robin on 3 arms)"),
    ('label = "SR"', 'problem = "top-m:m=2"\nlabel = "SR"', "successive-rejects recommends one arm"),
    ('label = "SH"', 'problem = "threshold:level=0.4"\nlabel = "SH"', "sequential-halving recommends one arm"),
    ('label = "EB-TC"', 'threshold = "kk21"\nlabel = "EB-TC"', "threshold is an option of the GLR stop"),
    ('label = "EB-TC"', 'stop = "glr"\nlabel = "EB-TC"', "stop: option(s) of fixed-confidence"),
    ('name = "round-robin"', 'name = "gk-tas"', "runs on factored instances"),
    ('family = "bernoulli"\nmeans = "0.6/0.45/0.3"', 'family = "soare"',
     "runs on karmed or heteroscedastic or bounded instances"),
])
def test_bad_fixed_budget_studies_fail_before_any_run(tmp_path, old, new, message):
    assert old in STUDY
    path = write(tmp_path, STUDY.replace(old, new))
    with pytest.raises(InvalidInputError) as err:
        load_study(path)
    assert message in str(err.value)
    out = CliRunner().invoke(app, ["study", str(path), "--out", str(tmp_path / "res"), "--no-plot"])
    assert out.exit_code == 2 and out.output.count("\n") == 1, out.output
    assert not (tmp_path / "res").exists()


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"algorithm": "successive-rejects", "deltas": (0.1,)}, "runs to a budget T known in advance: give budgets"),
    ({"algorithm": "xy-adaptive", "instance": "soare:d=2"}, "xy-adaptive is a fixed-confidence algorithm"),
    ({"algorithm": "top-two", "deltas": (0.1,)}, "delta: option(s) of fixed-confidence"),
    ({"algorithm": "top-two", "budget": 100}, "budget: option(s) of fixed-confidence"),
    ({"algorithm": "grapl", "instance": "sbm:n=20", "deltas": (0.1,)}, "delta: option(s) of fixed-confidence"),
    ({"algorithm": "apt", "instance": "sbm:n=20", "budgets": (50, 40)}, "budgets must increase strictly"),
    ({"algorithm": "joint-top-two", "instance": "line:N=3,K=2"}, "joint-top-two: fixed-budget runs count pulls"),
    ({"algorithm": "top-two", "instance": "line:N=3,K=2"}, "fixed-budget runs count pulls of single arms"),
    ({"algorithm": "successive-rejects", "stop": "glr"}, "has no stopping rule to replace"),
])
def test_bad_fixed_budget_runs_are_one_clear_error(kwargs, message):
    kwargs = {"instance": "bernoulli:means=0.5/0.4/0.3", "budgets": (50, 100), **kwargs}
    if "deltas" in kwargs and kwargs["algorithm"] == "successive-rejects":
        kwargs["budgets"] = ()
    with pytest.raises(InvalidInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Experiment(**kwargs).execute()


def test_bandits_run_with_budgets(tmp_path):
    runner = CliRunner()
    out = runner.invoke(app, ["run", "successive-rejects", "-i", "bernoulli:means=0.9/0.2/0.1", "--budget",
                              "30,100", "--seed", "2"])
    assert out.exit_code == 0, out.output
    assert "simple" in out.output and "100" in out.output
    out = runner.invoke(app, ["run", "top-two", "-i", "gaussian:means=1/0.5", "-T", "10,50", "--json"])
    assert out.exit_code == 0, out.output
    assert '"T": 10' in out.output and '"T": 50' in out.output and '"mode": "fixed-budget"' in out.output
    for args, message in ((["-T", "50,30"], "budgets must increase strictly"),
                          (["-T", "50,x"], "--budget must be integers"),
                          (["-T", "2"], "below the smallest budget 4"),
                          (["-T", "50", "--stop", "glr"], "has no stopping rule")):
        out = runner.invoke(app, ["run", "successive-rejects", "-i", "bernoulli:means=0.9/0.2/0.1", *args])
        assert out.exit_code == 2 and message in out.output and out.output.count("\n") == 1, (args, out.output)


THRESHOLDING = "sbm:n=40,seed=3"


@pytest.mark.parametrize("algorithm", ["apt", "grapl", "random-laplacian:order=permutation"])
@pytest.mark.parametrize("free", [False, True])
def test_a_thresholding_trajectory_read_at_every_budget_is_the_run_to_each_budget(algorithm, free):
    """Graph thresholding rules are anytime: the one trajectory of a fixed-budget run, read at T, is the run to T
    alone on the same seed (the same grid of estimates before T)."""
    from bandits.instances import parse_instance
    from bandits.registry import make_algorithm
    from bandits.thresholding import run_thresholding

    budgets = (200, 450, 900)  # APT's warm-up: 4 pulls of each of the 40 arms
    records = Experiment(algorithm, THRESHOLDING, budgets=budgets, seed=4, free_warmup=free).execute()
    assert [r["T"] for r in records] == list(budgets) and {r["mode"] for r in records} == {"fixed-budget"}
    env = parse_instance(THRESHOLDING)
    for i, r in enumerate(records):
        alone = run_thresholding(make_algorithm(algorithm), env, r["T"], 4, record=list(budgets[:i + 1]),
                                 count_warmup=not free)
        assert r["correct"] == (not alone.loss) and r["recommendation"] == f"|S|={alone.superlevel.size}"
        assert r["error"] == pytest.approx(alone.error, abs=0) and r["samples"] == alone.samples
        assert r["best"] == f"|S|={int(np.count_nonzero(env.means >= env.tau))}"


def test_a_fixed_budget_study_of_graph_thresholding_summarises_p_error_and_e_t(tmp_path):
    text = """
[study]
name = "thresholding-budgets"
seed = 5
runs = 6
mode = "fixed-budget"
budgets = [60, 300]
free_warmup = true

[[instances]]
family = "sbm"
n = 40
seed = 3

[[algorithms]]
name = "apt"

[[algorithms]]
name = "grapl"
"""
    out = tmp_path / "res"
    run_study(load_study(write(tmp_path, text)), out, jobs=1)
    summary = summarize(out)
    assert len(summary) == 4 and set(summary["T"]) == {60, 300}
    for row in summary.itertuples():
        ci = binomtest(row.errors, 6).proportion_ci(0.95, method="exact")
        assert row.error_rate == row.errors / 6 and row.error_ci_low == pytest.approx(ci.low)
        assert 0 <= row.mean_error <= 1 and np.isnan(row.mean_regret)
        assert row.mean_samples == row.T + (160 if row.algorithm == "apt" else 0)  # APT's free warm-up: 4 pulls each
    plot_study(out)
    assert (out / "plot.png").exists()


def test_bandits_run_reads_a_thresholding_run_at_every_budget():
    out = CliRunner().invoke(app, ["run", "apt", "-i", THRESHOLDING, "-T", "200,450", "--seed", "1"])
    assert out.exit_code == 0, out.output
    assert "E(T)" in out.output and "|S|=" in out.output and "450" in out.output


def test_a_warm_up_above_the_first_budget_fails_before_any_run(tmp_path):
    text = """
[study]
name = "warm"
runs = 2
mode = "fixed-budget"
budgets = [100, 300]

[[instances]]
family = "sbm"
n = 40

[[algorithms]]
name = "apt"
"""
    with pytest.raises(InvalidInputError, match="budget T = 100 is below the 160 pulls of its warm-up"):
        load_study(write(tmp_path, text))
    assert len(load_study(write(tmp_path, text.replace("runs = 2", "runs = 2\nfree_warmup = true"))).runs) == 2
