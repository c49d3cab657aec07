"""``optdesign compare``: exact T* against the mean-field T^MF(m) over a grid of seeded instances.

Checks the MF-TaS paper's claims instance by instance (T* <= T^MF(m), T^MF(m) nonincreasing in m,
T^MF / T* <= 4 Abar / rho) and draws its App. J figures (tables and figures: :mod:`optdesign.cli.compare_report`).
"""

from __future__ import annotations

import itertools
import json
import time
import warnings
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import typer
from rich.console import Console

from ..errors import InstanceTooLargeError, InvalidInputError, SolverError, exit_on_project_errors
from ..validation import check_image_path
from .compare_report import _load_matplotlib, _plot_compare, _print_compare_tables
from .inputs import parse_int_range

if TYPE_CHECKING:
    import pandas as pd

    from ..factored.graph.factor_graph import FactorGraph

_T = TypeVar("_T")


class GraphKind(str, Enum):
    line = "line"
    ring = "ring"
    star = "star"


class MeanModel(str, Enum):
    uniform = "uniform"
    planted = "planted"


def _timed(fn: Callable[..., _T], *args: Any, notes: list[str], label: str, **kwargs: Any) -> tuple[_T, float]:
    """(fn(...), wall time); warnings raised by fn are collected into ``notes`` as one line each."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        out = fn(*args, **kwargs)
        wall = time.perf_counter() - start
    notes.extend(f"{label}: {w.message}" for w in caught)
    return out, wall


def _compare_instance(fg: FactorGraph, ms: list[int], *, exact_limit: int | None, solver: str | None,
                      failures: list[str], notes: list[str]) -> dict:
    """One grid point: T* (unless above ``exact_limit``), T^MF and T^MF(m); wall times include model building."""
    from ..factored import characteristic_time, mf_characteristic_time

    n_joint = fg.n_joint_actions
    label = f"N={fg.n_agents} K={fg.n_actions[0]} seed={fg.metadata.get('seed')}"
    skip = exact_limit is not None and n_joint > exact_limit
    rec: dict = {"n_joint_actions": n_joint, "abar": fg.abar, "gap_min": fg.gap_min(),
                 "ratio_bound": 4.0 * fg.abar / fg.n_factors, "exact_skipped": skip}
    exact = None
    if not rec["exact_skipped"]:
        try:
            exact, wall = _timed(characteristic_time, fg, solver=solver, notes=notes, label=f"{label} exact T*")
            rec.update(T_star=exact.value, T_star_time=wall, T_star_constraints=exact.n_constraints,
                       T_star_status=exact.status, T_star_lower=exact.lower_bound, T_star_gap=exact.gap,
                       T_star_method=exact.extras.get("formulation"))
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


def _summarise(df: pd.DataFrame, Ns: list[int], Ks: list[int], ms: list[int], ties: dict) -> pd.DataFrame:
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
#: instances (N x K x seeds) a sweep may list
MAX_COMPARE_INSTANCES = 1_000_000


def check_claims(df: pd.DataFrame, ms: list[int]) -> dict[str, list[str]]:
    """MF-TaS App. H / J claims, instance by instance: the violations of each (empty lists if all hold).

    * T* <= T^MF(m) for every computed m (Lemma H.1);
    * T^MF(m) nonincreasing in m (Lemma H.1);
    * T^MF / T* <= 4 Abar / rho (App. J.2, Fig. 8 caption). Not a theorem: the line N = 20, K = 2, seed 0 gives a
      certified 19 > 16 (T* at its floor 8 / Delta_min^2, T^MF at 2 Abar / Delta_min^2); T^MF / T* <= Abar / 2 holds.
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


def _records(df: pd.DataFrame) -> list[dict]:
    """DataFrame rows as JSON-ready dicts (NaN becomes null, full float precision)."""
    records: list[dict] = json.loads(df.to_json(orient="records", double_precision=15))
    return records


@exit_on_project_errors
def compare(
    graph: GraphKind = typer.Option(GraphKind.line, "--graph", help="Interaction graph of the instances."),
    agents: str = typer.Option("3:8", "--agents", help="Numbers of agents N: 'A:B' (inclusive), 'N' or 'N1,N2'."),
    actions: str = typer.Option("2:5", "--actions", help="Actions per agent K: 'A:B' (inclusive), 'K' or 'K1,K2'."),
    seeds: int = typer.Option(5, "--seeds", help="Seeds 0..S-1 per (N, K)."),
    m_values: str = typer.Option("1,2,5,10", "--m", help="Comma-separated m of T^MF(m) (m >= |A| is skipped)."),
    means: MeanModel = typer.Option(MeanModel.uniform, "--means", help="Mean model of FactorGraph generators."),
    exact_limit: int | None = typer.Option(
        None, "--exact-limit", help="Exact T* only up to this many joint actions (default: every instance, by "
        "enumeration up to 20,000 joint actions, by constraint generation beyond); larger ones are recorded as "
        "skipped."),
    plot: Path | None = typer.Option(None, "--plot", help="Write MF-TaS App. J style figures (PNG/PDF/SVG) here."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (instances and summary as records)."),
    solver: str | None = typer.Option(None, "--solver", help="Force a solver (CLARABEL, SCS, MOSEK)."),
) -> None:
    """Compare exact T* with the mean-field T^MF(m) on seeded line/ring/star instances.

    For every N, K and seed: T* (certified; skipped above --exact-limit if given), T^MF = T^MF(1) and
    T^MF(m), their wall times and constraint counts; then mean ± std over seeds (pandas). An
    instance whose best joint action is tied is skipped and counted (ties_skipped), not re-drawn,
    so the seeds stay 0..S-1. Times are wall clock of the library call (model build included).
    """
    import pandas as pd

    from ..factored.graph.factor_graph import FactorGraph

    Ns, Ks, ms = _sweep_axes(graph, agents, actions, m_values, seeds, exact_limit, plot)
    build = {"line": FactorGraph.line, "ring": FactorGraph.ring, "star": FactorGraph.star}[graph.value]
    grid = [(N, K, seed) for N in Ns for K in Ks for seed in range(seeds)]
    records, failures, notes, ties = _sweep(build, grid, ms, graph=graph.value, means=means.value,
                                            exact_limit=exact_limit, solver=solver)
    df = pd.DataFrame(records, columns=None if records else ["graph", "means", "N", "K", "seed"])
    summary = _summarise(df.copy(), Ns, Ks, ms, ties)
    if plot is not None:
        _plot_compare(summary, ms, Ns, Ks, plot, graph=graph.value)
    n_ties = sum(ties.values())
    checks = check_claims(df, ms) if records else {}
    for line in failures:
        typer.echo(f"warning: solver failure: {line}", err=True)
    for line in notes:
        typer.echo(f"warning: {line}", err=True)
    if as_json:
        out = {"graph": graph.value, "means": means.value, "agents": Ns, "actions": Ks, "seeds": seeds, "m": ms,
               "exact_limit": exact_limit, "ties_skipped": n_ties, "failures": failures, "warnings": notes,
               "plot": None if plot is None else str(plot), "checks": checks,
               "instances": _records(df), "summary": _records(summary)}
        typer.echo(json.dumps(out, indent=2))
        return
    _print_compare_tables(summary, ms, graph=graph.value, means=means.value, exact_limit=exact_limit, n_ties=n_ties,
                          checks=checks, n_instances=len(records))
    if plot is not None:
        typer.echo(f"figure written to {plot}")


def _sweep_axes(graph: GraphKind, agents: str, actions: str, m_values: str, seeds: int, exact_limit: int | None,
                plot: Path | None) -> tuple[list[int], list[int], list[int]]:
    """The checked N, K and m of the sweep (m = 1 always); raises on bad options, a missing plot folder, a huge grid."""
    Ns = parse_int_range(agents, "agents", 3 if graph is GraphKind.ring else 2)
    Ks = parse_int_range(actions, "actions", 2)
    ms = sorted({1, *parse_int_range(m_values, "m", 1)})
    if seeds < 1:
        raise InvalidInputError(f"--seeds must be >= 1, got {seeds}")
    if exact_limit is not None and exact_limit < 0:
        raise InvalidInputError(f"--exact-limit must be >= 0, got {exact_limit}")
    if plot is not None:
        check_image_path(plot, "--plot")
        _load_matplotlib()  # fail before the sweep, not after it
    if len(Ns) * len(Ks) * seeds > MAX_COMPARE_INSTANCES:
        raise InstanceTooLargeError(f"the sweep has {len(Ns) * len(Ks) * seeds:,} instances ({len(Ns)} N x {len(Ks)} K "
                                    f"x {seeds:,} seeds), above the limit of {MAX_COMPARE_INSTANCES:,}; lower --seeds "
                                    "or give fewer --agents / --actions")
    return Ns, Ks, ms


def _sweep(build: Callable[..., FactorGraph], grid: list[tuple[int, int, int]], ms: list[int], *, graph: str,
           means: str, exact_limit: int | None,
           solver: str | None) -> tuple[list[dict], list[str], list[str], dict[tuple[int, int], int]]:
    """Every grid point (N, K, seed) with a progress bar on a terminal: (records, solver failures, warnings, ties)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    records: list[dict] = []
    failures: list[str] = []
    notes: list[str] = []
    ties: dict[tuple[int, int], int] = {}
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    err = Console(stderr=True)  # stdout stays clean for --json; no bar unless stderr is a terminal
    with Progress(*columns, console=err, transient=True, disable=not err.is_terminal) as progress:
        task = progress.add_task("compare", total=len(grid))
        for N, K, seed in grid:
            progress.update(task, description=f"{graph} N={N} K={K} seed={seed}")
            fg = build(N, K, seed=seed, means=means)
            try:
                fg.gap_min()  # N >= 2 and K >= 2, so the only possible failure is a tie for a*
            except InvalidInputError:
                ties[(N, K)] = ties.get((N, K), 0) + 1
            else:
                rec = {"graph": graph, "means": means, "N": N, "K": K, "seed": seed}
                rec.update(_compare_instance(fg, ms, exact_limit=exact_limit, solver=solver, failures=failures,
                                             notes=notes))
                records.append(rec)
            progress.advance(task)
    return records, failures, notes, ties
