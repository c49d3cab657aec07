"""The fast path of the pseudo-Bayesian D-, A- and I-optimal designs: Newton steps on an active set, priced over all
candidates.

max_w Phi(w) = sum_s pi_s log det M_s(w) is concave, with prices d_i(w) = dPhi/dw_i and sum_i w_i d_i = p, so it
has the shape of the D-optimal design and runs on the same machinery (:mod:`optdesign.linear.exchange`): the
problem restricted to a support of a few dozen candidates is solved by the primal-dual interior-point method of
:mod:`optdesign.linear.interior` (prices and Hessian batched over the draws, :mod:`optdesign.glm.variances`),
then one pricing pass computes d_i over all K candidates (O(K S p^2), in blocks) and the most violated candidates
(d_i > p (1 + tol)) join the support. The pass certifies the design: Phi* <= Phi(w) + p log(max_i d_i / p)
(:mod:`optdesign.glm.certificate`), so the relative gap max_i d_i / p - 1 is that of the Kiefer–Wolfowitz
certificate of the D-optimal design, which it is when S = 1. The starting support holds the
candidates of largest leverage under the prior-mean weights, with more for any draw it leaves singular.

The A- and I-criteria min_w Phi(w) = sum_s pi_s tr(B_s M_s(w)^{-1}) run on the same loop with their own prices
h_i = -dPhi/dw_i (sum_i w_i h_i = Phi) and Hessian (:mod:`optdesign.glm.traces`): the pass certifies
Phi* >= Phi(w)^2 / max_i h_i (:mod:`optdesign.glm.trace_bound`), and the candidates with h_i > Phi(w) (1 + tol)
join the support.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..docstrings import shared_doc
from ..errors import SolverError
from ..linear.exchange import ActiveSetRun, active_set_loop, initial_support
from ..linear.interior import support_interior_point
from ..runtime.deadline import Deadline
from .certificate import BayesianRun
from .prior import BayesianProblem
from .trace_prior import TraceProblem
from .traces import trace_prices, trace_support_terms
from .variances import Factors, draw_factors, log_det_mean, prices, singular_draws, support_terms

__all__ = ["BATCH", "bayesian_exchange", "trace_exchange"]

#: the prices and Hessian of a criterion on a support, None when some M_s(w) is singular
SecondOrderTerms = tuple[np.ndarray, np.ndarray] | None

SUPPORT_GROWTH_PASSES = 8  # most passes of adding candidates for draws the starting support leaves singular
# the support solves run to INNER_TOL_FACTOR tol from the first round: the interior point drops the candidates that
# leave the support only once its gap meets its tolerance, and a Newton step on m candidates costs O(m^2 S p^2).
# Measured on the six instances of benchmarks/bench_bayesian_design.py (1,000 draws, 10^4 candidates, tol 1e-6):
# supports of at most 46 candidates instead of up to 222 when the support solves follow the loop's looser
# tolerance, and 1.2 s instead of 5.0 s for the probit model with p = 6, though with more Newton steps
INNER_TOL_FACTOR = 0.1
# candidates joining the support per pricing pass, at least (2 p if more): a pass costs O(K S p^2), little next to
# Newton steps on a larger support. On the same instances 16 took 0.2-1.2 s, 8 up to 1.8 s, 32 up to 2.1 s, 64 up to
# 2.6 s (the probit model with p = 6 the slowest each time)
BATCH = 16

# the parameter and error descriptions both active sets share (substituted by _shared_doc)
_DOC = {
    "loop": """    time_limit : float, optional
        Seconds, capped by the enclosing time budget.
    batch : int, optional
        Candidates added to the support per pricing pass; max(BATCH, 2 p) = max(16, 2 p) by default.
    max_rounds : int
        Most pricing passes.""",
    "singular": """    SolverError
        No starting support makes every M_s nonsingular, or the first design priced is singular.""",
}

_shared_doc = shared_doc(_DOC)


def _starting_support(problem: BayesianProblem, size: int) -> np.ndarray:
    """The ``size`` candidates of largest leverage under the weights sum_s pi_s nu_is, grown until every M_s of the
    uniform design on them is nonsingular (by the leverages of each draw it leaves singular)."""
    X, nu = problem.X, problem.nu
    support = initial_support(np.sqrt(nu @ problem.prior)[:, None] * X, size)
    for _ in range(SUPPORT_GROWTH_PASSES):
        bad = singular_draws(X[support], nu[support], np.full(support.size, 1.0 / support.size))
        if bad.size == 0:
            return support
        extra = [initial_support(np.sqrt(nu[:, s])[:, None] * X, X.shape[1]) for s in bad[:16]]
        support = np.union1d(support, np.concatenate(extra))
    raise SolverError(f"no starting support of {support.size} candidates makes every draw's information "
                      "nonsingular: the GLM weights are too uneven across candidates")


@_shared_doc
def bayesian_exchange(problem: BayesianProblem, *, tol: float = 1e-6, time_limit: float | None = 60.0,
                      batch: int | None = None, max_rounds: int = 10_000) -> BayesianRun:
    """max_w sum_s pi_s log det M_s(w) by an active set with full pricing (module doc).

    Parameters
    ----------
    problem : BayesianProblem
        The checked problem.
    tol : float
        Certified relative gap: stop once max_i d_i <= p (1 + tol).
%(loop)s

    Returns
    -------
    BayesianRun
        The best design priced (zero off its support), Phi there, its certified ratio and the pricing passes.

    Raises
    ------
%(singular)s
    """
    X, nu, prior = problem.X, problem.nu, problem.prior
    p = X.shape[1]
    run = _active_set(problem, lambda S, w: support_terms(X[S], nu[S], prior, w),
                      lambda factors: (prices(X, nu, prior, factors[1]), float(p)), tol=tol,
                      time_limit=time_limit, batch=batch, max_rounds=max_rounds, label="bayesian-d")
    factors = draw_factors(X[run.support], nu[run.support], run.weights)
    log_det = -np.inf if factors is None else log_det_mean(factors, prior)
    return BayesianRun(_spread(run, X.shape[0]), log_det, run.ratio, run.rounds, run.converged)


@_shared_doc
def trace_exchange(problem: TraceProblem, *, tol: float = 1e-6, time_limit: float | None = 60.0,
                   batch: int | None = None, max_rounds: int = 10_000) -> BayesianRun:
    """min_w sum_s pi_s tr(B_s M_s(w)^{-1}) (pseudo-Bayesian A or I) by an active set with full pricing (module doc).

    Parameters
    ----------
    problem : TraceProblem
        The checked problem.
    tol : float
        Certified relative gap: stop once max_i h_i <= Phi(w) (1 + tol).
%(loop)s

    Returns
    -------
    BayesianRun
        The best design priced (zero off its support), Phi there, its certified ratio max_i h_i / Phi and the
        pricing passes.

    Raises
    ------
%(singular)s
    """
    base, B = problem.base, problem.moments
    X, nu, prior = base.X, base.nu, base.prior
    run = _active_set(base, lambda S, w: trace_support_terms(X[S], nu[S], prior, B, w),
                      lambda factors: trace_prices(X, nu, prior, B, factors), tol=tol,
                      time_limit=time_limit, batch=batch, max_rounds=max_rounds,
                      label=f"bayesian-{problem.criterion.lower()}")
    return BayesianRun(_spread(run, X.shape[0]), run.f, run.ratio, run.rounds, run.converged)


def _active_set(problem: BayesianProblem, terms: Callable[[np.ndarray, np.ndarray], SecondOrderTerms],
                price: Callable[[Factors], tuple[np.ndarray, float]], *, tol: float, time_limit: float | None,
                batch: int | None, max_rounds: int, label: str) -> ActiveSetRun:
    """The active-set loop of either criterion: ``terms(S, w)`` the prices and Hessian of the criterion on the
    support S, ``price(factors)`` the prices over all candidates and the value they are certified against, from
    the factors of the support's M_s (``optdesign.linear.exchange.active_set_loop``)."""
    X, nu = problem.X, problem.nu
    batch = max(BATCH, 2 * X.shape[1]) if batch is None else max(1, int(batch))

    def pricing(S: np.ndarray, w_S: np.ndarray) -> tuple[np.ndarray, float] | None:
        factors = draw_factors(X[S], nu[S], w_S)
        return None if factors is None else price(factors)

    def inner(S: np.ndarray, w_S: np.ndarray, inner_tol: float, seconds: float) -> np.ndarray:
        solved = support_interior_point(lambda w: terms(S, w), w_S, tol=min(inner_tol, INNER_TOL_FACTOR * tol),
                                        deadline=Deadline(seconds))
        return w_S if solved is None else solved[0]

    run = active_set_loop(X, inner, pricing, tol=tol, deadline=Deadline(time_limit), batch=batch,
                          max_rounds=max_rounds, label=label, support=_starting_support(problem, 2 * batch))
    if not np.isfinite(run.ratio):
        raise SolverError(f"the {label} design's first support left some draw's information singular")
    return run


def _spread(run: ActiveSetRun, K: int) -> np.ndarray:
    """The run's weights over all K candidates (zero off its support)."""
    w = np.zeros(K)
    w[run.support] = run.weights
    return w
