"""Time limits and Ctrl-C: a solve cut short returns its best design with a certificate that still holds."""

from __future__ import annotations

import importlib
import json
import os
import signal
import warnings

import numpy as np
import pytest
from typer.testing import CliRunner

import optdesign as od
from optdesign.cli import app
from optdesign.errors import InvalidInputError
from optdesign.factored import FactorGraph
from optdesign.runtime import deadline

TOL = 1e-4


def _gaussian(n, d, seed=0):
    return np.random.default_rng(seed).standard_normal((n, d))


def _check_g_certificate(X, res):
    """Kiefer–Wolfowitz: the G-value of any design is >= d = the optimum, and the reported g_value is the G-value; the
    gap is G / d - 1 (for a D-optimal design, Atwood's bound)."""
    d = X.shape[1]
    assert res.g_value == pytest.approx(od.g_value(X, res.weights), rel=1e-9)
    assert d <= res.g_value * (1 + 1e-12) and res.lower_bound <= res.value
    assert res.gap == pytest.approx(res.g_value / d - 1, rel=1e-9)


@pytest.mark.parametrize("bad", [True, 0, -1.0, float("nan"), float("inf"), "1"])
def test_bad_time_limits_are_refused(bad):
    with pytest.raises(InvalidInputError, match="time_limit"):
        od.g_optimal(_gaussian(20, 3), time_limit=bad)


def test_time_limit_on_many_arms_returns_the_best_priced_design_with_a_warning():
    X = _gaussian(20_000, 15, 1)
    with pytest.warns(RuntimeWarning, match="time limit"):
        res = od.g_optimal(X, time_limit=1e-6)
    assert res.status == "not_converged" and res.method == "exchange" and res.gap > TOL
    _check_g_certificate(X, res)


def test_spent_budget_skips_the_cvxpy_fallback():
    """On a small instance (below the exchange's EXCHANGE_MIN_ARMS) ``auto`` would hand an uncertified Frank–Wolfe
    design to cvxpy; not once the budget is spent."""
    X = _gaussian(40, 6, 2)
    with pytest.warns(RuntimeWarning, match="time limit"):
        res = od.d_optimal(X, time_limit=1e-9)
    assert res.method == "frank-wolfe" and res.status == "not_converged"
    _check_g_certificate(X, res)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert od.d_optimal(X, time_limit=60).status == "optimal"


def test_stopped_minmax_design_brackets_the_optimum():
    X = _gaussian(300, 8, 3)
    Y = _gaussian(3_000, 8, 4)  # above the explicit-list limit: the working-set engine
    exact = od.xy_allocation(X, Y)
    assert exact.status == "optimal"
    with pytest.warns(RuntimeWarning):
        cut = od.xy_allocation(X, Y, time_limit=1e-9)
    assert cut.status == "not_converged"
    assert cut.value == pytest.approx(od.minmax_value(X, cut.weights, Y), rel=1e-9)
    assert cut.lower_bound <= exact.value * (1 + 1e-9) and exact.lower_bound <= cut.value * (1 + 1e-9)


def test_first_sigint_requests_a_stop_and_the_second_raises():
    X = _gaussian(20_000, 10, 5)
    with deadline.graceful_interrupt():
        os.kill(os.getpid(), signal.SIGINT)  # delivered to this (main) thread before the next bytecode
        assert deadline.stop_requested()
        with pytest.warns(RuntimeWarning, match="Ctrl-C"):
            res = od.g_optimal(X)
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
    assert not deadline.stop_requested()
    assert res.status == "interrupted" and res.method == "exchange"
    _check_g_certificate(X, res)


def test_interrupted_constraint_generation_keeps_its_bracket():
    fg = FactorGraph.ring(6, 3, seed=0)
    exact = od.characteristic_time(fg, method="enumerate")  # 728 rows: certified to 1e-4
    deadline.request_stop()
    try:
        cut = od.characteristic_time(fg, method="generate")
    finally:
        deadline.clear_stop()
    assert cut.status == "interrupted" and cut.extras["stopped"] == "interrupted"
    assert cut.value > exact.value * (1 + 1e-3)  # one iteration: not yet converged
    assert cut.lower_bound <= exact.value * (1 + 1e-4) and exact.lower_bound <= cut.value


def test_cli_time_limit_prints_the_best_design(tmp_path):
    np.save(tmp_path / "X.npy", _gaussian(20_000, 12, 6))
    out = CliRunner().invoke(app, ["solve", "g-optimal", "--arms", str(tmp_path / "X.npy"), "--time-limit", "1e-6",
                                   "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["status"] == "not_converged" and data["lower_bound"] == 12 and data["value"] >= 12


def test_cli_ctrl_c_prints_the_best_design_and_exits_130(tmp_path, monkeypatch):
    from optdesign.linear import g_optimal

    def interrupted_g_optimal(X, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # the user's first Ctrl-C, during the solve
        return g_optimal(X, **kwargs)

    # the command imports the designs from optdesign.linear when it runs (its help does not load them)
    monkeypatch.setattr(importlib.import_module("optdesign.linear"), "g_optimal", interrupted_g_optimal)
    np.save(tmp_path / "X.npy", _gaussian(20_000, 12, 7))
    out = CliRunner().invoke(app, ["solve", "g-optimal", "--arms", str(tmp_path / "X.npy")])
    assert out.exit_code == 130, out.output
    assert "interrupted" in out.output and "certified lower bound" in out.output
    assert not deadline.stop_requested()


def test_cli_refuses_a_misplaced_or_bad_time_limit(tmp_path):
    np.save(tmp_path / "X.npy", _gaussian(30, 3, 8))
    out = CliRunner().invoke(app, ["solve", "g-optimal", "--arms", str(tmp_path / "X.npy"), "--time-limit", "-1"])
    assert out.exit_code == 2 and "--time-limit" in out.output


def test_iterative_paths_report_their_progress():
    from optdesign.runtime.progress import reporting

    lines = []
    with reporting(lines.append):
        res = od.g_optimal(_gaussian(20_000, 10, 9))
    assert res.status == "optimal"
    passes = [line for line in lines if line.startswith("exchange: pricing pass")]
    assert passes and float(passes[-1].rsplit(" ", 1)[-1]) > 1e-4  # the last report precedes the certified stop


def test_conic_solves_get_the_time_left_and_refuse_a_spent_budget():
    import time

    import cvxpy as cp

    from optdesign.errors import SolverError
    from optdesign.runtime import solvers

    x = cp.Variable(3)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(x - np.arange(3.0))), [cp.sum(x) == 1])
    for name in ("CLARABEL", "SCS"):  # the time options are accepted by each solver
        with deadline.time_budget(60.0):
            assert solvers.solve(problem, name).status == "optimal"
    with deadline.time_budget(1e-6):
        time.sleep(1e-3)
        with pytest.raises(SolverError, match="time budget") as info:
            solvers.solve(problem)
    assert info.value.status == "time_limit"


def test_master_solve_cut_short_keeps_the_bracket(monkeypatch):
    """A master solve that fails once the time is up ends the run with the previous iterations' bracket."""
    from optdesign.errors import SolverError
    from optdesign.factored.exact.generated import CharTimeMaster

    fg = FactorGraph.ring(6, 3, seed=0)
    exact = od.characteristic_time(fg, method="enumerate")
    original, calls = CharTimeMaster.solve, []

    def solve_then_time_out(self, reference):
        calls.append(1)
        if len(calls) == 2:
            deadline.request_stop()  # the time is up: the solver stops without a solution
            raise SolverError("every solver failed: CLARABEL: user_limit", solver="CLARABEL", status="user_limit")
        return original(self, reference)

    monkeypatch.setattr(CharTimeMaster, "solve", solve_then_time_out)
    try:
        cut = od.characteristic_time(fg, method="generate", tol=1e-9)
    finally:
        deadline.clear_stop()
    assert cut.status == "interrupted" and cut.extras["iterations"] == 2
    assert cut.lower_bound <= exact.value * (1 + 1e-4) and exact.lower_bound <= cut.value


def test_budget_deadline_and_reporting_refuse_bad_arguments():
    from optdesign.runtime.progress import reporting

    for bad in ("1", True, float("nan")):
        with pytest.raises(InvalidInputError, match="seconds"):
            deadline.Deadline(bad)
        with pytest.raises(InvalidInputError, match="seconds"), deadline.time_budget(bad):
            pass
    with pytest.raises(InvalidInputError, match="callable"), reporting("not a function"):
        pass
    assert deadline.Deadline(0.0).expired() and not deadline.Deadline(None).expired()
