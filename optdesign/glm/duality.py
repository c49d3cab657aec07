"""The certificate of a maximin D-optimal design, by duality with the pseudo-Bayesian problem, and its DesignResult.

With f_s(w) = g_s(w) - c_s (g_s = (1/p) log det M_s, c_s the local optimum or 0, :mod:`optdesign.glm.standardise`),
the optimum is F* = max_w min_s f_s(w). For every probability vector q over the parameter values and every design w,

    F* <= max_w sum_s q_s f_s(w) <= sum_s q_s f_s(w) + log(max_i d_i^q(w) / p),

the first since a minimum is at most a mean, the second the pseudo-Bayesian bound with prior q
(:mod:`optdesign.glm.certificate`, Phi_q <= Phi_q(w) + p log(max_i d_i^q / p) divided by p), where
d_i^q(w) = sum_s q_s nu_is x_i^T M_s(w)^{-1} x_i. At the optimum with q the least favourable prior (the multipliers of
the constraints f_s(w) >= t) both inequalities are equalities. The local optima are bracketed,
c_s in [offset_s, offset_s + slack_s], so the bound uses c_s >= offset_s and the design's value c_s <= offset_s +
slack_s:

    lower = min_s (g_s(w) - offset_s - slack_s) <= min_s f_s(w) <= F* <= upper
          = sum_s q_s (g_s(w) - offset_s) + log(max_i d_i^q(w) / p),

and upper <= 0 for a standardised problem (every efficiency is at most 1). ``lower`` is the certified log of the
design's least efficiency; exp(upper) bounds the maximin efficiency from above; the gap exp(upper - lower) - 1
includes the local designs' gaps (slack).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..result import DesignResult
from ..vocabulary import Status
from .certificate import _shared_doc
from .standardise import MaximinProblem
from .variances import draw_factors, prices

__all__ = ["MaximinBounds", "certify_maximin", "maximin_result"]


@dataclass(frozen=True)
class MaximinBounds:
    """A design's criteria g_s and the certified bracket [lower, upper] of the maximin optimum F*."""

    #: g_s(w) = (1/p) log det M_s(w), S values (-inf where M_s(w) is singular)
    g: np.ndarray
    #: min_s (g_s(w) - offset_s - slack_s): the design's criterion, certified from below
    lower: float
    #: sum_s q_s (g_s(w) - offset_s) + log(max_i d_i^q(w) / p) (at most 0 when standardised): F* <= upper
    upper: float


def certify_maximin(problem: MaximinProblem, w: np.ndarray, q: np.ndarray) -> MaximinBounds:
    """The certified bracket of F* from a design w over all candidates and a probability vector q (module doc).

    Parameters
    ----------
    problem : MaximinProblem
        The problem.
    w : numpy.ndarray, shape (K,)
        The design (nonnegative, summing to 1).
    q : numpy.ndarray, shape (S,)
        Nonnegative weights of the parameter values (normalised here).

    Returns
    -------
    MaximinBounds
        g, lower and upper; lower = -inf and upper = inf (0 when standardised) for a singular design.
    """
    base = problem.base
    p = base.X.shape[1]
    q = q / q.sum()
    top = 0.0 if problem.standardised else np.inf
    support = np.flatnonzero(w > 0)
    factors = draw_factors(base.X[support], base.nu[support], w[support])
    if factors is None:
        return MaximinBounds(np.full(problem.n_values, -np.inf), -np.inf, top)
    g = 2.0 * np.log(np.diagonal(factors[0], axis1=1, axis2=2)).sum(axis=1) / p
    d = prices(base.X, base.nu, q, factors[1])
    upper = float(q @ (g - problem.offset) + np.log(d.max() / p))
    return MaximinBounds(g, float(np.min(g - problem.offset - problem.slack)), min(upper, top))


@_shared_doc
def maximin_result(problem: MaximinProblem, w: np.ndarray, q: np.ndarray, *, status: Status, solver: str,
                   method: str, seconds: float, rounds: int) -> DesignResult:
    """The DesignResult of a maximin design, in variance units: ``value`` = exp(-lower), smaller is better.

    Standardised: ``value`` = max_s (det M_s(w_s*) / det M_s(w))^{1/p} certified from above (1 / the least
    efficiency, >= 1), ``lower_bound`` = exp(-upper) <= the optimal value. Not standardised: ``value`` =
    max_s det M_s(w)^{-1/p}. ``gap`` = exp(upper - lower) - 1 (module doc).

    Parameters
    ----------
    problem : MaximinProblem
        The problem.
    w : numpy.ndarray, shape (K,)
        The design.
    q : numpy.ndarray, shape (S,)
        The least favourable prior found with it (normalised here).
%(record)s
    rounds : int
        Pricing passes.

    Returns
    -------
    DesignResult
        ``criterion`` ``"standardised-maximin-d"`` or ``"minimax-d"``; extras in :func:`optdesign.maximin_d_optimal`.
    """
    q = q / q.sum()
    bounds = certify_maximin(problem, w, q)
    p = problem.base.X.shape[1]
    lower, upper = bounds.lower, bounds.upper
    finite = np.isfinite(lower) and np.isfinite(upper)
    extras: dict = {"log_dets": p * bounds.g, "least_favourable": q, "values": problem.n_values}
    if problem.standardised:
        extras.update(efficiencies=np.exp(bounds.g - problem.offset - problem.slack), efficiency=float(np.exp(lower)),
                      efficiency_upper=float(np.exp(upper)), local_log_dets=p * problem.offset,
                      local_gaps=np.expm1(problem.slack))
    else:
        extras.update(criteria=np.exp(-bounds.g))
    return DesignResult(
        weights=w, value=float(np.exp(-lower)), status=status, solver=solver, solve_time=seconds,
        gap=max(float(np.expm1(upper - lower)), 0.0) if finite else float("inf"), method=method,
        criterion="standardised-maximin-d" if problem.standardised else "minimax-d",
        lower_bound=float(np.exp(-upper)), iterations=rounds, link=problem.base.link, extras=extras,
    )
