"""The report of ``optdesign compare`` (:mod:`optdesign.cli.compare`): its rich tables and its MF-TaS App. J figures."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from rich import box
from rich.table import Table

from ..errors import InvalidInputError
from ..runtime.terminal import narrow_console

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

__all__: list[str] = []  # called by optdesign.cli.compare only


def _mean_std(row: dict, col: str, fmt: str = "{:.4f}") -> str:
    """``mean ± std`` of a summary column ("-" when there is no mean, the mean alone without a std)."""
    mean, std = row.get(f"{col}_mean"), row.get(f"{col}_std")
    if mean is None or not np.isfinite(mean):
        return "-"
    if std is None or not np.isfinite(std):
        return fmt.format(mean)
    return f"{fmt.format(mean)} ± {fmt.format(std)}"


def _mean(row: dict, col: str, fmt: str) -> str:
    """The mean of a summary column, or "-"."""
    mean = row.get(f"{col}_mean")
    return "-" if mean is None or not np.isfinite(mean) else fmt.format(mean)


def _print_compare_tables(summary: pd.DataFrame, ms: list[int], *, graph: str, means: str, exact_limit: int | None,
                          n_ties: int, checks: dict[str, list[str]], n_instances: int) -> None:
    """The ratio and cost tables of the summary, then the notes on skipped instances and the claim checks."""
    shown_m = [m for m in ms if m != 1]
    # headers break at their spaces and "a ± b" cells at theirs: the tables fit 80 columns without cutting a word
    ratios = _table(["N", "K", "seeds", "exact", "T^MF / T*", "4 Abar / rho", *(f"T^MF({m}) / T^MF" for m in shown_m)])
    cost = _table(["N", "K", "|A|", "exact rows", "FCR rows", "t T*", "t MF", *(f"t MF({m})" for m in shown_m)])
    for row in summary.to_dict("records"):
        nk = [str(row["N"]), str(row["K"])]
        ratios.add_row(*nk, str(row["n_instances"]), str(row["n_exact"]), _mean_std(row, "ratio_mf_exact"),
                       _mean(row, "ratio_bound", "{:.0f}"), *(_mean_std(row, f"ratio_m{m}") for m in shown_m))
        n_joint = row["n_joint_actions_mean"]
        exact_rows = "skipped" if row["n_exact"] == 0 else _mean(row, "T_star_constraints", "{:.0f}")
        cost.add_row(*nk, "-" if not np.isfinite(n_joint) else f"{n_joint:.0f}", exact_rows,
                     _mean(row, "T_mf_constraints", "{:.0f}"), _mean(row, "T_star_time", "{:.3f}"),
                     _mean(row, "T_mf_time", "{:.3f}"), *(_mean(row, f"time_m{m}", "{:.3f}") for m in shown_m))
    console = narrow_console()
    console.print(f"{graph} instances ({means} means): T^MF / T* and T^MF(m) / T^MF, mean ± std over seeds",
                  style="bold", markup=False)
    console.print(ratios)
    console.print("cost, mean over seeds: constraints (FCR rows vs one per joint action a != a*), wall times (s)",
                  style="bold", markup=False)
    console.print(cost)
    from ..factored.exact.characteristic_time import EXACT_MAX_JOINT_ACTIONS

    skipped = "computed for every instance" if exact_limit is None else f"skipped when |A| > {exact_limit}"
    console.print(f"exact T* is {skipped} (enumerated up to {EXACT_MAX_JOINT_ACTIONS:,} joint actions, by certified "
                  "constraint generation beyond); T^MF(m) is skipped when m >= |A| (columns 'exact', '-').",
                  style="dim", markup=False)
    for claim, violations in checks.items():
        verdict = f"holds on all {n_instances} instances" if not violations else \
            f"FAILS on {len(violations)}: " + "; ".join(violations)
        console.print(f"check {claim}: {verdict}", markup=False)
    if n_ties:
        console.print(f"{n_ties} instance(s) with a tie for the best joint action were skipped (not re-drawn).",
                      style="dim", markup=False)


def _table(headers: list[str]) -> Table:
    """A borderless table of right-justified columns whose headers and cells wrap at spaces (a word wider than its
    column folds; nothing is cut)."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for header in headers:
        table.add_column(header, justify="right", overflow="fold")
    return table


def _load_matplotlib() -> tuple[type[Figure], type[FigureCanvasAgg],
                                tuple[type[FuncFormatter], type[LogLocator], type[NullFormatter]]]:
    """The matplotlib classes --plot needs; InvalidInputError when matplotlib is not installed."""
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
