"""``optdesign solve PROBLEM``: one linear design or one multi-agent lower bound, as a table or JSON.

A linear design problem reads arms (``--arms FILE``); a multi-agent problem (``char-time``, ``mf-char-time``,
``regret``) reads a factor-graph JSON (``--instance FILE``). The design and multi-agent modules are imported
inside the command, so the linear problems do not depend on the multi-agent ones and ``--help`` loads neither.
"""

from __future__ import annotations

import contextlib
import json
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import typer
from rich.console import Console
from rich.markup import escape

from ..errors import INTERRUPTED, InvalidInputError, exit_on_project_errors
from ..result import BilinearDesign, CharTimeResult, DesignResult, RegretBoundResult
from ..runtime.deadline import as_time_limit, graceful_interrupt, time_budget
from ..runtime.progress import reporting
from ..runtime.terminal import wrap
from ..vocabulary import CLASSICAL_METHODS
from ..vocabulary import DESIGN_METHODS as METHODS
from .designs import DesignOptions, PowerOptions, check_design_options, run_design
from .inputs import load_array, load_instance
from .problems import FACTOR_GRAPH_PROBLEMS, STANDALONE_PROBLEMS, RegretMethod, SolveProblem
from .solve_report import arm_labels, print_design_table, print_factor_graph_table

if TYPE_CHECKING:
    from ..exact_designs import ExactDesignResult
    from ..factored.graph.factor_graph import FactorGraph

__all__ = ["solve"]  # SolveProblem, RegretMethod and FACTOR_GRAPH_PROBLEMS live in .problems


@contextlib.contextmanager
def _working(message: str) -> Iterator[None]:
    """A transient spinner on stderr when it is a terminal; the first Ctrl-C asks the solve for its best result
    so far (:func:`optdesign.runtime.deadline.graceful_interrupt`), a second one aborts."""
    def first_interrupt() -> None:
        typer.echo("stopping: finishing the current step, then printing the best result so far "
                   "(Ctrl-C again aborts)", err=True)

    if not sys.stderr.isatty():
        with graceful_interrupt(first_interrupt):
            yield
        return
    title = f"{message} (Ctrl-C stops with the best result so far)"
    with graceful_interrupt(first_interrupt), Console(stderr=True).status(title, spinner="dots") as status:
        with reporting(lambda line: status.update(f"{title}\n  {escape(line)}")):
            yield


def _solve(problem: SolveProblem, X: np.ndarray, Z: np.ndarray | None, theta: np.ndarray | None, solver: str | None,
           method: str, tol: float, time_limit: float | None) -> DesignResult | BilinearDesign:
    """xy, xy-oracle, transductive or bilinear (the designs on candidates alone are :mod:`.designs`)."""
    from ..linear import bilinear_design, transductive, xy_allocation, xy_oracle

    kw: dict[str, Any] = {"solver": solver, "method": method, "tol": tol, "time_limit": time_limit}
    if problem is SolveProblem.xy:
        return xy_allocation(X, Z, **kw)
    if problem is SolveProblem.xy_oracle:
        if theta is None:
            raise InvalidInputError("xy-oracle needs --theta FILE")
        return xy_oracle(X, theta, **kw)
    if problem is SolveProblem.transductive:
        if Z is None:
            raise InvalidInputError("transductive needs --items FILE (the item set Z)")
        return transductive(X, Z, theta, **kw)
    return bilinear_design(X, **kw)


def _solve_factor_graph(problem: SolveProblem, fg: FactorGraph, *, m: int, regret_method: RegretMethod,
                        solver: str | None, time_limit: float | None) -> CharTimeResult | RegretBoundResult:
    """T* (char-time), T^MF(m) (mf-char-time) or the Graves–Lai constant (regret) of ``fg``."""
    limit: dict[str, Any] = {} if time_limit is None else {"time_limit": time_limit}
    if problem is SolveProblem.regret:
        from ..factored.regret.lower_bound import regret_lower_bound

        # exact: generated beyond 20,000 joint actions
        return regret_lower_bound(fg, regret_method.value, solver=solver, m=m, **limit)
    from ..factored import characteristic_time, mf_characteristic_time

    if problem is SolveProblem.mf_char_time:
        return mf_characteristic_time(fg, m, solver=solver, **limit)
    return characteristic_time(fg, solver=solver, **limit)  # enumerated when small, by constraint generation beyond


def _check_solve_options(problem: SolveProblem, *, arms: Path | None, items: Path | None, theta: Path | None,
                         instance: Path | None, method: str, m: int, regret_method: RegretMethod | None,
                         time_limit: float | None, solver: str | None, design: DesignOptions) -> None:
    """Each option belongs to one family of problems; a misplaced one is an error, not silently ignored (--solver
    with a linear problem: only where a cvxpy model is solved)."""
    as_time_limit(time_limit, "--time-limit")
    check_design_options(problem, design, arms=arms, method=method)
    if solver is not None and problem not in FACTOR_GRAPH_PROBLEMS:
        if design.runs is not None:
            raise InvalidInputError(f"--solver {solver}: --runs makes an exact design by exchange, which uses no "
                                    "conic solver")
        if method not in ("auto", "cvxpy"):
            raise InvalidInputError(f"--solver {solver} picks the conic solver of the cvxpy model, which --method "
                                    f"{method} does not use: drop one of them (--solver alone solves the cvxpy model)")
    if problem in FACTOR_GRAPH_PROBLEMS:
        if instance is None:
            raise InvalidInputError(
                f"{problem.value} needs --instance FILE.json (a factor graph saved by FactorGraph.save)"
            )
        for name, value in (("arms", arms), ("items", items), ("theta", theta)):
            if value is not None:
                raise InvalidInputError(f"--{name} is only used by the linear design problems, not by {problem.value}")
        if method != "auto":
            raise InvalidInputError(
                "--method selects the linear-design algorithm; for regret use --regret-method exact|mf"
            )
        if regret_method is not None and problem is not SolveProblem.regret:
            raise InvalidInputError(f"--regret-method only applies to regret, not to {problem.value}")
        uses_m = problem is SolveProblem.mf_char_time or (
            problem is SolveProblem.regret and regret_method is RegretMethod.mf)
        if m != 1 and not uses_m:
            raise InvalidInputError("--m only applies to mf-char-time and to regret --regret-method mf")
        return
    if problem in STANDALONE_PROBLEMS:
        for name, value in (("items", items), ("theta", theta)):
            if value is not None:
                raise InvalidInputError(f"--{name} only applies to xy, xy-oracle and transductive, "
                                        f"not to {problem.value}")
    elif arms is None:
        raise InvalidInputError(f"{problem.value} needs --arms FILE (the arms X: K x d, CSV or .npy, one arm per row)")
    if instance is not None:
        raise InvalidInputError(f"--instance is only used by {', '.join(p.value for p in FACTOR_GRAPH_PROBLEMS)}")
    if m != 1 or regret_method is not None:
        raise InvalidInputError(f"--m and --regret-method do not apply to {problem.value}")


# the options of ``solve``, one family after another (_check_solve_options says which problems take which)
ARMS = typer.Option(None, "--arms", help="Arms X: K x d, CSV or .npy (one arm per row). Required for the linear "
                    "problems, except that the designs on candidates alone may take --formula instead.")
ITEMS = typer.Option(None, "--items", help="Item set Z (transductive) or directions Y (xy).")
THETA = typer.Option(None, "--theta", help="Parameter theta (length d), CSV or .npy.")
INSTANCE = typer.Option(None, "--instance", help="Factor-graph JSON (FactorGraph.save). Required for char-time, "
                        "mf-char-time, regret.")
M = typer.Option(1, "--m", help="m of T^MF(m) (mf-char-time) and of regret --regret-method mf.")
REGRET_METHOD = typer.Option(None, "--regret-method", help="regret only: exact (one row per joint action, by "
                             "constraint generation beyond 20,000; default) or mf (FCR, an upper bound on c_theta "
                             "of polynomial size).")
FORMULA = typer.Option(None, "--formula", help="Candidates from a model formula, e.g. \"~ x1 + x2 + x1:x2 + "
                       "I(x1**2)\", over the full factorial grid of the --factor levels (instead of --arms).")
FACTOR = typer.Option(None, "--factor", help="A factor of --formula (repeat for each): NAME=LOW:HIGH:POINTS "
                      "(equally spaced levels) or NAME=L1,L2,... (levels; labels make it categorical).")
C = typer.Option(None, "--c", help="c-optimal: the vector c, as numbers separated by commas or a file (CSV, .npy).")
SUBSET = typer.Option(None, "--subset", help="ds-optimal: the parameters of interest (columns, from 0), e.g. 0,1.")
REGION = typer.Option(None, "--region", help="i-optimal: points of the region (CSV, .npy; model rows, or factor "
                      "settings with --formula); the candidates, uniformly, by default.")
CONSTRAINTS = typer.Option(None, "--constraints", help="g-, d-, a-, i-, c-, e-, ds-optimal: linear constraints "
                           "A w <= b, .npz (arrays A, b) or .json/.toml (budget, caps, augment, group_totals, "
                           "linear).")
RUNS = typer.Option(None, "--runs", help="d-, a-, i-optimal: an exact N-run design (exchange; efficiency certified "
                    "against the approximate optimum); with --fixed, the number of new runs.")
FIXED = typer.Option(None, "--fixed", help="With --runs: runs already made, kept while N new ones are added (an "
                     "augmented design): one count per candidate (a row or column of K numbers), one run per row "
                     "(rows of --arms), or with --formula a CSV whose header names the factors, one setting per row.")
POWER = typer.Option(False, "--power", help="Designs on candidates: also the power of each term's F test at the "
                     "design's runs (one test per column, or per --formula term, and the whole model).")
EFFECTS = typer.Option(None, "--effects", help="--power: the anticipated coefficients, one per column (numbers "
                       "separated by commas, or a file), or one number for every coefficient but the intercept. "
                       "Default: effect size 2 (coefficients +-1, as R's skpr).")
ALPHA = typer.Option(None, "--alpha", help="--power: the level of the tests (default 0.05).")
SIGMA = typer.Option(None, "--sigma", help="--power: the noise standard deviation (default 1).")
POWER_RUNS = typer.Option(None, "--power-runs", help="--power of an approximate design: round it to N runs "
                          "(efficient apportionment) first.")
PLOT = typer.Option(None, "--plot", help="Designs on candidates: write the fraction-of-design-space plot here.")
DIAGNOSTICS = typer.Option(False, "--diagnostics", help="Designs on candidates: also the efficiency under every "
                           "criterion (each criterion's optimum solved and certified: slower on large sets).")
SOLVER = typer.Option(None, "--solver", help="Force a conic solver (CLARABEL, SCS, MOSEK). A linear problem then "
                      "solves its cvxpy model with it (--method cvxpy; the fast paths use no conic solver); a "
                      "multi-agent one uses it for its conic programs, and a note on stderr says when the result "
                      "came from elsewhere (a closed-form bracket, the orbit search).")
METHOD = typer.Option("auto", "--method", help=f"Linear problems only; one of: {', '.join(METHODS)} (g-, d-optimal "
                      f"and the min-max designs), {', '.join(CLASSICAL_METHODS)} (a-, i-, c-, e-, ds-optimal).")
TOL = typer.Option(1e-4, "--tol", help="Linear problems: certified relative gap for the fast path.")
TIME_LIMIT = typer.Option(None, "--time-limit", help="Seconds for the command, reading the input included; past "
                          "them the best certified result so far is printed (status not_converged). Every problem; "
                          "the multi-agent ones hold it within a few seconds at any size.")
AS_JSON = typer.Option(False, "--json", help="Print JSON ({\"problem\": ..., **result}) instead of a table.")


@exit_on_project_errors
def solve(
    problem: SolveProblem = typer.Argument(
        # the choices are listed in the command's help, which every Typer release shows (as a list of choices they
        # would break mid-word at 80 columns)
        ..., show_choices=False, metavar="PROBLEM", help="The problem (listed above)."),
    arms: Path | None = ARMS, items: Path | None = ITEMS, theta: Path | None = THETA,
    instance: Path | None = INSTANCE, m: int = M, regret_method: RegretMethod | None = REGRET_METHOD,
    formula: str | None = FORMULA, factor: list[str] | None = FACTOR, c: str | None = C, subset: str | None = SUBSET,
    region: Path | None = REGION, constraints: Path | None = CONSTRAINTS, runs: int | None = RUNS,
    plot: Path | None = PLOT, diagnostics: bool = DIAGNOSTICS, fixed: Path | None = FIXED, power: bool = POWER,
    effects: str | None = EFFECTS, alpha: float | None = ALPHA, sigma: float | None = SIGMA,
    power_runs: int | None = POWER_RUNS, solver: str | None = SOLVER, method: str = METHOD,
    tol: float = TOL, time_limit: float | None = TIME_LIMIT, as_json: bool = AS_JSON,
) -> None:
    """Solve a linear design or a multi-agent lower bound and print its value, allocation and certificate.

    PROBLEM is a linear design: g-optimal, d-optimal, a-optimal, i-optimal, c-optimal, e-optimal, ds-optimal (the
    designs on candidates alone: --arms or --formula), xy, xy-oracle, transductive, bilinear (--arms); or a
    multi-agent bound (--instance): char-time (exact T*), mf-char-time (mean-field T^MF(m)), regret (Graves–Lai
    constant c_theta).

    The designs on candidates alone (g-, d-, a-, i-, c-, e-, ds-optimal) read --arms or build the candidates from
    --formula and --factor; with --diagnostics, the efficiency under every criterion follows, certified, and with
    --power the power of each term's F test at the design's runs. --runs N gives an exact design, --fixed FILE
    keeps runs already made and adds N new ones.
    Characteristic times follow the MF-TaS convention: expected stopping time >= 2 T kl(delta, 1-delta) (unit-variance
    Gaussian feedback); exact T* enumerates up to 20,000 joint actions and generates the binding ones beyond. On a
    terminal a spinner shows while solving. The first Ctrl-C stops the iterative solves (designs, char-time, regret)
    and prints the best certified result so far, then exits with status 130; a second Ctrl-C aborts at once.
    """
    design = DesignOptions(formula, factor or [], c, subset, region, constraints, runs, plot, diagnostics, fixed,
                           PowerOptions(power, effects, alpha, sigma, power_runs))
    _check_solve_options(problem, arms=arms, items=items, theta=theta, instance=instance, method=method, m=m,
                         regret_method=regret_method, time_limit=time_limit, solver=solver, design=design)
    if solver is not None and problem not in FACTOR_GRAPH_PROBLEMS:
        method = "cvxpy"  # a solver is forced on the conic model (the fast paths use none)
    res: CharTimeResult | RegretBoundResult | DesignResult | BilinearDesign | ExactDesignResult
    with time_budget(time_limit):  # the limit is the command's: reading the input counts too
        if problem in FACTOR_GRAPH_PROBLEMS:
            fg = load_instance(cast(Path, instance))  # _check_solve_options requires it here
            with _working(f"solving {problem.value}"):
                res = _solve_factor_graph(problem, fg, m=m, regret_method=regret_method or RegretMethod.exact,
                                          solver=solver, time_limit=time_limit)
            note = _solver_note(solver, res)
            if as_json:
                typer.echo(json.dumps({"problem": problem.value, **res.to_dict(), **({"note": note} if note else {})},
                                      indent=2))
            else:
                print_factor_graph_table(problem, res, fg)
            if note:
                typer.echo(wrap(f"note: {note}"), err=True)
        elif problem in STANDALONE_PROBLEMS:
            res = run_design(problem, arms, design, solver=solver, method=method, tol=tol, time_limit=time_limit,
                             as_json=as_json, working=_working)
        else:
            res = _run_linear(problem, cast(Path, arms), items, theta, solver=solver, method=method, tol=tol,
                              time_limit=time_limit, as_json=as_json)
    if problem not in FACTOR_GRAPH_PROBLEMS and (note := _solver_note(solver, res)):
        typer.echo(wrap(f"note: {note}"), err=True)
    if getattr(getattr(res, "node", res), "status", None) == "interrupted":
        typer.echo("interrupted: the result above is the best certified one so far", err=True)
        raise typer.Exit(INTERRUPTED)


def _solver_note(solver: str | None, res: object) -> str | None:
    """Why the result did not come from the forced ``solver`` (None when it did, or when none was forced)."""
    used = getattr(getattr(res, "node", res), "solver", None)
    if solver is None or used is None or str(used).upper() == solver.upper():
        return None
    if used == "none":
        return f"--solver {solver} was not used: no solve finished in time, the result is the closed-form bracket"
    if used == "orbit-kelley":
        return f"--solver {solver} was not used: the instance is symmetric, solved by the orbit search (orbit-kelley)"
    return f"--solver {solver} was not used: the result comes from {used}"


def _run_linear(problem: SolveProblem, arms: Path, items: Path | None, theta: Path | None, *, solver: str | None,
                method: str, tol: float, time_limit: float | None, as_json: bool) -> DesignResult | BilinearDesign:
    """Read the arms (and items, theta), solve xy, xy-oracle, transductive or bilinear, and print it."""
    X = load_array(arms, "arms", ndim=2)
    Z = load_array(items, "items", ndim=2) if items is not None else None
    th = load_array(theta, "theta", ndim=1) if theta is not None else None
    working = _working(f"solving {problem.value} on {X.shape[0]:,} arms in R^{X.shape[1]}")
    with working, warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the printed status and gap say it
        res = _solve(problem, X, Z, th, solver, method, tol, time_limit)
    if as_json:
        typer.echo(json.dumps({"problem": problem.value, **res.to_dict()}, indent=2))
    else:
        print_design_table(problem, res, arm_labels(X))
    return res
