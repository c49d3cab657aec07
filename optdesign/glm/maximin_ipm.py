"""The fast path of the maximin D-optimal design: primal-dual Newton steps on an active set, priced over all candidates.

On a support of m candidates, max t subject to f_s(w) = g_s(w) - c_s >= t for every s (g_s = (1/p) log det M_s,
c_s = offset_s, :mod:`optdesign.glm.standardise`) and w in the simplex is solved by a primal-dual interior-point
method on its KKT system, with slacks r_s = f_s(w) - t and multipliers q (of r >= 0), s (of w >= 0), nu (of
sum_i w_i = 1):

    sum_s q_s dg_s/dw + s = nu 1,   sum_s q_s = 1,   f_s(w) - t - r_s = 0,   q_s r_s = w_i s_i = sigma mu,

Newton steps on the perturbed system (one Cholesky factorisation of an (m + 1) x (m + 1) matrix each, the step to
the boundary of w, r, q, s > 0: the slacks keep the nonlinear constraints out of the line search). The derivatives
are those of the pseudo-Bayesian criterion, value by value: dg_s/dw_i = nu_is x_i^T M_s^{-1} x_i / p and
d^2 g_s / dw_i dw_j = -nu_is nu_js (x_i^T M_s^{-1} x_j)^2 / p. The multipliers q are the least favourable prior of
the support problem, and each iterate is certified on the support by the duality bound of
:mod:`optdesign.glm.duality` with them; the solve stops once that bound is below the inner tolerance (about 15
to 25 steps from a cold start to 1e-8; it reaches about 1e-10 before the system's rounding stops it).
The active set (``optdesign.linear.exchange.active_set_loop``) prices all candidates with the q of the last
support solve: a candidate joins when d_i^q(w) exp(sum_s q_s f_s - min_s f_s) > p (1 + tol), the product being the
full certificate's ratio exp(upper - lower) (without the local designs' slack). The loop stops after STALLS passes
without a better design (a tol below what doubles reach).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from ..linear.exchange import active_set_loop
from ..runtime.deadline import Deadline
from .exchange import BATCH, _starting_support
from .prior import BLOCK_ENTRIES
from .standardise import MaximinProblem
from .variances import draw_factors, prices

__all__ = ["MaximinRun", "maximin_exchange", "support_maximin"]

CENTERING = 0.1  # sigma: the target q_s r_s = w_i s_i = sigma mu of a Newton step
POLISH_CENTERING = 0.01  # sigma of the steps after the gap met tol: the candidates leaving get w ~ 0
POLISH_STEPS = 2
TO_BOUNDARY = 0.99  # fraction of the step to the boundary w, r, q, s > 0
MAX_ITER = 200  # Newton steps of one support solve, at most
PURGE = 0.1  # candidates below PURGE tol / m with w_i < s_i leave the support at the end, when the gap stays <= tol
INNER_TOL_FACTOR = 0.1  # support solves run to this fraction of tol (a few more Newton steps)
STALLS = 3  # pricing passes in a row without a better design before the loop stops (tol below what doubles reach)


@dataclass(frozen=True)
class MaximinRun:
    """A maximin design of the fast path, with the least favourable prior that certifies it."""

    #: the design over all K candidates
    weights: np.ndarray
    #: the weights q of the parameter values (summing to 1)
    q: np.ndarray
    #: pricing passes
    rounds: int
    #: whether the certified ratio (local slack aside) met 1 + tol
    converged: bool


def _criteria(X: np.ndarray, nu: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """g_s(w) (S,) and Z (S, m, p) with Z[s, i] = sqrt(nu_is) L_s^{-1} x_i; None when some M_s(w) is singular."""
    factors = draw_factors(X, nu, w)
    if factors is None:
        return None
    g = 2.0 * np.log(np.diagonal(factors[0], axis1=1, axis2=2)).sum(axis=1) / X.shape[1]
    Z = np.matmul(factors[1], X.T).transpose(0, 2, 1) * np.sqrt(nu.T)[:, :, None]
    return g, Z


def _curvature(Z: np.ndarray, c: np.ndarray) -> np.ndarray:
    """sum_s c_s (Z_s Z_s^T)^2 (elementwise square), in blocks of parameter values."""
    S, m, _ = Z.shape
    out = np.zeros((m, m))
    step = max(1, BLOCK_ENTRIES // max(m * m, 1))
    for start in range(0, S, step):
        G = Z[start:start + step] @ Z[start:start + step].transpose(0, 2, 1)
        out += np.einsum("s,sij->ij", c[start:start + step], G * G)
    return out


@dataclass(frozen=True)
class _Iterate:
    """A primal-dual point: design w, level t, slacks r (of f_s(w) - t - r_s = 0), multipliers q (of r >= 0), s (of
    w >= 0) and nu (of sum w = 1), with f_s(w) and Z at w (:func:`_criteria`)."""

    w: np.ndarray
    t: float
    r: np.ndarray
    q: np.ndarray
    s: np.ndarray
    nu: float
    f: np.ndarray
    Z: np.ndarray

    def gap(self) -> float:
        """sum_s q_s f_s - min_s f_s + log(max_i d_i^q / p) with q normalised: the certificate's log-ratio on the
        support."""
        q = self.q / self.q.sum()
        d = q @ (self.Z * self.Z).sum(axis=2)
        return float(q @ self.f - self.f.min() + np.log(d.max() / self.Z.shape[2]))


Step = tuple[np.ndarray, float, np.ndarray, np.ndarray, np.ndarray, float]  # dw, dt, dr, dq, ds, dnu


def _direction(it: _Iterate, sigma: float) -> Step | None:
    """The Newton step on the perturbed KKT system (module doc), or None when it is singular.

    With A_is = dg_s / dw_i, D = q / r, the residual e_s = f_s - t - r_s and the target sigma mu: dr = A^T dw - dt + e,
    dq = target / r - q - D dr, ds = target / w - s - (s / w) dw, and (dw, dt, dnu) solve the reduced system
    [H_q + A D A^T + diag(s / w), -A D; -(A D)^T, sum D] (dw, dt) + (1, 0) dnu = (A (target / r - D e) + target / w
    - nu, 1 - target sum 1 / r + sum D e), sum dw = 1 - sum w, H_q = sum_s q_s (-d^2 g_s / dw^2)."""
    w, r, q, s, Z = it.w, it.r, it.q, it.s, it.Z
    m, p = w.size, Z.shape[2]
    target = sigma * float(q @ r + w @ s) / (q.size + m)
    residual = it.f - it.t - r
    A = (Z * Z).sum(axis=2).T / p
    D = q / r
    H = np.empty((m + 1, m + 1))
    H[:m, :m] = _curvature(Z, q / p) + (A * D) @ A.T + np.diag(s / w)
    H[:m, m] = H[m, :m] = -(A @ D)
    H[m, m] = D.sum()
    rhs = np.concatenate([A @ (target / r - D * residual) + target / w - it.nu,
                          [1.0 - target * (1.0 / r).sum() + D @ residual]])
    e = np.zeros(m + 1)
    e[:m] = 1.0
    try:
        factor = cho_factor(H, lower=True, check_finite=False)
    except (LinAlgError, ValueError):
        return None
    a, b = cho_solve(factor, rhs, check_finite=False), cho_solve(factor, e, check_finite=False)
    dnu = float((a[:m].sum() - (1.0 - w.sum())) / b[:m].sum())
    dz = a - dnu * b
    dw, dt = dz[:m], float(dz[m])
    dr = A.T @ dw - dt + residual
    dq = target / r - q - D * dr
    ds = target / w - s - (s / w) * dw
    if not all(np.all(np.isfinite(v)) for v in (dz, dr, dq, ds)):
        return None
    return dw, dt, dr, dq, ds, dnu


def _to_boundary(v: np.ndarray, dv: np.ndarray) -> float:
    """The largest step in [0, 1] keeping v + a dv > 0, shortened by TO_BOUNDARY."""
    down = dv < 0
    return min(1.0, TO_BOUNDARY * float(np.min(-v[down] / dv[down]))) if np.any(down) else 1.0


def _step(X: np.ndarray, nu: np.ndarray, c: np.ndarray, it: _Iterate, sigma: float) -> _Iterate | None:
    """One Newton step to the boundary of w, r, q, s > 0 (the slacks r keep the constraints f_s - t >= 0 linear in
    the step), halved while some M_s(w) is singular."""
    direction = _direction(it, sigma)
    if direction is None:
        return None
    dw, dt, dr, dq, ds, dnu = direction
    a = min(_to_boundary(it.w, dw), _to_boundary(it.r, dr), _to_boundary(it.q, dq), _to_boundary(it.s, ds))
    while a > 1e-12:
        got = _criteria(X, nu, it.w + a * dw)
        if got is not None:
            return _Iterate(it.w + a * dw, it.t + a * dt, it.r + a * dr, it.q + a * dq, it.s + a * ds,
                            it.nu + a * dnu, got[0] - c, got[1])
        a *= 0.5
    return None


def support_maximin(X: np.ndarray, nu: np.ndarray, c: np.ndarray, w0: np.ndarray, *, tol: float,
                    deadline: Deadline) -> tuple[np.ndarray, np.ndarray] | None:
    """max_w min_s (g_s(w) - c_s) on the simplex of the support candidates, by primal-dual Newton steps (module doc).

    Parameters
    ----------
    X : numpy.ndarray, shape (m, p)
        The support candidates.
    nu : numpy.ndarray, shape (m, S)
        Their GLM weights at each parameter value.
    c : numpy.ndarray, shape (S,)
        The offsets c_s.
    w0 : numpy.ndarray, shape (m,)
        The starting design (zeros allowed): the iterates start at 0.5 w0 / sum w0 + 0.5 / m.
    tol : float
        Stop once the certificate's ratio on the support, exp(``_Iterate.gap``), is at most 1 + tol.
    deadline : Deadline
        Checked at every Newton step.

    Returns
    -------
    tuple of (numpy.ndarray, numpy.ndarray), or None
        The weights (summing to 1; candidates leaving the support at 0) and q (summing to 1); None when some M_s
        of the starting design is singular.
    """
    m = w0.size
    w = 0.5 * w0 / w0.sum() + 0.5 / m
    got = _criteria(X, nu, w)
    if got is None:
        return None
    q = np.full(c.size, 1.0 / c.size)
    price = q @ (got[1] * got[1]).sum(axis=2) / X.shape[1]
    t = float((got[0] - c).min()) - 1.0
    it = _Iterate(w, t, got[0] - c - t, q, 1.5 * float(price.max()) - price, 1.5 * float(price.max()), got[0] - c,
                  got[1])
    polish = 0  # steps taken since the gap met tol
    for _ in range(MAX_ITER):
        polish += it.gap() <= np.log1p(tol)
        if polish > POLISH_STEPS or deadline.expired():
            break
        nxt = _step(X, nu, c, it, POLISH_CENTERING if polish else CENTERING)
        if nxt is None:
            break
        it = nxt
    q = it.q / it.q.sum()
    if it.gap() > np.log1p(tol):
        return it.w / it.w.sum(), q
    return _purged(X, nu, c, it, tol), q


def _purged(X: np.ndarray, nu: np.ndarray, c: np.ndarray, it: _Iterate, tol: float) -> np.ndarray:
    """w with the candidates of w_i < min(s_i, PURGE tol / m) set to 0 (complementarity says they leave), when the
    gap on the support stays <= tol with the same q; else w."""
    w: np.ndarray = it.w / it.w.sum()
    drop = (w < it.s) & (w < PURGE * tol / w.size)
    if not np.any(drop) or np.all(drop):
        return w
    out = np.where(drop, 0.0, w)
    out /= out.sum()
    got = _criteria(X, nu, out)
    if got is None:
        return w
    trial = _Iterate(out, it.t, it.r, it.q, it.s, it.nu, got[0] - c, got[1])
    return out if trial.gap() <= np.log1p(tol) else w


def maximin_exchange(problem: MaximinProblem, *, tol: float = 1e-6, time_limit: float | None = 60.0,
                     batch: int | None = None, max_rounds: int = 10_000) -> MaximinRun:
    """max_w min_s (g_s(w) - offset_s) by an active set with full pricing (module doc).

    Parameters
    ----------
    problem : MaximinProblem
        The checked problem.
    tol : float
        Stop once the certified ratio exp(upper - lower), the local slack aside, is at most 1 + tol.
    time_limit : float, optional
        Seconds, capped by the enclosing time budget.
    batch : int, optional
        Candidates added to the support per pricing pass; max(BATCH, 2 p) by default.
    max_rounds : int
        Most pricing passes.

    Returns
    -------
    MaximinRun
        The best design priced and the q that priced it.
    """
    base = problem.base
    X, nu, c = base.X, base.nu, problem.offset
    K, p = X.shape
    batch = max(BATCH, 2 * p) if batch is None else max(1, int(batch))
    uniform = np.full(problem.n_values, 1.0 / problem.n_values)
    state: dict[str, np.ndarray | float] = {"q": uniform, "best_q": uniform, "best": np.inf, "stalls": 0}

    def inner(S: np.ndarray, w_S: np.ndarray, inner_tol: float, seconds: float) -> np.ndarray:
        solved = support_maximin(X[S], nu[S], c, w_S, tol=min(inner_tol, INNER_TOL_FACTOR * tol),
                                 deadline=Deadline(seconds))
        if solved is None:
            return w_S
        state["q"] = solved[1]
        return solved[0]

    def pricing(S: np.ndarray, w_S: np.ndarray) -> tuple[np.ndarray, float] | None:
        factors = draw_factors(X[S], nu[S], w_S)
        if factors is None:
            return None
        q = np.asarray(state["q"])
        f = 2.0 * np.log(np.diagonal(factors[0], axis1=1, axis2=2)).sum(axis=1) / p - c
        d = prices(X, nu, q, factors[1]) * np.exp(q @ f - f.min())
        ratio = float(d.max()) / float(p)
        if ratio < float(state["best"]):  # the design active_set_loop keeps as its best
            state.update(best=ratio, best_q=q, stalls=0)
        elif ratio > 1.0 + tol:  # no progress: the support solves are at their numerical limit
            state["stalls"] = float(state["stalls"]) + 1
            if state["stalls"] >= STALLS:
                return None  # active_set_loop stops and keeps the best design priced
        return d, float(p)

    run = active_set_loop(X, inner, pricing, tol=tol, deadline=Deadline(time_limit), batch=batch,
                          max_rounds=max_rounds, label="maximin-d", support=_starting_support(base, 2 * batch))
    w = np.zeros(K)
    w[run.support] = run.weights
    return MaximinRun(w, np.asarray(state["best_q"]), run.rounds, run.converged)
