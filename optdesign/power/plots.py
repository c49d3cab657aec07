"""Drawing a power curve: one line per test against the scale of the effects or the number of runs, the level
alpha as a dotted line, and for a Monte Carlo curve a band of +-2 standard errors around each line."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InvalidInputError
from ..validation import check_image_path

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = ["power_curve_plot"]

#: the half-width of a Monte Carlo curve's band, in standard errors
BAND_SE = 2.0


def power_curve_plot(curve: pd.DataFrame, *, alpha: float | None = None, path: str | Path | None = None,
                     title: str | None = None) -> Figure:
    """Plot a power curve (:func:`optdesign.power_curve` or :func:`optdesign.power.glm_power_curve`), and save it
    if asked.

    The figure is a bare matplotlib Figure (no pyplot state, any backend), written to ``path`` (PNG, PDF or SVG, by
    its suffix) when given. A Monte Carlo curve's band is power +- 2 SE, clipped to [0, 1].

    Parameters
    ----------
    curve : pandas.DataFrame
        A curve: one column per test, or the column groups ``"power"`` and ``"se"``; its index is the scale or the
        number of runs.
    alpha : float, optional
        The level drawn as a dotted line; ``curve.attrs["alpha"]`` by default (none without either).
    path : str or pathlib.Path, optional
        Where to write the figure.
    title : str, optional
        The axes' title.

    Returns
    -------
    matplotlib.figure.Figure
        One axes: the power of each test against the curve's index.

    Raises
    ------
    InvalidInputError
        A table that is not a power curve (no rows, or power columns missing), or a path that cannot be written.
    """
    import pandas as pd
    from matplotlib.figure import Figure

    if not isinstance(curve, pd.DataFrame) or curve.empty:
        raise InvalidInputError("curve must be a nonempty DataFrame from power_curve or glm_power_curve")
    grouped = isinstance(curve.columns, pd.MultiIndex)
    if grouped and not {"power", "se"} <= set(curve.columns.get_level_values(0)):
        raise InvalidInputError("a Monte Carlo curve has the column groups 'power' and 'se'")
    target = None if path is None else check_image_path(Path(path), "path")
    power = curve["power"] if grouped else curve
    fig = Figure(figsize=(6.0, 4.0), layout="constrained")
    ax = fig.add_subplot()
    x = np.asarray(curve.index, dtype=float)
    for term in power.columns:
        line = ax.plot(x, power[term].to_numpy(dtype=float), marker="o" if x.size < 15 else None, label=str(term))
        if grouped:
            half = BAND_SE * curve["se"][term].to_numpy(dtype=float)
            p = power[term].to_numpy(dtype=float)
            ax.fill_between(x, np.clip(p - half, 0, 1), np.clip(p + half, 0, 1), color=line[0].get_color(),
                            alpha=0.2, linewidth=0)
    level = alpha if alpha is not None else curve.attrs.get("alpha")
    if level is not None:
        ax.axhline(float(level), color="grey", linestyle=":", linewidth=1, label=f"alpha = {float(level):g}")
    ax.set_xlabel("number of runs N" if curve.index.name == "runs" else "scale of the effects")
    ax.set_ylabel("power")
    ax.set_ylim(0.0, 1.02)
    ax.set_title(title or "Power curve")
    ax.legend(fontsize="small")
    if target is not None:
        fig.savefig(target)
    return fig
