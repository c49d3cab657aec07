"""The criterion pieces the exchange needs: a value, and the change of one run moved from x_i to x_j, in O(1) each.

Notation: candidates X (K x d, rows x_k), an exact design with counts n_k summing to n, its (unnormalised)
information matrix M = sum_k n_k x_k x_k^T, and, maintained by the exchange, V = X M^{-1} (row k is
u_k = M^{-1} x_k) and the variances h_k = x_k^T M^{-1} x_k. Moving one run from x_i to x_j is the rank-two change
M' = M + U C U^T with U = [x_j, x_i], C = diag(1, -1). By the matrix determinant lemma and Woodbury's identity,
with h_ij = x_i^T M^{-1} x_j and the 2 x 2 matrix S = C^{-1} + U^T M^{-1} U = [[1 + h_j, h_ij], [h_ij, h_i - 1]]
(Fedorov 1972, Thm 3.1.3; Atkinson, Donev & Tobias 2007, ch. 12),

    det M' / det M = -det S = (1 + h_j)(1 - h_i) + h_ij^2,
    tr(B M'^{-1}) = tr(B M^{-1}) - tr(S^{-1} Q),   Q = [[b_j, b_ij], [b_ij, b_i]],  b_ij = u_i^T B u_j,

so each swap is O(1) once h_j, h_ij (one product V x_i over all j) and, for the linear criteria, b_j and
b_ij = V (B u_i) are known: a pass over every candidate j is two BLAS-2 products. The same identities hold for any
change M' = M + U C U^T with C = diag(+-1) (r columns): det M' / det M = det C det S and
tr(B M'^{-1}) = tr(B M^{-1}) - tr(S^{-1} Q), S = C^{-1} + U^T M^{-1} U, Q = U^T M^{-1} B M^{-1} U; two runs moved
at once are r = 4 (``ExactCriterion.block_gains``, :mod:`optdesign.exact_designs.pair_moves`).

A criterion is a loss to minimise: D: -log det M; linear (A: B = I, I: B = moment matrix of the region):
tr(B M^{-1}). A new criterion implements ``ExactCriterion`` (its swap gains and, when it keeps
per-candidate quantities beyond h, their rank-one update).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable

import numpy as np

__all__: list[str] = []  # internal: exact_design (optdesign.exact_designs.design) is the public entry point

#: swaps whose determinant ratio det M' / det M falls below this make M' numerically singular: never taken
MIN_DET_RATIO = 1e-10


class ExactCriterion(ABC):
    """The pieces of one criterion the exchange calls: loss, normalised value, swap gains, rank-one updates."""

    #: the criterion's letter, ``"D"``, ``"A"`` or ``"I"``
    name: str

    @abstractmethod
    def loss(self, L: np.ndarray) -> float:
        """The loss (smaller is better) of M = L L^T (L lower triangular)."""

    @abstractmethod
    def value(self, L: np.ndarray, n: int) -> float:
        """The homogeneous criterion value of the normalised M / n (smaller is better, efficiencies are ratios)."""

    def per_candidate(self, V: np.ndarray) -> np.ndarray | None:
        """Quantities kept for every candidate beyond h (None when the gains need none)."""
        return None

    def update(self, extra: np.ndarray | None, V: np.ndarray, g: np.ndarray, u: np.ndarray, c: float) -> None:
        """Update ``extra`` in place for V' = V - c g u^T (called before V changes); nothing to do by default."""
        return None

    @abstractmethod
    def gains(self, X: np.ndarray, V: np.ndarray, h: np.ndarray, extra: np.ndarray | None,
              rows: np.ndarray) -> np.ndarray:
        """K x s: decrease of the loss when one run moves from candidate rows[c] to candidate j (-inf: singular)."""

    def cross(self, V: np.ndarray, points: np.ndarray) -> np.ndarray | None:
        """u_p^T B u_q for the given candidates p, q (the Q of :meth:`block_gains`); None when the gains need none."""
        return None

    @abstractmethod
    def block_gains(self, S: np.ndarray, Q: np.ndarray | None) -> np.ndarray:
        """Decrease of the loss for a stack of changes M + U C U^T with det C = 1 (as many runs added as removed, in
        pairs), given S = C^{-1} + U^T M^{-1} U (P x r x r) and Q = U^T M^{-1} B M^{-1} U (module docstring); -inf
        where M' is (nearly) singular."""


def _nonsingular(ratio: np.ndarray, gain: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """``gain(ok)`` where det M' / det M = ``ratio`` exceeds MIN_DET_RATIO (``ok`` that mask), -inf elsewhere."""
    out = np.full(ratio.shape, -np.inf)
    ok = ratio > MIN_DET_RATIO
    out[ok] = gain(ok)
    return out


def _log_ratio(ratio: np.ndarray) -> np.ndarray:
    """The D-loss decrease log(det M' / det M), -inf where M' is (nearly) singular."""
    return _nonsingular(ratio, lambda ok: np.log(ratio[ok]))


def _det_ratio(h: np.ndarray, rows: np.ndarray, h_ij: np.ndarray) -> np.ndarray:
    """det M' / det M = (1 + h_j)(1 - h_i) + h_ij^2 for every candidate j (rows) and design point i (columns)."""
    return np.outer(1.0 + h, 1.0 - h[rows]) + h_ij * h_ij


class ExactDCriterion(ExactCriterion):
    """D-optimality: loss -log det M, value det(M/n)^(-1/d); a swap gains log((1 + h_j)(1 - h_i) + h_ij^2)."""

    name = "D"

    def loss(self, L: np.ndarray) -> float:
        return float(-2.0 * np.sum(np.log(np.diag(L))))

    def value(self, L: np.ndarray, n: int) -> float:
        return float(np.exp(-2.0 * np.mean(np.log(np.diag(L))) + np.log(n)))

    def gains(self, X: np.ndarray, V: np.ndarray, h: np.ndarray, extra: np.ndarray | None,
              rows: np.ndarray) -> np.ndarray:
        return _log_ratio(_det_ratio(h, rows, V @ X[rows].T))

    def block_gains(self, S: np.ndarray, Q: np.ndarray | None) -> np.ndarray:
        return _log_ratio(np.linalg.det(S))


class ExactLinearCriterion(ExactCriterion):
    """Linear criteria tr(B M^{-1}): A (B = I) and I (B = the region's moment matrix); value tr(B (M/n)^{-1}).

    Keeps b_k = u_k^T B u_k for every candidate; a swap gains tr(S^{-1} Q) (module docstring).
    """

    def __init__(self, B: np.ndarray, name: str):
        self.B = B
        self.name = name

    def loss(self, L: np.ndarray) -> float:
        from scipy.linalg import solve_triangular

        W = solve_triangular(L, np.eye(L.shape[0]), lower=True, check_finite=False)  # L^{-1}
        return float(np.sum((W @ self.B) * W))  # tr(L^-T L^-1 B) = tr(B M^-1)

    def value(self, L: np.ndarray, n: int) -> float:
        return n * self.loss(L)

    def per_candidate(self, V: np.ndarray) -> np.ndarray:
        return np.einsum("kj,kj->k", V @ self.B, V)

    def update(self, extra: np.ndarray | None, V: np.ndarray, g: np.ndarray, u: np.ndarray,
               c: float) -> None:
        assert extra is not None
        Bu = self.B @ u
        extra += c * g * (c * g * float(u @ Bu) - 2.0 * (V @ Bu))

    def gains(self, X: np.ndarray, V: np.ndarray, h: np.ndarray, extra: np.ndarray | None,
              rows: np.ndarray) -> np.ndarray:
        assert extra is not None
        h_ij = V @ X[rows].T
        b_ij = V @ (self.B @ V[rows].T)
        ratio = _det_ratio(h, rows, h_ij)  # = -det S
        # tr(S^{-1} Q) = ((h_i - 1) b_j - 2 h_ij b_ij + (1 + h_j) b_i) / det S
        num = np.outer(extra, h[rows] - 1.0) - 2.0 * h_ij * b_ij + np.outer(1.0 + h, extra[rows])
        return _nonsingular(ratio, lambda ok: -num[ok] / ratio[ok])

    def cross(self, V: np.ndarray, points: np.ndarray) -> np.ndarray:
        return V[points] @ self.B @ V[points].T

    def block_gains(self, S: np.ndarray, Q: np.ndarray | None) -> np.ndarray:
        assert Q is not None
        return _nonsingular(np.linalg.det(S), lambda ok: np.trace(np.linalg.solve(S[ok], Q[ok]), axis1=1, axis2=2))
