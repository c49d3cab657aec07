"""Ds-optimality: Phi(A) = det(K^T A^- K)^{1/s} = det(M_s(A))^{-1/s}, K the s columns of I_d of interest.

M_s(A) = A_ss - A_sr A_rr^- A_rs is the information matrix of the s parameters (the Schur complement of the
others), so Phi is the geometric mean of the variances of their estimates (Atwood 1969; Pukelsheim 1993 §6.2);
s = d is D-optimality, det(A)^{-1/d}. With N = K^T A^{-1} K the gradient is
h_k = (Phi / s) x_k^T A^{-1} K N^{-1} K^T A^{-1} x_k, and the equivalence theorem reads max_k h_k = Phi (the Ds
variances at most s). Pairwise step: by Woodbury and Sylvester's identity det N' / det N = det(D + a (G - Q)) /
det(D + a G) with Q = U^T A^{-1} K N^{-1} K^T A^{-1} U, a ratio of two quadratics in a whose derivative has the
sign of a quadratic.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, cholesky, solve_triangular

from ..criteria import cholesky_factor
from .criteria import (
    Criterion,
    Gradient,
    determinant_terms,
    in_range,
    pair_frame,
    quasiconvex_step,
    regular_until,
    spectrum,
)

__all__ = ["SubsetCriterion"]


class SubsetCriterion(Criterion):
    """Phi(A) = det(K^T A^- K)^{1/s} (Ds-optimality for K = columns of I_d; D when K = I_d).

    Parameters
    ----------
    K : numpy.ndarray, shape (d, s)
        Full column rank; the columns of the identity at the parameters of interest.
    label : str
        The label of the results.
    """

    def __init__(self, K: np.ndarray, label: str):
        self.K = np.asarray(K, dtype=float)
        self.s = self.K.shape[1]
        self.label = label

    def value(self, X: np.ndarray, w: np.ndarray) -> float:
        sigma, V, V0 = spectrum(X, w)
        if not in_range(self.K.T, V0):
            return float("inf")
        G = (self.K.T @ V) / sigma
        sign, logdet = np.linalg.slogdet(G @ G.T)
        return float(np.exp(logdet / self.s)) if sign > 0 else float("inf")

    def gradient(self, X: np.ndarray, w: np.ndarray) -> Gradient | None:
        L = cholesky_factor(X, w)
        if L is None:
            return None
        W = solve_triangular(L, self.K, lower=True, check_finite=False)  # L^{-1} K, N = W^T W
        try:
            LN = cholesky(W.T @ W, lower=True, check_finite=False)
        except LinAlgError:
            return None
        phi = float(np.exp(2.0 * np.sum(np.log(np.diag(LN))) / self.s))
        G = solve_triangular(LN, W.T, lower=True, check_finite=False)  # L_N^{-1} W^T (s x d)
        M = solve_triangular(L, G.T, lower=True, trans="T", check_finite=False).T  # L_N^{-1} K^T A^{-1}
        return Gradient(phi, np.sqrt(phi / self.s) * M, L)

    def pair_step(self, g: Gradient, xj: np.ndarray, xi: np.ndarray, hi: float) -> float:
        # minimise det(D + a Gr) / det(D + a G), Gr = G - Q, Q = s P^T P / Phi with P = M U (the pricing rows);
        # writing both determinants -1 + b1 a + b2 a^2 (Gr) and -1 + c1 a + c2 a^2 (G), the derivative of the
        # ratio has the sign of (c1 - b1) + 2 (c2 - b2) a + (b2 c1 - b1 c2) a^2
        _, G = pair_frame(g.L, xj, xi)
        P = g.M @ np.column_stack([xj, xi])
        b1, b2 = determinant_terms(G - self.s * (P.T @ P) / g.value)
        c1, c2 = determinant_terms(G)
        return quasiconvex_step(b2 * c1 - b1 * c2, 2.0 * (c2 - b2), c1 - b1, 0.0, regular_until(G, hi))
