"""A pseudo-Bayesian A- or I-optimal design's certificate, and its DesignResult.

Phi(w) = sum_s pi_s tr(B_s M_s(w)^{-1}) is convex and homogeneous of degree -1 in w, with prices
h_i = -dPhi/dw_i and sum_i w_i h_i = Phi(w) (:mod:`optdesign.glm.traces`). For every design w' and c > 0, convexity
at c w and homogeneity give Phi(w') >= 2 Phi(w) / c - sum_i w'_i h_i / c^2, and the best c gives

    Phi* >= Phi(w)^2 / max_i h_i(w),

the homogeneous equivalence theorem of the linear criteria (:mod:`optdesign.linear.classical.criteria`), summed over
the draws. It is never below the Frank–Wolfe bound Phi(w) - (max_i h_i - sum_i w_i h_i) = 2 Phi(w) - max_i h_i
(as (Phi - max h)^2 >= 0), and equals Phi* at the optimum, where max_i h_i = Phi (the equivalence theorem). So
``value`` = Phi(w), ``lower_bound`` = Phi(w)^2 / max_i h_i and ``gap`` = max_i h_i / Phi(w) - 1; with one draw these
are the certificate of the locally A- or I-optimal design.
"""

from __future__ import annotations

import numpy as np

from ..result import DesignResult
from ..vocabulary import Status
from .certificate import BayesianRun, _shared_doc
from .trace_prior import TraceProblem
from .traces import trace_prices
from .variances import draw_factors

__all__ = ["certify_trace", "trace_result"]


def certify_trace(problem: TraceProblem, w: np.ndarray) -> tuple[float, float]:
    """(Phi(w), max_i h_i(w) / Phi(w)) of a design over all candidates; a singular design gives (inf, inf).

    Parameters
    ----------
    problem : TraceProblem
        The problem.
    w : numpy.ndarray, shape (K,)
        The design (nonnegative, summing to 1).

    Returns
    -------
    tuple of (float, float)
        The criterion and the certificate's ratio (>= 1).
    """
    base = problem.base
    support = np.flatnonzero(w > 0)
    factors = draw_factors(base.X[support], base.nu[support], w[support])
    if factors is None:
        return np.inf, np.inf
    h, phi = trace_prices(base.X, base.nu, base.prior, problem.moments, factors)
    return phi, float(h.max()) / phi


@_shared_doc
def trace_result(problem: TraceProblem, run: BayesianRun, *, status: Status, solver: str, method: str,
                 seconds: float) -> DesignResult:
    """The DesignResult of a pseudo-Bayesian A- or I-design: ``value`` = Phi(w), smaller is better.

    ``lower_bound`` = value / ratio = Phi(w)^2 / max_i h_i and ``gap`` = ratio - 1 (module doc).

    Parameters
    ----------
    problem : TraceProblem
        The problem.
    run : BayesianRun
        The design, Phi and its certified ratio max_i h_i / Phi.
%(record)s

    Returns
    -------
    DesignResult
        ``criterion`` ``"bayesian-a"`` or ``"bayesian-i"``, ``link``; extras ``draws``.
    """
    finite = bool(np.isfinite(run.ratio) and np.isfinite(run.phi))
    base = problem.base
    return DesignResult(
        weights=run.weights, value=float(run.phi), status=status, solver=solver, solve_time=seconds,
        gap=max(run.ratio - 1.0, 0.0) if finite else float("inf"), method=method,
        criterion=f"bayesian-{problem.criterion.lower()}", lower_bound=run.phi / run.ratio if finite else 0.0,
        iterations=run.rounds, link=base.link, extras={"draws": base.n_draws},
    )
