"""The classical criteria in numpy: the convention, the base class, and the algebra of a pairwise step.

Convention (every criterion of :mod:`optdesign.linear.classical`): Phi is a function of the information matrix
A(w) = X^T diag(w) X to be **minimised**, convex and homogeneous of degree -1 (Phi(t A) = Phi(A) / t), in the
units of a variance, so that ``lower_bound / value`` is the usual efficiency (Pukelsheim 1993, ch. 5-6):

* linear (A, I, c, L): Phi(A) = tr(C A^- C^T) for a k x d matrix C (A: C = I; I: C^T C = B the region's moment
  matrix; c: C = c^T; L: the rows of C); +inf when some row of C is not in the range of A
  (:mod:`~optdesign.linear.classical.linear`);
* subset (Ds): Phi(A) = det(K^T A^- K)^{1/s} = det(M_s(A))^{-1/s} for K = the s selected columns of I_d, M_s
  the Schur complement of the other parameters (D when s = d: det(A)^{-1/d}) (:mod:`~.subset`);
* Kiefer phi_p: Phi_p(A) = (tr(A^{-p}) / d)^{1/p} (Kiefer 1974); p = 1 is tr(A^{-1}) / d, p -> 0 gives
  det(A)^{-1/d} (D), p -> inf gives 1 / lambda_min(A) (E) (:mod:`~.kiefer`).

Each smooth criterion gives, at a nonsingular design, its gradient as a pricing map M (r x d) with
h_k = ||M x_k||^2 = -dPhi/dw_k, and sum_k w_k h_k = Phi(w) (Euler). Certificate (the general equivalence
theorem in homogeneous form): for every design w' (in any set P of designs),

    Phi(w') >= 2 Phi / c - sum_k w'_k h_k / c^2 for all c > 0,  so  Phi* >= Phi(w)^2 / max_{w' in P} sum_k w'_k h_k,

by convexity at c A(w) and homogeneity (the proof of :mod:`optdesign.linear.criteria`); over the simplex the
maximum is max_k h_k, and the bound is tight exactly at the optimum.

Pairwise step: weight a moves from arm i to arm j, A' = A + a U D U^T with U = [x_j, x_i], D = diag(1, -1).
By Woodbury, A'^{-1} = A^{-1} - a A^{-1} U (D + a G)^{-1} U^T A^{-1} with G = U^T A^{-1} U, and
det(A') = -det(A) det(D + a G), so every criterion along the step is a function of 2 x 2 matrices.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import solve_triangular, svd

from ..criteria import triangular_factor
from ..interior import hadamard_terms

__all__ = ["Criterion", "Gradient", "SupportState"]

#: a row of C (or K) is in the range of A(w) when its part in the numerical null space is below this, relative
RANGE_TOL = 1e-8
#: a pairwise step keeps -det(D + a G) = det(A') / det(A) above this, so it never makes A(w) singular
KEEP_REGULAR = 1e-9


@dataclass(frozen=True)
class Gradient:
    """A smooth criterion at a nonsingular design: its value and its gradient as a pricing map."""

    #: Phi(w)
    value: float
    #: the pricing map M (r x d): h_k = ||M x_k||^2 = -dPhi/dw_k
    M: np.ndarray
    #: lower-triangular L with A(w) = L L^T
    L: np.ndarray
    #: what the line search of the criterion needs besides (eigenvalues and vectors for phi_p)
    extra: tuple = field(default=())


def spectrum(X: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sigma, V_range, V_null): A(w) = V diag(sigma^2) V^T from the SVD of the QR factor of diag(sqrt w) X, with
    numpy's rank rule on that factor (sigma > sigma_max max(n, d) eps)."""
    support = int(np.count_nonzero(w > 0))
    R = triangular_factor(X, w)
    d = X.shape[1]
    if R.shape[0] == 0:
        return np.zeros(0), np.zeros((d, 0)), np.eye(d)
    _, sigma, Vt = svd(R, full_matrices=True, check_finite=False)
    rank = int(np.sum(sigma > sigma[0] * max(support, d) * np.finfo(float).eps)) if sigma[0] > 0 else 0
    return sigma[:rank], Vt[:rank].T, Vt[rank:].T


def in_range(C: np.ndarray, V_null: np.ndarray) -> bool:
    """Whether every row of C lies in the range of A (orthogonal to the null space V_null), relative RANGE_TOL."""
    return bool(np.linalg.norm(C @ V_null) <= RANGE_TOL * max(float(np.linalg.norm(C)), np.finfo(float).tiny))


def quasiconvex_step(a: float, b: float, c: float, lo: float, hi: float) -> float:
    """Minimiser over [lo, hi] of a quasi-convex f whose derivative has the sign of Q(t) = a t^2 + b t + c.

    f' changes sign at most once, from - to +: the minimiser is lo when Q(lo) >= 0, hi when Q(hi) <= 0, and
    otherwise the root of Q in between (the stable quadratic formula, bisection if rounding hides it).
    """
    def q(t: float) -> float:
        return (a * t + b) * t + c

    if q(lo) >= 0:
        return lo
    if q(hi) <= 0:
        return hi
    roots: list[float] = []
    if a == 0:
        roots = [-c / b] if b != 0 else []
    else:
        disc = b * b - 4 * a * c
        if disc >= 0:
            s = -0.5 * (b + np.copysign(np.sqrt(disc), b))
            roots = [s / a] + ([c / s] if s != 0 else [])
    inside = [r for r in roots if lo <= r <= hi and 2 * a * r + b >= 0]
    if inside:
        return float(min(inside))
    for _ in range(200):  # rounding hid the root: bisection on the sign change
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if q(mid) < 0 else (lo, mid)
    return 0.5 * (lo + hi)


def pair_frame(L: np.ndarray, xj: np.ndarray, xi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(A^{-1} U, G = U^T A^{-1} U) for U = [x_j, x_i] and A = L L^T (module doc)."""
    U = np.column_stack([xj, xi])
    Z = solve_triangular(L, U, lower=True, check_finite=False)
    return solve_triangular(L, Z, lower=True, trans="T", check_finite=False), Z.T @ Z


def determinant_terms(G: np.ndarray) -> tuple[float, float]:
    """(c1, c2) with det(D + a G) = -1 + c1 a + c2 a^2."""
    return float(G[1, 1] - G[0, 0]), float(G[0, 0] * G[1, 1] - G[0, 1] ** 2)


def regular_until(G: np.ndarray, hi: float) -> float:
    """hi lowered so that A + a U D U^T stays positive definite on [0, hi]: det(D + a G) < -KEEP_REGULAR."""
    c1, c2 = determinant_terms(G)
    if -1.0 + c1 * hi + c2 * hi * hi < -KEEP_REGULAR:
        return hi
    lo, top = 0.0, hi
    for _ in range(100):
        mid = 0.5 * (lo + top)
        lo, top = (mid, top) if -1.0 + c1 * mid + c2 * mid * mid < -KEEP_REGULAR else (lo, mid)
    return lo


class Criterion(ABC):
    """A smooth criterion Phi(A) (module doc): value, gradient as a pricing map, exact pairwise line search."""

    #: the label of the results (``"a-optimal"``, ...)
    label: str
    #: c when the Hessian of Phi is c (x_i^T A^{-1} x_j)(x_i^T M^T M x_j) (:meth:`second_order`), else None
    hessian_coefficient: float | None = None

    @abstractmethod
    def value(self, X: np.ndarray, w: np.ndarray) -> float:
        """Phi at the design w over the rows of X (any design: generalised inverse, inf if not estimable).

        Parameters
        ----------
        X : numpy.ndarray, shape (K, d)
            The arms.
        w : numpy.ndarray, shape (K,)
            Nonnegative weights.

        Returns
        -------
        float
            The criterion.
        """

    @abstractmethod
    def gradient(self, X: np.ndarray, w: np.ndarray) -> Gradient | None:
        """Phi and its pricing map at w (None when A(w) is numerically singular).

        Parameters
        ----------
        X : numpy.ndarray, shape (K, d)
            The arms.
        w : numpy.ndarray, shape (K,)
            Nonnegative weights.

        Returns
        -------
        Gradient or None
            Value, pricing map M and the factor of A(w).
        """

    @abstractmethod
    def pair_step(self, g: Gradient, xj: np.ndarray, xi: np.ndarray, hi: float) -> float:
        """The a in [0, hi] minimising Phi(A + a (x_j x_j^T - x_i x_i^T)): weight a moves from arm i to arm j.

        Parameters
        ----------
        g : Gradient
            The criterion at the current design.
        xj : numpy.ndarray, shape (d,)
            The arm that gains weight (largest price).
        xi : numpy.ndarray, shape (d,)
            The arm that loses it (smallest price on the support).
        hi : float
            Its weight w_i (the step that drops it).

        Returns
        -------
        float
            The step a; hi exactly when arm i leaves the support.
        """

    def second_order(self, X: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """Prices h_k = -dPhi/dw_k and the Hessian c (x_i^T A^{-1} x_j)(x_i^T M^T M x_j) of Phi at w, for the
        criteria whose Hessian has that form (``hessian_coefficient`` c: 2 for the linear criteria).

        Parameters
        ----------
        X : numpy.ndarray, shape (m, d)
            The support arms.
        w : numpy.ndarray, shape (m,)
            Positive weights.

        Returns
        -------
        tuple of (numpy.ndarray, numpy.ndarray), or None
            h (m,) and the Hessian (m, m); None when A(w) is numerically singular.

        Raises
        ------
        NotImplementedError
            The criterion has no ``hessian_coefficient``.
        """
        if self.hessian_coefficient is None:
            raise NotImplementedError(f"{self.label} has no closed-form Hessian")
        g = self.gradient(X, w)
        return None if g is None else hadamard_terms(X, g.L, g.M, self.hessian_coefficient)

    def support_state(self, X: np.ndarray, w: np.ndarray) -> SupportState | None:
        """The criterion on the arms X of a support, for its pairwise steps (None when A(w) is singular).

        Parameters
        ----------
        X : numpy.ndarray, shape (m, d)
            The support arms.
        w : numpy.ndarray, shape (m,)
            Their weights.

        Returns
        -------
        SupportState or None
            Recomputed from scratch after each step here; the linear criteria update it in O(m d).
        """
        state = SupportState(self, X)
        return state if state.reset(w) else None


class SupportState:
    """The prices h_k of the support arms and Phi, followed through pairwise steps (recomputed at each step).

    Parameters
    ----------
    criterion : Criterion
        The criterion.
    X : numpy.ndarray, shape (m, d)
        The support arms.
    """

    def __init__(self, criterion: Criterion, X: np.ndarray):
        self.criterion, self.X = criterion, X
        self.value = float("nan")
        self.prices = np.zeros(X.shape[0])
        self.g: Gradient | None = None

    def reset(self, w: np.ndarray) -> bool:
        """Recompute value and prices at w from a fresh factorisation.

        Parameters
        ----------
        w : numpy.ndarray, shape (m,)
            The weights.

        Returns
        -------
        bool
            False when A(w) is numerically singular.
        """
        g = self.criterion.gradient(self.X, w)
        if g is None:
            return False
        Z = self.X @ g.M.T
        self.g, self.value, self.prices = g, g.value, np.einsum("ij,ij->i", Z, Z)
        return True

    def pair_step(self, j: int, i: int, hi: float) -> float:
        """The exact step moving weight from support arm i to support arm j
        (:meth:`~optdesign.linear.classical.criteria.Criterion.pair_step`).

        Parameters
        ----------
        j : int
            The arm that gains weight.
        i : int
            The arm that loses it.
        hi : float
            Its weight.

        Returns
        -------
        float
            The step.
        """
        assert self.g is not None
        return self.criterion.pair_step(self.g, self.X[j], self.X[i], hi)

    def move(self, j: int, i: int, a: float, w: np.ndarray) -> bool:
        """Follow the step a from arm i to arm j, which made the weights ``w``.

        Parameters
        ----------
        j : int
            The arm that gained weight.
        i : int
            The arm that lost it.
        a : float
            The step.
        w : numpy.ndarray, shape (m,)
            The weights after it.

        Returns
        -------
        bool
            False when A(w) became numerically singular.
        """
        return self.reset(w)
