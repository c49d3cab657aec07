"""Exact N-run designs: integer counts n_k summing to N, by exchange from the rounded approximate optimum.

The criteria (smaller is better, of the normalised information matrix M = sum_k (n_k / N) x_k x_k^T):
D: det(M)^(-1/d); A: tr(M^{-1}); I: tr(B M^{-1}), the average variance x^T M^{-1} x of the fitted response over a
region with moment matrix B = E[x x^T] (the candidates, uniformly, by default). The search
(:mod:`optdesign.exact.exchange`) starts from the approximate optimum rounded by efficient apportionment and from
``restarts`` extreme-basis and perturbed designs (:mod:`optdesign.exact.starts`), and keeps the best local
optimum; the approximate optimum's certified bound (:mod:`optdesign.exact.bounds`) certifies its efficiency.
"""

from __future__ import annotations

import time
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidInputError
from ..runtime.blas import single_threaded_blas
from ..validation import as_arms, as_count, as_matrix, as_tolerance, check_array_size
from .bounds import Approximate, d_optimum, linear_optimum
from .criteria import DCriterion, ExactCriterion, LinearCriterion
from .exchange import Exchange, local_optimum
from .result import ExactDesignResult
from .starts import extreme_start, perturbed_start, rounded_start

__all__ = ["CRITERIA", "exact_design"]

ExactCriterionName = Literal["D", "A", "I"]
#: the criteria of :func:`exact_design`
CRITERIA: tuple[str, ...] = ("D", "A", "I")


def _moments(moments: ArrayLike | None, X: np.ndarray, criterion: str) -> np.ndarray | None:
    """The matrix B of tr(B M^{-1}): None for D, I for A, the given moments (checked) or X^T X / K for I."""
    d = X.shape[1]
    if moments is not None and criterion != "I":
        raise InvalidInputError(f"moments= is the region of the I-criterion; criterion={criterion!r} takes none")
    if criterion == "D":
        return None
    if criterion == "A":
        return np.eye(d)
    if moments is None:
        return X.T @ X / X.shape[0]
    B = as_matrix(moments, "moments", n_cols=d)
    if B.shape != (d, d) or not np.allclose(B, B.T, rtol=1e-10, atol=1e-12 * np.abs(B).max()):
        raise InvalidInputError(f"moments must be a symmetric {d} x {d} matrix (the region's E[x x^T])")
    eig = np.linalg.eigvalsh((B + B.T) / 2)
    if eig[-1] <= 0 or eig[0] < -1e-10 * eig[-1]:
        raise InvalidInputError("moments must be positive semidefinite and nonzero (a region's E[x x^T])")
    return (B + B.T) / 2


def _checked(X: ArrayLike, n: object, criterion: object, replicates: bool) -> tuple[np.ndarray, int, str]:
    arms = as_arms(X)
    K, d = arms.shape
    runs = as_count(n, "n")
    if not isinstance(criterion, str) or criterion.upper() not in CRITERIA:
        raise InvalidInputError(f"criterion must be one of {', '.join(CRITERIA)}, got {criterion!r}")
    if runs < d:
        raise InvalidInputError(f"n = {runs} runs cannot estimate the d = {d} parameters: an exact design needs "
                                f"n >= {d}")
    if not replicates and runs > K:
        raise InvalidInputError(f"n = {runs} runs without replicates need n <= {K}, the number of candidates")
    check_array_size(float(K) * d, "the exchange's X M^{-1}", instead="use fewer candidates")
    return arms, runs, criterion.upper()


def exact_design(X: ArrayLike, n: int, criterion: ExactCriterionName = "D", *, replicates: bool = True,
                 moments: ArrayLike | None = None, restarts: int = 30, time_limit: float | None = None,
                 seed: int = 0, tol: float = 1e-6, solver: str | None = None) -> ExactDesignResult:
    """Exact n-run design on the candidates X: counts n_k >= 0 summing to n, optimal for D, A or I.

    Minimises phi(M) over M = sum_k (n_k / n) x_k x_k^T: D: det(M)^(-1/d); A: tr(M^{-1}); I: tr(B M^{-1}), B
    the region's moment matrix (Atkinson, Donev & Tobias 2007, ch. 10-12). Fedorov's exchange (one run moved at
    a time, every move priced at once through rank-one updates; two runs at once out of its local optima) from the
    approximate optimum rounded by efficient apportionment, then from ``restarts`` other starts; the best local
    optimum is returned with the certified efficiency ``lower_bound / value`` against the approximate optimum (a
    bound on every n-run design).

    Parameters
    ----------
    X : array_like
        The candidates, K x d, one per row (a model matrix, e.g. from :func:`optdesign.formulas.candidates`);
        they must span R^d.
    n : int
        The number of runs, at least d (and at most K without replicates).
    criterion : {"D", "A", "I"}
        The optimality criterion.
    replicates : bool
        Allow several runs at one candidate (default); False: at most one.
    moments : array_like, optional
        I-criterion only: the region's moment matrix E[x x^T] (d x d, positive semidefinite); the candidates,
        uniformly, by default (B = X^T X / K).
    restarts : int
        Starts after the rounded approximate optimum (0: that start only): bases of extreme candidates completed
        at random, and the best design so far perturbed, in turn (:mod:`optdesign.exact.starts`).
    time_limit : float, optional
        Seconds after which no new start begins (the rounded approximate optimum is always searched); with a large
        ``restarts`` the search runs until the time is spent, as R's od_KL does.
    seed : int
        Seed of the random starts.
    tol : float
        Certified relative gap of the approximate optimum behind the bound (``value / lower_bound - 1``).
    solver : str, optional
        Conic solver of the approximate A/I design (CLARABEL by default, SCS as fallback).

    Returns
    -------
    ExactDesignResult
        ``counts``, ``value``, ``lower_bound`` and ``efficiency`` (certified), the approximate design, the
        starts and moves made.

    Raises
    ------
    InvalidInputError
        Candidates that do not span R^d, NaN/inf entries, n < d, n > K without replicates, an unknown criterion,
        moments that are not a d x d positive semidefinite matrix (or given for D or A).
    InstanceTooLargeError
        X M^{-1} (K x d) above the memory limit of :func:`optdesign.validation.check_array_size`; for A and I,
        K d^2 above the limit of the approximate design's semidefinite model.

    Examples
    --------
    Quadratic regression on the points -1, 0, 1: three runs, one at each point, are D-optimal, and reach the
    approximate optimum (efficiency 1).

    >>> import numpy as np
    >>> import optdesign as od
    >>> t = np.array([-1.0, 0.0, 1.0])
    >>> X = np.column_stack([np.ones(3), t, t**2])
    >>> res = od.exact_design(X, 3)
    >>> print(res.counts, round(res.efficiency, 6))
    [1 1 1] 1.0
    >>> od.exact_design(X, 4, "A").counts.sum()
    np.int64(4)
    """
    start = time.perf_counter()
    X, n, name = _checked(X, n, criterion, replicates)
    B = _moments(moments, X, name)
    restarts = as_count(restarts, "restarts", minimum=0)
    deadline = np.inf if time_limit is None else start + as_tolerance(time_limit, "time_limit")
    rng = np.random.default_rng(as_count(seed, "seed", minimum=0))
    tol = as_tolerance(tol)
    rule: ExactCriterion = DCriterion() if B is None else LinearCriterion(B, name)
    with single_threaded_blas():
        approximate: Approximate = d_optimum(X, tol) if B is None else linear_optimum(X, B, solver, tol)
        best, losses, moves = _search(X, n, rule, replicates, approximate.weights, restarts, rng,
                                       deadline)
        value = rule.value(Exchange(X, best, rule, replicates).factor(), n)
    return ExactDesignResult(
        counts=best, n=n, criterion=name, value=value, lower_bound=approximate.lower_bound,
        approximate_weights=approximate.weights, approximate_value=approximate.value, starts=len(losses),
        moves=moves, solve_time=time.perf_counter() - start, replicates=replicates,
        extras={"best_start": int(np.argmin(losses))},
    )


def _search(X: np.ndarray, n: int, rule: ExactCriterion, replicates: bool, weights: np.ndarray, restarts: int,
            rng: np.random.Generator, deadline: float) -> tuple[np.ndarray, list[float], int]:
    """The exchange from each start: (the best counts, each start's final loss, moves over all starts).

    Start 0 is the rounded approximate optimum; then extreme and perturbed-best starts in turn, until
    ``restarts`` of them or the ``deadline`` (a perf_counter time).
    """
    if not replicates and n == X.shape[0]:
        return np.ones(n, dtype=np.int64), [0.0], 0
    best, loss, moves = local_optimum(X, rounded_start(X, weights, n, replicates, rng), rule, replicates)
    losses = [loss]
    for k in range(restarts):
        if time.perf_counter() > deadline:
            break
        counts = extreme_start(X, n, replicates, rng) if k % 2 == 0 else perturbed_start(X, best, replicates, rng)
        found, loss, made = local_optimum(X, counts, rule, replicates)
        moves += made
        if loss < min(losses):
            best = found
        losses.append(loss)
    return best, losses, moves
