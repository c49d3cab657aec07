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
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import typer
from numpy.typing import ArrayLike
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..deadline import as_time_limit, graceful_interrupt, time_budget
from ..errors import INTERRUPTED, InvalidInputError, exit_on_project_errors
from ..progress import reporting
from ..result import BilinearDesign, CharTimeResult, DesignResult, RegretBoundResult
from ..validation import count_text
from ..vocabulary import DESIGN_METHODS as METHODS
from .inputs import load_array, load_instance

if TYPE_CHECKING:
    from ..factored.graph.factor_graph import FactorGraph

CHAR_TIME_CONVENTION = "E[tau] >= 2 T kl(delta,1-delta)"
REGRET_CONVENTION = "liminf R(T) / log T >= c_theta"
# rows shown in the allocation tables and entries shown per row
MAX_ROWS = 10
MAX_ENTRIES = 6
MAX_ACTION_AGENTS = 16
MAX_ARMS = 50  # support arms listed in a design table


class Problem(str, Enum):
    g_optimal = "g-optimal"
    d_optimal = "d-optimal"
    xy = "xy"
    xy_oracle = "xy-oracle"
    transductive = "transductive"
    bilinear = "bilinear"
    char_time = "char-time"
    mf_char_time = "mf-char-time"
    regret = "regret"


FACTOR_GRAPH_PROBLEMS = (Problem.char_time, Problem.mf_char_time, Problem.regret)


class RegretMethod(str, Enum):
    exact = "exact"
    mf = "mf"


@contextlib.contextmanager
def _working(message: str) -> Iterator[None]:
    """A transient spinner on stderr when it is a terminal; the first Ctrl-C asks the solve for its best result
    so far (:func:`optdesign.deadline.graceful_interrupt`), a second one aborts."""
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


def _solve(problem: Problem, X: np.ndarray, Z: np.ndarray | None, theta: np.ndarray | None, solver: str | None,
           method: str, tol: float, time_limit: float | None) -> DesignResult | BilinearDesign:
    from ..linear import bilinear_design, d_optimal, g_optimal, transductive, xy_allocation, xy_oracle

    kw: dict[str, Any] = {"solver": solver, "method": method, "tol": tol, "time_limit": time_limit}
    if problem is Problem.g_optimal:
        return g_optimal(X, **kw)
    if problem is Problem.d_optimal:
        return d_optimal(X, **kw)
    if problem is Problem.xy:
        return xy_allocation(X, Z, **kw)
    if problem is Problem.xy_oracle:
        if theta is None:
            raise InvalidInputError("xy-oracle needs --theta FILE")
        return xy_oracle(X, theta, **kw)
    if problem is Problem.transductive:
        if Z is None:
            raise InvalidInputError("transductive needs --items FILE (the item set Z)")
        return transductive(X, Z, theta, **kw)
    return bilinear_design(X, **kw)


def _solve_factor_graph(problem: Problem, fg: FactorGraph, *, m: int, regret_method: RegretMethod,
                        solver: str | None, time_limit: float | None) -> CharTimeResult | RegretBoundResult:
    """T* (char-time), T^MF(m) (mf-char-time) or the Graves–Lai constant (regret) of ``fg``."""
    limit: dict[str, Any] = {} if time_limit is None else {"time_limit": time_limit}
    if problem is Problem.regret:
        from ..factored.regret.lower_bound import regret_lower_bound

        # exact: generated beyond 20,000 joint actions
        return regret_lower_bound(fg, regret_method.value, solver=solver, m=m, **limit)
    from ..factored import characteristic_time, mf_characteristic_time

    if problem is Problem.mf_char_time:
        return mf_characteristic_time(fg, m, solver=solver, **limit)
    return characteristic_time(fg, solver=solver, **limit)  # enumerated when small, by constraint generation beyond


def _check_solve_options(problem: Problem, *, arms: Path | None, items: Path | None, theta: Path | None,
                         instance: Path | None, method: str, m: int, regret_method: RegretMethod | None,
                         time_limit: float | None) -> None:
    """Each option belongs to one family of problems; a misplaced one is an error, not silently ignored."""
    as_time_limit(time_limit, "--time-limit")
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
        if regret_method is not None and problem is not Problem.regret:
            raise InvalidInputError(f"--regret-method only applies to regret, not to {problem.value}")
        uses_m = problem is Problem.mf_char_time or (problem is Problem.regret and regret_method is RegretMethod.mf)
        if m != 1 and not uses_m:
            raise InvalidInputError("--m only applies to mf-char-time and to regret --regret-method mf")
        return
    if arms is None:
        raise InvalidInputError(f"{problem.value} needs --arms FILE (the arms X: K x d, CSV or .npy, one arm per row)")
    if instance is not None:
        raise InvalidInputError(f"--instance is only used by {', '.join(p.value for p in FACTOR_GRAPH_PROBLEMS)}")
    if m != 1 or regret_method is not None:
        raise InvalidInputError(f"--m and --regret-method do not apply to {problem.value}")


def _print_table(problem: Problem, res: DesignResult | BilinearDesign, X: np.ndarray) -> None:
    console = Console()
    node = res.node if isinstance(res, BilinearDesign) else res
    weights = node.weights
    table = Table(title=f"{problem.value} design: support ({node.support.size} of {len(weights)} arms)")
    table.add_column("arm", justify="right")
    table.add_column("weight", justify="right")
    table.add_column("x")
    order = node.support[np.argsort(-weights[node.support])]
    for k in order[:MAX_ARMS]:
        coords = ", ".join(f"{v:.4g}" for v in X[k][:6]) + (", ..." if X.shape[1] > 6 else "")
        table.add_row(str(k), f"{weights[k]:.6f}", f"({coords})")
    if order.size > MAX_ARMS:
        table.caption = f"... {order.size - MAX_ARMS} more arms of smaller weight (all of them in --json)"
    console.print(table)
    summary = Table(show_header=False, box=None)
    value_name = "edge G-value" if isinstance(res, BilinearDesign) else f"value ({node.criterion})"
    summary.add_row(value_name, f"{res.value:.8g}")
    if node.lower_bound is not None:
        summary.add_row("certified lower bound", f"{node.lower_bound:.8g}")
    summary.add_row("relative gap", "n/a" if node.gap is None else f"{node.gap:.2e}")
    for key in ("status", "solver", "method"):
        summary.add_row(key, str(getattr(node, key)))
    summary.add_row("time", f"{node.solve_time:.4f} s")
    for key, val in node.extras.items():
        if np.isscalar(val):
            summary.add_row(key, str(val))
    console.print(summary)


def _format_action(action: ArrayLike, limit: int = MAX_ACTION_AGENTS) -> str:
    a = [int(v) for v in np.asarray(action).ravel()]
    if len(a) <= limit:
        return "(" + ", ".join(map(str, a)) + ")"
    return "(" + ", ".join(map(str, a[:limit])) + f", ...) [{len(a)} agents]"


def _format_count(n: int) -> str:
    """An exact integer, or its order of magnitude when it has more than 12 digits."""
    return count_text(n)


def _format_vector(v: ArrayLike, limit: int = MAX_ENTRIES) -> str:
    arr = np.asarray(v, dtype=float).ravel()
    text = ", ".join(f"{x:.4g}" for x in arr[:limit])
    return f"[{text}, ... ({arr.size})]" if arr.size > limit else f"[{text}]"


def _value_label(problem: Problem, res: CharTimeResult | RegretBoundResult) -> str:
    if problem is Problem.char_time:
        return "T* (exact)"
    if problem is Problem.mf_char_time:
        return f"T^MF({res.m}) (mean field)"
    if res.method == "exact":
        return "c_theta (exact)"
    return f"c^MF({res.m}) (upper bound on c_theta)"


def _print_factor_graph_table(problem: Problem, res: CharTimeResult | RegretBoundResult, fg: FactorGraph) -> None:
    """The summary of a multi-agent solve, then its local allocations (mean field) or its factor marginals."""
    console = Console()
    console.print(_factor_graph_summary(problem, res, fg))
    if not np.size(res.best_action):  # the time limit ran out before a* was found: no allocation to show
        return
    local = getattr(res, "local_allocations", None)
    if local is not None:
        console.print(_local_allocation_table(res, local))
        return
    console.print(_factor_marginal_table(res, fg, problem is Problem.regret))


def _factor_graph_summary(problem: Problem, res: CharTimeResult | RegretBoundResult, fg: FactorGraph) -> Table:
    """Value, certificate, sizes, solver and times of a multi-agent solve, one row each."""
    is_regret = problem is Problem.regret
    title = f"{problem.value}: N={fg.n_agents}, factors={fg.n_factors}, |A|={_format_count(fg.n_joint_actions)}"
    summary = Table(title=title, show_header=False)
    summary.add_column(style="bold")
    summary.add_column()
    summary.add_row(_value_label(problem, res), f"{res.value:.8g}")
    summary.add_row("convention", escape(REGRET_CONVENTION if is_regret else CHAR_TIME_CONVENTION))
    summary.add_row("solver value", f"{res.solver_value:.8g}")
    if getattr(res, "lower_bound", None) is not None:
        summary.add_row("certified lower bound", f"{res.lower_bound:.8g}")
        summary.add_row("relative gap", f"{res.gap:.2e}")
    # a* and Delta_min are known unless the time limit ran out before max-sum found them
    summary.add_row("Delta_min", f"{fg.gap_min():.6g}" if np.size(res.best_action) else "not computed in time")
    if res.method != "exact":
        summary.add_row("m", str(res.m))
    if res.extras.get("formulation") == "constraint-generation":
        summary.add_row("constraint generation", f"{res.extras['iterations']} iterations, working set of "
                        f"{res.extras['working_set']} joint actions")
    summary.add_row("n_constraints", str(res.n_constraints))
    summary.add_row("n_variables", str(res.n_variables))
    width = getattr(res, "width", None)
    if width is None:
        width = res.extras.get("width")
    summary.add_row("width", "n/a" if width is None else str(width))
    summary.add_row("status", str(res.status))
    summary.add_row("solver", str(res.solver))
    summary.add_row("solve time", f"{res.solve_time:.4f} s")
    compile_time = getattr(res, "compile_time", None)
    if compile_time is not None:
        summary.add_row("compile time", f"{compile_time:.4f} s")
    summary.add_row("best joint action a*", escape(_format_action(res.best_action)))
    return summary


def _local_allocation_table(res: CharTimeResult | RegretBoundResult, local: list[np.ndarray]) -> Table:
    """The mean-field allocation v_i of each agent (the first MAX_ROWS agents)."""
    table = Table(title="local allocations v_i (w_a = prod_i v_i(a_i))")
    table.add_column("agent", justify="right")
    table.add_column("K_i", justify="right")
    table.add_column("v_i(a*_i)", justify="right")
    table.add_column("v_i")
    for i, v in enumerate(local[:MAX_ROWS]):
        table.add_row(str(i), str(v.size), f"{v[int(res.best_action[i])]:.4g}", escape(_format_vector(v)))
    if len(local) > MAX_ROWS:
        table.caption = f"... {len(local) - MAX_ROWS} more agents (all of them in --json)"
    return table


def _factor_marginal_table(res: CharTimeResult | RegretBoundResult, fg: FactorGraph, is_regret: bool) -> Table:
    """Each factor's marginal at a*_e and off it (the first MAX_ROWS factors); regret counts at a*_e are free."""
    title = "factor marginals: counts / log T (entries at a*_e are free)" if is_regret else "factor marginals wbar_e"
    table = Table(title=title)
    table.add_column("factor", justify="right")
    table.add_column("scope")
    if not is_regret:
        table.add_column("wbar_e(a*_e)", justify="right")
    table.add_column("sum off a*_e", justify="right")
    table.add_column("max off a*_e", justify="right")
    for e, marg in enumerate(res.marginals[:MAX_ROWS]):
        marg = np.asarray(marg, dtype=float)
        scope = fg.scopes[e]
        at_star = tuple(int(res.best_action[i]) for i in scope)
        off = marg.copy()
        off[at_star] = 0.0
        row = [str(e), str(scope)]
        if not is_regret:
            row.append(f"{marg[at_star]:.4g}")
        table.add_row(*row, f"{off.sum():.4g}", f"{off.max():.4g}")
    if len(res.marginals) > MAX_ROWS:
        table.caption = f"... {len(res.marginals) - MAX_ROWS} more factors (all of them in --json)"
    return table


@exit_on_project_errors
def solve(
    problem: Problem = typer.Argument(
        ..., help="Linear design: g-optimal, d-optimal, xy, xy-oracle, transductive, bilinear (need --arms). "
        "Multi-agent (need --instance): char-time (exact T*), mf-char-time (mean-field T^MF(m)), "
        "regret (Graves–Lai constant c_theta)."),
    arms: Path | None = typer.Option(
        None, "--arms", help="Arms X: K x d, CSV or .npy (one arm per row). Required for the linear problems."),
    items: Path | None = typer.Option(None, "--items", help="Item set Z (transductive) or directions Y (xy)."),
    theta: Path | None = typer.Option(None, "--theta", help="Parameter theta (length d), CSV or .npy."),
    instance: Path | None = typer.Option(
        None, "--instance", help="Factor-graph JSON (FactorGraph.save). Required for char-time, mf-char-time, regret."),
    m: int = typer.Option(1, "--m", help="m of T^MF(m) (mf-char-time) and of regret --regret-method mf."),
    regret_method: RegretMethod | None = typer.Option(
        None, "--regret-method", help="regret only: exact (one row per joint action, by constraint generation beyond "
        "20,000; default) or mf (FCR, an upper bound on c_theta of polynomial size)."),
    solver: str | None = typer.Option(None, "--solver", help="Force the conic solver (CLARABEL, SCS, MOSEK) of the "
                                      "cvxpy models; the fast paths use none (checked to be usable either way)."),
    method: str = typer.Option("auto", "--method", help=f"Linear problems only; one of: {', '.join(METHODS)}."),
    tol: float = typer.Option(1e-4, "--tol", help="Linear problems: certified relative gap for the fast path."),
    time_limit: float | None = typer.Option(
        None, "--time-limit", help="Seconds for the command, reading the input included; past them the best "
        "certified result so far is printed (status not_converged). Every problem; the multi-agent ones hold it "
        "within a few seconds at any size."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON ({\"problem\": ..., **result}) instead of a table."),
) -> None:
    """Solve a linear design or a multi-agent lower bound and print its value, allocation and certificate.

    Characteristic times follow the MF-TaS convention: expected stopping time >= 2 T kl(delta, 1-delta) (unit-variance
    Gaussian feedback); exact T* enumerates up to 20,000 joint actions and generates the binding ones beyond. On a
    terminal a spinner shows while solving. The first Ctrl-C stops the iterative solves (designs, char-time, regret)
    and prints the best certified result so far, then exits with status 130; a second Ctrl-C aborts at once.
    """
    _check_solve_options(problem, arms=arms, items=items, theta=theta, instance=instance, method=method, m=m,
                         regret_method=regret_method, time_limit=time_limit)
    res: CharTimeResult | RegretBoundResult | DesignResult | BilinearDesign
    with time_budget(time_limit):  # the limit is the command's: reading the input counts too
        if problem in FACTOR_GRAPH_PROBLEMS:
            fg = load_instance(cast(Path, instance))  # _check_solve_options requires it here
            with _working(f"solving {problem.value}"):
                res = _solve_factor_graph(problem, fg, m=m, regret_method=regret_method or RegretMethod.exact,
                                          solver=solver, time_limit=time_limit)
            if as_json:
                typer.echo(json.dumps({"problem": problem.value, **res.to_dict()}, indent=2))
            else:
                _print_factor_graph_table(problem, res, fg)
        else:
            X = load_array(cast(Path, arms), "arms", ndim=2)  # _check_solve_options requires it here
            Z = load_array(items, "items", ndim=2) if items is not None else None
            th = load_array(theta, "theta", ndim=1) if theta is not None else None
            working = _working(f"solving {problem.value} on {X.shape[0]:,} arms in R^{X.shape[1]}")
            with working, warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # the printed status and gap say it
                res = _solve(problem, X, Z, th, solver, method, tol, time_limit)
            if as_json:
                typer.echo(json.dumps({"problem": problem.value, **res.to_dict()}, indent=2))
            else:
                _print_table(problem, res, X)
    if getattr(getattr(res, "node", res), "status", None) == "interrupted":
        typer.echo("interrupted: the result above is the best certified one so far", err=True)
        raise typer.Exit(INTERRUPTED)
