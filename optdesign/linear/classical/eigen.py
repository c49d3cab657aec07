"""E-optimal designs on many candidates: the semidefinite model on a working set, its dual priced over all.

Phi_E(w) = 1 / lambda_min(A(w)) (the largest variance of a normalised linear function, Pukelsheim 1993 §6.4).
For every Z PSD with tr Z = 1, lambda_min(A(w)) <= tr(Z A(w)) = sum_k w_k x_k^T Z x_k <= max_k x_k^T Z x_k, so
Phi_E* >= 1 / max_k x_k^T Z x_k: the dual of the SDP max { tau : A(w) - tau I PSD } certifies any design, and is
tight at the optimum (the equivalence theorem of E-optimality). Column generation on the shared active-set loop
(:func:`optdesign.linear.exchange.active_set_loop`): the SDP restricted to a support S
(:class:`~optdesign.linear.classical.models.ClassicalDesignModel`) gives w and Z, one chunked pricing pass
computes x_k^T Z x_k over all candidates, and those above lambda_min (1 + tol) enter S.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import eigh, eigvalsh

from ...deadline import Deadline
from ...result import FastPathResult
from ..criteria import information_matrix
from ..exchange import active_set_loop, price_map
from .kiefer import KieferCriterion
from .models import ClassicalDesignModel

__all__ = ["density_root", "eigen_design"]



def density_root(Z: np.ndarray) -> np.ndarray:
    """M with M^T M = Z+ / tr(Z+), Z+ the PSD part of the symmetrised Z (a density matrix; zeros if Z+ = 0).

    Parameters
    ----------
    Z : numpy.ndarray, shape (d, d)
        A dual matrix.

    Returns
    -------
    numpy.ndarray, shape (d, d)
        The pricing map: x^T Z+ x / tr(Z+) = ||M x||^2.
    """
    lam, U = eigh((Z + Z.T) / 2)
    lam = np.clip(lam, 0.0, None)
    total = lam.sum()
    return np.sqrt(lam / total)[:, None] * U.T if total > 0 else np.zeros_like(Z)


def eigen_design(X: np.ndarray, *, tol: float = 1e-4, time_limit: float | None = 60.0, solver: str | None = None,
                 batch: int | None = None, chunk: int | None = None) -> FastPathResult:
    """E-optimal design min_w 1 / lambda_min(A(w)) by the SDP on a working set priced over all arms (module doc).

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms, spanning R^d.
    tol : float
        Certified relative gap at which the loop stops.
    time_limit : float, optional
        Seconds, capped by the enclosing time budget (each SDP solve finishes).
    solver : str, optional
        Conic solver of the restricted SDP.
    batch : int, optional
        Candidates entering per pricing pass; max(32, 2 d) by default.
    chunk : int, optional
        Rows per pricing block.

    Returns
    -------
    FastPathResult
        The design, 1 / lambda_min there, the certified lower bound 1 / max_k x_k^T Z x_k, the pricing passes and
        ``converged``.
    """
    n, d = X.shape
    criterion = KieferCriterion(np.inf, "e-optimal")
    dual: dict[str, np.ndarray] = {}

    def inner(S: np.ndarray, w_S: np.ndarray, inner_tol: float, seconds: float) -> np.ndarray:
        sol = ClassicalDesignModel(X[S], criterion, solver=solver).solve()
        dual["M"] = density_root(sol.dual if sol.dual is not None else np.eye(d))
        w = sol.weights
        return np.where(w > 1e-12 * w.max(), w, 0.0)

    def pricing(S: np.ndarray, w_S: np.ndarray) -> tuple[np.ndarray, float] | None:
        low = float(eigvalsh(information_matrix(X[S], w_S))[0])
        return None if low <= 0 else (price_map(X, dual["M"], chunk=chunk), low)

    batch = max(32, 2 * d) if batch is None else max(1, int(batch))
    deadline = Deadline(time_limit)
    run = active_set_loop(X, inner, pricing, tol=tol, deadline=deadline, batch=batch, chunk=chunk,
                          label="e-optimal")
    w = np.zeros(n)
    w[run.support] = run.weights
    value = 1.0 / run.f
    return FastPathResult(w, value, value / run.ratio, run.rounds, run.converged)
