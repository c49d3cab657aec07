"""Split-split-plot exact designs: very hard-to-change factors per whole plot, hard-to-change ones per sub-plot (nested
in the whole plots), easy-to-change ones run by run.

The candidates are every triple (whole-plot setting a, sub-plot setting b, sub-sub-plot setting t), row
(a Kb + b) Kt + t of the model matrix X of a formula over all factors (:mod:`optdesign.exact_designs.plot_layout`). The
runs of a whole plot share a, those of a sub-plot share b; the whole plots' and the sub-plots' random effects (variance
ratios eta_1 = sigma_wp^2 / sigma^2 and eta_2 = sigma_sp^2 / sigma^2) make the information the GLS X^T V^{-1} X, V = I +
eta_1 Z_1 Z_1^T + eta_2 Z_2 Z_2^T (:mod:`optdesign.exact_designs.group_structure`). eta_2 = 0 is the split-plot design
of the whole plots (the sub-plots only restrict the settings), eta_1 = eta_2 = 0 the unblocked information of the same
runs. The search and the certified bounds are those of :mod:`optdesign.exact_designs.restricted`: whole plots, then
sub-plots, then runs; the bounds over mixtures of whole plots (eta_1) and of sub-plots (eta_2), and the unblocked one.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Literal

from numpy.typing import ArrayLike

from .block_result import BlockedDesignResult
from .group_structure import nested_structure, subplot_layout
from .plot_layout import factor_region
from .restricted import Kind, _shared_doc, restricted_design

__all__ = ["split_split_plot_design"]


@_shared_doc
def split_split_plot_design(formula: str, whole_plot_factors: Mapping[str, Any] | Any,
                            subplot_factors: Mapping[str, Any] | Any, subsubplot_factors: Mapping[str, Any] | Any,
                            whole_plot_sizes: ArrayLike, subplot_sizes: ArrayLike | int,
                            criterion: Literal["D", "A", "I"] = "D", *, eta_whole: float = 1.0, eta_sub: float = 1.0,
                            moments: ArrayLike | None = None, restarts: int = 20, time_limit: float | None = None,
                            seed: int = 0, tol: float = 1e-6, solver: str | None = None) -> BlockedDesignResult:
    """Split-split-plot exact design: a setting per whole plot, one per sub-plot within it, one per run.

    Minimises phi(M / N) over M = X^T V^{-1} X, V = I + eta_1 Z_1 Z_1^T + eta_2 Z_2 Z_2^T (Z_1, Z_2 the whole-plot and
    sub-plot indicators, the sub-plots nested in the whole plots; Trinca & Gilmour 2001, Jones & Goos 2009). Whole
    plots, sub-plots and runs take their best settings in turn, from ``restarts + 1`` random starts; the best design
    is returned with a certified lower bound (module :mod:`optdesign.exact_designs.restricted`).

    Parameters
    ----------
    formula : str
        The model over all factors, e.g. ``"~ w + s + t + w:t"`` (:func:`optdesign.candidates`).
    whole_plot_factors : mapping or pandas.DataFrame
        The very hard-to-change factors: names to levels or ranges ``(low, high, points)`` (their full factorial),
        or a table of their allowed settings.
    subplot_factors : mapping or pandas.DataFrame
        The hard-to-change factors, set once per sub-plot, likewise.
    subsubplot_factors : mapping or pandas.DataFrame
        The easy-to-change factors, set run by run, likewise.
    whole_plot_sizes : array_like of int
        Runs per whole plot, each at least 1; N is their sum.
    subplot_sizes : int or array_like of int
        Runs per sub-plot: one number for all (it must divide every whole plot's runs), or the runs of each sub-plot,
        whole plot after whole plot (they must add up to each whole plot's runs in turn).
    criterion : {"D", "A", "I"}
        The optimality criterion.
    eta_whole : float
        eta_1 = sigma_wp^2 / sigma^2 >= 0, the whole plots' variance ratio.
    eta_sub : float
        eta_2 = sigma_sp^2 / sigma^2 >= 0, the sub-plots' variance ratio.
%(moments)s
%(search)s

    Returns
    -------
    BlockedDesignResult
        ``rows`` (the candidate of every run, whole plot after whole plot, sub-plot after sub-plot), ``points``,
        ``table()`` (whole plot, sub-plot, candidate and factor settings of every run), ``value``, ``values``
        (D, A, I), ``information``, ``lower_bound`` and ``efficiency`` (certified), ``groupings``, ``kind``
        ``"split-split-plot"``, ``extras['etas']``, ``extras['whole_plot_settings']`` and
        ``extras['subplot_settings']``.

    Raises
    ------
    InvalidInputError
        Factors given neither as a mapping nor as a table, a factor of two kinds, a factor the formula leaves out,
        what :func:`optdesign.candidates` refuses; sizes empty or not positive whole numbers, a sub-plot size that
        does not divide a whole plot's runs, sub-plot sizes that do not nest in the whole plots; an eta negative or
        not finite; an unknown criterion; fewer runs than parameters, or fewer whole plots (sub-plots) than the
        parameters of their factors alone; bad moments; no nonsingular start.

    Examples
    --------
    Two whole plots of four runs, each split into two sub-plots of two: the whole-plot factor w, the sub-plot factor
    s and the easy factor t on two levels, main effects, eta_1 = eta_2 = 1. A whole plot's V is I + J_4 +
    diag(J_2, J_2): the whole-plot contrast keeps 4 / 7 of each plot's information, the sub-plot contrast 1 / 3.

    >>> import optdesign as od
    >>> res = od.split_split_plot_design("~ w + s + t", {"w": [-1, 1]}, {"s": [-1, 1]}, {"t": [-1, 1]}, [4, 4], 2,
    ...                                  seed=1)
    >>> table = res.table()
    >>> int(table.groupby("whole_plot")["w"].nunique().max()), int(table.groupby("subplot")["s"].nunique().max())
    (1, 1)
    >>> res.information.diagonal().round(6)    # M is diagonal: 8 / 7 for w, 8 / 3 for s, 8 for t
    array([1.142857, 1.142857, 2.666667, 8.      ])
    """
    start = time.perf_counter()
    kinds = [Kind("whole-plot", "whole_plot", factor_region(whole_plot_factors, "whole_plot_factors"), "whole plots"),
             Kind("sub-plot", "subplot", factor_region(subplot_factors, "subplot_factors"), "sub-plots"),
             Kind("sub-sub-plot", "subsubplot", factor_region(subsubplot_factors, "subsubplot_factors"))]
    whole, sub = subplot_layout(whole_plot_sizes, subplot_sizes)
    structure = nested_structure(whole, sub, eta_whole, eta_sub)
    return restricted_design(formula, kinds, structure, criterion, design="split-split-plot", moments=moments,
                             restarts=restarts, time_limit=time_limit, seed=seed, tol=tol, solver=solver, start=start)
