"""Strip-plot (strip-block) exact designs: hard-to-change factors set per row and per column of a grid of cells.

Two stages of processing, each hard to change: the row factors are set once for a whole row of cells (a batch in
the first stage), the column factors once for a whole column (a batch in the second), and optional run factors run
by run, ``runs_per_cell`` runs in each cell. The candidates are every triple (row setting a, column setting b, run
setting t), row (a Kc + b) Kt + t of the model matrix X of a formula over all factors
(:mod:`optdesign.exact_designs.plot_layout`). The rows' and the columns' random effects (variance ratios eta_r and
eta_c) make the information the GLS X^T V^{-1} X, V = I + eta_r Z_r Z_r^T + eta_c Z_c Z_c^T, Z_r and Z_c crossed
(:mod:`optdesign.exact_designs.group_structure`). The search and the certified bounds are those of
:mod:`optdesign.exact_designs.restricted`: rows, then columns, then runs; the bounds over mixtures of rows (eta_r) and
of columns (eta_c), and the unblocked one.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Literal

from numpy.typing import ArrayLike

from ..validation import as_count
from .block_result import BlockedDesignResult
from .group_structure import crossed_structure
from .plot_layout import factor_region
from .restricted import Kind, _shared_doc, restricted_design

__all__ = ["strip_plot_design"]


@_shared_doc
def strip_plot_design(formula: str, row_factors: Mapping[str, Any] | Any, column_factors: Mapping[str, Any] | Any,
                      n_rows: int, n_columns: int, criterion: Literal["D", "A", "I"] = "D", *,
                      run_factors: Mapping[str, Any] | Any | None = None, runs_per_cell: int = 1,
                      eta_row: float = 1.0, eta_column: float = 1.0, moments: ArrayLike | None = None,
                      restarts: int = 20, time_limit: float | None = None, seed: int = 0, tol: float = 1e-6,
                      solver: str | None = None) -> BlockedDesignResult:
    """Strip-plot exact design: a setting per row, one per column, and (optionally) one per run of each cell.

    Minimises phi(M / N) over M = X^T V^{-1} X, V = I + eta_r Z_r Z_r^T + eta_c Z_c Z_c^T (Z_r, Z_c the row and
    column indicators of the R x C cells, N = R C k runs; Miller 1997, Arnouts, Goos & Jones 2010). Rows, columns and
    runs take their best settings in turn, from ``restarts + 1`` random starts; the best design is returned with a
    certified lower bound (module :mod:`optdesign.exact_designs.restricted`).

    Parameters
    ----------
    formula : str
        The model over all factors, e.g. ``"~ r + c + r:c"`` (:func:`optdesign.candidates`).
    row_factors : mapping or pandas.DataFrame
        The factors set once per row: names to levels or ranges ``(low, high, points)`` (their full factorial), or a
        table of their allowed settings.
    column_factors : mapping or pandas.DataFrame
        The factors set once per column, likewise.
    n_rows : int
        R, the rows.
    n_columns : int
        C, the columns.
    criterion : {"D", "A", "I"}
        The optimality criterion.
    run_factors : mapping or pandas.DataFrame, optional
        Factors set run by run, likewise; none by default (every run of a cell then has the cell's settings).
    runs_per_cell : int
        k, the runs of each cell (1 by default).
    eta_row : float
        sigma_row^2 / sigma^2 >= 0, the rows' variance ratio.
    eta_column : float
        sigma_column^2 / sigma^2 >= 0, the columns' variance ratio.
%(moments)s
%(search)s

    Returns
    -------
    BlockedDesignResult
        ``rows`` (the candidate of every run, cell after cell: run (i C + j) k + t is in row i and column j),
        ``points``, ``table()`` (row, column, candidate and factor settings of every run), ``value``, ``values``
        (D, A, I), ``information``, ``lower_bound`` and ``efficiency`` (certified), ``groupings``, ``kind``
        ``"strip-plot"``, ``extras['etas']``, ``extras['row_settings']`` and ``extras['column_settings']``.

    Raises
    ------
    InvalidInputError
        Factors given neither as a mapping nor as a table, a factor of two kinds, a factor the formula leaves out,
        what :func:`optdesign.candidates` refuses; n_rows, n_columns or runs_per_cell not positive whole numbers; an
        eta negative or not finite; an unknown criterion; fewer runs than parameters, or fewer rows (columns, cells)
        than the parameters of their factors alone; bad moments; no nonsingular start.

    Examples
    --------
    Four rows and four columns, a two-level factor on each, their interaction, eta_r = eta_c = 1: each level on two
    rows and two columns, so M is diagonal: V 1 = 9 (the intercept keeps 16 / 9), a row contrast keeps 1 / 5, the
    interaction all 16.

    >>> import optdesign as od
    >>> res = od.strip_plot_design("~ r * c", {"r": [-1, 1]}, {"c": [-1, 1]}, 4, 4, seed=1)
    >>> sorted(res.extras["row_settings"].tolist()), sorted(res.extras["column_settings"].tolist())
    ([0, 0, 1, 1], [0, 0, 1, 1])
    >>> res.information.diagonal().round(6)
    array([ 1.777778,  3.2     ,  3.2     , 16.      ])
    """
    start = time.perf_counter()
    kinds = [Kind("row", "row", factor_region(row_factors, "row_factors"), "rows"),
             Kind("column", "column", factor_region(column_factors, "column_factors"), "columns"),
             Kind("run", "run", factor_region(run_factors, "run_factors", optional=True))]
    R, C = as_count(n_rows, "n_rows"), as_count(n_columns, "n_columns")
    structure = crossed_structure(R, C, as_count(runs_per_cell, "runs_per_cell"), eta_row, eta_column)
    return restricted_design(formula, kinds, structure, criterion, design="strip-plot", moments=moments,
                             restarts=restarts, time_limit=time_limit, seed=seed, tol=tol, solver=solver, start=start)
