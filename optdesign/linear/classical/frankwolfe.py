"""The fast path of the smooth criteria (A, I, L, Ds, phi_p): the restricted problem on an active set.

Inner solve: the linear criteria (A, I, L), whose Hessian has a closed form
(:meth:`~optdesign.linear.classical.criteria.Criterion.second_order`), take the primal-dual Newton steps of
:mod:`optdesign.linear.interior`; the others, and any solve Newton leaves short, :func:`support_frank_wolfe`: on a
small support S, each iteration prices the support arms h_k = ||M x_k||^2 (the criterion's gradient map,
:mod:`optdesign.linear.classical.criteria`) and moves weight from the support arm of smallest h_k to the arm of
largest h_k (pairwise Frank–Wolfe, Lacoste-Julien & Jaggi 2015; the vertex exchange of Böhning 1986 and the
exchanges of REX, Harman, Filová & Richtárik 2020), with the criterion's exact line search; a step that empties
the losing arm drops it. Iterates stay nonsingular (the line search never crosses a singular A(w)), so criteria
whose optimum is singular (c-, L-, Ds-optimality) are approached from inside.

Outer loop (``optdesign.linear.exchange.active_set_loop``, shared with the D-optimal exchange): one chunked
pricing pass over all arms per round, the violators h_k > Phi (1 + tol) join S. Certificate: Phi* >=
Phi(w)^2 / max_k h_k, so the certified gap is max_k h_k / Phi(w) - 1 (the equivalence theorem: max_k h_k = Phi
exactly at the optimum).
"""

from __future__ import annotations

import numpy as np

from ...result import FastPathResult
from ...runtime.deadline import Deadline
from ...runtime.progress import listening, report
from ..exchange import active_set_loop, price_map
from ..interior import newton_fits, support_interior_point
from .criteria import Criterion

__all__ = ["smooth_design", "support_frank_wolfe"]

TOWARD_MAX = 1e8  # largest toward step t = g / (1 - g)


def support_frank_wolfe(X: np.ndarray, criterion: Criterion, w: np.ndarray, *, tol: float, deadline: Deadline,
                        max_iter: int = 200_000) -> tuple[np.ndarray, int]:
    """Pairwise Frank–Wolfe for min_w Phi(A(w)) over the rows of X (module doc).

    Parameters
    ----------
    X : numpy.ndarray, shape (m, d)
        The support arms, spanning R^d.
    criterion : Criterion
        The smooth criterion.
    w : numpy.ndarray, shape (m,)
        Starting weights with A(w) nonsingular (zeros allowed).
    tol : float
        Stop once max_k h_k <= Phi(w) (1 + tol) on these arms.
    deadline : Deadline
        Checked every 32 iterations.
    max_iter : int
        Most steps.

    Returns
    -------
    tuple of (numpy.ndarray, int)
        The weights (summing to 1) and the steps taken; the starting weights if A(w) is singular.
    """
    w = np.asarray(w, dtype=float) / np.sum(w)
    state = criterion.support_state(X, w)
    it = 0
    while state is not None and it < max_iter:
        h = state.prices
        j = int(np.argmax(h))
        if h[j] <= state.value * (1.0 + tol) or (it % 32 == 0 and deadline.expired()):
            break
        if listening() and it % 2048 == 0:
            report(f"frank-wolfe: step {it}, gap on {X.shape[0]} arms {h[j] / state.value - 1:.1e}")
        i = int(np.argmin(np.where(w > 0, h, np.inf)))
        a = state.pair_step(j, i, float(w[i])) if i != j else 0.0
        if a <= 0.0 and i != j and state.reset(w):  # the followed state may have drifted: a fresh one decides
            a = state.pair_step(j, i, float(w[i]))
        it += 1
        if a <= 0.0:
            break
        w[j] += a
        w[i] = 0.0 if a >= w[i] else w[i] - a
        if not state.move(j, i, a, w):
            break
    return w / w.sum(), it


def smooth_design(X: np.ndarray, criterion: Criterion, *, tol: float = 1e-4, time_limit: float | None = 60.0,
                  batch: int | None = None, chunk: int | None = None, max_rounds: int = 10_000,
                  factor: np.ndarray | None = None) -> FastPathResult:
    """min_w Phi(A(w)) by active-set Frank–Wolfe with one pricing pass over all arms per round (module doc).

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms, finite and spanning R^d (checked by the caller).
    criterion : Criterion
        The smooth criterion.
    tol : float
        Certified relative gap: stop when max_k h_k <= Phi(w) (1 + tol).
    time_limit : float, optional
        Seconds, capped by the enclosing time budget.
    batch : int, optional
        Arms added to the support per pricing pass; max(32, 2 d) by default.
    chunk : int, optional
        Rows per pricing block.
    max_rounds : int
        Most pricing passes.
    factor : numpy.ndarray, shape (d, d), optional
        Lower-triangular L with L L^T = X^T X, which ranks the starting support (computed when None).

    Returns
    -------
    FastPathResult
        The best design priced over all arms, Phi there, the certified lower bound Phi^2 / max_k h_k, the
        pricing passes and ``converged``.
    """
    n, d = X.shape
    deadline = Deadline(time_limit)

    def inner(S: np.ndarray, w_S: np.ndarray, inner_tol: float, seconds: float) -> np.ndarray:
        XS, limit = X[S], Deadline(seconds)
        if criterion.hessian_coefficient is not None and newton_fits(*XS.shape):
            solved = support_interior_point(lambda w: criterion.second_order(XS, w), w_S, tol=inner_tol,
                                            deadline=limit)
            if solved is not None and solved[1]:
                return solved[0]
            w_S = w_S if solved is None else solved[0]  # Frank–Wolfe finishes what Newton could not
        w, _ = support_frank_wolfe(XS, criterion, w_S, tol=inner_tol, deadline=limit)
        return w

    def pricing(S: np.ndarray, w_S: np.ndarray) -> tuple[np.ndarray, float] | None:
        g = criterion.gradient(X[S], w_S)
        if g is None:
            return None
        return price_map(X, g.M, chunk=chunk), g.value

    run = active_set_loop(X, inner, pricing, tol=tol, deadline=deadline,
                          batch=max(32, 2 * d) if batch is None else max(1, int(batch)), chunk=chunk,
                          max_rounds=max_rounds, label=criterion.label, factor=factor)
    w = np.zeros(n)
    w[run.support] = run.weights
    value = criterion.value(X[run.support], run.weights)
    return FastPathResult(w, value, run.f / run.ratio, run.rounds, run.converged)
