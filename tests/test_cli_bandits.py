"""`bandits run` end to end through typer's test runner."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from bandits.cli import app
from bandits.instances import soare
from bandits.linear import StaticAllocation
from bandits.run import run
from optdesign.errors import InvalidInputError

runner = CliRunner()


def test_run_json_equals_the_library():
    out = runner.invoke(app, ["run", "xy-oracle", "--instance", "soare:d=3,omega=0.1", "--delta", "0.05",
                              "--seed", "7", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)[0]
    direct = run(StaticAllocation("oracle"), soare(3, 0.1), 0.05, seed=7)
    assert data["samples"] == direct.samples and data["correct"] is True
    assert data["config"]["threshold"] == "soare"


def test_run_table_and_several_deltas():
    out = runner.invoke(app, ["run", "g-static:threshold=practical", "-i", "soare:d=2,omega=0.3",
                              "--delta", "0.1,0.01"])
    assert out.exit_code == 0, out.output
    assert "g-static on soare(d=2,omega=0.3)" in out.stdout and "0.01" in out.stdout


def test_budget_is_reported():
    out = runner.invoke(app, ["run", "xy-static", "-i", "soare:d=3,omega=0.01", "--max-samples", "1000", "--json"])
    assert json.loads(out.stdout)[0]["stopped_by"] == "budget"


def test_help_lists_algorithms_and_instances():
    out = runner.invoke(app, ["list"])
    assert "xy-adaptive" in out.stdout and "soare" in out.stdout and "rage" in out.stdout


def test_list_shows_every_question_with_the_kinds_its_classes_run_on():
    """The question table names, per kind, a class that loads and runs on that kind; ``bandits list`` shows each
    question with those kinds (the table is read by path, so a stale entry would show a kind the class refuses)."""
    from bandits.pure_exploration.algorithm import load_problem
    from bandits.pure_exploration.question_table import QUESTIONS

    out = runner.invoke(app, ["list"], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    section = out.stdout.split("Questions")[1]
    for name, question in QUESTIONS.items():
        assert f"{name}" in section and f"[{'|'.join(question.classes)}]" in section
        for kind in question.classes:
            cls, options = load_problem(name, kind)
            assert cls.kind == kind and options == question.preset


def test_list_starts_every_entry_text_in_one_column_even_after_a_long_name():
    """A name wider than the name column (``multiplicative-epsilon-good``) stands on its own line, its text below it
    in the column every other text starts in."""
    from bandits.cli.listing import NAME_WIDTH, catalogue

    lines = catalogue(width=100).splitlines()
    long = next(i for i, line in enumerate(lines) if line.strip() == "multiplicative-epsilon-good")
    assert lines[long + 1].startswith(" " * (NAME_WIDTH + 3) + "[") and len(lines[long + 1]) <= 100
    entries = [line for line in lines if line.startswith("  ") and line[2] != " " and " " in line.strip()]
    assert entries and all(line[NAME_WIDTH + 3] == "[" for line in entries)


def test_bad_input_is_one_line_with_status_2():
    cases = [
        (["run", "nope", "-i", "soare"], "unknown algorithm"),
        (["run", "g-static", "-i", "nope"], "valid names"),
        (["run", "g-static", "-i", "soare", "--delta", "1.5"], "delta"),
        (["run", "g-static", "-i", "soare", "--delta", "x"], "delta"),
        (["run", "g-static", "-i", "soare:d=0"], "d must be an integer"),
        (["run", "g-static", "-i", "soare:d=abc"], "d must be an integer"),
        (["run", "g-static", "-i", "soare:omega=x"], "option omega must be a number, got 'x'"),
        (["run", "g-static:rule=fast", "-i", "soare"], "rule must be one of"),
        (["run", "g-static", "-i", "soare:bogus=1"], "unknown option bogus; valid options: d, omega, sigma"),
        (["run", "g-static:bogus=1,zz=2", "-i", "soare"], "unknown options bogus, zz; valid options: design,"),
        (["run", "mf-tas", "-i", "ring:N=3,K=2,bogus=1"], "valid options: N, K"),
    ]
    for args, message in cases:
        out = runner.invoke(app, args)
        assert out.exit_code == 2, (args, out.output)
        assert message in out.output and out.output.count("\n") == 1, out.output


@pytest.mark.parametrize("args", [
    ["xy-adaptive", "-i", "soare:sigma=-1", "--delta", "0.05"],
    ["xy-oracle", "-i", "soare:sigma=-1", "--delta", "0.05"],
    ["g-static", "-i", "soare:sigma=-1", "--delta", "0.05"],
    ["fws", "-i", "many-arms:n=5,sigma=-0.5", "--delta", "0.05"],
    ["track-and-stop", "-i", "gaussian:means=1/0,sigma=-2", "--delta", "0.1"],
    ["mf-tas", "-i", "line:N=3,K=2,sigma=-1", "--delta", "0.1"],
    ["gbb-g-allocation", "-i", "gbb:sigma=-1", "--delta", "0.1"],
    ["grapl", "-i", "sbm:sigma=-1", "--budget", "100"],
])
def test_negative_noise_is_refused_in_one_line(args):
    """A negative sigma squares to a valid variance; every instance kind refuses it before running."""
    out = runner.invoke(app, ["run", *args])
    assert out.exit_code == 2, out.output
    assert "sigma must be a positive number" in out.output and out.output.count("\n") == 1, out.output


def test_thresholding_run_equals_the_library():
    from bandits.thresholding import APT, run_thresholding, sbm

    out = runner.invoke(app, ["run", "apt:init_pulls=1", "-i", "sbm:n=40", "--budget", "300", "--seed", "3",
                              "--free-warmup", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)[0]
    direct = run_thresholding(APT(init_pulls=1), sbm(n=40), 300, seed=3, count_warmup=False)
    assert data["samples"] == direct.samples == 380 and data["T"] == 300
    assert data["error"] == direct.error and data["loss"] == bool(direct.loss)
    assert data["superlevel_size"] == direct.superlevel.size
    table = runner.invoke(app, ["run", "grapl", "-i", "sbm:n=40", "-T", "200"])
    assert table.exit_code == 0 and "E(200)" in table.stdout and "|S_hat|" in table.stdout


def test_factored_recommendation_is_a_decoded_joint_action():
    out = runner.invoke(app, ["run", "uniform", "-i", "line:N=4,K=2,means=planted,gap=1", "--delta", "0.1",
                              "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)[0]
    from bandits.instances import parse_instance

    env = parse_instance("line:N=4,K=2,means=planted,gap=1")
    assert data["correct"] is True
    assert data["recommendation"] == data["best"] == "(" + ",".join(map(str, env.best_action)) + ")"
    assert data["samples"] == 3 * data["rounds"]  # a line of 4 agents has rho = 3 factors


def test_thresholding_bad_input():
    cases = [
        (["run", "grapl", "-i", "sbm:n=40"], "give the budget T"),
        (["run", "grapl", "-i", "sbm:n=40", "-T", "0"], "budget T must be an integer"),
        (["run", "apt", "-i", "sbm:n=40", "-T", "10"], "smaller than the warm-up"),
        (["run", "grapl:gamma=-1", "-i", "sbm:n=40", "-T", "10"], "gamma"),
        (["run", "grapl", "-i", "soare", "-T", "10"], "runs on thresholding instances"),
        (["run", "xy-static", "-i", "sbm", "-T", "10"], "runs on linear instances"),
    ]
    for args, message in cases:
        out = runner.invoke(app, args)
        assert out.exit_code == 2, (args, out.output)
        assert message in out.output and out.output.count("\n") == 1, out.output


@pytest.mark.parametrize(("args", "message"), [
    (["run", "fws", "-i", "soare:d=3", "--seed", "-1"], "seed must be an integer >= 0, got -1"),
    (["run", "fws", "-i", "soare:d=5,d=6"], "option 'd' of 'soare' is given twice"),
    (["run", "xy-adaptive:alpha=abc", "-i", "soare:d=3"], "option alpha must be a number, got 'abc'"),
    (["run", "fws", "-i", "soare:d=3,sigma=1e300"], "sigma must be a positive number whose square is a finite"),
    (["run", "fws", "-i", "soare:d=3,sigma=1e-300"], "sigma must be a positive number whose square is a finite"),
    (["run", "xy-adaptive", "-i", "soare:d=3", "--budget", "100"], "xy-adaptive is a fixed-confidence algorithm"),
    (["run", "apt", "-i", "sbm:n=20", "--budget", "100", "--delta", "0.1"], "it takes a budget T, not delta"),
    (["run", "fws", "-i", "soare:d=3,omega=1e-300"], "the items' values z^T theta: the best item is not unique"),
])
def test_options_that_were_ignored_or_ended_in_a_traceback(args, message):
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], result.output


def test_seeds_and_budgets_through_the_api():
    from bandits.experiment import Experiment
    from bandits.instances import parse_instance
    from bandits.registry import make_algorithm

    with pytest.raises(InvalidInputError, match="seed must be an integer >= 0"):
        run(make_algorithm("fws"), parse_instance("soare:d=2"), 0.1, seed=-1)
    with pytest.raises(InvalidInputError, match="not a budget"):
        Experiment("fws", "soare:d=2", deltas=(0.1,), budget=10).check()


@pytest.mark.parametrize(("package", "argv", "message"), [
    ("bandits", ["run"], ["error: missing argument 'algorithm", "(see 'bandits run --help')"]),
    ("bandits", ["run", "fws", "-i", "soare", "--seed", "abc"], ["error: invalid value for '--seed'"]),
    ("bandits", ["nosuch"], ["error: no such command 'nosuch'."]),
    ("optdesign", ["solve"], ["error: missing argument 'problem", "g-optimal, d-optimal"]),
])
def test_usage_errors_of_the_console_scripts_are_one_line(package, argv, message):
    """Click's wording, not its capitals (Typer releases spell the argument's name 'algorithm' or 'ALGORITHM')."""
    import subprocess
    import sys

    code = f"import sys; from {package}.cli import main; sys.argv = {[package, *argv]!r}; main()"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].lower().startswith(message[0]), out.stderr
    assert all(part in lines[0].lower() for part in message[1:]), out.stderr


def test_help_and_commands_keep_their_exit_status():
    import subprocess
    import sys

    run = "import sys; from bandits.cli import main; sys.argv = {!r}; main()"
    ok = subprocess.run([sys.executable, "-c", run.format(["bandits", "run", "--help"])], capture_output=True,
                        text=True, timeout=60)
    assert ok.returncode == 0 and "Usage: bandits run" in ok.stdout
    refused = subprocess.run([sys.executable, "-c", run.format(["bandits", "run", "fws", "-i", "soare:d=3",
                                                                 "--seed", "-1"])],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and refused.stderr.strip() == "error: seed must be an integer >= 0, got -1"


def test_a_long_fixed_budget_says_how_long_it_will_take(capsys):
    from bandits.cli.run import BudgetEstimate

    now = [0.0]
    estimate = BudgetEstimate(10**15, clock=lambda: now[0])
    now[0] = 1.0
    estimate(400, 400)  # before two seconds: nothing
    assert capsys.readouterr().err == ""
    now[0] = 2.0
    estimate(800, 800)  # 400 pulls per second: (1e15 - 800) / 400 s = 7.9e4 years
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "budget T = 1,000,000,000,000,000 pulls: about 7.9e+04 years more at 400" in err
    now[0] = 10.0
    estimate(4000, 4000)  # once only
    assert capsys.readouterr().err == ""
    short = BudgetEstimate(2000, clock=lambda: now[0])
    now[0] = 13.0
    short(1000, 1000)  # the rest takes 3 s: not worth a line
    assert capsys.readouterr().err == ""


def test_durations_read_in_the_largest_fitting_unit():
    from bandits.cli.run import _duration

    assert [_duration(s) for s in (45, 700, 3 * 3600, 5 * 86400, 3.156e7 * 2.5e6)] == [
        "45 s", "11.7 min", "3 h", "5 days", "2.5e+06 years"]
