"""Command line: ``optdesign solve PROBLEM --arms FILE [...]``.

Prints a table by default and JSON with ``--json``; bad input exits with status 2 and a one-line
message on stderr.
"""

from __future__ import annotations

import functools
import json
from enum import Enum
from pathlib import Path

import numpy as np
import typer
from rich.console import Console
from rich.table import Table

from . import __version__
from .bilinear import bilinear_design
from .errors import InvalidInputError, OptDesignError
from .linear import METHODS, d_optimal, g_optimal, transductive, xy_allocation, xy_oracle
from .result import BilinearDesign, DesignResult

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Optimal experimental design and bandit lower bounds (cvxpy models with certified fast paths).",
)


def exit_on_project_errors(command):
    """Decorator for CLI commands: a project error becomes ``error: ...`` on stderr and exit status 2."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except OptDesignError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None

    return wrapper


class Problem(str, Enum):
    g_optimal = "g-optimal"
    d_optimal = "d-optimal"
    xy = "xy"
    xy_oracle = "xy-oracle"
    transductive = "transductive"
    bilinear = "bilinear"


def load_array(path: Path, name: str, *, ndim: int) -> np.ndarray:
    """Read a .npy file or a comma/whitespace separated text file (CSV) as a float array."""
    if not path.exists():
        raise InvalidInputError(f"--{name}: file not found: {path}")
    try:
        if path.suffix == ".npy":
            arr = np.load(path, allow_pickle=False)
        else:
            text = path.read_text()
            delimiter = "," if "," in text else None
            arr = np.loadtxt(path, delimiter=delimiter, ndmin=2, comments="#")
    except (ValueError, OSError) as exc:
        raise InvalidInputError(f"--{name}: cannot read {path}: {exc}") from None
    arr = np.asarray(arr, dtype=float)
    if ndim == 1 and arr.ndim == 2 and 1 in arr.shape:
        arr = arr.ravel()
    if arr.ndim != ndim:
        raise InvalidInputError(f"--{name}: expected a {ndim}-D array in {path}, got shape {arr.shape}")
    return arr


def _solve(problem: Problem, X, Z, theta, solver, method, tol):
    kw = {"solver": solver, "method": method, "tol": tol}
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


def _print_table(problem: Problem, res: DesignResult | BilinearDesign, X: np.ndarray) -> None:
    console = Console()
    node = res.node if isinstance(res, BilinearDesign) else res
    weights = node.weights
    table = Table(title=f"{problem.value} design: support ({node.support.size} of {len(weights)} arms)")
    table.add_column("arm", justify="right")
    table.add_column("weight", justify="right")
    table.add_column("x")
    for k in node.support[np.argsort(-weights[node.support])]:
        coords = ", ".join(f"{v:.4g}" for v in X[k][:6]) + (", ..." if X.shape[1] > 6 else "")
        table.add_row(str(k), f"{weights[k]:.6f}", f"({coords})")
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


@app.command()
@exit_on_project_errors
def solve(
    problem: Problem = typer.Argument(..., help="Which design problem to solve."),
    arms: Path = typer.Option(..., "--arms", help="Arms X: K x d, CSV or .npy (one arm per row)."),
    items: Path | None = typer.Option(None, "--items", help="Item set Z (transductive) or directions Y (xy)."),
    theta: Path | None = typer.Option(None, "--theta", help="Parameter theta (length d), CSV or .npy."),
    solver: str | None = typer.Option(None, "--solver", help="Force a solver (CLARABEL, SCS, MOSEK)."),
    method: str = typer.Option("auto", "--method", help=f"One of: {', '.join(METHODS)}."),
    tol: float = typer.Option(1e-4, "--tol", help="Relative certified gap required from the fast path."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Solve a linear design problem and print the design, its value and its certificate."""
    X = load_array(arms, "arms", ndim=2)
    Z = load_array(items, "items", ndim=2) if items is not None else None
    th = load_array(theta, "theta", ndim=1) if theta is not None else None
    res = _solve(problem, X, Z, th, solver, method, tol)
    if as_json:
        typer.echo(json.dumps({"problem": problem.value, **res.to_dict()}, indent=2))
    else:
        _print_table(problem, res, X)


@app.command("version")
def show_version() -> None:
    """Print the package version and the usable solvers."""
    from .solvers import available_solvers

    typer.echo(f"optdesign {__version__}; solvers: {', '.join(available_solvers())}")


def main() -> None:
    """Console entry point (``optdesign``)."""
    app()
