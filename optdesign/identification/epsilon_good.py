"""The characteristic time of epsilon-good identification: any arm whose mean is within epsilon of the best is a
correct answer (Garivier & Kaufmann 2021; Degenne & Koolen, NeurIPS 2019, for several correct answers), additively
(mu_i >= mu* - epsilon) or multiplicatively (mu_i >= (1 - epsilon) mu*, for a positive best mean).

With several correct answers the lower bound takes the easiest one to certify,

    1 / T* = max over the epsilon-good arms i of  max_w min_{j != i} f_ij(w),

f_ij the shifted piece {lambda : lambda_j >= lambda_i + epsilon}. For Gaussian arms the best arm is that easiest
answer (its shifted gaps are the largest, pair by pair, and the pieces depend on the gaps only), so T* is the
declarative cvxpy model :class:`optdesign.identification.PairsModel` on the best arm's pairs with shifts epsilon, as
for epsilon = 0 on every family. On Bernoulli, Poisson and exponential arms with epsilon > 0 the location matters (a
Bernoulli arm near 1 is cheaper to certify), so every epsilon-good arm is solved by the equalisation of
:mod:`optdesign.identification.shifted`, each certified by weak duality, and the smallest T is kept; its lower bound
is the smallest of the certified ones. The multiplicative question's pieces {lambda_j >= lambda_i / (1 - epsilon)} are
scaled rather than shifted, and every epsilon-good arm is solved the same way, on Gaussian arms too.
"""

from __future__ import annotations

import time

import numpy as np
import numpy.typing as npt

from ..errors import InvalidInputError
from ..validation import as_nonnegative, as_tolerance
from .families import check_family, check_means
from .pairs import IdentificationTime, PairsModel, pair_pieces
from .shifted import anchored_time, check_shifted_family

__all__ = ["EPSILON_KINDS", "epsilon_ends", "epsilon_good_characteristic_time"]

#: the two readings of epsilon
EPSILON_KINDS = ("additive", "multiplicative")


def epsilon_ends(epsilon: object, kind: str = "additive") -> tuple[float, float]:
    """The shift s and scale c of the epsilon-good pieces {lambda_j >= c lambda_i + s}, checked: (epsilon, 1)
    additively, (0, 1 / (1 - epsilon)) multiplicatively.

    Parameters
    ----------
    epsilon : object
        The slack, >= 0 (below 1 for the multiplicative question).
    kind : str
        ``"additive"`` or ``"multiplicative"``.

    Returns
    -------
    tuple of float
        ``(s, c)``.

    Raises
    ------
    InvalidInputError
        A negative or non-finite epsilon, an unknown kind, or a multiplicative epsilon of 1 or more.
    """
    epsilon = as_nonnegative(epsilon, "epsilon")
    if kind not in EPSILON_KINDS:
        raise InvalidInputError(f"unknown kind {kind!r}; valid: {', '.join(EPSILON_KINDS)}")
    if kind == "multiplicative" and epsilon >= 1:
        raise InvalidInputError(f"a multiplicative epsilon must be below 1, got {epsilon}")
    return (epsilon, 1.0) if kind == "additive" else (0.0, 1.0 / (1.0 - epsilon))


def epsilon_good_characteristic_time(means: npt.ArrayLike, epsilon: float, *, family: str = "gaussian",
                                     sigma: float = 1.0, solver: str | None = None, tol: float = 1e-6,
                                     kind: str = "additive") -> IdentificationTime:
    """T* and w* of epsilon-good identification (module docstring), certified.

    Parameters
    ----------
    means : array_like, shape (K,)
        The arms' means, inside the family's open mean space, with a unique best arm.
    epsilon : float
        The slack, >= 0 (additive: below 1 for Bernoulli arms; multiplicative: below 1); 0 is best-arm
        identification.
    family : str
        ``"gaussian"`` (default), ``"bernoulli"``, ``"poisson"`` or ``"exponential"``.
    sigma : float
        The Gaussian sigma (default 1).
    solver : str, optional
        The conic solver of the cvxpy model (Gaussian arms, or epsilon = 0); None: CLARABEL, then SCS. Checked on
        every path.
    tol : float
        The relative gap at which the model's answer is kept (default 1e-6); the equalisation's answer has status
        ``"optimal_inaccurate"`` when its certified gap exceeds it.
    kind : str
        ``"additive"`` (default: mu_i >= mu* - epsilon) or ``"multiplicative"`` (mu_i >= (1 - epsilon) mu*).

    Returns
    -------
    IdentificationTime
        T* (E[tau] >= T* kl(delta, 1 - delta)), w* (the proportions of the easiest correct answer), a certified
        lower bound, the gap and the closest pairs; ``solver`` is ``"equalisation"`` where no conic solver ran.

    Raises
    ------
    InvalidInputError
        An unknown family, kind or solver, a tol that is not positive, means outside its space, a tie for the best
        arm, a negative or non-finite epsilon, a Bernoulli or multiplicative epsilon of 1 or more, a multiplicative
        question whose best mean is not positive.
    SolverError
        No solver answered, or a root of the equalisation did not converge.

    Examples
    --------
    >>> import optdesign as od
    >>> result = od.epsilon_good_characteristic_time([1.0, 0.5], 0.25)
    >>> round(result.value, 4)  # two Gaussian arms: 8 sigma^2 / (gap + epsilon)^2
    14.2222
    """
    fam, sigma = check_family(family, sigma)
    mu = check_means(means, fam)
    tol = as_tolerance(tol)
    if solver is not None:  # checked on every path, used by the cvxpy model's only
        from ..runtime.solvers import solver_chain

        solver_chain(solver)  # it refuses non-strings itself
    shift, scale = epsilon_ends(epsilon, kind)
    epsilon = float(epsilon)
    order = np.argsort(-mu, kind="stable")
    if mu[order[0]] == mu[order[1]]:
        raise InvalidInputError("the best arm is not unique (a tie at the largest mean)")
    best = int(order[0])
    if epsilon == 0 or (fam == "gaussian" and kind == "additive"):
        pairs = np.column_stack([np.full(mu.size - 1, best), np.delete(np.arange(mu.size), best)])
        return PairsModel(mu.size, pairs, family=fam, sigma=sigma).solve(mu, shifts=epsilon, solver=solver, tol=tol)
    if kind == "multiplicative" and not mu[best] > 0:
        raise InvalidInputError(f"a multiplicative epsilon needs a positive best mean, got {mu[best]:.6g}")
    good = mu[best] - epsilon if kind == "additive" else (1.0 - epsilon) * mu[best]
    check_shifted_family(fam, shift, scale)
    start = time.perf_counter()
    anchors = np.flatnonzero(mu >= good)
    solved = [anchored_time(mu, int(i), shift, fam, sigma, scale) for i in anchors]
    pick = int(np.argmin([upper for upper, _, _ in solved]))
    value, weights = solved[pick][0], solved[pick][2]
    lower = min(low for _, low, _ in solved)
    anchor = int(anchors[pick])
    pairs = np.column_stack([np.full(mu.size - 1, anchor), np.delete(np.arange(mu.size), anchor)])
    values, _ = pair_pieces(mu, pairs, weights, family=fam, sigma=sigma, shifts=shift, scales=scale)
    active = pairs[values <= values.min() * (1 + 1e-6)]
    gap = (value - lower) / value if np.isfinite(value) else float("inf")
    return IdentificationTime(value=value, weights=weights, lower_bound=lower, gap=gap, active=active,
                              status="optimal" if gap <= tol else "optimal_inaccurate", solver="equalisation",
                              solve_time=time.perf_counter() - start)
