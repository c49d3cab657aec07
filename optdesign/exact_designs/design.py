"""Exact N-run designs: integer counts n_k summing to N, by exchange from the rounded approximate optimum.

The criteria (smaller is better, of the normalised information matrix M = sum_k (n_k / N) x_k x_k^T):
D: det(M)^(-1/d); A: tr(M^{-1}); I: tr(B M^{-1}), the average variance x^T M^{-1} x of the fitted response over a
region with moment matrix B = E[x x^T] (the candidates, uniformly, by default). The search
(:mod:`optdesign.exact_designs.exchange`) starts from the approximate optimum rounded by efficient apportionment and
from ``restarts`` extreme-basis and perturbed designs (:mod:`optdesign.exact_designs.starts`), and keeps the best local
optimum; the approximate optimum's certified bound (:mod:`optdesign.exact_designs.bounds`) certifies its efficiency.
With ``fixed`` runs (already made, or forced) the n new runs are chosen around them: the exchange never moves a fixed
run, and the bound is the augmented approximate optimum's (:mod:`optdesign.exact_designs.augment`).
"""

from __future__ import annotations

import time
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidInputError
from ..runtime.blas import single_threaded_blas
from ..validation import as_arms, as_count, as_matrix, as_tolerance, check_array_size
from .augment import as_fixed, augmented_optimum, check_new_runs
from .bounds import Approximate, d_optimum, linear_optimum
from .criteria import ExactCriterion, ExactDCriterion, ExactLinearCriterion
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


def search_settings(B: np.ndarray | None, name: str, restarts: object, time_limit: float | None, seed: object,
                    tol: object, start: float) -> tuple[ExactCriterion, int, float, np.random.Generator, float]:
    """The checked settings of a search from several starts: (the loss of criterion ``name`` with matrix B (None for
    D), the restarts, the ``time.perf_counter()`` time after which no new start begins, the seeded generator of the
    starts, the approximate optimum's tol)."""
    restarts = as_count(restarts, "restarts", minimum=0)
    deadline = np.inf if time_limit is None else start + as_tolerance(time_limit, "time_limit")
    rng = np.random.default_rng(as_count(seed, "seed", minimum=0))
    tol = as_tolerance(tol)
    rule: ExactCriterion = ExactDCriterion() if B is None else ExactLinearCriterion(B, name)
    return rule, restarts, deadline, rng, tol


def _checked(X: ArrayLike, n: object, criterion: object, replicates: bool,
             fixed: ArrayLike | None) -> tuple[np.ndarray, int, str, np.ndarray | None]:
    """(candidates, new runs, criterion letter, fixed counts or None), checked."""
    arms = as_arms(X)
    K, d = arms.shape
    floor = None if fixed is None else as_fixed(fixed, K, replicates)
    runs = as_count(n, "n") if floor is None else check_new_runs(arms, n, floor, replicates)
    if not isinstance(criterion, str) or criterion.upper() not in CRITERIA:
        raise InvalidInputError(f"criterion must be one of {', '.join(CRITERIA)}, got {criterion!r}")
    if floor is None and runs < d:
        raise InvalidInputError(f"n = {runs} runs cannot estimate the d = {d} parameters: an exact design needs "
                                f"n >= {d}")
    if floor is None and not replicates and runs > K:
        raise InvalidInputError(f"n = {runs} runs without replicates need n <= {K}, the number of candidates")
    check_array_size(float(K) * d, "the exchange's X M^{-1}", instead="use fewer candidates")
    return arms, runs, criterion.upper(), floor


def exact_design(X: ArrayLike, n: int, criterion: ExactCriterionName = "D", *, replicates: bool = True,
                 moments: ArrayLike | None = None, restarts: int = 30, time_limit: float | None = None,
                 seed: int = 0, tol: float = 1e-6, solver: str | None = None,
                 fixed: ArrayLike | None = None) -> ExactDesignResult:
    """Exact n-run design on the candidates X: counts n_k >= 0 summing to n, optimal for D, A or I; or n new runs
    added to ``fixed`` runs (augmentation).

    Minimises phi(M) over M = sum_k (n_k / n) x_k x_k^T: D: det(M)^(-1/d); A: tr(M^{-1}); I: tr(B M^{-1}), B
    the region's moment matrix (Atkinson, Donev & Tobias 2007, ch. 10-12). Fedorov's exchange (one run moved at
    a time, every move priced at once through rank-one updates; two runs at once out of its local optima) from the
    approximate optimum rounded by efficient apportionment, then from ``restarts`` other starts; the best local
    optimum is returned with the certified efficiency ``lower_bound / value`` against the approximate optimum (a
    bound on every n-run design).

    With ``fixed`` (runs already made, or that must be made), M = M_fixed + the n new runs, normalised by the total
    N = N0 + n; the exchange moves new runs only, and the bound is the approximate optimum of
    phi((M_fixed + n M(w)) / N) over the weights w of the new runs (:mod:`optdesign.exact_designs.augment`; without
    replicates also w_k <= 1/n, and 0 at the fixed points), so ``efficiency`` is against the best augmentation.

    Parameters
    ----------
    X : array_like
        The candidates, K x d, one per row (a model matrix, e.g. from :func:`optdesign.formulas.candidates`);
        they must span R^d.
    n : int
        The number of runs, at least d (and at most K without replicates). With ``fixed``: the number of *new* runs,
        0 or more (0: the fixed design evaluated), at least d minus the rank of the fixed points (so that M can be
        nonsingular), and at most the candidates without a fixed run without replicates.
    criterion : {"D", "A", "I"}
        The optimality criterion.
    replicates : bool
        Allow several runs at one candidate (default); False: at most one.
    moments : array_like, optional
        I-criterion only: the region's moment matrix E[x x^T] (d x d, positive semidefinite); the candidates,
        uniformly, by default (B = X^T X / K).
    restarts : int
        Starts after the rounded approximate optimum (0: that start only): bases of extreme candidates completed
        at random, and the best design so far perturbed, in turn (:mod:`optdesign.exact_designs.starts`).
    time_limit : float, optional
        Seconds after which no new start begins (the rounded approximate optimum is always searched); with a large
        ``restarts`` the search runs until the time is spent, as R's od_KL does.
    seed : int
        Seed of the random starts.
    tol : float
        Certified relative gap of the approximate optimum behind the bound (``value / lower_bound - 1``).
    solver : str, optional
        Conic solver of the approximate A/I design, and of every augmented one (the chain by default: CLARABEL, then
        SCS; MOSEK only with a usable licence).
    fixed : array_like of int, optional
        Runs kept in the design whatever the criterion: ``fixed[k]`` runs at candidate k (K nonnegative whole
        numbers; 0 or 1 without replicates, where a candidate with a fixed run gets no new one). Runs given as row
        indices ``rows`` of X are ``np.bincount(rows, minlength=K)``; any other length is refused.

    Returns
    -------
    ExactDesignResult
        ``counts``, ``value``, ``lower_bound`` and ``efficiency`` (certified), the approximate design, the
        starts and moves made. With ``fixed``: ``counts`` includes the fixed runs (``counts >= fixed``), ``n`` is
        the total N0 + n (``n_fixed``, ``n_new``), ``approximate_weights`` are those of the new runs, and
        ``extras['free_lower_bound']`` and ``extras['free_efficiency']`` certify the design against every N-run
        design, fixed runs or not (with n = 0: how good the fixed design is).

    Raises
    ------
    InvalidInputError
        Candidates that do not span R^d, NaN/inf entries, n < d, n > K without replicates, an unknown criterion,
        moments that are not a d x d positive semidefinite matrix (or given for D or A); ``fixed`` not K
        nonnegative whole numbers (NaN, fractions, another length), above 1 somewhere without replicates, or with
        too few new runs to make M nonsingular; n < 0, or more new runs than free candidates without replicates.
    InstanceTooLargeError
        X M^{-1} (K x d) above the memory limit of :func:`optdesign.validation.check_array_size`; for A and I, and
        for every augmented design, K d^2 above the limit of the approximate design's conic model.

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

    Three runs already made at -1: the two D-optimal new runs go to 0 and 1.

    >>> od.exact_design(X, 2, fixed=[3, 0, 0]).counts
    array([3, 1, 1])
    """
    start = time.perf_counter()
    X, n, name, floor = _checked(X, n, criterion, replicates, fixed)
    B = _moments(moments, X, name)
    rule, restarts, deadline, rng, tol = search_settings(B, name, restarts, time_limit, seed, tol, start)
    with single_threaded_blas():
        free: Approximate = d_optimum(X, tol) if B is None else linear_optimum(X, B, solver, tol)
        approximate = free if floor is None else augmented_optimum(X, floor, n, B, replicates, solver, tol)
        start_at = np.zeros(X.shape[0], dtype=np.int64) if floor is None else floor
        best, losses, moves = _search(X, n, rule, replicates, approximate.weights, restarts, rng,
                                       deadline, start_at)
        total = n + int(start_at.sum())
        value = rule.value(Exchange(X, best, rule, replicates).factor(), total)
    extras: dict = {"best_start": int(np.argmin(losses))}
    if floor is not None:
        extras.update(free_lower_bound=free.lower_bound, free_efficiency=free.lower_bound / value)
    return ExactDesignResult(
        counts=best, n=total, criterion=name, value=value, lower_bound=approximate.lower_bound,
        approximate_weights=approximate.weights, approximate_value=approximate.value, starts=len(losses),
        moves=moves, solve_time=time.perf_counter() - start, replicates=replicates, extras=extras, fixed=floor,
    )


def _search(X: np.ndarray, n: int, rule: ExactCriterion, replicates: bool, weights: np.ndarray, restarts: int,
            rng: np.random.Generator, deadline: float, fixed: np.ndarray) -> tuple[np.ndarray, list[float], int]:
    """The exchange of the n new runs from each start, ``fixed`` runs kept: (the best counts, fixed runs included,
    each start's final loss, moves over all starts).

    Start 0 is the rounded approximate optimum; then extreme and perturbed-best starts in turn, until
    ``restarts`` of them or the ``deadline`` (a perf_counter time). No search when there is nothing to choose (no
    new run, or every free candidate taken without replicates).
    """
    free = fixed == 0
    if n == 0 or (not replicates and n == int(np.count_nonzero(free))):
        return fixed + free * (n > 0), [0.0], 0
    best, loss, moves = local_optimum(X, rounded_start(X, weights, n, replicates, rng, fixed), rule, replicates,
                                      fixed=fixed)
    losses = [loss]
    for k in range(restarts):
        if time.perf_counter() > deadline:
            break
        counts = (extreme_start(X, n, replicates, rng, fixed) if k % 2 == 0
                  else perturbed_start(X, best, replicates, rng, fixed))
        found, loss, made = local_optimum(X, counts, rule, replicates, fixed=fixed)
        moves += made
        if loss < min(losses):
            best = found
        losses.append(loss)
    return best, losses, moves
