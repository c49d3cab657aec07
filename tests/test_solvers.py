"""Solver layer: licence probe (simulated licensed / unlicensed MOSEK) and the status policy."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

import optdesign as od
from optdesign.runtime import solvers


@pytest.fixture(autouse=True)
def _fresh_probe():
    solvers.mosek_usable.cache_clear()
    solvers.installed_solvers.cache_clear()
    yield
    solvers.mosek_usable.cache_clear()
    solvers.installed_solvers.cache_clear()


def _fake_mosek(monkeypatch, *, licensed: bool):
    """Pretend the mosek package is installed; licensed -> it solves (via CLARABEL), else it raises."""
    real_installed = cp.installed_solvers
    real_solve = cp.Problem.solve
    calls = []

    def installed():
        return [*real_installed(), "MOSEK"]

    def solve(self, *args, solver=None, **kwargs):
        if solver is None:
            raise AssertionError("optdesign must always pass solver= explicitly")
        calls.append(solver)
        if solver == "MOSEK":
            if not licensed:
                raise cp.error.SolverError("MOSEK: license file not found (simulated)")
            return real_solve(self, *args, solver="CLARABEL")
        return real_solve(self, *args, solver=solver, **kwargs)

    monkeypatch.setattr(cp, "installed_solvers", installed)
    monkeypatch.setattr(cp.Problem, "solve", solve)
    return calls


def test_unlicensed_mosek_is_skipped(monkeypatch):
    calls = _fake_mosek(monkeypatch, licensed=False)
    assert not solvers.mosek_usable()
    assert solvers.default_solver() == "CLARABEL"
    res = od.g_optimal(np.random.default_rng(0).standard_normal((8, 3)), method="cvxpy")
    assert res.solver == "CLARABEL"
    assert res.value == pytest.approx(3, rel=1e-4)
    assert calls.count("MOSEK") == 1  # the probe, once, then cached
    od.d_optimal(np.eye(3), method="cvxpy")
    assert calls.count("MOSEK") == 1
    with pytest.raises(od.InvalidInputError, match="MOSEK is not installed with a usable licence"):
        od.g_optimal(np.eye(3), method="cvxpy", solver="MOSEK")


def test_licensed_mosek_is_preferred(monkeypatch):
    calls = _fake_mosek(monkeypatch, licensed=True)
    assert solvers.mosek_usable()
    assert solvers.available_solvers()[:2] == ["MOSEK", "CLARABEL"]
    res = od.d_optimal(np.eye(4), method="cvxpy")
    assert res.solver == "MOSEK"
    assert calls[-1] == "MOSEK"


def test_forced_solver_scs():
    X = np.random.default_rng(1).standard_normal((10, 3))
    res = od.g_optimal(X, method="cvxpy", solver="SCS")
    assert res.solver == "SCS"
    assert res.value == pytest.approx(3, rel=1e-3)


def test_unknown_solver_is_a_clear_error():
    with pytest.raises(od.InvalidInputError, match="not installed"):
        od.g_optimal(np.eye(2), method="cvxpy", solver="NOSUCHSOLVER")


def test_infeasible_problem_raises_solver_error_naming_status():
    x = cp.Variable()
    problem = cp.Problem(cp.Minimize(x), [x >= 1, x <= 0])
    with pytest.raises(od.SolverError, match="CLARABEL: infeasible") as info:
        solvers.solve(problem, "CLARABEL")
    assert info.value.solver == "CLARABEL"


class _FakeProblem:
    """Minimal stand-in exposing what solvers.solve uses, with scripted statuses per solver."""

    def __init__(self, script):
        self.script, self.status, self.var = script, None, cp.Variable()

    def solve(self, solver=None, **kwargs):
        outcome = self.script[solver]
        if isinstance(outcome, Exception):
            raise outcome
        self.status = outcome
        self.var.value = {"CLARABEL": 1.0, "SCS": 2.0}[solver]

    def variables(self):
        return [self.var]


def test_inaccurate_falls_back_then_is_accepted_with_warning(monkeypatch):
    monkeypatch.setattr(solvers, "available_solvers", lambda: ["CLARABEL", "SCS"])
    p = _FakeProblem({"CLARABEL": cp.OPTIMAL_INACCURATE, "SCS": cp.OPTIMAL})
    assert solvers.solve(p).solver == "SCS"  # next solver did better
    p = _FakeProblem({"CLARABEL": cp.OPTIMAL_INACCURATE, "SCS": cp.INFEASIBLE})
    with pytest.warns(RuntimeWarning, match="optimal_inaccurate"):
        info = solvers.solve(p)
    assert (info.solver, info.status) == ("CLARABEL", cp.OPTIMAL_INACCURATE)
    assert p.var.value == 1.0  # the accepted solution is the inaccurate one, not SCS's
    p = _FakeProblem({"CLARABEL": RuntimeError("numerical trouble"), "SCS": cp.OPTIMAL})
    assert solvers.solve(p).solver == "SCS"
    p = _FakeProblem({"CLARABEL": RuntimeError("numerical trouble"), "SCS": cp.UNBOUNDED})
    with pytest.raises(od.SolverError, match="CLARABEL: RuntimeError: numerical trouble; SCS: unbounded"):
        solvers.solve(p)
