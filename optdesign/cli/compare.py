"""``optdesign compare``: exact T* against the mean-field T^MF(m) over a grid of seeded instances.

Checks the MF-TaS paper's claims instance by instance (T* <= T^MF(m), T^MF(m) nonincreasing in m,
T^MF / T* <= 4 Abar / rho) and draws its App. J figures.
"""

from __future__ import annotations

import itertools
import json
import time
import warnings
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np
import typer
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from ..errors import InstanceTooLargeError, InvalidInputError, SolverError, exit_on_project_errors
from .inputs import parse_int_range

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

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


def _mean_std(row: dict, col: str, fmt: str = "{:.4f}") -> str:
    mean, std = row.get(f"{col}_mean"), row.get(f"{col}_std")
    if mean is None or not np.isfinite(mean):
        return "-"
    if std is None or not np.isfinite(std):
        return fmt.format(mean)
    return f"{fmt.format(mean)} ± {fmt.format(std)}"


def _mean(row: dict, col: str, fmt: str) -> str:
    mean = row.get(f"{col}_mean")
    return "-" if mean is None or not np.isfinite(mean) else fmt.format(mean)


def _print_compare_tables(summary: pd.DataFrame, ms: list[int], *, graph: str, means: str, exact_limit: int | None,
                          n_ties: int, checks: dict[str, list[str]], n_instances: int) -> None:
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
        widths = [max(Measurement.get(console, wide, t).maximum, len(cast(str, t.title))) for t in (ratios, cost)]
        console = Console(width=max(80, *widths))
    console.print(ratios)
    console.print(cost)
    from ..factored.exact.characteristic_time import EXACT_MAX_JOINT_ACTIONS

    skipped = "computed for every instance" if exact_limit is None else f"skipped when |A| > {exact_limit}"
    console.print(f"exact T* is {skipped} (enumerated up to {EXACT_MAX_JOINT_ACTIONS:,} joint actions, by certified "
                  "constraint generation beyond); T^MF(m) is skipped when m >= |A| (columns 'exact', '-').",
                  style="dim", markup=False)
    for claim, violations in checks.items():
        verdict = f"holds on all {n_instances} instances" if not violations else \
            f"FAILS on {len(violations)}: " + "; ".join(violations)
        console.print(f"check {claim}: {verdict}", markup=False, soft_wrap=True)
    if n_ties:
        console.print(f"{n_ties} instance(s) with a tie for the best joint action were skipped (not re-drawn).",
                      style="dim", markup=False)


def _load_matplotlib() -> tuple[type[Figure], type[FigureCanvasAgg],
                                tuple[type[FuncFormatter], type[LogLocator], type[NullFormatter]]]:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    except ImportError:
        raise InvalidInputError('--plot needs matplotlib: pip install ".[plots]"') from None
    return Figure, FigureCanvasAgg, (FuncFormatter, LogLocator, NullFormatter)


def _plot_compare(summary: pd.DataFrame, ms: list[int], Ns: list[int], Ks: list[int], path: Path, *,
                  graph: str) -> None:
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
        by_n = [(r["N"], r["ratio_mf_exact_mean"], r["ratio_mf_exact_std"], r["ratio_bound_mean"]) for r in rows
                if np.isfinite(r["ratio_mf_exact_mean"])]
        if by_n:
            n_agents, ratio, err, bound = zip(*by_n, strict=True)
            bar = ax.errorbar(n_agents, ratio, yerr=np.nan_to_num(err), marker="o", capsize=3, label=f"K={K}")
            ax.plot(n_agents, bound, ls="--", color=bar.lines[0].get_color())
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
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..factored.graph.factor_graph import FactorGraph

    Ns = parse_int_range(agents, "agents", 3 if graph is GraphKind.ring else 2)
    Ks = parse_int_range(actions, "actions", 2)
    ms = sorted({1, *parse_int_range(m_values, "m", 1)})
    if seeds < 1:
        raise InvalidInputError(f"--seeds must be >= 1, got {seeds}")
    limit = exact_limit
    if limit is not None and limit < 0:
        raise InvalidInputError(f"--exact-limit must be >= 0, got {limit}")
    if plot is not None:
        if not plot.parent.exists():
            raise InvalidInputError(f"--plot: directory not found: {plot.parent}")
        _load_matplotlib()  # fail before the sweep, not after it
    build = {"line": FactorGraph.line, "ring": FactorGraph.ring, "star": FactorGraph.star}[graph.value]
    if len(Ns) * len(Ks) * seeds > MAX_COMPARE_INSTANCES:
        raise InstanceTooLargeError(f"the sweep has {len(Ns) * len(Ks) * seeds:,} instances ({len(Ns)} N x {len(Ks)} K "
                                    f"x {seeds:,} seeds), above the limit of {MAX_COMPARE_INSTANCES:,}; lower --seeds "
                                    "or give fewer --agents / --actions")
    grid = [(N, K, seed) for N in Ns for K in Ks for seed in range(seeds)]
    records: list[dict] = []
    failures: list[str] = []
    notes: list[str] = []
    ties: dict[tuple[int, int], int] = {}
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
    checks = check_claims(df, ms) if records else {}
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
