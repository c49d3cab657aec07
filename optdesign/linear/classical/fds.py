"""Fraction-of-design-space (FDS) curves and plots of the prediction variance (Zahran, Anderson-Cook & Myers 2003;
Atkinson, Donev & Tobias 2007).

The FDS curve of a design w over a region (points z_j with weights rho_j, the candidates uniformly by default) is
the quantile function of the variance function d(z, w) = z^T M(w)^- z under the region's distribution: the point
(f, v) says that a fraction f of the region has a variance of at most v. It is nondecreasing, starts at the
smallest variance and ends at the largest, max_z d(z, w) (the G-value when the region is the candidates). A flat,
low curve is a design that predicts evenly well; the I-criterion is the area under it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from ...errors import InvalidInputError
from ...result import DesignResult
from ...validation import as_matrix, check_image_path, check_weights
from .diagnostics import variance_function

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["fds_curve", "fds_plot"]


def fds_curve(X: ArrayLike, design: ArrayLike | DesignResult | Any, region: ArrayLike | None = None,
              region_weights: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The FDS curve: the fractions f of the region against the variance quantiles v (module doc).

    With the region's variances sorted, v_(1) <= ... <= v_(m), and F_j the region weight of the first j of them,
    the curve is (0, v_(1)), (F_1, v_(1)), ..., (F_m = 1, v_(m)).

    Parameters
    ----------
    X : array_like, shape (K, d)
        The candidates.
    design : array_like or DesignResult or ExactDesignResult
        Weights (or counts) per candidate, normalised here.
    region : array_like, shape (m, d), optional
        The region's points, in the coordinates of X (model rows); the candidates by default.
    region_weights : array_like, shape (m,), optional
        Their weights (equal by default).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        The fractions (m + 1 of them, from 0 to 1) and the variances at them (nondecreasing; inf where a point
        is not estimable).

    Raises
    ------
    InvalidInputError
        Bad candidates, design, region or region weights.

    Examples
    --------
    >>> import numpy as np
    >>> import optdesign as od
    >>> X = np.column_stack([np.ones(3), [-1.0, 0.0, 1.0]])
    >>> f, v = od.fds_curve(X, [0.5, 0.0, 0.5])
    >>> print(np.round(f, 3), np.round(v, 3))
    [0.    0.333 0.667 1.   ] [1. 1. 2. 2.]
    """
    Xa = as_matrix(X, "X")
    Z = Xa if region is None else as_matrix(region, "region", n_cols=Xa.shape[1])
    rho = np.ones(Z.shape[0]) if region_weights is None else check_weights(region_weights, "region_weights")
    if rho.size != Z.shape[0]:
        raise InvalidInputError(f"region_weights must have one weight per region point ({Z.shape[0]}), got {rho.size}")
    variances = variance_function(Xa, design, Z)
    order = np.argsort(variances, kind="stable")
    fractions = np.concatenate([[0.0], np.cumsum(rho[order]) / rho.sum()])
    fractions[-1] = 1.0
    return fractions, np.concatenate([variances[order[:1]], variances[order]])


def fds_plot(X: ArrayLike, designs: ArrayLike | DesignResult | Mapping[str, Any], *, region: ArrayLike | None = None,
             region_weights: ArrayLike | None = None, path: str | Path | None = None,
             title: str | None = None) -> Figure:
    """Plot the FDS curves of one design or of several (a mapping of labels to designs), and save it if asked.

    The curves are those of :func:`fds_curve`; the figure is a bare matplotlib Figure (no pyplot state, any
    backend), written to ``path`` (PNG, PDF or SVG, by its suffix) when given.

    Parameters
    ----------
    X : array_like, shape (K, d)
        The candidates.
    designs : array_like or DesignResult or mapping
        One design (weights, counts or a result), or labels mapped to designs.
    region : array_like, shape (m, d), optional
        The region's points in the coordinates of X; the candidates by default.
    region_weights : array_like, shape (m,), optional
        Their weights (equal by default).
    path : str or pathlib.Path, optional
        Where to write the figure.
    title : str, optional
        The axes' title.

    Returns
    -------
    matplotlib.figure.Figure
        One axes: fraction of the design space against the variance d(x, w).

    Raises
    ------
    InvalidInputError
        What :func:`fds_curve` refuses, no design, or a path that cannot be written.
    """
    from matplotlib.figure import Figure

    curves = dict(designs) if isinstance(designs, Mapping) else {"design": designs}
    if not curves:
        raise InvalidInputError("fds_plot needs at least one design")
    target = None if path is None else check_image_path(Path(path), "path")
    fig = Figure(figsize=(6.0, 4.0), layout="constrained")
    ax = fig.add_subplot()
    for label, design in curves.items():
        fractions, variances = fds_curve(X, design, region, region_weights)
        ax.plot(fractions, variances, drawstyle="steps-pre", label=str(label))
    ax.set_xlabel("fraction of design space")
    ax.set_ylabel("variance d(x, w) = x^T M(w)^-1 x")
    ax.set_xlim(0.0, 1.0)
    ax.set_title(title or "Fraction of design space")
    if len(curves) > 1:
        ax.legend()
    if target is not None:
        fig.savefig(target)
    return fig
