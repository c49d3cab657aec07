"""N-run pseudo-Bayesian D-, A- and I-optimal designs of a GLM, certified against the approximate optimum.

An exact design puts n_k runs at candidate k (N in all); as the approximate design w = n / N its criterion is that of
:mod:`optdesign.glm.bayesian`: D, Phi(w) = sum_s pi_s log det M_s(w) with M_s(w) = sum_k w_k nu_ks x_k x_k^T,
reported as value = exp(-Phi(w) / p); A and I, value = sum_s pi_s tr(B_s M_s(w)^{-1}). Every N-run design is an
approximate design, so the certified lower bound of the approximate optimum (its equivalence-theorem certificate)
bounds every N-run design's value from below, and ``efficiency = lower_bound / value`` is a certified lower bound on
the design's efficiency against the best N-run design (for D, exp((Phi(w) - Phi*) / p) at least).

The search (:mod:`optdesign.glm.draw_exchange`) starts from the approximate optimum rounded to N runs by efficient
apportionment, then from ``restarts`` others in turn: a basis of extreme candidates completed at random, the best
design so far with a few runs moved at random (the starts of :func:`optdesign.exact_design`, here on the
prior-mean linearised candidates sqrt(sum_s pi_s nu_ks) x_k); the best local optimum is returned.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidInputError, SolverError
from ..exact_designs.bounds import ROUNDING_MARGIN
from ..exact_designs.result import ExactDesignResult
from ..exact_designs.starts import extreme_start, perturbed_start, rounded_start
from ..linear.dispatch import DEFAULT_TOL
from ..result import DesignResult
from ..runtime.blas import single_threaded_blas
from ..validation import as_count, as_tolerance
from ..vocabulary import GlmLink
from .bayesian import solve_problem
from .draw_exchange import local_optimum
from .prior import BayesianProblem, bayesian_problem
from .trace_prior import TraceProblem, trace_problem

if TYPE_CHECKING:
    from ..formulas import CandidateSet

__all__ = ["bayesian_exact_design"]

#: the criteria of :func:`bayesian_exact_design`
EXACT_BAYESIAN_CRITERIA: tuple[str, ...] = ("D", "A", "I")


def _problem(X: ArrayLike | CandidateSet, draws: ArrayLike, link: GlmLink, criterion: object,
             moments: ArrayLike | None, prior_weights: ArrayLike | None
             ) -> tuple[str, BayesianProblem, np.ndarray | None, BayesianProblem | TraceProblem]:
    """(criterion letter, the draws' problem, B_s (None for D), the problem the approximate design solves)."""
    name = criterion.upper() if isinstance(criterion, str) else criterion
    if name not in EXACT_BAYESIAN_CRITERIA:
        raise InvalidInputError(f"criterion must be one of {', '.join(EXACT_BAYESIAN_CRITERIA)}, got {criterion!r}")
    if name == "D":
        if moments is not None:
            raise InvalidInputError(f"moments= is the region of the I-criterion; criterion={criterion!r} takes none")
        base = bayesian_problem(X, draws, link, prior_weights)
        return "D", base, None, base
    trace = trace_problem(X, draws, link, str(name), moments=moments, prior_weights=prior_weights)
    return str(name), trace.base, trace.moments, trace


def _checked_runs(n: object, problem: BayesianProblem, replicates: bool) -> int:
    """N, at least p (and at most K without replicates)."""
    K, p = problem.X.shape
    runs = as_count(n, "n")
    if runs < p:
        raise InvalidInputError(f"n = {runs} runs cannot estimate the p = {p} parameters: an exact design needs "
                                f"n >= {p}")
    if not replicates and runs > K:
        raise InvalidInputError(f"n = {runs} runs without replicates need n <= {K}, the number of candidates")
    return runs


def _search(problem: BayesianProblem, moments: np.ndarray | None, n: int, replicates: bool, weights: np.ndarray,
            restarts: int, rng: np.random.Generator, deadline: float) -> tuple[np.ndarray, list[float], int]:
    """(the best counts, each start's final loss (inf: a start left some M_s singular), moves over all starts)."""
    F = np.sqrt(problem.nu @ problem.prior)[:, None] * problem.X  # the prior-mean linearised candidates
    best: np.ndarray | None = None
    losses: list[float] = []
    moves = 0
    for k in range(restarts + 1):
        if k and time.perf_counter() > deadline:
            break
        if k == 0:
            start = rounded_start(F, weights, n, replicates, rng)
        elif k % 2 == 1 or best is None:
            start = extreme_start(F, n, replicates, rng)
        else:
            start = perturbed_start(F, best, replicates, rng)
        try:
            found, loss, made = local_optimum(problem, moments, start, replicates)
        except np.linalg.LinAlgError:
            losses.append(np.inf)
            continue
        moves += made
        if best is None or loss < min(losses):
            best = found
        losses.append(loss)
    if best is None:
        raise SolverError("no start of the exchange gave every draw a nonsingular information matrix: the GLM "
                          "weights underflow on too many candidates (the draws are too large for them)")
    return best, losses, moves


def _value(name: str, loss: float, n: int, p: int) -> float:
    """The normalised value of w = counts / N from the exchange's loss on the counts: D, exp(-Phi(w) / p) =
    N exp(loss / p) (loss = -sum_s pi_s log det M_s); A and I, N loss (loss = sum_s pi_s tr(B_s M_s^{-1}))."""
    return float(n * np.exp(loss / p)) if name == "D" else float(n * loss)


def bayesian_exact_design(X: ArrayLike | CandidateSet, draws: ArrayLike, link: GlmLink, n: int,
                          criterion: str = "D", *, moments: ArrayLike | None = None,
                          prior_weights: ArrayLike | None = None, replicates: bool = True, restarts: int = 10,
                          time_limit: float | None = None, seed: int = 0, tol: float = DEFAULT_TOL,
                          solver: str | None = None) -> ExactDesignResult:
    """N-run pseudo-Bayesian design of a GLM: counts n_k summing to N, optimal on average over prior draws theta_s.

    D maximises Phi(w) = sum_s pi_s log det M_s(w), A and I minimise sum_s pi_s tr(B_s M_s(w)^{-1}), over the
    exact designs w = n / N, with M_s(w) = sum_k w_k nu(x_k^T theta_s) x_k x_k^T (:func:`bayesian_d_optimal`,
    :func:`bayesian_a_optimal`, :func:`bayesian_i_optimal` for the approximate designs). Fedorov's exchange, each
    move priced over every draw by the determinant lemma and Woodbury's identity
    (:mod:`optdesign.glm.draw_exchange`), from the rounded approximate optimum and ``restarts`` other starts; the
    approximate optimum's certified bound bounds every N-run design, so ``efficiency = lower_bound / value`` is
    certified (:mod:`optdesign.glm.bayesian_exact`). With one draw it is the locally optimal N-run design
    (:func:`optdesign.glm_design` with ``n``).

    Parameters
    ----------
    X : array_like or CandidateSet
        The candidates, K x p, one per row; they must span R^p.
    draws : array_like
        The prior draws theta_s, S x p, one per row.
    link : str
        ``"logit"``, ``"probit"``, ``"cloglog"``, ``"log"`` (Poisson) or ``"identity"``.
    n : int
        N, the number of runs: at least p (at most K without replicates).
    criterion : {"D", "A", "I"}
        The criterion (case-insensitive).
    moments : array_like, optional
        I only: one region's moment matrix B (p x p) for every draw; by default each draw's linearised candidates'
        moments B_s = sum_k nu_ks x_k x_k^T / K, as :func:`bayesian_i_optimal`.
    prior_weights : array_like, optional
        Nonnegative weights pi_s of the draws (normalised); equal by default.
    replicates : bool
        Allow several runs at one candidate (default); False: at most one.
    restarts : int
        Starts after the rounded approximate optimum: extreme bases and perturbed best designs in turn.
    time_limit : float, optional
        Seconds after which no new start begins (the first start is always searched).
    seed : int
        Seed of the random starts: the same seed gives the same design.
    tol : float
        Certified relative gap of the approximate design behind the bound.
    solver : str, optional
        Conic solver, should the approximate design hand over to its cvxpy model.

    Returns
    -------
    ExactDesignResult
        ``counts``, ``n``, ``criterion`` (``"bayesian-d"``, ``"bayesian-a"`` or ``"bayesian-i"``), ``value`` (D:
        exp(-Phi(n / N) / p); A, I: sum_s pi_s tr(B_s M_s(n / N)^{-1})), ``lower_bound`` and ``efficiency``
        (certified), ``approximate_weights`` and ``approximate_value``, ``starts``, ``moves``; extras
        ``best_start``, ``draws``, ``link``, ``approximate_gap`` and, for D, ``log_det`` (Phi(n / N)).

    Raises
    ------
    InvalidInputError
        An unknown criterion or link, ``moments`` with D or A or not a symmetric PSD nonzero p x p matrix, n below p
        (or above K without replicates), restarts or seed negative, and what :func:`bayesian_d_optimal` refuses
        (draws of the wrong width, NaN or inf entries, candidates that do not span R^p, bad prior weights, a draw
        under which the candidates' information is singular).
    InstanceTooLargeError
        The K x S weights above the memory limit.
    SolverError
        No start gave every draw a nonsingular information matrix; the approximate design's conic solvers failed.

    Examples
    --------
    The simple logistic model at one draw theta = (0, 1): the locally D-optimal design puts half the runs at each
    of eta = +-1.5434; with those points among the candidates, two runs take them, and reach the approximate
    optimum.

    >>> import numpy as np
    >>> import optdesign as od
    >>> x = np.sort(np.r_[np.linspace(-3, 3, 13), -1.5434, 1.5434])
    >>> X = np.column_stack([np.ones_like(x), x])
    >>> res = od.bayesian_exact_design(X, [[0.0, 1.0]], "logit", 2)
    >>> x[res.support], round(res.efficiency, 4)
    (array([-1.5434,  1.5434]), 1.0)
    """
    start = time.perf_counter()
    name, problem, B, approximate_problem = _problem(X, draws, link, criterion, moments, prior_weights)
    runs = _checked_runs(n, problem, bool(replicates))
    restarts = as_count(restarts, "restarts", minimum=0)
    deadline = np.inf if time_limit is None else start + as_tolerance(time_limit, "time_limit")
    rng = np.random.default_rng(as_count(seed, "seed", minimum=0))
    tol = as_tolerance(tol)
    with single_threaded_blas():
        approximate: DesignResult = solve_problem(approximate_problem, "auto", solver, tol)
        best, losses, moves = _search(problem, B, runs, bool(replicates), approximate.weights, restarts, rng,
                                      deadline)
    p = problem.X.shape[1]
    value = _value(name, min(losses), runs, p)
    extras: dict = {"best_start": int(np.argmin(losses)), "draws": problem.n_draws, "approximate_gap": approximate.gap}
    if name == "D":
        extras["log_det"] = -p * float(np.log(value))
    lower = float(approximate.lower_bound or 0.0) * (1.0 - ROUNDING_MARGIN)
    return ExactDesignResult(
        counts=best, n=runs, criterion=f"bayesian-{name.lower()}", value=value, lower_bound=lower,
        approximate_weights=approximate.weights, approximate_value=approximate.value, starts=len(losses),
        moves=moves, solve_time=time.perf_counter() - start, replicates=bool(replicates), extras=extras,
        link=problem.link,
    )
