"""Sparse LU of V_f plus a Woodbury correction for a later diagonal increase: the ``"lu-update"`` solves.

Between two factorisations the estimator's matrix only grows on the diagonal, one entry per pulled arm:

    V_t = V_f + E S E^T,   E = [e_j for j in J],   S = diag(d_J) > 0,

where J holds the arms pulled since V_f was factorised and d their added counts / gamma. Woodbury gives

    V_t^{-1} b = z - W (I + S W_JJ)^{-1} S z_J,   W = V_f^{-1} E,   z = V_f^{-1} b,

with W_JJ = E^T W (k x k, k the number of arms in J). I + S W_JJ is similar to I + S^{1/2} W_JJ S^{1/2},
whose eigenvalues are >= 1, so the small solve is well conditioned. Since b changes only at pulled arms,
z = z_f + W db with db = (b - b_f)_J, and the solution is z_f + W (db - c) with c = (I + S W_JJ)^{-1} S z_J:
a solve costs one LU solve per *new* arm of J (none for a repeated arm), one O(N k) pass over W, and
O(k^3) for the small system. Once J would exceed ``max_rank`` arms the caller factorises V_t afresh
(``max_rank = 0`` refactorises at every change: the ``"direct"`` solver).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
from scipy.sparse.linalg import splu

__all__ = ["UpdatedLU", "default_rank"]

#: the Woodbury columns W (N x max_rank floats) are kept below this many entries (64 MB) ...
RANK_MEMORY = 2**23
#: ... and below this many columns (past it the O(N k) correction costs more than a new factorisation saves)
RANK_MAX = 128


def default_rank(n: int) -> int:
    """Arms of J between two factorisations: min(RANK_MAX, RANK_MEMORY // N).

    Parameters
    ----------
    n : int
        The number of arms N.

    Returns
    -------
    int
        The largest k kept (0 above RANK_MEMORY arms: every change refactorises).
    """
    return int(min(RANK_MAX, RANK_MEMORY // max(n, 1)))


class UpdatedLU:
    """Sparse LU of a symmetric positive definite V_f and solves of V_f + diag(d), d >= 0 on <= max_rank arms.

    Parameters
    ----------
    V : scipy.sparse.csr_matrix, shape (N, N)
        V_f, symmetric positive definite with sorted indices (its CSR arrays are read as those of a CSC
        matrix); copied where needed, never modified.
    b : numpy.ndarray of float, shape (N,)
        The right-hand side at the factorisation, b_f.
    max_rank : int
        The largest number k of arms whose diagonal may differ from V_f's in :meth:`solve`.
    """

    def __init__(self, V: sp.csr_matrix, b: npt.NDArray[np.float64], max_rank: int):
        n = V.shape[0]
        csc = sp.csc_matrix((V.data, V.indices, V.indptr), shape=V.shape)
        self.lu = splu(csc, permc_spec="MMD_AT_PLUS_A")
        self.diag = V.diagonal().copy()
        self.b = np.array(b, dtype=float)
        self.z_f = self.lu.solve(self.b)
        self.max_rank = int(max_rank)
        self.arms = np.empty(0, dtype=np.int64)  # J, in the order the columns of W were added
        self.W = np.empty((n, self.max_rank), order="F")

    @property
    def rank(self) -> int:
        """k, the number of arms in J (those whose diagonal or right-hand side changed since the factorisation)."""
        return int(self.arms.size)

    def solve(self, diag: npt.NDArray[np.float64], b: npt.NDArray[np.float64]) -> npt.NDArray[np.float64] | None:
        """(V_f + diag(diag - diag_f))^{-1} b, or None when more than ``max_rank`` arms have changed.

        Parameters
        ----------
        diag : numpy.ndarray of float, shape (N,)
            The current diagonal of V; entries may only have grown since the factorisation.
        b : numpy.ndarray of float, shape (N,)
            The current right-hand side (an arm where ``diag`` or ``b`` changed counts in k).

        Returns
        -------
        numpy.ndarray of float, shape (N,), or None
            The solution (a new array); None if the caller must factorise V afresh.
        """
        d = diag - self.diag
        changed = np.flatnonzero((d != 0) | (b != self.b))  # b moves only with the pulls (and diag with them)
        new = np.setdiff1d(changed, self.arms, assume_unique=True)
        k = self.rank + new.size
        if k > self.max_rank:
            return None
        e = np.zeros(self.W.shape[0])
        for j, arm in enumerate(new, start=self.rank):
            e[arm] = 1.0
            self.W[:, j] = self.lu.solve(e)
            e[arm] = 0.0
        self.arms = np.concatenate((self.arms, new))
        if k == 0:
            return self.z_f.copy()
        J, W = self.arms, self.W[:, :k]
        W_JJ, db, S = W[J, :], b[J] - self.b[J], d[J]
        z_J = self.z_f[J] + W_JJ @ db  # z = z_f + W db, on J
        c = np.linalg.solve(np.eye(k) + S[:, None] * W_JJ, S * z_J)
        return self.z_f + W @ (db - c)  # z - W c with one pass over W
