"""``optdesign solve`` says what its numbers are: a multi-agent bound that did not converge is an upper bound inside
its certified bracket (never "exact", never beside a solver value that reads as a contradiction), and ``--solver``
is the solver that produced the answer, or a note says why not."""

from __future__ import annotations

import io
import json
from dataclasses import replace

import numpy as np
import pytest
from rich.console import Console
from typer.testing import CliRunner

from optdesign.cli import app
from optdesign.cli.problems import SolveProblem
from optdesign.cli.solve_report import _factor_graph_summary
from optdesign.factored.graph.factor_graph import FactorGraph
from optdesign.result import CharTimeResult, RegretBoundResult

runner = CliRunner()


def render(table) -> str:
    console = Console(width=80, record=True, file=io.StringIO())
    console.print(table)
    return console.export_text()


def char_time(**changes) -> CharTimeResult:
    """The issue's result: constraint generation stopped by the time limit after one master solve (value 7262130.7,
    certified lower bound 405446.75, the working-set master's optimum 46498.87 below both)."""
    res = CharTimeResult(
        value=7262130.7, solver_value=46498.871, method="exact", m=0, best_action=np.zeros(3, dtype=int),
        gaps=np.array([0.007]), marginals=[], local_allocations=None, global_allocation=None, n_constraints=2892,
        n_variables=98110, width=2, status="not_converged", solver="CLARABEL", solve_time=10.5, compile_time=0.0,
        extras={"formulation": "constraint-generation", "iterations": 1, "working_set": 2892, "stopped": "time"},
        lower_bound=405446.75, gap=16.91)
    return replace(res, **changes)


@pytest.fixture(scope="module")
def line3():
    return FactorGraph.line(3, 3, seed=0)


def test_a_result_that_did_not_converge_is_an_upper_bound_in_its_bracket(line3):
    text = render(_factor_graph_summary(SolveProblem.char_time, char_time(), line3))
    assert "T* upper bound (not converged)" in text and "(exact)" not in text
    assert "405446.75 <= T* <= 7262130.7" in text and "1.69e+01" in text
    assert "46498.871" not in text and "solver value" not in text  # the relaxation's optimum: not a bound, left out
    assert "stopped" in text and "time" in text


def test_a_converged_result_is_exact_and_shows_the_solver_optimum(line3):
    res = char_time(status="optimal", value=2.5, solver_value=2.4999999, lower_bound=2.4999, gap=4e-5)
    text = render(_factor_graph_summary(SolveProblem.char_time, res, line3))
    assert "T* (exact)" in text and "upper bound" not in text
    assert "2.4999 <= T* <= 2.5" in text and "solver optimum" in text and "2.4999999" in text


def test_mean_field_and_regret_labels(line3):
    mf = char_time(method="mean-field", m=2, status="interrupted")
    assert "T^MF(2) upper bound (interrupted)" in render(_factor_graph_summary(SolveProblem.mf_char_time, mf, line3))
    regret = RegretBoundResult(value=3.0, solver_value=3.0, method="mf", m=1, best_action=np.zeros(3, dtype=int),
                               marginals=[], n_constraints=1, n_variables=1, status="optimal", solver="CLARABEL",
                               solve_time=0.1)
    text = render(_factor_graph_summary(SolveProblem.regret, regret, line3))
    assert "c^MF(1) (upper bound on c_theta)" in text and "bracket" not in text
    text = render(_factor_graph_summary(SolveProblem.regret, replace(regret, status="not_converged"), line3))
    assert "c^MF(1) upper bound (not converged)" in text


def test_a_time_limit_too_short_prints_the_bracket_not_an_exact_value(tmp_path):
    path = tmp_path / "ring.json"
    FactorGraph.ring(30, 5, seed=0).save(path)
    out = runner.invoke(app, ["solve", "char-time", "--instance", str(path), "--time-limit", "0.01",
                              "--solver", "SCS"], env={"COLUMNS": "80"})
    assert out.exit_code == 0, out.output
    assert "T* upper bound (not converged)" in out.stdout and "(exact)" not in out.stdout
    assert "<= T* <=" in out.stdout and "solver value" not in out.stdout
    assert "--solver SCS was not used" in out.stderr  # the closed-form bracket needs no solver
    data = json.loads(runner.invoke(app, ["solve", "char-time", "--instance", str(path), "--time-limit", "0.01",
                                          "--solver", "SCS", "--json"]).stdout)
    assert data["status"] == "not_converged" and "closed-form bracket" in data["note"]


@pytest.mark.parametrize("problem", ["g-optimal", "d-optimal", "a-optimal", "xy", "bilinear"])
def test_solver_forces_the_conic_model(problem, tmp_path):
    arms = tmp_path / "arms.csv"
    arms.write_text("1,0\n0,1\n1,1\n")
    out = runner.invoke(app, ["solve", problem, "--arms", str(arms), "--solver", "SCS", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["solver"] == "SCS" and data["method"] == "cvxpy" and "note" not in data
    assert "not used" not in out.stderr
    table = runner.invoke(app, ["solve", problem, "--arms", str(arms), "--solver", "SCS"]).stdout
    assert "SCS" in table and "cvxpy" in table


@pytest.mark.parametrize(("extra", "message"), [
    (["--method", "corank"], "--method corank does not use"),
    (["--runs", "4"], "uses no conic solver"),
])
def test_solver_with_an_option_that_ignores_it_is_refused(extra, message, tmp_path):
    arms = tmp_path / "arms.csv"
    arms.write_text("1,0\n0,1\n1,1\n")
    out = runner.invoke(app, ["solve", "d-optimal", "--arms", str(arms), "--solver", "SCS", *extra])
    assert out.exit_code == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --solver SCS") and message in lines[0]
