"""Command line: ``optdesign solve PROBLEM ...`` and ``optdesign compare ...``.

* ``solve`` with a linear design problem reads arms (``--arms FILE``); with a multi-agent problem
  (``char-time``, ``mf-char-time``, ``regret``) it reads a factor-graph JSON (``--instance FILE``).
* ``compare`` sweeps seeded line/ring/star instances and compares exact T* with T^MF(m).

Prints tables by default and JSON with ``--json``; bad input exits with status 2 and a one-line
message on stderr. The multi-agent modules are imported inside the commands, so the linear
commands do not depend on them.
"""

from __future__ import annotations

import itertools
import json
import time
import warnings
from enum import Enum
from pathlib import Path

import numpy as np
import typer
from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table

from . import __version__
from .bilinear import bilinear_design
from .errors import InstanceTooLargeError, InvalidInputError, SolverError
from .exits import exit_on_project_errors
from .linear import METHODS, d_optimal, g_optimal, transductive, xy_allocation, xy_oracle
from .result import BilinearDesign, DesignResult

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Optimal experimental design and bandit lower bounds (cvxpy models with certified fast paths).",
)

CHAR_TIME_CONVENTION = "E[tau] >= 2 T kl(delta,1-delta)"
REGRET_CONVENTION = "liminf R(T) / log T >= c_theta"
# rows shown in the allocation tables and entries shown per row
MAX_ROWS = 10
MAX_ENTRIES = 6
MAX_ACTION_AGENTS = 16


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


class GraphKind(str, Enum):
    line = "line"
    ring = "ring"
    star = "star"


class MeanModel(str, Enum):
    uniform = "uniform"
    planted = "planted"


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


def load_instance(path: Path):
    """Read a factor-graph JSON document (written by ``FactorGraph.save``)."""
    from .factorgraph import FactorGraph

    if not path.exists():
        raise InvalidInputError(f"--instance: file not found: {path}")
    return FactorGraph.load(path)


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


def _solve_factor_graph(problem: Problem, fg, *, m: int, regret_method: RegretMethod, solver: str | None):
    """T* (char-time), T^MF(m) (mf-char-time) or the Graves–Lai constant (regret) of ``fg``."""
    if problem is Problem.regret:
        from .regret import EXACT_MAX_JOINT_ACTIONS as REGRET_LIMIT
        from .regret import regret_lower_bound

        try:
            return regret_lower_bound(fg, regret_method.value, solver=solver, m=m)
        except InstanceTooLargeError:
            raise InstanceTooLargeError(
                f"the exact regret bound needs one constraint per joint action: {fg.n_joint_actions} joint actions "
                f"exceed the limit {REGRET_LIMIT}; use the mean-field (FCR) upper bound instead: "
                "optdesign solve regret --regret-method mf --instance FILE [--m M]"
            ) from None
    from .characteristic_time import EXACT_MAX_JOINT_ACTIONS, characteristic_time, mf_characteristic_time

    if problem is Problem.mf_char_time:
        return mf_characteristic_time(fg, m, solver=solver)
    try:
        return characteristic_time(fg, solver=solver)
    except InstanceTooLargeError:
        raise InstanceTooLargeError(
            f"exact T* needs one constraint per joint action: {fg.n_joint_actions} joint actions exceed the limit "
            f"{EXACT_MAX_JOINT_ACTIONS}; use the mean-field method instead: "
            "optdesign solve mf-char-time --instance FILE [--m M]"
        ) from None


def _check_solve_options(problem: Problem, *, arms, items, theta, instance, method, m, regret_method) -> None:
    """Each option belongs to one family of problems; a misplaced one is an error, not silently ignored."""
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


def _format_action(action, limit: int = MAX_ACTION_AGENTS) -> str:
    a = [int(v) for v in np.asarray(action).ravel()]
    if len(a) <= limit:
        return "(" + ", ".join(map(str, a)) + ")"
    return "(" + ", ".join(map(str, a[:limit])) + f", ...) [{len(a)} agents]"


def _format_count(n: int) -> str:
    """An exact integer, or its order of magnitude when it has more than 12 digits."""
    digits = str(n)
    return digits if len(digits) <= 12 else f"{digits[0]}.{digits[1:3]}e{len(digits) - 1}"


def _format_vector(v, limit: int = MAX_ENTRIES) -> str:
    v = np.asarray(v, dtype=float).ravel()
    text = ", ".join(f"{x:.4g}" for x in v[:limit])
    return f"[{text}, ... ({v.size})]" if v.size > limit else f"[{text}]"


def _value_label(problem: Problem, res) -> str:
    if problem is Problem.char_time:
        return "T* (exact)"
    if problem is Problem.mf_char_time:
        return f"T^MF({res.m}) (mean field)"
    if res.method == "exact":
        return "c_theta (exact)"
    return f"c^MF({res.m}) (upper bound on c_theta)"


def _print_factor_graph_table(problem: Problem, res, fg) -> None:
    console = Console()
    is_regret = problem is Problem.regret
    title = f"{problem.value}: N={fg.n_agents}, factors={fg.n_factors}, |A|={_format_count(fg.n_joint_actions)}"
    summary = Table(title=title, show_header=False)
    summary.add_column(style="bold")
    summary.add_column()
    summary.add_row(_value_label(problem, res), f"{res.value:.8g}")
    summary.add_row("convention", escape(REGRET_CONVENTION if is_regret else CHAR_TIME_CONVENTION))
    summary.add_row("solver value", f"{res.solver_value:.8g}")
    summary.add_row("Delta_min", f"{fg.gap_min():.6g}")
    if res.method != "exact":
        summary.add_row("m", str(res.m))
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
    console.print(summary)

    local = getattr(res, "local_allocations", None)
    if local is not None:
        table = Table(title="local allocations v_i (w_a = prod_i v_i(a_i))")
        table.add_column("agent", justify="right")
        table.add_column("K_i", justify="right")
        table.add_column("v_i(a*_i)", justify="right")
        table.add_column("v_i")
        for i, v in enumerate(local[:MAX_ROWS]):
            table.add_row(str(i), str(v.size), f"{v[int(res.best_action[i])]:.4g}", escape(_format_vector(v)))
        if len(local) > MAX_ROWS:
            table.caption = f"... {len(local) - MAX_ROWS} more agents (all of them in --json)"
        console.print(table)
        return
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
    console.print(table)


@app.command()
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
        None, "--regret-method", help="regret only: exact (one row per joint action; default) or mf (FCR, an "
        "upper bound on c_theta that scales to large instances)."),
    solver: str | None = typer.Option(None, "--solver", help="Force a solver (CLARABEL, SCS, MOSEK)."),
    method: str = typer.Option("auto", "--method", help=f"Linear problems only; one of: {', '.join(METHODS)}."),
    tol: float = typer.Option(1e-4, "--tol", help="Linear problems: certified relative gap for the fast path."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON ({\"problem\": ..., **result}) instead of a table."),
) -> None:
    """Solve a linear design or a multi-agent lower bound and print its value, allocation and certificate.

    Characteristic times follow the MF-TaS convention: expected stopping time >= 2 T kl(delta, 1-delta) (unit-variance
    Gaussian feedback); exact T* refuses instances with more than 20,000 joint actions: use mf-char-time.
    """
    _check_solve_options(problem, arms=arms, items=items, theta=theta, instance=instance, method=method, m=m,
                         regret_method=regret_method)
    if problem in FACTOR_GRAPH_PROBLEMS:
        fg = load_instance(instance)
        res = _solve_factor_graph(problem, fg, m=m, regret_method=regret_method or RegretMethod.exact, solver=solver)
        if as_json:
            typer.echo(json.dumps({"problem": problem.value, **res.to_dict()}, indent=2))
        else:
            _print_factor_graph_table(problem, res, fg)
        return
    X = load_array(arms, "arms", ndim=2)
    Z = load_array(items, "items", ndim=2) if items is not None else None
    th = load_array(theta, "theta", ndim=1) if theta is not None else None
    res = _solve(problem, X, Z, th, solver, method, tol)
    if as_json:
        typer.echo(json.dumps({"problem": problem.value, **res.to_dict()}, indent=2))
    else:
        _print_table(problem, res, X)


# ---------------------------------------------------------------------------------------------
# compare: exact T* against T^MF(m) over a grid of seeded instances


def parse_int_range(text: str, name: str, minimum: int) -> list[int]:
    """``"3:8"`` (inclusive), ``"5"`` or ``"3,5,7"`` as a sorted list of distinct integers >= minimum."""
    try:
        if ":" in text:
            lo, hi = (int(part) for part in text.split(":"))
            values = list(range(lo, hi + 1))
        else:
            values = [int(part) for part in text.split(",")]
    except ValueError:
        raise InvalidInputError(f"--{name}: expected 'A:B' (inclusive), 'N' or 'N1,N2,...', got {text!r}") from None
    if not values:
        raise InvalidInputError(f"--{name}: empty range {text!r}")
    if min(values) < minimum:
        raise InvalidInputError(f"--{name}: values must be >= {minimum}, got {text!r}")
    return sorted(set(values))


def _timed(fn, *args, notes: list[str], label: str, **kwargs):
    """(fn(...), wall time); warnings raised by fn are collected into ``notes`` as one line each."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        out = fn(*args, **kwargs)
        wall = time.perf_counter() - start
    notes.extend(f"{label}: {w.message}" for w in caught)
    return out, wall


def _compare_instance(fg, ms: list[int], *, exact_limit: int, solver: str | None, failures: list[str],
                      notes: list[str]) -> dict:
    """One grid point: T* (if small enough), T^MF and T^MF(m); wall times include model building."""
    from .characteristic_time import characteristic_time, mf_characteristic_time

    n_joint = fg.n_joint_actions
    label = f"N={fg.n_agents} K={fg.n_actions[0]} seed={fg.metadata.get('seed')}"
    rec: dict = {"n_joint_actions": n_joint, "abar": fg.abar, "gap_min": fg.gap_min(),
                 "ratio_bound": 4.0 * fg.abar / fg.n_factors, "exact_skipped": n_joint > exact_limit}
    exact = None
    if not rec["exact_skipped"]:
        try:
            exact, wall = _timed(characteristic_time, fg, solver=solver, max_joint_actions=exact_limit,
                                 notes=notes, label=f"{label} exact T*")
            rec.update(T_star=exact.value, T_star_time=wall, T_star_constraints=exact.n_constraints,
                       T_star_status=exact.status)
        except SolverError as exc:
            failures.append(f"{label} exact T*: {exc}")
    mf = None
    try:
        mf, wall = _timed(mf_characteristic_time, fg, 1, solver=solver, notes=notes, label=f"{label} T^MF")
        rec.update(T_mf=mf.value, T_mf_time=wall, T_mf_constraints=mf.n_constraints, width=mf.width,
                   T_mf_status=mf.status)
    except SolverError as exc:
        failures.append(f"{label} T^MF: {exc}")
    if exact is not None and mf is not None:
        rec["ratio_mf_exact"] = mf.value / exact.value
    for m in ms:
        if m >= n_joint or mf is None:
            continue  # T^MF(m) needs m <= |A| - 1
        if m == 1:
            res, wall = mf, rec["T_mf_time"]
        else:
            try:
                res, wall = _timed(mf_characteristic_time, fg, m, solver=solver, notes=notes,
                                   label=f"{label} T^MF({m})")
            except SolverError as exc:
                failures.append(f"{label} T^MF({m}): {exc}")
                continue
        rec.update({f"T_mf_m{m}": res.value, f"ratio_m{m}": res.value / mf.value, f"time_m{m}": wall,
                    f"constraints_m{m}": res.n_constraints})
    return rec


def _summarise(df, Ns: list[int], Ks: list[int], ms: list[int], ties: dict):
    """mean and std over seeds for every (N, K), with instance, exact and tie counts."""
    import pandas as pd

    metrics = ["ratio_mf_exact", "ratio_bound", *(f"ratio_m{m}" for m in ms), "T_star_time", "T_mf_time",
               *(f"time_m{m}" for m in ms), "T_star_constraints", "T_mf_constraints", "n_joint_actions"]
    for col in ("T_star", *metrics):
        if col not in df.columns:
            df[col] = np.nan
    values = df[["T_star", *metrics]].astype(float)
    values["N"], values["K"] = df["N"], df["K"]
    grouped = values.groupby(["N", "K"])
    stats = grouped[metrics].agg(["mean", "std"])
    stats.columns = [f"{col}_{stat}" for col, stat in stats.columns]
    index = pd.MultiIndex.from_product([Ns, Ks], names=["N", "K"])
    stats = stats.reindex(index)
    stats.insert(0, "n_instances", grouped.size().reindex(index, fill_value=0).to_numpy())
    stats.insert(1, "n_exact", grouped["T_star"].count().reindex(index, fill_value=0).to_numpy())
    stats.insert(2, "ties_skipped", [ties.get(key, 0) for key in index])
    return stats.reset_index()


# relative slack of the claim checks (the values are solver outputs, accurate to ~1e-6)
CLAIM_RTOL = 1e-5


def _check_claims(df, ms: list[int]) -> dict[str, list[str]]:
    """MF-TaS App. H / J claims, instance by instance: the violations of each (empty lists if all hold).

    * T* <= T^MF(m) for every computed m (Lemma H.1);
    * T^MF(m) nonincreasing in m (Lemma H.1);
    * T^MF / T* <= 4 Abar / rho (App. J.2, Fig. 8 caption).
    """
    out: dict[str, list[str]] = {"T* <= T^MF(m)": [], "T^MF(m) nonincreasing in m": [],
                                 "T^MF/T* <= 4 Abar/rho": []}
    for rec in df.to_dict("records"):
        label = f"N={rec['N']} K={rec['K']} seed={rec['seed']}"
        values = [(m, rec.get(f"T_mf_m{m}")) for m in ms]
        values = [(m, v) for m, v in values if v is not None and np.isfinite(v)]
        star = rec.get("T_star")
        if star is not None and np.isfinite(star):
            out["T* <= T^MF(m)"] += [f"{label} m={m}: T*={star:.6g} > {v:.6g}" for m, v in values
                                     if star > v * (1 + CLAIM_RTOL)]
        out["T^MF(m) nonincreasing in m"] += [
            f"{label}: T^MF({m1})={v1:.6g} < T^MF({m2})={v2:.6g}"
            for (m1, v1), (m2, v2) in itertools.pairwise(values) if v2 > v1 * (1 + CLAIM_RTOL)]
        ratio = rec.get("ratio_mf_exact")
        if ratio is not None and np.isfinite(ratio) and ratio > rec["ratio_bound"]:
            out["T^MF/T* <= 4 Abar/rho"].append(f"{label}: {ratio:.4g} > {rec['ratio_bound']:.4g}")
    return out


def _records(df) -> list[dict]:
    """DataFrame rows as JSON-ready dicts (NaN becomes null, full float precision)."""
    return json.loads(df.to_json(orient="records", double_precision=15))


def _mean_std(row, col: str, fmt: str = "{:.4f}") -> str:
    mean, std = row.get(f"{col}_mean"), row.get(f"{col}_std")
    if mean is None or not np.isfinite(mean):
        return "-"
    if std is None or not np.isfinite(std):
        return fmt.format(mean)
    return f"{fmt.format(mean)} ± {fmt.format(std)}"


def _mean(row, col: str, fmt: str) -> str:
    mean = row.get(f"{col}_mean")
    return "-" if mean is None or not np.isfinite(mean) else fmt.format(mean)


def _print_compare_tables(summary, ms: list[int], *, graph: str, means: str, exact_limit: int, n_ties: int,
                          checks: dict[str, list[str]], n_instances: int) -> None:
    ratios = Table(title=f"{graph} instances ({means} means): T^MF / T* and T^MF(m) / T^MF, mean ± std over seeds")
    for col in ("N", "K", "seeds", "exact"):
        ratios.add_column(col, justify="right")
    ratios.add_column("T^MF/T*", justify="right")
    ratios.add_column("4Abar/rho", justify="right")
    shown_m = [m for m in ms if m != 1]
    for m in shown_m:
        ratios.add_column(f"T^MF({m})/T^MF", justify="right")
    cost = Table(title="cost, mean over seeds: constraints (FCR rows vs one per joint action a != a*), wall times (s)")
    for col in ("N", "K", "|A|", "exact rows", "FCR rows", "t T*", "t MF"):
        cost.add_column(col, justify="right")
    for m in shown_m:
        cost.add_column(f"t MF({m})", justify="right")
    for row in summary.to_dict("records"):
        nk = [str(row["N"]), str(row["K"])]
        ratios.add_row(*nk, str(row["n_instances"]), str(row["n_exact"]), _mean_std(row, "ratio_mf_exact"),
                       _mean(row, "ratio_bound", "{:.0f}"), *(_mean_std(row, f"ratio_m{m}") for m in shown_m))
        n_joint = row["n_joint_actions_mean"]
        exact_rows = "skipped" if row["n_exact"] == 0 else _mean(row, "T_star_constraints", "{:.0f}")
        cost.add_row(*nk, "-" if not np.isfinite(n_joint) else f"{n_joint:.0f}", exact_rows,
                     _mean(row, "T_mf_constraints", "{:.0f}"), _mean(row, "T_star_time", "{:.3f}"),
                     _mean(row, "T_mf_time", "{:.3f}"), *(_mean(row, f"time_m{m}", "{:.3f}") for m in shown_m))
    console = Console()
    if not console.is_terminal:  # piped or captured: size to the tables, not to an 80-column default
        wide = console.options.update_width(10_000)
        widths = [max(Measurement.get(console, wide, t).maximum, len(t.title)) for t in (ratios, cost)]
        console = Console(width=max(80, *widths))
    console.print(ratios)
    console.print(cost)
    console.print(f"exact T* is skipped when |A| > {exact_limit} and T^MF(m) when m >= |A| (columns 'exact', '-').",
                  style="dim", markup=False)
    for claim, violations in checks.items():
        verdict = f"holds on all {n_instances} instances" if not violations else \
            f"FAILS on {len(violations)}: " + "; ".join(violations)
        console.print(f"check {claim}: {verdict}", markup=False, soft_wrap=True)
    if n_ties:
        console.print(f"{n_ties} instance(s) with a tie for the best joint action were skipped (not re-drawn).",
                      style="dim", markup=False)


def _load_matplotlib():
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    except ImportError:
        raise InvalidInputError('--plot needs matplotlib: pip install ".[plots]"') from None
    return Figure, FigureCanvasAgg, (FuncFormatter, LogLocator, NullFormatter)


def _plot_compare(summary, ms: list[int], Ns: list[int], Ks: list[int], path: Path, *, graph: str) -> None:
    """MF-TaS App. J figures on the Agg canvas. Top, Fig. 7: T^MF(m) / T^MF against m, one panel per K,
    one line per N (mean over seeds, shaded ± std). Bottom, Fig. 8: T^MF / T* against N, one line per K
    (mean, ± std bars), each with its bound 4 Abar / rho dashed in the same colour (log scale)."""
    Figure, FigureCanvasAgg, (FuncFormatter, LogLocator, NullFormatter) = _load_matplotlib()
    fig = Figure(figsize=(max(8.0, 3.2 * len(Ks)), 7.5), layout="constrained")
    FigureCanvasAgg(fig)
    grid = fig.add_gridspec(2, len(Ks))
    by_nk = {(row["N"], row["K"]): row for row in summary.to_dict("records")}
    first = None
    for j, K in enumerate(Ks):
        ax = fig.add_subplot(grid[0, j], sharey=first)
        first = first or ax
        for N in Ns:
            row = by_nk[(N, K)]
            pts = [(m, row[f"ratio_m{m}_mean"], row[f"ratio_m{m}_std"]) for m in ms
                   if np.isfinite(row[f"ratio_m{m}_mean"])]
            if pts:
                x, y, sd = (np.asarray(v, dtype=float) for v in zip(*pts, strict=True))
                sd = np.nan_to_num(sd)
                (line,) = ax.plot(x, y, marker="o", label=f"N={N}")
                ax.fill_between(x, np.clip(y - sd, 0.0, None), y + sd, color=line.get_color(), alpha=0.12, lw=0)
        ax.set_title(f"{graph}, K={K}")
        ax.set_xlabel("m")
        ax.set_xticks(ms)
        ax.grid(alpha=0.3)
        if j == 0:
            ax.set_ylabel(r"$T^{MF}(m)\,/\,T^{MF}$ (mean ± std)")
            ax.legend(fontsize="small")
    ax = fig.add_subplot(grid[1, :])
    plotted = False
    for K in Ks:
        rows = [by_nk[(N, K)] for N in Ns]
        pts = [(r["N"], r["ratio_mf_exact_mean"], r["ratio_mf_exact_std"], r["ratio_bound_mean"]) for r in rows
               if np.isfinite(r["ratio_mf_exact_mean"])]
        if pts:
            x, y, err, bound = zip(*pts, strict=True)
            bar = ax.errorbar(x, y, yerr=np.nan_to_num(err), marker="o", capsize=3, label=f"K={K}")
            ax.plot(x, bound, ls="--", color=bar.lines[0].get_color())
            plotted = True
    if not plotted:
        ax.text(0.5, 0.5, "exact T* skipped for every instance (|A| above the exact limit)",
                ha="center", va="center", transform=ax.transAxes)
    else:
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.plot([], [], ls="--", color="gray", label=r"bound $4\bar{A}/\rho$")
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title(rf"{graph}: $T^{{MF}}/T^*$ (mean ± std over seeds) and its bound $4\bar{{A}}/\rho$ (dashed)")
    ax.set_xlabel("N (agents)")
    ax.set_xticks(Ns)
    ax.set_ylabel(r"$T^{MF}\,/\,T^*$")
    ax.grid(alpha=0.3, which="both")
    try:
        fig.savefig(path, dpi=120)
    except (ValueError, OSError) as exc:
        raise InvalidInputError(f"--plot: cannot write {path}: {exc}") from None


@app.command()
@exit_on_project_errors
def compare(
    graph: GraphKind = typer.Option(GraphKind.line, "--graph", help="Interaction graph of the instances."),
    agents: str = typer.Option("3:8", "--agents", help="Numbers of agents N: 'A:B' (inclusive), 'N' or 'N1,N2'."),
    actions: str = typer.Option("2:5", "--actions", help="Actions per agent K: 'A:B' (inclusive), 'K' or 'K1,K2'."),
    seeds: int = typer.Option(5, "--seeds", help="Seeds 0..S-1 per (N, K)."),
    m_values: str = typer.Option("1,2,5,10", "--m", help="Comma-separated m of T^MF(m) (m >= |A| is skipped)."),
    means: MeanModel = typer.Option(MeanModel.uniform, "--means", help="Mean model of FactorGraph generators."),
    exact_limit: int | None = typer.Option(
        None, "--exact-limit", help="Exact T* only up to this many joint actions (default: the library's 20,000); "
        "larger instances are recorded as skipped."),
    plot: Path | None = typer.Option(None, "--plot", help="Write MF-TaS App. J style figures (PNG/PDF/SVG) here."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (instances and summary as records)."),
    solver: str | None = typer.Option(None, "--solver", help="Force a solver (CLARABEL, SCS, MOSEK)."),
) -> None:
    """Compare exact T* with the mean-field T^MF(m) on seeded line/ring/star instances.

    For every N, K and seed: T* (when |A| <= the exact limit, else skipped), T^MF = T^MF(1) and
    T^MF(m), their wall times and constraint counts; then mean ± std over seeds (pandas). An
    instance whose best joint action is tied is skipped and counted (ties_skipped), not re-drawn,
    so the seeds stay 0..S-1. Times are wall clock of the library call (model build included).
    """
    import pandas as pd
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .characteristic_time import EXACT_MAX_JOINT_ACTIONS
    from .factorgraph import FactorGraph

    Ns = parse_int_range(agents, "agents", 3 if graph is GraphKind.ring else 2)
    Ks = parse_int_range(actions, "actions", 2)
    ms = sorted({1, *parse_int_range(m_values, "m", 1)})
    if seeds < 1:
        raise InvalidInputError(f"--seeds must be >= 1, got {seeds}")
    limit = EXACT_MAX_JOINT_ACTIONS if exact_limit is None else exact_limit
    if limit < 0:
        raise InvalidInputError(f"--exact-limit must be >= 0, got {limit}")
    if plot is not None:
        if not plot.parent.exists():
            raise InvalidInputError(f"--plot: directory not found: {plot.parent}")
        _load_matplotlib()  # fail before the sweep, not after it
    build = {"line": FactorGraph.line, "ring": FactorGraph.ring, "star": FactorGraph.star}[graph.value]
    grid = [(N, K, seed) for N in Ns for K in Ks for seed in range(seeds)]
    records, failures, notes, ties = [], [], [], {}
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    err = Console(stderr=True)  # stdout stays clean for --json; no bar unless stderr is a terminal
    with Progress(*columns, console=err, transient=True, disable=not err.is_terminal) as progress:
        task = progress.add_task("compare", total=len(grid))
        for N, K, seed in grid:
            progress.update(task, description=f"{graph.value} N={N} K={K} seed={seed}")
            fg = build(N, K, seed=seed, means=means.value)
            try:
                fg.gap_min()  # N >= 2 and K >= 2, so the only possible failure is a tie for a*
            except InvalidInputError:
                ties[(N, K)] = ties.get((N, K), 0) + 1
            else:
                rec = {"graph": graph.value, "means": means.value, "N": N, "K": K, "seed": seed}
                rec.update(_compare_instance(fg, ms, exact_limit=limit, solver=solver, failures=failures,
                                             notes=notes))
                records.append(rec)
            progress.advance(task)
    df = pd.DataFrame(records, columns=None if records else ["graph", "means", "N", "K", "seed"])
    summary = _summarise(df.copy(), Ns, Ks, ms, ties)
    if plot is not None:
        _plot_compare(summary, ms, Ns, Ks, plot, graph=graph.value)
    n_ties = sum(ties.values())
    checks = _check_claims(df, ms) if records else {}
    for line in failures:
        typer.echo(f"warning: solver failure: {line}", err=True)
    for line in notes:
        typer.echo(f"warning: {line}", err=True)
    if as_json:
        out = {"graph": graph.value, "means": means.value, "agents": Ns, "actions": Ks, "seeds": seeds, "m": ms,
               "exact_limit": limit, "ties_skipped": n_ties, "failures": failures, "warnings": notes,
               "plot": None if plot is None else str(plot), "checks": checks,
               "instances": _records(df), "summary": _records(summary)}
        typer.echo(json.dumps(out, indent=2))
        return
    _print_compare_tables(summary, ms, graph=graph.value, means=means.value, exact_limit=limit, n_ties=n_ties,
                          checks=checks, n_instances=len(records))
    if plot is not None:
        typer.echo(f"figure written to {plot}")


@app.command("version")
def show_version() -> None:
    """Print the package version and the usable solvers."""
    from .solvers import available_solvers

    typer.echo(f"optdesign {__version__}; solvers: {', '.join(available_solvers())}")


def main() -> None:
    """Console entry point (``optdesign``)."""
    app()
