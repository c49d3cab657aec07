"""The papers' kind of figures from a results directory (matplotlib, no display needed).

Fixed confidence: one panel per delta, largest first (easy to hard), and per other varying parameter; the panels
share one y axis, logarithmic by default (``log_y = false`` in [study] turns it off) and labelled the same way on
every panel. The lower bound c kl(delta, 1 - delta) is dashed and the practical bound t* = c log((1 + log t*) /
delta) dotted where they apply. The title names the study, its instances and its deltas; one legend sits below the
panels. Two layouts:

* a sweep, when the study's axis ``x`` (d, m, N, ...) takes several values: mean samples (or rounds) +- one
  standard error against x, one line per algorithm (and per value of the study's ``series`` parameter, e.g. the
  graph type), the bounds along x; integer ticks on an integer axis;
* otherwise one panel per (delta, instance) and one position per algorithm: every run a point (jittered), their
  quartiles a box and their mean a diamond, so the spread and a heavy tail show at once; the bounds are lines
  across the panel.

Fixed budget (graph thresholding): the mean error curve E(t) +- s.e. per algorithm, one panel per cell (log y, as
LeJeune et al.). Fixed-budget mode: P(error) against the budget T with its Clopper–Pearson 95 % interval, one line per
algorithm and one panel per cell (y logarithmic above 1e-3 and linear below, so a rate of 0 shows; ``log_x`` for a
logarithmic T axis).
Panels are 5.5 x 4 in (8 x 5 in for a single one, wider with many algorithms), three per row, at 100 dpi.
"""

from __future__ import annotations

import math
import re
import textwrap
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import numpy.typing as npt
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

from optdesign.errors import InvalidInputError
from optdesign.validation import check_image_path

from .aggregate import error_curves, records_frame, summarize
from .labels import short_cells
from .store import read_meta

__all__ = ["plot_study"]

PLOT_FILE = "plot.png"
#: inches of a single-panel figure, of each panel of a larger one, and the resolution of the file
SINGLE_PANEL = (8.0, 5.0)
PANEL = (5.5, 4.0)
DPI = 100
#: inches per algorithm of a panel with one position per algorithm (wider than PANEL with many algorithms)
PER_ALGORITHM = 0.7
#: characters of an 8-point tick label per inch, less a margin (the algorithm names wrap to their position's width)
CHARS_PER_INCH = 11
BOUND_LABELS = ("lower bound c kl(δ, 1-δ)", "practical bound t* = c β(t*, δ)")
#: (summary column, line style, colour) of each bound, in the order of BOUND_LABELS
BOUND_STYLES = (("lower_bound", "--", "black"), ("practical_bound", ":", "dimgray"))
RUN_LABELS = ("one run", "median and quartiles", "mean of the runs")


def plot_study(out: str | Path, path: str | Path | None = None) -> Path:
    """Draw the study in ``out`` to ``path`` (default ``out/plot.png``); returns the file written.

    Parameters
    ----------
    out : str or Path
        The results directory to draw (its ``meta.json`` gives the axes and scales).
    path : str or Path, optional
        The image to write (its suffix picks the format); None writes ``out/plot.png``.

    Returns
    -------
    Path
        The file written.

    Raises
    ------
    InvalidInputError
        ``out`` holds no study results, or no finished run; ``path`` is a directory, lies in a directory that does
        not exist, or has a suffix that is not an image format.
    """
    out = Path(out)
    target = check_image_path(path, "--output") if path is not None else out / PLOT_FILE
    meta = read_meta(out)["study"]
    summary = summarize(out)
    if summary.empty:
        raise InvalidInputError(f"{out} has no finished runs to plot")
    if "T" in summary.columns and "error_ci_low" in summary.columns:
        fig = _budget_curves(summary, meta)
    elif "T" in summary.columns:
        fig = _error_curves(out)
        fig.suptitle(_title(summary, meta))
    else:
        fig = _sample_complexity(summary, meta, records_frame(out)[0])
    fig.savefig(target, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return target


def _panels(n: int, size: tuple[float, float] = PANEL) -> tuple[Figure, npt.NDArray[np.object_]]:
    """A figure of ``n`` panels of ``size`` inches, three per row, sharing their y axis, and its axes (flattened;
    the spare ones hidden)."""
    cols = min(n, 3)
    rows = math.ceil(n / cols)
    whole = SINGLE_PANEL if n == 1 and size == PANEL else (size[0] * cols, size[1] * rows)
    fig, axes = plt.subplots(rows, cols, figsize=whole, squeeze=False, sharey=True, layout="constrained")
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return fig, axes.ravel()


def _sample_complexity(summary: pd.DataFrame, meta: dict[str, Any], runs: pd.DataFrame) -> Figure:
    """The fixed-confidence figure: a sweep along the study's axis when it takes several values, else the runs of
    each algorithm side by side (module docstring); ``runs`` holds one row per record (:func:`records_frame`)."""
    x = meta.get("x")
    xcol = f"param_{x}" if x else None
    sweep = xcol is not None and xcol in summary and summary[xcol].nunique() > 1
    fig = _sweep(summary, meta, str(xcol)) if sweep else _runs_by_algorithm(summary, meta, runs)
    for ax in fig.axes:
        _y_axis(ax, bool(meta.get("log_y", True)))
    _legend(fig, np.asarray(fig.axes), runs=not sweep)
    fig.suptitle(_title(summary, meta))
    return fig


def _sweep(summary: pd.DataFrame, meta: dict[str, Any], xcol: str) -> Figure:
    """Mean samples (or rounds) +- s.e. against the study's axis, one panel per delta and other varying
    parameters."""
    x = meta["x"]
    unit = "mean_rounds" if meta.get("y") == "rounds" else "mean"
    series = f"param_{meta['series']}" if meta.get("series") else None
    # a parameter that varies at a given x gets its own panels (one that x determines, e.g. a scale per N, does not)
    fixed = [c for c in summary.columns if c.startswith("param_") and c not in (xcol, series)
             and summary.groupby(xcol)[c].nunique().max() > 1]
    keys = ["delta", *(["family"] if summary["family"].nunique() > 1 else []), *fixed]
    groups = _ordered_groups(summary, keys)
    fig, axes = _panels(len(groups))
    for ax, (key, panel) in zip(axes, groups, strict=False):
        for name, line in panel.groupby(["algorithm", series] if series else "algorithm", sort=False):
            label = f"{name[0]}, {meta['series']}={name[1]}" if series else str(name)
            line = line.sort_values(xcol)
            err = line["se"] if unit == "mean" else line["se_rounds"]
            ax.errorbar(line[xcol].to_numpy(), line[unit], yerr=err, marker="o", ms=4, capsize=3, label=label)
        bound = panel.drop_duplicates(xcol).sort_values(xcol)
        for (col, style, colour), label in zip(BOUND_STYLES, BOUND_LABELS, strict=True):
            if col in bound and bound[col].notna().any():
                ax.plot(bound[xcol].to_numpy(), bound[col], style, color=colour, lw=1, label=label)
        if meta.get("log_x", False):
            _log_scale(ax, "x")
        elif _integers(summary[xcol]):
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel(x)
        ax.set_title(_panel_title(summary, keys, key), fontsize=9)
    for ax in axes[::3]:
        ax.set_ylabel(f"{'rounds' if unit == 'mean_rounds' else 'samples'} (mean ± s.e.)")
    return fig


def _runs_by_algorithm(summary: pd.DataFrame, meta: dict[str, Any], runs: pd.DataFrame) -> Figure:
    """One panel per (delta, instance), one position per algorithm: each run a point, a box and the mean."""
    column = "rounds" if meta.get("y") == "rounds" else "samples"
    algorithms = list(dict.fromkeys(summary["algorithm"]))
    colours = {a: f"C{i % 10}" for i, a in enumerate(algorithms)}
    groups = _ordered_groups(summary, ["delta", "cell"])
    width = max(PANEL[0], PER_ALGORITHM * len(algorithms) + 1.5)
    fig, axes = _panels(len(groups), (width, PANEL[1] + 0.5))
    names = [textwrap.fill(a, max(8, int(CHARS_PER_INCH * width / len(algorithms))), break_on_hyphens=False,
                           break_long_words=False)
             for a in algorithms]  # horizontal, wrapped to the width of a position
    rng = np.random.default_rng(0)  # the jitter: the same figure every time
    for ax, (key, panel) in zip(axes, groups, strict=False):
        delta, cell = key
        mine = runs[(runs["cell"] == cell) & (runs["delta"] == delta)]
        for i, algorithm in enumerate(algorithms):
            values = mine.loc[mine["label"] == algorithm, column].to_numpy(float)
            _runs_at(ax, i, values[np.isfinite(values)], colours[algorithm], rng)
        for (col, style, colour), label in zip(BOUND_STYLES, BOUND_LABELS, strict=True):
            if col in panel and panel[col].notna().any():
                ax.axhline(float(panel[col].dropna().iloc[0]), ls=style, color=colour, lw=1.2, label=label)
        ax.set_xticks(range(len(algorithms)), names, fontsize=8)
        ax.set_xlim(-0.6, len(algorithms) - 0.4)
        ax.set_title(_panel_title(summary, ["delta", "cell"], key), fontsize=9)
    for ax in axes[::3]:
        ax.set_ylabel(f"{column} (each run)")
    return fig


def _runs_at(ax: Any, at: float, values: np.ndarray, colour: str, rng: np.random.Generator) -> None:
    """The runs of one algorithm at x = ``at``: jittered points in its colour, over them a box (median, quartiles;
    whiskers to the furthest run within 1.5 IQR) and the mean as a diamond."""
    if not values.size:
        return
    alpha, size = np.clip(3.0 / np.sqrt(values.size), 0.2, 0.7), np.clip(80.0 / np.sqrt(values.size), 8.0, 24.0)
    ax.scatter(at + rng.uniform(-0.2, 0.2, values.size), values, s=size, color=colour, alpha=alpha, lw=0, zorder=2)
    line = {"color": "0.15", "lw": 1.0}
    ax.boxplot([values], positions=[at], widths=0.55, showfliers=False, manage_ticks=False, zorder=3,
               boxprops=line, whiskerprops=line, capprops=line, medianprops={**line, "lw": 2.0})
    ax.scatter([at], [values.mean()], marker="D", s=40, facecolor="white", edgecolor="black", zorder=4)


def _ordered_groups(summary: pd.DataFrame, keys: list[str]) -> list[tuple[tuple, pd.DataFrame]]:
    """The summary grouped by ``keys`` (each key a tuple), delta descending, then the other keys in natural order
    (numbers inside a text compare as numbers: N=20 before N=100)."""
    groups = [(key if isinstance(key, tuple) else (key,), panel) for key, panel in summary.groupby(keys, sort=False)]
    return sorted(groups, key=lambda g: (-float(g[0][0]), *(_natural(v) for v in g[0][1:])))


def _natural(value: object) -> tuple:
    """A sort key that orders the numbers inside a text numerically."""
    parts = re.split(r"(-?\d+(?:\.\d+)?(?:e-?\d+)?)", str(value))
    return tuple((0, float(p), "") if i % 2 else (1, 0.0, p) for i, p in enumerate(parts) if p)


def _y_axis(ax: Any, log: bool) -> None:
    """The same y labelling on every panel (:func:`_log_scale` on a log axis) and its grid."""
    if log:
        _log_scale(ax, "y")
    ax.grid(alpha=0.3, which="major")
    ax.grid(alpha=0.12, which="minor")


def _log_scale(ax: Any, which: str) -> None:
    """Axis ``which`` ("x" or "y") of ``ax`` logarithmic and labelled the same way at any range: majors at 1, 2, 5 x
    10^k in plain numbers, no minor labels."""
    getattr(ax, f"set_{which}scale")("log")
    axis = getattr(ax, f"{which}axis")
    axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: _plain(v)))
    axis.set_minor_formatter(NullFormatter())


def _plain(value: float) -> str:
    """A tick label: 200, 5,000, 20,000, then 1e5, 2e6 from 10^5 on."""
    if value >= 1e5:
        mantissa, exponent = f"{value:.0e}".split("e")
        return f"{mantissa}e{int(exponent)}"
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


def _title(summary: pd.DataFrame, meta: dict[str, Any]) -> str:
    """The study's name, its instances (the one instance, or their shared options and count) and its deltas (or
    budgets)."""
    cells = list(dict.fromkeys(summary["cell"]))
    _, common = short_cells(cells)
    instances = common if len(cells) == 1 else f"{len(cells)} instances" + (f" ({common})" if common else "")
    level = "T" if "T" in summary.columns else "delta"
    levels = ", ".join(f"{v:g}" for v in sorted(set(summary[level]), reverse=level == "delta"))
    return f"{meta['name']}: {instances}; {'δ' if level == 'delta' else 'T'} = {levels}"


def _integers(values: pd.Series) -> bool:
    """Whether every value of an axis column is an integer (d, m, N, ...)."""
    numbers = pd.to_numeric(values, errors="coerce")
    return bool(numbers.notna().all() and (numbers % 1 == 0).all())


def _legend(fig: Figure, axes: npt.NDArray[np.object_], runs: bool = False) -> None:
    """One legend for every panel's lines (each label once, the bounds last), below the panels; with ``runs``,
    the markers of the runs, their box and their mean explained after them."""
    entries: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            entries.setdefault(label, handle)
    entries = {k: entries[k] for k in sorted(entries, key=lambda label: label in BOUND_LABELS)}
    if runs:
        entries.update(zip(RUN_LABELS, _run_handles(), strict=True))
    if entries:
        fig.legend(list(entries.values()), list(entries), loc="outside lower center", fontsize=8, frameon=False,
                   ncols=min(len(entries), 3))


def _run_handles() -> list[Line2D]:
    """Legend handles of a run (a point), the box and the mean (a diamond), in grey."""
    return [Line2D([], [], ls="", marker="o", ms=4, color="gray", alpha=0.6),
            Line2D([], [], ls="", marker="s", ms=9, mfc="none", mec="0.15"),
            Line2D([], [], ls="", marker="D", ms=6, mfc="white", mec="black")]


def _panel_title(summary: pd.DataFrame, keys: list[str], key: tuple) -> str:
    """What sets a panel apart: its delta (when the study has several), its instance (shortened, when the study has
    several), its family, ``name=value`` of its other parameters."""
    items = []
    for name, value in zip(keys, key, strict=True):
        if name in ("delta", "cell") and summary[name].nunique() == 1:
            continue
        if name == "delta":
            items.append(f"δ = {value:g}")
        elif name == "cell":
            items.append(short_cells(list(summary["cell"]))[0][value])
        elif name == "family":
            items.append(str(value))
        else:
            name = name.removeprefix("param_")
            items.append(f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}")
    return ", ".join(items)


def _error_curves(out: Path) -> Figure:
    """The mean error curves E(t) +- s.e., one panel per cell."""
    curves = error_curves(out)
    cells = sorted(dict.fromkeys(curves["cell"]), key=_natural)
    fig, axes = _panels(len(cells))
    for ax, cell in zip(axes, cells, strict=False):
        for algo, line in curves[curves["cell"] == cell].groupby("algorithm", sort=False):
            t, mean = line["t"].to_numpy(dtype=float), line["mean_error"].to_numpy(dtype=float)
            se = line["se_error"].fillna(0).to_numpy(dtype=float)  # float arrays: older pandas keep object columns
            ax.plot(t, mean, label=algo)
            ax.fill_between(t, mean - se, mean + se, alpha=0.2)
        ax.set_yscale("symlog", linthresh=1e-3)
        ax.set_xlabel("t (pulls)")
        ax.set_title(cell, fontsize=9)
        ax.grid(alpha=0.3, which="both")
    axes[0].set_ylabel("mean error E(t)")
    _legend(fig, axes)
    return fig


def _budget_curves(summary: pd.DataFrame, meta: dict[str, Any]) -> Figure:
    """P(error) against the budget T with its 95 % interval, one line per algorithm, one panel per cell, titled."""
    cells = sorted(dict.fromkeys(summary["cell"]), key=_natural)
    names = short_cells(cells)[0]
    fig, axes = _panels(len(cells))
    for ax, cell in zip(axes, cells, strict=False):
        for algorithm, line in summary[summary["cell"] == cell].groupby("algorithm", sort=False):
            line = line.sort_values("T")
            rate = line["error_rate"].to_numpy(dtype=float)
            low, high = line["error_ci_low"].to_numpy(dtype=float), line["error_ci_high"].to_numpy(dtype=float)
            ax.errorbar(line["T"].to_numpy(dtype=float), rate, yerr=[rate - low, high - rate], marker="o", ms=4,
                        capsize=3, label=algorithm)
        if meta.get("log_y", True):
            ax.set_yscale("symlog", linthresh=1e-3)
        if meta.get("log_x", False):
            _log_scale(ax, "x")
        ax.set_xlabel("budget T (pulls)")
        if len(cells) > 1:
            ax.set_title(names[cell], fontsize=9)
        ax.grid(alpha=0.3, which="both")
    for ax in axes[::3]:
        ax.set_ylabel("P(error), 95 % Clopper–Pearson")
    _legend(fig, axes)
    fig.suptitle(_title(summary, meta))
    return fig
