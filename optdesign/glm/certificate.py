"""A pseudo-Bayesian D-optimal design's certificate, and its DesignResult in variance units.

For every design w, sum_i w_i d_i(w) = p, and by the concavity of log det and of log (Jensen),
Phi(w') - Phi(w) = sum_s pi_s log det(M_s^{-1} M_s') <= p log(sum_s pi_s tr(M_s^{-1} M_s') / p)
= p log(sum_i w'_i d_i(w) / p) <= p log(max_i d_i(w) / p) for every w'. So Phi* <= Phi(w) + p log(max_i d_i / p),
sharper than the Frank–Wolfe bound Phi(w) + max_i d_i - p, and equal to Phi(w) exactly at the optimum (the general
equivalence theorem: max_i d_i(w*) = p). In variance units, value = exp(-Phi(w) / p) (the prior's geometric mean of
det M_s(w)^{-1/p}, det M(w)^{-1/p} for one draw) has the certified lower bound value p / max_i d_i and the relative gap
max_i d_i / p - 1, those of the Kiefer–Wolfowitz certificate of the D-optimal design.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..docstrings import shared_doc
from ..result import DesignResult
from ..vocabulary import Status
from .prior import BayesianProblem
from .variances import draw_factors, log_det_mean, prices

__all__ = ["BayesianRun", "certify", "design_result"]

# the parameters the DesignResults of the pseudo-Bayesian designs share (substituted by _shared_doc)
_DOC = {
    "record": """    status : str
        The result's status.
    solver : str
        ``"numpy"`` or the conic solver.
    method : str
        ``"exchange"`` or ``"cvxpy"``.
    seconds : float
        Time spent.""",
}

_shared_doc = shared_doc(_DOC)


@dataclass(frozen=True)
class BayesianRun:
    """A pseudo-Bayesian design (D, A or I) and its certificate."""

    #: the design over all K candidates
    weights: np.ndarray
    #: the criterion Phi(w): sum_s pi_s log det M_s(w) (D), sum_s pi_s tr(B_s M_s(w)^{-1}) (A, I)
    phi: float
    #: max_i d_i(w) / p (D), max_i h_i(w) / Phi(w) (A, I): >= 1, and 1 at the optimum
    ratio: float
    #: pricing passes (0 for a design certified without the active set)
    rounds: int
    #: whether ratio <= 1 + tol (True for a conic solve, which has no tol)
    converged: bool


def certify(problem: BayesianProblem, w: np.ndarray) -> tuple[float, float]:
    """(Phi(w), max_i d_i(w) / p) of a design over all candidates; a singular design gives (-inf, inf).

    Parameters
    ----------
    problem : BayesianProblem
        The problem.
    w : numpy.ndarray, shape (K,)
        The design (nonnegative, summing to 1).

    Returns
    -------
    tuple of (float, float)
        The criterion and the certificate's ratio.
    """
    S = np.flatnonzero(w > 0)
    factors = draw_factors(problem.X[S], problem.nu[S], w[S])
    if factors is None:
        return -np.inf, np.inf
    d = prices(problem.X, problem.nu, problem.prior, factors[1])
    return log_det_mean(factors, problem.prior), float(d.max()) / problem.X.shape[1]


@_shared_doc
def design_result(problem: BayesianProblem, run: BayesianRun, *, status: Status, solver: str, method: str,
                  seconds: float) -> DesignResult:
    """The DesignResult of a pseudo-Bayesian design, in variance units (smaller is better).

    ``value`` = exp(-Phi(w) / p) (the prior's geometric mean of det M_s(w)^{-1/p}), ``lower_bound`` =
    value / ratio (Phi* <= Phi(w) + p log ratio, ratio = max_i d_i / p), ``gap`` = ratio - 1.

    Parameters
    ----------
    problem : BayesianProblem
        The problem.
    run : BayesianRun
        The design, Phi and its certified ratio.
%(record)s

    Returns
    -------
    DesignResult
        ``criterion="bayesian-d"``, ``link``; extras ``log_det`` (Phi(w)), ``log_det_upper`` (the certified bound on
        Phi*), ``draws``.
    """
    p = problem.X.shape[1]
    value = float(np.exp(-run.phi / p))
    lower = value / run.ratio if np.isfinite(run.ratio) else 0.0
    gap = run.ratio - 1.0 if np.isfinite(run.ratio) else float("inf")
    upper = float(run.phi + p * np.log(run.ratio))
    return DesignResult(
        weights=run.weights, value=value, status=status, solver=solver, solve_time=seconds, gap=max(gap, 0.0),
        method=method, criterion="bayesian-d", lower_bound=lower, iterations=run.rounds,
        link=problem.link, extras={"log_det": run.phi, "log_det_upper": upper, "draws": problem.n_draws},
    )
