"""The papers' kind of figures from a results directory (matplotlib, no display needed).

Fixed confidence: mean samples (or rounds) +- one standard error against the study's axis ``x`` (d, m, N, ...),
one line per algorithm (and per value of the study's ``series`` parameter, e.g. the graph type), one panel
per (delta, other varying parameters), the lower bound
c kl(delta, 1 - delta) dashed and the practical bound t* = c log((1 + log t*) / delta) dotted where they
apply; log y by default (``log_y = false`` in [study] turns it off); integer ticks on an integer axis.
Fixed budget: the mean error curve E(t) +- s.e. per algorithm, one panel per cell (log y, as LeJeune et al.).
One legend for the figure, right of the panels (never over the data); 8 x 5 in for one panel, at 100 dpi.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import numpy.typing as npt
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from optdesign.errors import InvalidInputError
from optdesign.validation import check_image_path

from .aggregate import error_curves, summarize
from .store import read_meta

__all__ = ["plot_study"]

PLOT_FILE = "plot.png"
#: inches of a single-panel figure, of each panel of a larger one, and the resolution of the file
SINGLE_PANEL = (8.0, 5.0)
PANEL = (5.5, 4.0)
DPI = 100
BOUND_LABELS = ("lower bound c kl(δ, 1-δ)", "practical bound t* = c β(t*, δ)")


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
    if "T" in summary.columns:
        fig = _error_curves(out)
    else:
        fig = _sample_complexity(summary, meta)
    fig.savefig(target, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    return target


def _panels(n: int) -> tuple[Figure, npt.NDArray[np.object_]]:
    """A figure of ``n`` panels, three per row, and its axes (flattened; the spare ones hidden)."""
    cols = min(n, 3)
    rows = math.ceil(n / cols)
    size = SINGLE_PANEL if n == 1 else (PANEL[0] * cols, PANEL[1] * rows)
    fig, axes = plt.subplots(rows, cols, figsize=size, squeeze=False, layout="constrained")
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return fig, axes.ravel()


def _sample_complexity(summary: pd.DataFrame, meta: dict[str, Any]) -> Figure:
    """Mean samples (or rounds) against the study's axis, one panel per delta and other varying parameters."""
    x = meta.get("x")
    unit = "mean_rounds" if meta.get("y") == "rounds" else "mean"
    xcol = f"param_{x}" if x else "cell"
    series = f"param_{meta['series']}" if meta.get("series") else None
    fixed = [c for c in summary.columns if c.startswith("param_") and c not in (xcol, series)
             and summary[c].nunique() > 1] if x else []  # without an axis, the cells are the x ticks
    panel_keys = ["delta", *(["family"] if summary["family"].nunique() > 1 else []), *fixed]
    groups = list(summary.groupby(panel_keys, sort=False)) if panel_keys else [((), summary)]
    fig, axes = _panels(len(groups))
    for ax, (key, panel) in zip(axes, groups, strict=False):
        key = key if isinstance(key, tuple) else (key,)
        for name, line in panel.groupby(["algorithm", series] if series else "algorithm", sort=False):
            algo = f"{name[0]}, {meta['series']}={name[1]}" if series else name
            line = line.sort_values(xcol) if x else line
            xs = line[xcol].to_numpy() if x else list(range(len(line)))
            err = line["se"] if unit == "mean" else line["se_rounds"]
            ax.errorbar(xs, line[unit], yerr=err, marker="o", ms=4, capsize=3, label=algo)
        _bounds(ax, panel, xcol if x else None)
        if x and not meta.get("log_x", False) and _integers(summary[xcol]):
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if not x:
            ax.set_xticks(range(len(panel.drop_duplicates("cell"))), panel.drop_duplicates("cell")["cell"],
                          rotation=30, ha="right", fontsize=7)
        ax.set_xlabel(x or "instance")
        ax.set_ylabel("rounds" if unit == "mean_rounds" else "samples")
        if meta.get("log_y", True):
            ax.set_yscale("log")
        if meta.get("log_x", False):
            ax.set_xscale("log")
        ax.set_title(", ".join(_label(k, v) for k, v in zip(panel_keys, key, strict=True)), fontsize=9)
        ax.grid(alpha=0.3, which="both")
    _legend(fig, axes)
    fig.suptitle(meta["name"])
    return fig


def _bounds(ax: Any, panel: pd.DataFrame, xcol: str | None) -> None:
    """The lower bound c kl(delta, 1 - delta) (dashed, black) and the practical bound t* (dotted, grey) of a panel's
    cells."""
    bound = panel.drop_duplicates(xcol or "cell")
    bound = bound.sort_values(xcol) if xcol else bound
    xs = bound[xcol].to_numpy() if xcol else list(range(len(bound)))
    single = len(xs) == 1  # one point: a short horizontal tick, told apart by colour and width
    for (col, style, colour), label in zip((("lower_bound", "--", "black"), ("practical_bound", ":", "dimgray")),
                                           BOUND_LABELS, strict=True):
        if col in bound and bound[col].notna().any():
            ax.plot(xs, bound[col], style, color=colour, lw=1, label=label, marker="_" if single else None,
                    ms=14 if col == "lower_bound" else 22, mew=1.5)


def _integers(values: pd.Series) -> bool:
    """Whether every value of an axis column is an integer (d, m, N, ...)."""
    numbers = pd.to_numeric(values, errors="coerce")
    return bool(numbers.notna().all() and (numbers % 1 == 0).all())


def _legend(fig: Figure, axes: npt.NDArray[np.object_]) -> None:
    """One legend for every panel's lines (each label once, the bounds last), right of the panels."""
    entries: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            entries.setdefault(label, handle)
    entries = {k: entries[k] for k in sorted(entries, key=lambda label: label in BOUND_LABELS)}
    if entries:
        fig.legend(list(entries.values()), list(entries), loc="outside right upper", fontsize=8)


def _label(key: str, value: object) -> str:
    """A panel title item: the family name, or ``name=value`` of a parameter."""
    if key == "family":
        return str(value)
    name = key.removeprefix("param_")
    return f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}"


def _error_curves(out: Path) -> Figure:
    """The mean error curves E(t) +- s.e., one panel per cell."""
    curves = error_curves(out)
    cells = list(dict.fromkeys(curves["cell"]))
    fig, axes = _panels(len(cells))
    for ax, cell in zip(axes, cells, strict=False):
        for algo, line in curves[curves["cell"] == cell].groupby("algorithm", sort=False):
            ax.plot(line["t"], line["mean_error"], label=algo)
            ax.fill_between(line["t"], line["mean_error"] - line["se_error"].fillna(0),
                            line["mean_error"] + line["se_error"].fillna(0), alpha=0.2)
        ax.set_yscale("symlog", linthresh=1e-3)
        ax.set_xlabel("t (pulls)")
        ax.set_ylabel("mean error E(t)")
        ax.set_title(cell, fontsize=9)
        ax.grid(alpha=0.3, which="both")
    _legend(fig, axes)
    return fig
