"""Blocked exact designs: N runs in b blocks of given sizes (days, batches), fixed or random block effects.

Model y = X beta + Z gamma + eps, Z the block indicator; the information of beta is
M = sum_b X_b^T (I - c_b 1 1^T) X_b (:mod:`optdesign.exact_designs.block_information`), c_b = 1 / n_b for fixed block
effects, eta / (1 + eta n_b) for random ones of variance ratio eta. The search
(:mod:`optdesign.exact_designs.block_search`) moves runs to other candidates and exchanges runs between blocks, from the
rounded approximate optimum spread over the blocks at random, then from extreme and uniform random starts.

Identifiability with fixed blocks: Z 1 = 1, so the block effects absorb the intercept. A column of X constant over
the candidates (the intercept, any constant value) is left out of beta; a constant that is only a combination of
columns (a categorical factor coded without intercept) is refused, since no parameter can be dropped for it.

Certified bounds: the larger of the equivalence theorem over mixtures of blocks at the design found
(:mod:`optdesign.exact_designs.block_bounds`) and the approximate optimum of an unblocked problem
(:mod:`optdesign.exact_designs.bounds`), valid since blocking only removes information:

* random blocks: V = I + eta Z Z^T >= I, so M = X^T V^{-1} X <= X^T X (Loewner), and every criterion here is
  antitone in M: no blocked design beats the best unblocked N-run design, hence the approximate optimum on X;
* fixed blocks: P_Z >= 11^T / N (1 is in the span of Z), so M <= X~^T (I - 11^T / N) X~ = N S(w), with X~ the
  parameters' columns and S(w) the Schur complement of the intercept in the information of [1, X~] at the design's
  weights w; det S(w) = det M_[1, X~](w) (the intercept's entry is sum_k w_k = 1), so for D
  value >= (phi*_[1, X~])^((p + 1) / p), phi* the approximate D optimum of [1, X~] (p parameters); for A and I,
  tr(B S(w)^{-1}) = tr(B' M_[1, X~](w)^{-1}) with B' = diag(0, B), bounded by that linear criterion's optimum.
"""

from __future__ import annotations

import time
from typing import Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy.linalg import LinAlgError

from ..errors import InstanceTooLargeError, InvalidInputError, SolverError
from ..runtime.blas import single_threaded_blas
from ..validation import as_arms, check_array_size
from .block_bounds import combined, group_bound
from .block_information import (
    BlockEffects,
    as_eta,
    as_sizes,
    criterion_values,
    information,
    shrinkage,
)
from .block_result import BlockedDesignResult
from .block_search import GroupSearch, best_of_starts
from .bounds import d_optimum, linear_optimum
from .design import CRITERIA, _moments, search_settings
from .group_structure import single_structure
from .starts import extreme_start, rounded_start

__all__ = ["blocked_design"]

#: entries of a column within this fraction of X's largest entry of each other make it constant (an intercept)
CONSTANT_RTOL = 1e-12


class Blocked(NamedTuple):
    """A checked blocked-design problem."""

    X: np.ndarray  # the parameters' columns of the candidates (K x p)
    keep: np.ndarray  # their indices in the given X
    space: np.ndarray  # the candidates of the bound's unblocked problem: [1, X] (fixed blocks) or X (random)
    sizes: np.ndarray
    shrink: np.ndarray
    effects: str
    eta: float | None
    name: str
    B: np.ndarray | None  # the criterion's matrix: None (D), I (A) or the region's moments (I)
    region: np.ndarray  # the region of the reported I value
    replicates: bool


def _parameters(X: np.ndarray) -> np.ndarray:
    """The columns of X that stay parameters with fixed block effects (module docstring)."""
    scale = float(np.max(np.abs(X)))
    constant = np.flatnonzero(np.ptp(X, axis=0) <= CONSTANT_RTOL * scale)
    if constant.size:  # one at most: the columns of X are independent
        if X.shape[1] == 1:
            raise InvalidInputError("X holds only a constant column, which fixed block effects absorb: nothing is "
                                    "left to estimate")
        return np.delete(np.arange(X.shape[1]), constant)
    coef = np.linalg.lstsq(X, np.ones(X.shape[0]), rcond=None)[0]
    if np.linalg.norm(X @ coef - 1.0) <= 1e-9 * np.sqrt(X.shape[0]):
        raise InvalidInputError("a combination of the columns of X is constant (as a categorical factor coded without "
                                "intercept): fixed block effects absorb it and the information is singular for every "
                                "design; give X with an intercept column instead (it is then left out)")
    return np.arange(X.shape[1])


def _effects(block_effects: object, eta: object) -> tuple[str, float | None]:
    """(effects, eta): eta only with random effects (1 by default)."""
    if block_effects not in ("fixed", "random"):
        raise InvalidInputError(f"block_effects must be 'fixed' or 'random', got {block_effects!r}")
    if block_effects == "fixed":
        if eta is not None:
            raise InvalidInputError("eta is the variance ratio of random block effects; block_effects='fixed' takes "
                                    "none")
        return "fixed", None
    return "random", 1.0 if eta is None else as_eta(eta)


def _checked(X: ArrayLike, block_sizes: ArrayLike, criterion: object, block_effects: object, eta: object,
             replicates: bool, moments: ArrayLike | None) -> Blocked:
    """The problem, every input checked (the singular designs refused with the reason)."""
    arms = as_arms(X)
    K, d = arms.shape
    sizes = as_sizes(block_sizes, "block_sizes")
    N, b = int(sizes.sum()), sizes.size
    effects, ratio = _effects(block_effects, eta)
    if not isinstance(criterion, str) or criterion.upper() not in CRITERIA:
        raise InvalidInputError(f"criterion must be one of {', '.join(CRITERIA)}, got {criterion!r}")
    name = criterion.upper()
    if not replicates and N > K:
        raise InvalidInputError(f"N = {N} runs without replicates need N <= {K}, the number of candidates")
    keep = _parameters(arms) if effects == "fixed" else np.arange(d)
    Xp = arms[:, keep]
    p = keep.size
    if effects == "fixed" and N - b < p:
        raise InvalidInputError(f"the fixed-block information X^T (I - P_Z) X of the p = {p} parameters (intercept "
                                f"left out) is singular for every design: its rank is at most N - b = {N} - {b} = "
                                f"{N - b} < {p}; use fewer or larger blocks, or random block effects")
    if effects == "random" and N < p:
        raise InvalidInputError(f"the information X^T V^{{-1}} X of the p = {p} parameters is singular for every "
                                f"design of N = {N} < {p} runs")
    check_array_size(float(K) * p, "the exchange's X M^{-1}", instead="use fewer candidates")
    scope = Xp - Xp.mean(axis=0) if effects == "fixed" else Xp  # the region: centred slopes with fixed blocks
    B = _moments(moments, scope, name)
    region = B if name == "I" and B is not None else _moments(None, scope, "I")
    assert region is not None
    space = np.column_stack([np.ones(K), Xp]) if effects == "fixed" else Xp
    return Blocked(Xp, keep, space, sizes, shrinkage(sizes, effects, ratio or 0.0), effects, ratio, name, B,
                   region, bool(replicates))


def _bound(problem: Blocked, solver: str | None, tol: float) -> tuple[float | None, np.ndarray | None, str]:
    """(certified lower bound or None, the approximate weights on ``space`` or None, what the bound is)."""
    p = problem.X.shape[1]
    B = problem.B
    try:
        if problem.effects == "random":
            approx = d_optimum(problem.space, tol) if B is None else linear_optimum(problem.space, B, solver, tol)
            return approx.lower_bound, approx.weights, "the approximate optimum of the unblocked design on X"
        if B is None:
            approx = d_optimum(problem.space, tol)
            return (approx.lower_bound ** ((p + 1) / p), approx.weights,
                    "the approximate D optimum of [1, X] (the intercept-adjusted information), to the power (p+1)/p")
        embedded = np.zeros((p + 1, p + 1))
        embedded[1:, 1:] = B
        approx = linear_optimum(problem.space, embedded, solver, tol)
        return approx.lower_bound, approx.weights, "the approximate optimum of tr(diag(0, B) M^{-1}) on [1, X]"
    except (SolverError, InstanceTooLargeError) as error:
        return None, None, f"no certified bound: {error}"


def _draw(problem: Blocked, weights: np.ndarray | None, rng: np.random.Generator, k: int) -> np.ndarray:
    """The runs of start k, spread over the blocks at random: the rounded approximate optimum (k = 0), extreme bases
    completed at random (odd k), uniform draws (even k)."""
    space, N, replicates = problem.space, int(problem.sizes.sum()), problem.replicates
    K = space.shape[0]
    if k % 2 == 1 or (k == 0 and weights is None):
        counts = extreme_start(space, N, replicates, rng)
    elif k == 0:
        assert weights is not None
        counts = rounded_start(space, weights, N, replicates, rng)
    else:
        counts = np.bincount(rng.choice(K, size=N, replace=replicates), minlength=K)
    return rng.permutation(np.repeat(np.arange(K), counts))


def blocked_design(X: ArrayLike, block_sizes: ArrayLike, criterion: Literal["D", "A", "I"] = "D", *,
                   block_effects: BlockEffects = "fixed", eta: float | None = None, replicates: bool = True,
                   moments: ArrayLike | None = None, restarts: int = 20, time_limit: float | None = None,
                   seed: int = 0, tol: float = 1e-6, solver: str | None = None) -> BlockedDesignResult:
    """Exact design in blocks of given sizes: the candidate of every run of every block, optimal for D, A or I.

    Minimises phi(M / N) over M = sum_b X_b^T (I - c_b 1 1^T) X_b: fixed block effects (c_b = 1 / n_b, the
    within-block centred information X^T (I - P_Z) X, the intercept left out), or random ones of variance ratio
    eta (c_b = eta / (1 + eta n_b), the GLS information X^T V^{-1} X, V = I + eta Z Z^T) (Goos 2002; as R's
    AlgDesign ``optBlock`` and skpr's blocked designs). Runs move to other candidates and are exchanged between
    blocks while that improves the criterion, from ``restarts + 1`` starts; the best local optimum is returned with a
    certified lower bound from the unblocked approximate optimum (module :mod:`optdesign.exact_designs.blocked`).

    Parameters
    ----------
    X : array_like
        The candidates' model matrix, K x d (e.g. from :func:`optdesign.candidates`); its rows must span R^d.
        With fixed block effects a constant column (the intercept) is not a parameter (``result.parameters``).
    block_sizes : array_like of int
        Runs per block, each at least 1; N is their sum.
    criterion : {"D", "A", "I"}
        The optimality criterion, of the parameters' information.
    block_effects : {"fixed", "random"}
        Block effects as unknown constants, or random with variance ratio ``eta``.
    eta : float, optional
        Random block effects only: sigma_block^2 / sigma^2 >= 0 (default 1; 0: the unblocked information).
    replicates : bool
        Allow several runs at one candidate (default); False: at most one over the whole design.
    moments : array_like, optional
        I-criterion only: the region's moment matrix, d x d E[x x^T] with random blocks; with fixed blocks the
        p x p covariance of the parameters' columns over the region (the I value is then the average variance of
        the predicted response less its region average, which block effects do not touch). Default: the
        candidates, uniformly.
    restarts : int
        Starts after the first (the rounded approximate optimum): extreme bases and uniform draws in turn.
    time_limit : float, optional
        Seconds after which no new start begins.
    seed : int
        Seed of the random starts and of the spreading of runs over blocks.
    tol : float
        Relative gap of the approximate optimum behind the bound.
    solver : str, optional
        Conic solver of the approximate A/I design (the chain by default).

    Returns
    -------
    BlockedDesignResult
        ``rows`` (the candidate of every run, block after block), ``value``, ``values`` (D, A, I),
        ``information``, ``lower_bound`` and ``efficiency`` (certified; None if the approximate design failed),
        ``table()`` run by run.

    Raises
    ------
    InvalidInputError
        Candidates that do not span R^d or hold NaN/inf; block sizes that are empty or not positive whole numbers;
        an unknown criterion or ``block_effects``; eta negative, not finite, or given with fixed effects; N above
        K without replicates; fixed blocks with a constant that is only a combination of columns, or with
        N - b below the parameters (singular for every design); random blocks with N below d; moments not a
        positive semidefinite matrix of the right size (or given for D or A); no start with a nonsingular
        information matrix.
    InstanceTooLargeError
        X M^{-1} (K x d) above the memory limit of :func:`optdesign.validation.check_array_size`.

    Examples
    --------
    A 2^3 factorial, main effects, in two blocks of four: the D-optimal blocks confound only the three-factor
    interaction, so the slopes' information is 8 I and the design is certified optimal.

    >>> import itertools
    >>> import numpy as np
    >>> import optdesign as od
    >>> F = np.array(list(itertools.product([-1.0, 1.0], repeat=3)))
    >>> X = np.column_stack([np.ones(8), F])
    >>> res = od.blocked_design(X, [4, 4], replicates=False)
    >>> res.information
    array([[8., 0., 0.],
           [0., 8., 0.],
           [0., 0., 8.]])
    >>> round(res.efficiency, 6)
    1.0
    """
    start = time.perf_counter()
    problem = _checked(X, block_sizes, criterion, block_effects, eta, replicates, moments)
    rule, restarts, deadline, rng, tol = search_settings(problem.B, problem.name, restarts, time_limit, seed, tol,
                                                         start)
    with single_threaded_blas():
        bound, weights, kind = _bound(problem, solver, tol)
        try:
            structure = single_structure(problem.sizes, problem.shrink)
            found = best_of_starts(lambda k: _draw(problem, weights, rng, k),
                                   lambda rows: GroupSearch(problem.X, rows, structure, rule, problem.replicates),
                                   restarts, deadline)
        except LinAlgError:
            raise InvalidInputError(f"no start gave a nonsingular {problem.effects}-block information matrix: these "
                                    "blocks cannot estimate the model on these candidates") from None
        M = information(problem.X, found.rows, problem.sizes, problem.shrink)
        values = criterion_values(M, found.rows.size, problem.region)
        grouped = group_bound(problem.X, M, problem.sizes, problem.effects, problem.eta or 0.0, problem.B)
    bound, extras = combined(bound, kind, grouped)
    extras["start_losses"] = found.losses
    return BlockedDesignResult(
        rows=found.rows, block_sizes=problem.sizes, criterion=problem.name, value=values[problem.name],
        lower_bound=bound, values=values, information=M, parameters=problem.keep, block_effects=problem.effects,
        eta=problem.eta, starts=len(found.losses), moves=found.moves, solve_time=time.perf_counter() - start,
        replicates=problem.replicates, extras=extras)
