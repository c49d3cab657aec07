"""The design inverse along a Frank–Wolfe path on a linear problem (the fast path of Frank–Wolfe sampling).

Linear problems keep H = V(x)^{-1}, V(x) = sum_k x_k a_k a_k^T, by Sherman–Morrison: after the step
x <- (1 - 1/t) x + z / t, V <- (1 - 1/t) V + sum_k (z_k / t) a_k a_k^T, so H is scaled by t / (t - 1) and updated
by rank one with u = sqrt(z_k / t) a_k, and recomputed exactly every ``refresh`` steps and after a dense z. The
projections H y_j of the pieces' normals (the problem's halfspaces: y_j = z* - z_j for best-item identification) are
updated alongside (O(J d) per rank one instead of O(J d^2)).

``published=True`` reproduces the update of the published FWS code (Wang, Tzeng & Proutiere, NeurIPS 2021), for
reproductions only: it starts from H = V(x_1) itself, scales H by (t - 1) / t and updates it with
u = (z_k / t) a_k, so H is the inverse of W_{t+1} = t / (t - 1) W_t + sum_k (z_k / t)^2 a_k a_k^T, not
V(x)^{-1} (:mod:`bandits.pure_exploration.samplers.frank_wolfe`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..core.alternatives import Halfspaces, piece_gradients, piece_values

__all__ = ["DENSE_SUPPORT", "DesignInverse"]

#: a direction z with more nonzero entries than this refreshes H by one inversion instead of rank-one updates
DENSE_SUPPORT = 4


class DesignInverse:
    """H = W^{-1} for the design W of the Frank–Wolfe iterate, with the answers' projections H y_j kept alongside.

    ``exact``: W = V(x) and H its inverse. ``as-published``: W and H follow the published code (module docs).

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms.
    halfspaces : callable
        The problem's pieces at an estimate (:meth:`bandits.pure_exploration.linear.LinearProblem.halfspaces`).
    sigma : float
        The noise level.
    x : numpy.ndarray, shape (K,)
        The starting iterate (positive, with V(x) invertible).
    published : bool
        Follow the published code's update.
    refresh : int
        Steps between exact recomputations of H (exact update only).
    """

    def __init__(self, X: np.ndarray, halfspaces: Callable[[np.ndarray], Halfspaces], sigma: float, x: np.ndarray,
                 published: bool, refresh: int) -> None:
        self.X, self.halfspaces, self.sigma, self.published, self.refresh = X, halfspaces, sigma, published, refresh
        self.gaps = np.zeros(0)
        self._best = -1
        V = X.T @ (X * x[:, None])
        self.W: np.ndarray = np.linalg.inv(V) if published else V
        self.H: np.ndarray = V if published else np.linalg.inv(V)
        self.Y = np.zeros((0, X.shape[1]))
        self.P = np.zeros((0, X.shape[1]))  # rows H y_j
        self.q = np.zeros(0)  # y_j^T H y_j
        self._since = 0

    def start_batch(self, mu: np.ndarray) -> None:
        """Use the estimate of a new batch: the normals y_j of its answer's pieces (re-projected when the answer
        changes) and their gaps.

        Parameters
        ----------
        mu : numpy.ndarray, shape (d,)
            The estimate theta_hat.
        """
        pieces = self.halfspaces(mu)
        if pieces.best != self._best:
            self._best = pieces.best
            self.project(pieces.Y)
        self.gaps = pieces.gaps

    def pieces(self, x: np.ndarray, slack: float) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The values of all pieces at (mu, x) and the gradients of those within ``slack`` of the minimum (for the
        published update, f_j = <x, grad f_j> at its matrix); (None, None) when the estimate has no unique answer.

        Parameters
        ----------
        x : numpy.ndarray, shape (K,)
            The iterate.
        slack : float
            The additive slack of the near-minimal pieces.

        Returns
        -------
        tuple
            ``(values, gradients)``.
        """
        gaps = self.gaps
        if gaps.size == 0 or gaps.min() <= 0:
            return None, None
        if self.published:  # the published code's f_j = <x, grad f_j> at its matrix
            grads = piece_gradients(gaps, self.q, self.P @ self.X.T, self.sigma)
            values = grads @ x
            return values, grads[values <= values.min() + slack]
        values = piece_values(gaps, self.q, self.sigma)
        near = np.flatnonzero(values <= values.min() + slack)
        return values, piece_gradients(gaps[near], self.q[near], self.P[near] @ self.X.T, self.sigma)

    def project(self, Y: np.ndarray) -> None:
        """Use the normals Y (rows y_j) from now on.

        Parameters
        ----------
        Y : numpy.ndarray, shape (J, d)
            The pieces' normals.
        """
        self.Y = Y
        self.P = Y @ self.H
        self.q = np.einsum("jd,jd->j", self.P, Y)

    def step(self, t: int, z: np.ndarray, x: np.ndarray) -> None:
        """Follow the Frank–Wolfe step x <- (1 - 1/t) x + z / t (``x`` is the new iterate).

        Parameters
        ----------
        t : int
            The step (at least 2).
        z : numpy.ndarray, shape (K,)
            The direction (a point of the simplex).
        x : numpy.ndarray, shape (K,)
            The iterate after the step.
        """
        support = np.flatnonzero(z)
        if self.published:
            scale, coef = t / (t - 1.0), (z[support] / t) ** 2
        else:
            scale, coef = (t - 1.0) / t, z[support] / t
        Xs = self.X[support]
        self.W = scale * self.W + Xs.T @ (Xs * coef[:, None])
        self._since += 1
        if support.size > DENSE_SUPPORT or (not self.published and self._since >= self.refresh):
            if not self.published:
                self.W = self.X.T @ (self.X * x[:, None])
            self._invert()
            return
        self.H /= scale
        self.P /= scale
        self.q /= scale
        for u in Xs * np.sqrt(coef)[:, None]:
            h = self.H @ u
            denom = 1.0 + u @ h
            Pu = self.P @ u
            self.H -= np.outer(h, h / denom)
            self.P -= np.outer(Pu, h / denom)
            self.q -= Pu**2 / denom

    def _invert(self) -> None:
        """H = W^{-1} by one inversion, and the projections from it."""
        H = np.linalg.inv(self.W)
        self.H = 0.5 * (H + H.T)
        self._since = 0
        self.project(self.Y)
