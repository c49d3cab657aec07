"""c-optimal designs by Elfving's theorem: a linear program, exact for the singular designs that are typical here.

Elfving (1952): min_w c^T A(w)^- c = (min { ||u||_1 : X^T u = c })^2, attained by w_k = |u_k| / ||u||_1 (so at
most d candidates, often fewer: A(w) is then singular and c in its range). The dual is max { c^T y :
|x_k^T y| <= 1 for all k }, and every y certifies Phi* >= (c^T y)^2 / max_k (x_k^T y)^2 (the linear criteria's
bound of :mod:`~optdesign.linear.classical.linear` with Y = y). Column generation on the shared active-set loop
(``optdesign.linear.exchange.active_set_loop``): the LP restricted to a support S is solved by HiGHS (its
basis keeps c estimable, so it stays feasible), the dual y is priced over all candidates in one chunked pass, and
the candidates with |x_k^T y| > 1 enter.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog

from ...errors import SolverError
from ...result import FastPathResult
from ...runtime.deadline import Deadline
from ..exchange import active_set_loop, price_map
from .linear import LinearCriterion

__all__ = ["elfving_design"]


def elfving_design(X: np.ndarray, c: np.ndarray, *, tol: float = 1e-4, time_limit: float | None = 60.0,
                   batch: int | None = None, chunk: int | None = None) -> FastPathResult:
    """c-optimal design min_w c^T A(w)^- c by Elfving's LP with column generation (module doc).

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms, spanning R^d (the caller reduces a rank-deficient X to its row space).
    c : numpy.ndarray, shape (d,)
        The vector of interest.
    tol : float
        Certified relative gap at which the loop stops.
    time_limit : float, optional
        Seconds, capped by the enclosing time budget.
    batch : int, optional
        Candidates entering per pricing pass; max(32, 2 d) by default.
    chunk : int, optional
        Rows per pricing block.

    Returns
    -------
    FastPathResult
        The design, c^T A(w)^- c there, the certified lower bound (c^T y)^2 / max_k (x_k^T y)^2, the pricing passes
        and ``converged``.

    Raises
    ------
    SolverError
        HiGHS failed on a restricted LP.
    """
    n, d = X.shape
    dual: dict[str, np.ndarray] = {}

    def inner(S: np.ndarray, w_S: np.ndarray, inner_tol: float, seconds: float) -> np.ndarray:
        m = S.size
        XS = X[S]
        res = linprog(np.ones(2 * m), A_eq=np.hstack([XS.T, -XS.T]), b_eq=c, bounds=(0, None), method="highs")
        if res.status != 0:
            raise SolverError(f"HiGHS failed on Elfving's LP: {res.message}", solver="HIGHS")
        u = res.x[:m] - res.x[m:]
        dual["y"] = np.asarray(res.eqlin.marginals, dtype=float)
        w: np.ndarray = np.abs(u) / np.sum(np.abs(u))
        return w

    def pricing(S: np.ndarray, w_S: np.ndarray) -> tuple[np.ndarray, float]:
        y = dual["y"]
        h = price_map(X, y[None, :], chunk=chunk)  # (x_k^T y)^2
        value = criterion.value(X[S], w_S)
        return h, float(c @ y) ** 2 / value  # max h / f = value / lower bound

    criterion = LinearCriterion(c[None, :], "c-optimal")
    run = active_set_loop(X, inner, pricing, tol=tol, deadline=Deadline(time_limit),
                          batch=max(32, 2 * d) if batch is None else max(1, int(batch)), chunk=chunk, label="elfving")
    w = np.zeros(n)
    w[run.support] = run.weights
    value = criterion.value(X[run.support], run.weights)
    return FastPathResult(w, value, value / run.ratio, run.rounds, run.converged)
