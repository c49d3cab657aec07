"""Kiefer's phi_p criteria: Phi_p(A) = (tr(A^{-p}) / d)^{1/p}, the power mean of the variances 1 / lambda_i(A).

Kiefer (1974); Pukelsheim (1993, ch. 6) writes the same family as the matrix means phi_{-p} of A, and this is
1 / phi_{-p}(A): convex, homogeneous of degree -1, Phi_1 = tr(A^{-1}) / d (A), Phi_p -> det(A)^{-1/d} as p -> 0
(D) and -> 1 / lambda_min(A) = Phi_inf as p -> inf (E), increasing in p, with Phi_p <= Phi_inf <= d^{1/p} Phi_p.
Gradient: h_k = Phi_p x_k^T A^{-p-1} x_k / tr(A^{-p}) (equivalence theorem: max_k x_k^T A^{-p-1} x_k =
tr(A^{-p}) at the optimum). The pairwise step has no closed form: along it dPhi/da = h_i(a) - h_j(a), computed in
the eigenbasis of A and found by Brent's method (one sign change: Phi is convex in a).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

from ..criteria import cholesky_factor
from .criteria import Criterion, Gradient, pair_frame, regular_until, spectrum

__all__ = ["KieferCriterion", "kiefer_mean"]


def kiefer_mean(lam: np.ndarray, p: float) -> float:
    """Phi_p from the eigenvalues lam of A: (mean(lam^-p))^{1/p}; p = 0: prod(lam)^{-1/d}; p = inf: 1 / min.

    Computed as (1 / lam_min) (mean(mu^p))^{1/p} with mu = lam_min / lam in (0, 1], so large p neither overflows
    nor underflows and small p keeps its accuracy.

    Parameters
    ----------
    lam : numpy.ndarray, shape (d,)
        The eigenvalues.
    p : float
        The order, 0 <= p <= inf.

    Returns
    -------
    float
        Phi_p; inf when an eigenvalue is not positive.
    """
    low = float(np.min(lam))
    if low <= 0:
        return float("inf")
    if p == 0:
        return float(np.exp(-np.mean(np.log(lam))))
    if np.isinf(p):
        return 1.0 / low
    return float(np.exp(np.log(np.mean(np.exp(p * np.log(low / lam)))) / p) / low)


class KieferCriterion(Criterion):
    """Kiefer's Phi_p(A) = (tr(A^{-p}) / d)^{1/p}, 0 <= p <= inf (module doc); smooth for 0 < p < inf.

    Parameters
    ----------
    p : float
        The order; 0 (D) and inf (E) are evaluated here, but solved by their own paths.
    label : str
        The label of the results.
    """

    def __init__(self, p: float, label: str):
        self.p = float(p)
        self.label = label

    def value(self, X: np.ndarray, w: np.ndarray) -> float:
        sigma, _, V0 = spectrum(X, w)
        return float("inf") if V0.shape[1] else kiefer_mean(sigma**2, self.p)

    def gradient(self, X: np.ndarray, w: np.ndarray) -> Gradient | None:
        L = cholesky_factor(X, w)
        if L is None:
            return None
        lam, U = np.linalg.eigh(L @ L.T)
        if lam[0] <= 0:
            return None
        phi = kiefer_mean(lam, self.p)
        if self.p == 0 or np.isinf(self.p):  # D: h_k = Phi x^T A^{-1} x / d; E: a subgradient on lambda_min's vector
            mu = lam[0] / lam if self.p == 0 else (np.arange(lam.size) == 0).astype(float)
            scale = mu / (lam[0] * lam.size) if self.p == 0 else mu / lam[0]
            return Gradient(phi, np.sqrt(phi * scale)[:, None] * U.T, L, (lam, U))
        mu = lam[0] / lam
        total = float(np.sum(mu**self.p))
        M = np.sqrt(phi / (lam[0] * total)) * mu[:, None] ** ((self.p + 1) / 2) * U.T
        return Gradient(phi, M, L, (lam, U))

    def pair_step(self, g: Gradient, xj: np.ndarray, xi: np.ndarray, hi: float) -> float:
        lam, U = g.extra
        zj, zi = U.T @ xj, U.T @ xi
        _, G = pair_frame(g.L, xj, xi)
        top = regular_until(G, hi)
        p = self.p

        base, pair = np.diag(lam), np.outer(zj, zj) - np.outer(zi, zi)
        Z = np.column_stack([zj, zi])

        def slope(a: float) -> float:  # h_i(a) - h_j(a), up to a positive factor (numpy's eigh: less overhead)
            mu, V = np.linalg.eigh(base + a * pair)
            W = (V.T @ Z) ** 2
            scale = (mu[0] / mu) ** (p + 1)
            return float(scale @ W[:, 1] - scale @ W[:, 0])

        if slope(top) <= 0:
            return top
        return float(brentq(slope, 0.0, top, xtol=1e-15, rtol=4 * np.finfo(float).eps))
