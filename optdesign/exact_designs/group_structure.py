"""Runs in one or several groupings (blocks; whole plots and sub-plots; rows and columns) and their GLS information.

Model y = X beta + sum_l Z_l gamma_l + eps, gamma_l ~ (0, eta_l sigma^2 I) for each grouping l, so Var(y) = sigma^2 V
with V = I + sum_l eta_l Z_l Z_l^T. With Z = [Z_1, ..., Z_L] (N x G, all groups side by side) and D the diagonal of
each group's eta, Woodbury's identity gives V^{-1} = I - Z Gamma Z^T with

    Gamma = D^{1/2} (I + D^{1/2} Z^T Z D^{1/2})^{-1} D^{1/2}    (G x G; a grouping with eta = 0 drops out),

so the information is M = X^T V^{-1} X = X^T X - S^T Gamma S, S = Z^T X the groups' column sums. One grouping:
Z^T Z = diag(n_g) and Gamma = diag(eta / (1 + eta n_g)), the c_g of :mod:`optdesign.exact_designs.block_information`
(fixed effects are Gamma = diag(1 / n_g)). Split-split plots: whole plots and the sub-plots nested in them, V
block-diagonal over the whole plots. Strip plots: rows and columns crossed, every cell of a row and a column holding the
same number of runs.

A change of the candidates of some runs R (n runs, rows X_old -> X_new, Delta = X_new - X_old) changes S by
E^T Delta (E = Z[R], n x G) and M by

    M' - M = X_new^T X_new - X_old^T X_old - Delta^T A^T - A Delta - Delta^T (E Gamma E^T) Delta,  A = S^T Gamma E^T,

that is M' = M + U C U^T with U = [X_new^T, X_old^T, A] (p x 3n), the columns of A the runs' a_r = S^T Gamma z_r,
and C = diag(I, -I, 0) - F (E Gamma E^T) F^T - F H^T - H F^T, F = [I; -I; 0], H = [0; 0; I]
(:meth:`GroupStructure.change_matrix`).
One run moved is n = 1, a rank-three change (one grouping: that of :mod:`~optdesign.exact_designs.block_information`);
a whole plot, sub-plot, row or column given another setting of its hard-to-change factors is n = its runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidInputError
from .block_information import as_eta, as_sizes

__all__ = ["GroupStructure", "crossed_structure", "nested_structure", "single_structure", "subplot_layout"]


@dataclass(frozen=True)
class GroupStructure:
    """The groups of every run in each grouping, and the Gamma of V^{-1} = I - Z Gamma Z^T (module docstring)."""

    #: N x L: the group (an index into the G groups of all groupings) of every run in each grouping
    members: np.ndarray
    #: G x G, symmetric positive semidefinite
    gamma: np.ndarray
    #: the variance ratio of each grouping (None for fixed block effects)
    etas: tuple[float, ...] | None = None

    @property
    def n_runs(self) -> int:
        """N, the number of runs."""
        return int(self.members.shape[0])

    @property
    def n_groups(self) -> int:
        """G, the number of groups over all groupings."""
        return int(self.gamma.shape[0])

    def indicator(self) -> np.ndarray:
        """Z^T, G x N: 1 where run r is in group g.

        Returns
        -------
        numpy.ndarray
            The transposed indicator.
        """
        Zt = np.zeros((self.n_groups, self.n_runs))
        for column in self.members.T:
            Zt[column, np.arange(self.n_runs)] = 1.0
        return Zt

    def groups(self, level: int) -> np.ndarray:
        """The groups of grouping ``level`` (indices into the G groups), increasing.

        Parameters
        ----------
        level : int
            The grouping (0 the first).

        Returns
        -------
        numpy.ndarray
            Its groups.
        """
        return np.unique(self.members[:, level])

    def information(self, X: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """M = X_r^T X_r - S^T Gamma S for the runs at the candidates ``rows`` (symmetrised).

        Parameters
        ----------
        X : numpy.ndarray, shape (K, p)
            The candidates.
        rows : numpy.ndarray of int, shape (N,)
            The candidate of every run.

        Returns
        -------
        numpy.ndarray
            The p x p information (unnormalised).
        """
        Xr = X[rows]
        S = self.indicator() @ Xr
        M = Xr.T @ Xr - S.T @ self.gamma @ S
        out: np.ndarray = (M + M.T) / 2
        return out

    def change_matrix(self, runs: np.ndarray) -> np.ndarray:
        """C of M' = M + U C U^T, U = [X_new^T, X_old^T, A], when the runs ``runs`` change (module docstring).

        C depends on which runs change, not on their candidates, so a search computes it once per group.

        Parameters
        ----------
        runs : numpy.ndarray of int, shape (n,)
            The runs that change.

        Returns
        -------
        numpy.ndarray, shape (3n, 3n)
            diag(I, -I, 0) - F (E Gamma E^T) F^T - F H^T - H F^T.
        """
        n = runs.size
        E = self.indicator()[:, runs]  # G x n
        F = np.vstack([np.eye(n), -np.eye(n), np.zeros((n, n))])
        H = np.vstack([np.zeros((2 * n, n)), np.eye(n)])
        C: np.ndarray = np.diag(np.concatenate([np.ones(n), -np.ones(n), np.zeros(n)])) \
            - F @ (E.T @ self.gamma @ E) @ F.T - F @ H.T - H @ F.T
        return C


def _gamma(members: np.ndarray, etas: tuple[float, ...], n_groups: int) -> np.ndarray:
    """Gamma = D^{1/2} (I + D^{1/2} Z^T Z D^{1/2})^{-1} D^{1/2}, D the eta of each group's grouping."""
    d = np.zeros(n_groups)
    for column, eta in zip(members.T, etas, strict=True):
        d[column] = eta
    root = np.sqrt(d)
    Zt = np.zeros((n_groups, members.shape[0]))
    for column in members.T:
        Zt[column, np.arange(members.shape[0])] = 1.0
    inner = np.eye(n_groups) + root[:, None] * (Zt @ Zt.T) * root[None, :]
    gamma = root[:, None] * np.linalg.solve(inner, np.diag(root))
    out: np.ndarray = (gamma + gamma.T) / 2
    return out


def single_structure(sizes: np.ndarray, shrink: np.ndarray, eta: float | None = None) -> GroupStructure:
    """One grouping of consecutive runs, ``sizes`` runs each, with Gamma = diag(shrink) (the c_g of the groups).

    Parameters
    ----------
    sizes : numpy.ndarray of int
        Runs per group.
    shrink : numpy.ndarray
        c_g of every group (``optdesign.exact_designs.block_information.shrinkage``).
    eta : float, optional
        The variance ratio behind ``shrink`` (random effects), None for fixed effects.

    Returns
    -------
    GroupStructure
        The structure.
    """
    return GroupStructure(np.repeat(np.arange(sizes.size), sizes)[:, None], np.diag(shrink.astype(float)),
                          None if eta is None else (eta,))


def subplot_layout(whole_plot_sizes: ArrayLike, subplot_sizes: ArrayLike | int) -> tuple[np.ndarray, np.ndarray]:
    """(runs per whole plot, runs per sub-plot) checked: the sub-plots, in order, fill the whole plots exactly.

    Parameters
    ----------
    whole_plot_sizes : array_like of int
        Runs per whole plot.
    subplot_sizes : int or array_like of int
        Runs of every sub-plot (it must divide every whole plot's runs), or the runs of each sub-plot, whole plot
        after whole plot.

    Returns
    -------
    tuple of (numpy.ndarray, numpy.ndarray)
        The whole plots' and the sub-plots' runs.

    Raises
    ------
    InvalidInputError
        Sizes that are not positive whole numbers; one sub-plot size that does not divide a whole plot's runs; sub-plot
        sizes that do not add up to each whole plot in turn.
    """
    whole = as_sizes(whole_plot_sizes, "whole_plot_sizes")
    if np.ndim(subplot_sizes) == 0:
        size = int(as_sizes(np.atleast_1d(subplot_sizes), "subplot_sizes")[0])
        bad = np.flatnonzero(whole % size)
        if bad.size:
            raise InvalidInputError(f"subplot_sizes = {size} runs per sub-plot does not divide whole plot "
                                    f"{int(bad[0])}'s {int(whole[bad[0]])} runs: give the sub-plots' sizes one by one")
        return whole, np.full(int(whole.sum()) // size, size, dtype=np.int64)
    sub = as_sizes(subplot_sizes, "subplot_sizes")
    ends = np.cumsum(sub)
    cuts = np.cumsum(whole)
    if ends[-1] != cuts[-1] or not np.all(np.isin(cuts, ends)):
        raise InvalidInputError(f"the sub-plots must nest in the whole plots: subplot_sizes {sub.tolist()} (runs "
                                f"{int(ends[-1])}) do not add up to each of whole_plot_sizes {whole.tolist()} "
                                f"(runs {int(cuts[-1])}) in turn")
    return whole, sub


def nested_structure(whole_plot_sizes: np.ndarray, subplot_sizes: np.ndarray, eta_whole: float,
                     eta_sub: float) -> GroupStructure:
    """Whole plots and the sub-plots nested in them (split-split plots): V = I + eta_1 Z_1 Z_1^T + eta_2 Z_2 Z_2^T.

    Parameters
    ----------
    whole_plot_sizes : numpy.ndarray of int
        Runs per whole plot.
    subplot_sizes : numpy.ndarray of int
        Runs per sub-plot, filling the whole plots in order (:func:`subplot_layout`).
    eta_whole : float
        eta_1 = sigma_wp^2 / sigma^2 >= 0.
    eta_sub : float
        eta_2 = sigma_sp^2 / sigma^2 >= 0.

    Returns
    -------
    GroupStructure
        Groups 0 .. W - 1 the whole plots, then the sub-plots.

    Raises
    ------
    InvalidInputError
        An eta negative or not finite.
    """
    etas = (as_eta(eta_whole, "eta_whole"), as_eta(eta_sub, "eta_sub"))
    W = whole_plot_sizes.size
    members = np.column_stack([np.repeat(np.arange(W), whole_plot_sizes),
                               W + np.repeat(np.arange(subplot_sizes.size), subplot_sizes)])
    return GroupStructure(members, _gamma(members, etas, W + subplot_sizes.size), etas)


def crossed_structure(n_rows: int, n_columns: int, runs_per_cell: int, eta_row: float,
                      eta_column: float) -> GroupStructure:
    """Rows and columns crossed (strip plots): V = I + eta_r Z_r Z_r^T + eta_c Z_c Z_c^T, runs cell after cell.

    Run (i C + j) k + t is the t-th run of the cell of row i and column j (C columns, k runs per cell).

    Parameters
    ----------
    n_rows : int
        R, the rows.
    n_columns : int
        C, the columns.
    runs_per_cell : int
        k, the runs of every cell.
    eta_row : float
        sigma_row^2 / sigma^2 >= 0.
    eta_column : float
        sigma_column^2 / sigma^2 >= 0.

    Returns
    -------
    GroupStructure
        Groups 0 .. R - 1 the rows, then the columns.

    Raises
    ------
    InvalidInputError
        An eta negative or not finite.
    """
    etas = (as_eta(eta_row, "eta_row"), as_eta(eta_column, "eta_column"))
    cells = np.arange(n_rows * n_columns).repeat(runs_per_cell)
    members = np.column_stack([cells // n_columns, n_rows + cells % n_columns])
    return GroupStructure(members, _gamma(members, etas, n_rows + n_columns), etas)
