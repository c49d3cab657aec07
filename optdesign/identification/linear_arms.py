"""Lower bounds of top-m and thresholding identification on linear arms with Gaussian noise.

Pulling arm x_k returns x_k^T theta + sigma N(0, 1). Each question's alternative set is a union of halfspaces
{lambda : y_p^T lambda <= c_p}, one per piece p, with gap_p = y_p^T theta - c_p > 0 at theta; the closest
alternative in the norm of A(w) = sum_k w_k x_k x_k^T gives the piece f_p(w) = gap_p^2 / (2 sigma^2
||y_p||^2_{A(w)^{-1}}), so

    T* = 1 / max_w min_p f_p(w) = 2 sigma^2 min_w max_p ||y_p / gap_p||^2_{A(w)^{-1}},

the min-max design of :func:`optdesign.xy_allocation` on the scaled directions y_p / gap_p (Soare et al. 2014's
XY-oracle written for another question), certified by its dual lower bound.

* top m of the items z_1..z_M (Réda, Kaufmann & Delahaye-Duriez, AISTATS 2021): the pieces are the pairs (i in the
  top m, j outside), y = z_i - z_j, c = 0;
* thresholding (sign identification) of the items against a level tau: one piece per item, y = s_k z_k and
  c = s_k tau with s_k the item's side, +1 above the level and -1 below;
* epsilon-good identification (any item within epsilon of the best, additively; Jourdan & Degenne, ICML 2022): the
  answer i is certified against every other item j, y = z_i - z_j and c = -epsilon ({lambda : lambda^T z_j >=
  lambda^T z_i + epsilon}). Several answers are correct, and the lower bound takes the easiest to certify, T* = min
  over the epsilon-good items i of T*_i (Degenne & Koolen, NeurIPS 2019): every item with all its gaps positive is
  solved, and the certified lower bound is the smallest of theirs.

With X = Z = the canonical basis both are the K-armed Gaussian questions of
:mod:`optdesign.identification.pairs` and :mod:`optdesign.identification.levels`.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..errors import InvalidInputError
from ..linear.designs import xy_allocation
from ..linear.dispatch import DEFAULT_TOL
from ..validation import as_arms, as_matrix, as_nonnegative, as_vector, check_array_size
from .families import check_family
from .levels import _check_level
from .pairs import IdentificationTime, top_m_pairs

__all__ = ["linear_epsilon_good_characteristic_time", "linear_threshold_characteristic_time",
           "linear_top_m_characteristic_time"]

#: pieces within this relative distance of the largest ||y_p / gap_p||^2_{A(w)^{-1}}, plus ACTIVE_GAPS times the
#: design's certified gap (pieces the certificate cannot tell from the binding ones), are reported as active
ACTIVE_RTOL, ACTIVE_GAPS = 1e-6, 10.0


def linear_top_m_characteristic_time(X: npt.ArrayLike, Z: npt.ArrayLike, theta: npt.ArrayLike, m: int, *,
                                     sigma: float = 1.0, solver: str | None = None, tol: float = DEFAULT_TOL,
                                     time_limit: float | None = None) -> IdentificationTime:
    """T* of identifying the m items of largest z^T theta by pulling the arms X (module docstring), certified.

    Parameters
    ----------
    X : array_like, shape (K, d)
        The arms; they must span R^d.
    Z : array_like, shape (M, d)
        The items, M > m.
    theta : array_like, shape (d,)
        The parameter; the m-th and (m+1)-th largest z^T theta must differ.
    m : int
        The answer's size, 1 <= m < M.
    sigma : float
        The noise's standard deviation.
    solver, tol, time_limit
        As :func:`optdesign.xy_allocation` (``solver`` for its cvxpy fallback).

    Returns
    -------
    IdentificationTime
        T* (E[tau] >= T* kl(delta, 1 - delta)), w* over the arms, the certified lower bound and gap, and the active
        pairs (i, j) of items.

    Raises
    ------
    InvalidInputError
        Arms that do not span R^d, shapes that do not match, NaN/inf, a bad sigma or m, a tie at the m-th item.
    InstanceTooLargeError
        More pairs (i in the top m, j outside) than fit in memory.
    SolverError
        Every solver of the design's chain failed.

    Examples
    --------
    With the canonical arms this is top-m identification of K Gaussian arms:

    >>> import numpy as np
    >>> import optdesign as od
    >>> res = od.linear_top_m_characteristic_time(np.eye(3), np.eye(3), [1.0, 0.5, 0.0], 2)
    >>> print(round(res.value, 1), res.active.tolist())
    34.3 [[0, 2], [1, 2]]
    """
    arms, items, th = _check(X, Z, theta, sigma)
    if isinstance(m, (int, np.integer)) and not isinstance(m, bool):  # else top_m_pairs refuses m
        M, d = items.shape
        check_array_size(float(m) * max(M - m, 0) * (d + 2), f"top-{m} identification of {M} items (its pairs)")
    pairs = top_m_pairs(items @ th, m)
    Y = items[pairs[:, 0]] - items[pairs[:, 1]]
    return _halfspace_time(arms, Y, Y @ th, pairs, sigma, solver, tol, time_limit)


def linear_threshold_characteristic_time(X: npt.ArrayLike, Z: npt.ArrayLike, theta: npt.ArrayLike, level: float, *,
                                         sigma: float = 1.0, solver: str | None = None, tol: float = DEFAULT_TOL,
                                         time_limit: float | None = None) -> IdentificationTime:
    """T* of identifying which items have z^T theta above a level by pulling the arms X (module docstring), certified.

    Parameters
    ----------
    X : array_like, shape (K, d)
        The arms; they must span R^d.
    Z : array_like, shape (M, d)
        The items.
    theta : array_like, shape (d,)
        The parameter; no z^T theta may equal the level.
    level : float
        The level tau.
    sigma : float
        The noise's standard deviation.
    solver, tol, time_limit
        As :func:`optdesign.xy_allocation` (``solver`` for its cvxpy fallback).

    Returns
    -------
    IdentificationTime
        T* (E[tau] >= T* kl(delta, 1 - delta)), w* over the arms, the certified lower bound and gap, and the active
        items (one column).

    Raises
    ------
    InvalidInputError
        Arms that do not span R^d, shapes that do not match, NaN/inf, a bad sigma or level, an item on the level.
    SolverError
        Every solver of the design's chain failed.

    Examples
    --------
    With the canonical arms the closed form of K Gaussian arms, sum_k 2 sigma^2 / (mu_k - tau)^2:

    >>> import numpy as np
    >>> import optdesign as od
    >>> res = od.linear_threshold_characteristic_time(np.eye(2), np.eye(2), [1.0, -0.5], 0.0)
    >>> print(round(res.value, 3), np.round(res.weights, 3))
    10.0 [0.2 0.8]
    """
    arms, items, th = _check(X, Z, theta, sigma)
    margin = items @ th - _check_level(level, items @ th, apart=False)
    on_level = np.flatnonzero(margin == 0)
    if on_level.size:
        raise InvalidInputError(f"items {on_level.tolist()} have z^T theta on the level {level:g}: their side is not "
                                "identifiable")
    side = np.sign(margin)
    return _halfspace_time(arms, side[:, None] * items, np.abs(margin), np.arange(items.shape[0])[:, None], sigma,
                           solver, tol, time_limit)


def linear_epsilon_good_characteristic_time(X: npt.ArrayLike, Z: npt.ArrayLike, theta: npt.ArrayLike,
                                           epsilon: float, *, sigma: float = 1.0, solver: str | None = None,
                                           tol: float = DEFAULT_TOL,
                                           time_limit: float | None = None) -> IdentificationTime:
    """T* of identifying an item within epsilon of the best, z_i^T theta >= max_j z_j^T theta - epsilon, by pulling the
    arms X (module docstring): the smallest T*_i over the epsilon-good items i, certified.

    Parameters
    ----------
    X : array_like, shape (K, d)
        The arms; they must span R^d.
    Z : array_like, shape (M, d)
        The items (at least two).
    theta : array_like, shape (d,)
        The parameter; for epsilon = 0 the best item must be unique.
    epsilon : float
        The additive slack, >= 0 (0 is best-item identification).
    sigma : float
        The noise's standard deviation.
    solver, tol, time_limit
        As :func:`optdesign.xy_allocation`, for each answer's design (``time_limit`` for each of them).

    Returns
    -------
    IdentificationTime
        T* = min_i T*_i (E[tau] >= T* kl(delta, 1 - delta)), w* of the easiest answer, the smallest certified lower
        bound of the answers solved, the gap, and the easiest answer's active pairs (i, j) of items.

    Raises
    ------
    InvalidInputError
        Arms that do not span R^d, shapes that do not match, NaN/inf, a bad sigma, a negative or non-finite epsilon,
        a tie for the best item when epsilon = 0, or items that are all equal.
    InstanceTooLargeError
        More pairs (epsilon-good item, other item) than fit in memory.
    SolverError
        Every solver of a design's chain failed.

    Examples
    --------
    With the canonical arms this is epsilon-good identification of K Gaussian arms, whose easiest answer is the best
    arm: two arms give 8 sigma^2 / (gap + epsilon)^2.

    >>> import numpy as np
    >>> import optdesign as od
    >>> res = od.linear_epsilon_good_characteristic_time(np.eye(2), np.eye(2), [1.0, 0.5], 0.25)
    >>> print(round(res.value, 4), res.active.tolist())
    14.2222 [[0, 1]]
    """
    arms, items, th = _check(X, Z, theta, sigma)
    epsilon = as_nonnegative(epsilon, "epsilon")
    M, d = items.shape
    if M < 2:
        raise InvalidInputError("Z must hold at least two items")
    scores = items @ th
    if epsilon == 0:
        best = int(np.argmax(scores))
        if np.count_nonzero(scores == scores[best]) > 1:
            raise InvalidInputError("the best item is not unique (a tie at the largest z^T theta)")
        answers = np.array([best])
    else:  # an item exactly epsilon below the best is correct but never certified (a zero gap)
        answers = np.flatnonzero(scores + epsilon > scores.max())
    check_array_size(float(answers.size) * M * (d + 2), f"epsilon-good identification of {M} items (its pairs)")
    solved = [_answer_time(arms, items, th, int(i), float(epsilon), sigma, solver, tol, time_limit) for i in answers]
    pick = min(solved, key=lambda res: res.value)
    lower = min(res.lower_bound for res in solved)
    gap = (pick.value - lower) / pick.value
    return IdentificationTime(value=pick.value, weights=pick.weights, lower_bound=lower, gap=gap, active=pick.active,
                              status=pick.status, solver=pick.solver,
                              solve_time=float(sum(res.solve_time for res in solved)))


def _answer_time(X: np.ndarray, Z: np.ndarray, theta: np.ndarray, answer: int, epsilon: float, sigma: float,
                 solver: str | None, tol: float, time_limit: float | None) -> IdentificationTime:
    """T*_i of the answer i: its halfspaces y = z_i - z_j, gap = y^T theta + epsilon, over the items j unlike z_i (an
    item equal to z_i is never epsilon better than it)."""
    others = np.delete(np.arange(Z.shape[0]), answer)
    Y = Z[answer] - Z[others]
    keep = np.any(Y != 0, axis=1)
    if not keep.any():
        raise InvalidInputError("every item equals the others: there is nothing to identify")
    pairs = np.column_stack([np.full(others.size, answer), others])[keep]
    return _halfspace_time(X, Y[keep], Y[keep] @ theta + epsilon, pairs, sigma, solver, tol, time_limit)


def _check(X: npt.ArrayLike, Z: npt.ArrayLike, theta: npt.ArrayLike,
           sigma: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    arms = as_arms(X)
    items = as_matrix(Z, "Z", n_cols=arms.shape[1])
    th = as_vector(theta, "theta", length=arms.shape[1])
    check_family("gaussian", sigma)
    return arms, items, th


def _halfspace_time(X: np.ndarray, Y: np.ndarray, gaps: np.ndarray, labels: np.ndarray, sigma: float,
                    solver: str | None, tol: float, time_limit: float | None) -> IdentificationTime:
    """2 sigma^2 min_w max_p ||y_p / gap_p||^2_{A(w)^{-1}} by the certified min-max design, as an IdentificationTime."""
    scaled = Y / gaps[:, None]
    design = xy_allocation(X, scaled, solver=solver, tol=tol, time_limit=time_limit)
    weights = np.asarray(design.weights, dtype=float)
    A = X.T @ (X * weights[:, None])
    norms = np.einsum("pd,pd->p", scaled, np.linalg.lstsq(A, scaled.T, rcond=None)[0].T)
    scale = 2.0 * float(sigma) ** 2
    lower = scale * (design.lower_bound if design.lower_bound is not None else 0.0)
    value = scale * design.value
    gap = (value - lower) / value
    active = norms >= norms.max() * (1.0 - ACTIVE_RTOL - ACTIVE_GAPS * gap)
    return IdentificationTime(value=value, weights=weights, lower_bound=lower, gap=gap,
                              active=labels[active], status=design.status,
                              solver=design.solver, solve_time=float(design.solve_time))
