"""First-order design algorithms: the fast path for hot loops, each returning a certificate.

* D/G-optimal design (``d_optimal_fw``): Frank–Wolfe with away steps (Wolfe–Atwood,
  Todd & Yildirim 2007, linear convergence by Ahipasaoglu, Sun & Todd 2008) with the exact
  line search of log det A(w), warm-started by a few multiplicative steps
  w_k <- w_k x_k^T A^{-1} x_k / d (Titterington). A^{-1} and every leverage h_k = x_k^T A^{-1} x_k
  follow rank-one (Sherman–Morrison) updates, so one iteration costs O(K d); the leverages are recomputed
  from the QR factor of diag(sqrt w) X every ``refresh_every`` iterations and for the certificate.
  Certificate: max_k h_k >= d with equality exactly at the optimum (Kiefer–Wolfowitz), so the
  relative gap of the G-value is max_k h_k / d - 1.
* ``d_optimal_multiplicative``: the multiplicative algorithm alone (monotone in log det).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import SolverError
from ..result import FastPathResult
from ..runtime.deadline import Deadline
from ..runtime.progress import listening, report
from .criteria import direction_variances, inverse_information

__all__ = ["FrankWolfeRun", "d_optimal_fw", "d_optimal_multiplicative", "frank_wolfe_loop", "frank_wolfe_step"]


def _initial_weights(K: int, w0: np.ndarray | None) -> np.ndarray:
    if w0 is None:
        return np.full(K, 1.0 / K)
    w = np.clip(np.asarray(w0, dtype=float), 0.0, None)
    w = 0.99 * w / w.sum() + 0.01 / K  # keep every arm reachable by toward steps
    return w


def _whitened_leverages(X: np.ndarray, w: np.ndarray) -> np.ndarray:
    """h_k = ||L^{-1} x_k||^2 from the QR factor of diag(sqrt w) X: accurate where x^T A^{-1} x from an explicit
    A^{-1} is not (its rounding grows with cond(A) = cond(X)^2); every certificate here uses it."""
    return direction_variances(X, w, X)


def frank_wolfe_step(w: np.ndarray, h: np.ndarray, j: int, d: int) -> tuple[float, float, int]:
    """One toward or away step with the exact line search of log det A(w), on ``w`` in place.

    The toward step on the arm j of largest variance h_j gives A' = (1 - g) A + g x_j x_j^T with
    g = (h_j - d) / (d (h_j - 1)); the away step from the support arm i of smallest variance gives
    A' = (1 + g) A - g x_i x_i^T with g = (d - h_i) / (d (h_i - 1)), at most w_i / (1 - w_i) (w_i drops to 0
    there). The away step is taken when d - h_i > h_j - d.

    Parameters
    ----------
    w : numpy.ndarray, shape (K,)
        The design, updated in place.
    h : numpy.ndarray, shape (K,)
        The variances x_k^T A(w)^{-1} x_k.
    j : int
        The arm of largest variance.
    d : int
        The dimension.

    Returns
    -------
    tuple of (float, float, int)
        (a, b, k) with A(w') = a A(w) + b x_k x_k^T, for a rank-one update of A^{-1}.
    """
    hj = float(h[j])
    i = int(np.argmin(np.where(w > 0, h, np.inf)))
    hi = float(h[i])
    if hj - d >= d - hi:  # toward step on arm j: A' = (1-g) A + g x_j x_j^T
        g = (hj - d) / (d * (hj - 1.0))
        w *= 1.0 - g
        w[j] += g
        return 1.0 - g, g, j
    g_max = w[i] / (1.0 - w[i])  # away step from arm i: A' = (1+g) A - g x_i x_i^T, g <= w_i / (1 - w_i)
    g = min((d - hi) / (d * (hi - 1.0)), g_max) if hi > 1.0 else g_max
    w *= 1.0 + g
    w[i] -= g
    if g == g_max:
        w[i] = 0.0
    return 1.0 + g, -g, i


#: what a Frank–Wolfe update returns from (w, v, a, b, k, it): the design and its variances after the step
#: ``A(w') = a A(w) + b x_k x_k^T`` taken in place on w, the ``it``-th step
VarianceUpdate = Callable[[np.ndarray, np.ndarray, float, float, int, int], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class FrankWolfeRun:
    """Where :func:`frank_wolfe_loop` stopped: the last design and, if asked for, the best one met."""

    #: the design after the last step
    weights: np.ndarray
    #: the variances x_k^T A(w)^{-1} x_k at ``weights``
    variances: np.ndarray
    #: Frank–Wolfe steps taken
    iterations: int
    #: the design of smallest G-value max_k v_k met (``weights`` when the loop does not track it)
    best_weights: np.ndarray
    #: that G-value (inf when the loop does not track it)
    best_value: float


def frank_wolfe_loop(w: np.ndarray, v: np.ndarray, d: int, *, target: float, max_iter: int, deadline: Deadline,
                     update: VarianceUpdate, label: str, note: str = "", keep_best: bool = False) -> FrankWolfeRun:
    """Toward and away steps (:func:`frank_wolfe_step`) until max_k v_k <= ``target``, the limits, or a
    non-finite variance; ``update`` says how the variances follow a step (what the two D/G paths differ in).

    Parameters
    ----------
    w : numpy.ndarray, shape (K,)
        The starting design (updated in place by the steps; ``update`` may return a new array).
    v : numpy.ndarray, shape (K,)
        The variances x_k^T A(w)^{-1} x_k at ``w``.
    d : int
        The dimension.
    target : float
        Stop once the largest variance is at most ``target`` (d (1 + tol)).
    max_iter : int
        Most steps.
    deadline : Deadline
        Checked every 64 steps.
    update : callable
        ``update(w, v, a, b, k, it) -> (w, v)``: the design and its variances after the ``it``-th step, which
        made A(w') = a A(w) + b x_k x_k^T.
    label : str
        Names the path in the progress lines.
    note : str
        Appended to the progress lines.
    keep_best : bool
        Copy the design of smallest G-value met (for paths that do not end at the last design).

    Returns
    -------
    FrankWolfeRun
        The last design, its variances, the steps taken and the best design met.
    """
    best_w, best_g = (w.copy(), float(v.max())) if keep_best else (w, np.inf)
    it = 0
    while it < max_iter:
        j = int(np.argmax(v))
        vj = float(v[j])
        if keep_best and vj < best_g:
            best_w, best_g = w.copy(), vj
        if vj <= target or not np.isfinite(vj):  # converged, or a step made A(w) singular
            break
        if it % 64 == 0:
            if deadline.expired():
                break
            if it % 4096 == 0 and listening():
                report(f"{label}: iteration {it}, gap {vj / d - 1:.1e}{note}")
        a, b, k = frank_wolfe_step(w, v, j, d)
        it += 1
        w, v = update(w, v, a, b, k, it)
    return FrankWolfeRun(w, v, it, best_w if keep_best else w, best_g)


def d_optimal_multiplicative(
    X: np.ndarray,
    *,
    tol: float = 1e-4,
    max_iter: int = 100_000,
    time_limit: float = 60.0,
    w0: np.ndarray | None = None,
) -> FastPathResult:
    """Multiplicative algorithm w_k <- w_k h_k / d for the D-criterion (G-value gap as certificate).

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms, finite and spanning R^d (not validated: :func:`optdesign.d_optimal` checks them).
    tol : float
        Stop once max_k h_k <= d (1 + tol), the certified relative gap of the G-value.
    max_iter : int
        Most multiplicative steps.
    time_limit : float
        Seconds, capped by an enclosing :func:`optdesign.runtime.deadline.time_budget`.
    w0 : numpy.ndarray, shape (K,), optional
        Starting weights (normalised, mixed with 1 % of the uniform design); uniform by default.

    Returns
    -------
    FastPathResult
        The last design, its G-value max_k h_k, ``lower_bound`` d, the steps taken and whether ``tol`` was met.
    """
    K, d = X.shape
    w = _initial_weights(K, w0)
    deadline = Deadline(time_limit)
    it = 0
    while True:
        h = _whitened_leverages(X, w)
        gmax = float(h.max())
        if gmax <= d * (1 + tol) or it >= max_iter or deadline.expired():
            break
        w = w * h / d
        w /= w.sum()
        it += 1
    return FastPathResult(w, gmax, float(d), it, gmax <= d * (1 + tol))


def d_optimal_fw(
    X: np.ndarray,
    *,
    tol: float = 1e-4,
    max_iter: int = 1_000_000,
    time_limit: float = 60.0,
    w0: np.ndarray | None = None,
    warm_start_steps: int = 10,
    refresh_every: int = 500,
) -> FastPathResult:
    """Frank–Wolfe with away steps and exact line search for D/G-optimal design (see module doc).

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms, unchecked (finite, rank d); :func:`optdesign.g_optimal` and :func:`optdesign.d_optimal`
        validate them first.
    tol : float
        Target certified gap: stop once every leverage h_k is at most d (1 + tol).
    max_iter : int
        Most Frank–Wolfe iterations (toward or away steps).
    time_limit : float
        Wall-clock seconds (checked every 64 iterations), capped by the enclosing time budget.
    w0 : numpy.ndarray, shape (K,), optional
        Initial design before the warm start (mixed with 1 % of uniform weight); uniform by default.
    warm_start_steps : int
        Multiplicative steps before the first Frank–Wolfe iteration.
    refresh_every : int
        Iterations between recomputations of A^{-1} and the leverages from scratch (drift control).

    Returns
    -------
    FastPathResult
        The design, its G-value (leverages recomputed from a fresh factorisation), ``lower_bound`` d, the
        iterations and ``converged``.

    Raises
    ------
    SolverError
        A(w) of the warm-started design is numerically singular (nearly dependent arms).
    """
    K, d = X.shape
    w = _initial_weights(K, w0)
    for _ in range(warm_start_steps):
        h = _whitened_leverages(X, w)
        w = w * h / d
        w /= w.sum()
    deadline = Deadline(time_limit)
    M = inverse_information(X, w)
    if M is None:
        raise SolverError("A(w) of the warm-started design is numerically singular; the arms are too close to "
                          "dependent for Frank–Wolfe (try method='barrier')")
    h = _whitened_leverages(X, w)
    target = d * (1 + tol)

    def sherman_morrison(w: np.ndarray, h: np.ndarray, a: float, b: float, k: int,
                         it: int) -> tuple[np.ndarray, np.ndarray]:
        # (aA + b x x^T)^{-1} = (M - c Mx x^T M) / a with c = (b/a) / (1 + (b/a) h_k)
        nonlocal M
        Mx = M @ X[k]
        c = (b / a) / (1.0 + (b / a) * h[k])
        u = X @ Mx
        h = (h - c * u * u) / a
        M = (M - c * np.outer(Mx, Mx)) / a
        if it % refresh_every == 0:  # drift control
            w = np.clip(w, 0.0, None)
            w /= w.sum()
            M = inverse_information(X, w)
            h = _whitened_leverages(X, w)
        return w, h

    run = frank_wolfe_loop(w, h, d, target=target, max_iter=max_iter, deadline=deadline, update=sherman_morrison,
                           label="frank-wolfe", note=" (certified at the end)")
    w, it = run.weights, run.iterations
    w = np.clip(w, 0.0, None)
    w /= w.sum()
    h = _whitened_leverages(X, w)
    gmax = float(h.max())
    return FastPathResult(w, gmax, float(d), it, gmax <= target)
