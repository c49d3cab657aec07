"""Split-plot exact designs: hard-to-change factors set once per whole plot, easy-to-change ones run by run.

The candidates are every pair (whole-plot setting a, sub-plot setting t) of the two regions, row a Ks + t of the
model matrix X of a formula over all factors (:mod:`optdesign.exact_designs.plot_layout`). Whole plot g holds n_g runs
that share one setting a_g; its random effect (variance ratio eta = sigma_wp^2 / sigma^2) makes the information the GLS
X^T V^{-1} X, V = I + eta Z Z^T (:mod:`optdesign.exact_designs.block_information`, c_g = eta / (1 + eta n_g)). The
search (:mod:`optdesign.exact_designs.block_search`) gives each whole plot its best hard-to-change setting, then each
run its best easy-to-change setting, until neither improves, from ``restarts + 1`` random starts (the whole-plot
settings spread evenly, the sub-plot settings uniform); :mod:`optdesign.exact_designs.restricted` runs it.

Certified bounds, the larger kept: the equivalence theorem over mixtures of whole plots at the design found
(:mod:`optdesign.exact_designs.block_bounds`: a whole plot's runs share one hard-to-change setting), and the unblocked
one: V >= I, so X^T V^{-1} X <= X^T X for the same runs, and every split-plot design is an N-run design on the product
candidates, so the approximate optimum on X bounds every split-plot design's value from below
(:mod:`optdesign.exact_designs.bounds`); that one ignores the whole plots, so it is low when eta is large.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Literal

from numpy.typing import ArrayLike

from .block_information import as_eta, as_sizes, shrinkage
from .block_result import BlockedDesignResult
from .group_structure import single_structure
from .plot_layout import factor_region
from .restricted import Kind, _shared_doc, restricted_design

__all__ = ["split_plot_design"]


@_shared_doc
def split_plot_design(formula: str, whole_plot_factors: Mapping[str, Any] | Any,
                      subplot_factors: Mapping[str, Any] | Any, whole_plot_sizes: ArrayLike,
                      criterion: Literal["D", "A", "I"] = "D", *, eta: float = 1.0, moments: ArrayLike | None = None,
                      restarts: int = 20, time_limit: float | None = None, seed: int = 0, tol: float = 1e-6,
                      solver: str | None = None) -> BlockedDesignResult:
    """Split-plot exact design: a hard-to-change setting per whole plot and an easy-to-change one per run.

    Minimises phi(M / N) over M = X^T V^{-1} X, V = I + eta Z Z^T (Z the whole-plot indicator), whose whole plots
    hold ``whole_plot_sizes`` runs each with one setting of the whole-plot factors (Goos 2002; as skpr's split-plot
    designs and pyoptex). The whole-plot and sub-plot settings are improved in turn (after Jones & Goos 2007),
    from ``restarts + 1`` random starts; the best design is returned with the certified bound of the unrestricted
    approximate optimum (module :mod:`optdesign.exact_designs.split_plot`).

    Parameters
    ----------
    formula : str
        The model over all factors, e.g. ``"~ w + s + w:s + I(s**2)"`` (:func:`optdesign.candidates`).
    whole_plot_factors : mapping or pandas.DataFrame
        The hard-to-change factors: names to levels or ranges ``(low, high, points)`` (their full factorial), or
        a table of their allowed settings.
    subplot_factors : mapping or pandas.DataFrame
        The easy-to-change factors, likewise.
    whole_plot_sizes : array_like of int
        Runs per whole plot, each at least 1; N is their sum.
    criterion : {"D", "A", "I"}
        The optimality criterion.
    eta : float
        The variance ratio sigma_wp^2 / sigma^2 >= 0 (0: the runs are independent, the whole plots only restrict).
%(moments)s
%(search)s

    Returns
    -------
    BlockedDesignResult
        ``rows`` (candidate a Ks + t of every run, whole plot after whole plot), ``points`` (the candidates'
        settings), ``table()`` (whole plot, candidate and factor settings of every run), ``value``, ``values``,
        ``lower_bound`` and ``efficiency`` (certified, conservative), ``columns``.

    Raises
    ------
    InvalidInputError
        Factors given neither as a mapping nor as a table, a factor in both, a factor the formula leaves out, what
        :func:`optdesign.candidates` refuses (a formula that does not parse or names an unknown factor, dependent
        columns); whole-plot sizes empty or not positive whole numbers; eta negative or not finite; an unknown
        criterion; fewer runs than parameters, or fewer whole plots than whole-plot parameters (singular for
        every design); moments not a positive semidefinite p x p matrix (or given for D or A); no nonsingular start.

    Examples
    --------
    One hard-to-change factor (two levels) in four whole plots of three runs, one easy-to-change factor on three
    levels, a quadratic model:

    >>> import optdesign as od
    >>> res = od.split_plot_design("~ w + s + I(s**2)", {"w": [-1, 1]}, {"s": [-1, 0, 1]}, [3, 3, 3, 3])
    >>> res.table().groupby("whole_plot")["w"].nunique().max()    # w constant within each whole plot
    np.int64(1)
    >>> sorted(res.table()["w"].value_counts().tolist())
    [6, 6]
    """
    start = time.perf_counter()
    kinds = [Kind("whole-plot", "whole_plot", factor_region(whole_plot_factors, "whole_plot_factors"),
                  "whole plots"),
             Kind("sub-plot", "subplot", factor_region(subplot_factors, "subplot_factors"))]
    sizes = as_sizes(whole_plot_sizes, "whole_plot_sizes")
    ratio = as_eta(eta)
    structure = single_structure(sizes, shrinkage(sizes, "random", ratio), ratio)
    return restricted_design(formula, kinds, structure, criterion, design="split-plot", moments=moments,
                             restarts=restarts, time_limit=time_limit, seed=seed, tol=tol, solver=solver, start=start)
