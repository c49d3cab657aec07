"""The linear criteria Phi(A) = tr(C A^- C^T): A- (C = I), I- (C^T C = B), c- (C = c^T) and L-optimality.

Gradient: h_k = ||C A^{-1} x_k||^2 (the equivalence theorem of linear criteria, Fedorov 1972 Thm 2.9.2:
max_k h_k = Phi at the optimum). Pairwise step (module doc of :mod:`~optdesign.linear.classical.criteria`):
tr(C A'^{-1} C^T) = Phi - a tr((D + a G)^{-1} H) with H = U^T A^{-1} C^T C A^{-1} U, a rational function of a
whose derivative has the sign of a quadratic, so the exact line search is a root of that quadratic. On a
support, :class:`LinearState` keeps A^{-1} and Z = X_S A^{-1} C^T and updates both by the rank-two Woodbury
correction in O(m (d + k)) per step, refactorising every REFRESH_EVERY steps against drift.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_triangular

from ..criteria import cholesky_factor
from .criteria import (
    Criterion,
    Gradient,
    SupportState,
    determinant_terms,
    in_range,
    pair_frame,
    quasiconvex_step,
    regular_until,
    spectrum,
)

__all__ = ["LinearCriterion", "LinearState"]

REFRESH_EVERY = 200  # pairwise steps between refactorisations of A(w) on a support


def linear_pair_step(G: np.ndarray, H: np.ndarray, hi: float) -> float:
    """The exact pairwise step for tr(C A^{-1} C^T), given G = U^T A^{-1} U and H = U^T A^{-1} C^T C A^{-1} U.

    Phi(a) = Phi - a (a0 + a1 a) / det(D + a G): its derivative has the sign of (a0 c2 - a1 c1) a^2 + 2 a1 a + a0
    with det(D + a G) = -1 + c1 a + c2 a^2 (:func:`~.criteria.quasiconvex_step`).
    """
    a0 = H[1, 1] - H[0, 0]
    a1 = G[1, 1] * H[0, 0] - 2.0 * G[0, 1] * H[0, 1] + G[0, 0] * H[1, 1]
    c1, c2 = determinant_terms(G)
    return quasiconvex_step(a0 * c2 - a1 * c1, 2.0 * a1, a0, 0.0, regular_until(G, hi))


class LinearCriterion(Criterion):
    """Phi(A) = tr(C A^- C^T) (A-, I-, c-, L-optimality); h_k = ||C A^{-1} x_k||^2.

    Parameters
    ----------
    C : numpy.ndarray, shape (k, d)
        The rows c_j of the linear functions c_j^T theta (C^T C = B for the I- and A-criteria).
    label : str
        The label of the results.
    """

    #: Phi = tr(C A^{-1} C^T): d^2 Phi / dw_i dw_j = 2 (x_i^T A^{-1} x_j)(x_i^T A^{-1} C^T C A^{-1} x_j)
    hessian_coefficient = 2.0

    def __init__(self, C: np.ndarray, label: str):
        self.C = np.atleast_2d(np.asarray(C, dtype=float))
        self.label = label

    def value(self, X: np.ndarray, w: np.ndarray) -> float:
        sigma, V, V0 = spectrum(X, w)
        if not in_range(self.C, V0):
            return float("inf")
        return float(np.sum(((self.C @ V) / sigma) ** 2))

    def gradient(self, X: np.ndarray, w: np.ndarray) -> Gradient | None:
        L = cholesky_factor(X, w)
        if L is None:
            return None
        W = solve_triangular(L, self.C.T, lower=True, check_finite=False)  # L^{-1} C^T
        Y = solve_triangular(L, W, lower=True, trans="T", check_finite=False)  # A^{-1} C^T
        return Gradient(float(np.sum(W * W)), Y.T, L)

    def pair_step(self, g: Gradient, xj: np.ndarray, xi: np.ndarray, hi: float) -> float:
        AiU, G = pair_frame(g.L, xj, xi)
        CU = self.C @ AiU
        return linear_pair_step(G, CU.T @ CU, hi)

    def support_state(self, X: np.ndarray, w: np.ndarray) -> SupportState | None:
        state = LinearState(self, X)
        return state if state.reset(w) else None


class LinearState(SupportState):
    """:class:`~.criteria.SupportState` of a linear criterion: A^{-1} and Z = X A^{-1} C^T follow each pairwise
    step by a rank-two Woodbury update (module doc).

    Parameters
    ----------
    criterion : LinearCriterion
        The criterion.
    X : numpy.ndarray, shape (m, d)
        The support arms.
    """

    def __init__(self, criterion: LinearCriterion, X: np.ndarray):
        super().__init__(criterion, X)
        self.C = criterion.C
        self.Ainv = np.zeros((X.shape[1], X.shape[1]))
        self.Z = np.zeros((X.shape[0], self.C.shape[0]))
        self.steps = 0
        self._pair: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def reset(self, w: np.ndarray) -> bool:
        L = cholesky_factor(self.X, w)
        if L is None:
            return False
        Linv = solve_triangular(L, np.eye(L.shape[0]), lower=True, check_finite=False)
        self.Ainv = Linv.T @ Linv
        self.Z = self.X @ (self.Ainv @ self.C.T)
        self.value = float(np.sum(self.C.T * (self.Ainv @ self.C.T)))
        self.prices = np.einsum("ij,ij->i", self.Z, self.Z)
        return True

    def pair_step(self, j: int, i: int, hi: float) -> float:
        U = self.X[[j, i]].T
        AiU = self.Ainv @ U
        G = U.T @ AiU
        CU = self.Z[[j, i]].T  # C A^{-1} U
        H = CU.T @ CU
        self._pair = (AiU, G, H)
        return linear_pair_step(G, H, hi)

    def move(self, j: int, i: int, a: float, w: np.ndarray) -> bool:
        self.steps += 1
        if self._pair is None or self.steps % REFRESH_EVERY == 0:
            return self.reset(w)
        AiU, G, H = self._pair
        D = np.diag([1.0, -1.0])
        S = a * np.linalg.inv(D + a * G)  # (D / a + G)^{-1}
        self.Z -= (self.X @ AiU) @ (S @ self.Z[[j, i]])
        self.Ainv -= AiU @ S @ AiU.T
        self.value -= float(np.sum(S * H))
        self.prices = np.einsum("ij,ij->i", self.Z, self.Z)
        self._pair = None
        return True
