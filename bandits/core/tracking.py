"""Tracking a target allocation in batches.

Given current pull counts N (summing to n) and a target distribution w, a batch of b pulls is
spread so that N + batch stays close to (n + b) w: the deficits max((n + b) w - N, 0) are
apportioned by efficient rounding (:func:`optdesign.round_design`). Per-arm deviations from the
target stay bounded by a constant independent of n (C-tracking of Garivier & Kaufmann 2016 in
batch form), so a static design advanced by a geometric grid of checkpoints pulls what the greedy
rule of Soare et al. would, up to O(K) pulls per arm. C-tracking's floored target w^eps is
:func:`project_floor`.

The pull-by-pull tracking rules of Garivier & Kaufmann (COLT 2016, Sec. 3.1), which the samplers share:

* C-tracking (:func:`c_tracking`): pull argmax_k (sum_{s <= t} w_s,k - N_k), following the cumulative targets;
* D-tracking (:func:`d_tracking`): pull argmin_k N_k when some N_k < sqrt(t) - K/2 (forced exploration), else
  argmax_k (t w_k - N_k).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from optdesign import round_design
from optdesign.errors import InvalidInputError

__all__ = ["c_tracking", "d_tracking", "next_checkpoint", "portion", "project_floor", "pull_by_pull", "track"]

#: relative slack on eps K <= 1 (a floor computed as 1 / K may exceed it by round-off)
FLOOR_SLACK = 1e-12


def track(counts: np.ndarray, weights: np.ndarray, batch: int) -> np.ndarray:
    """Integer batch (sum ``batch``) moving ``counts`` towards ``(counts.sum() + batch) * weights``.

    Parameters
    ----------
    counts : numpy.ndarray of int, shape (K,)
        Pulls per arm so far.
    weights : array_like, shape (K,)
        Target allocation (nonnegative; normalised here, negative entries clipped to 0).
    batch : int
        Size of the batch; 0 or less gives an empty batch.

    Returns
    -------
    numpy.ndarray of int, shape (K,)
        Pulls per arm summing to ``batch``: the deficits apportioned by efficient rounding (the target
        itself when no arm is behind).
    """
    if batch <= 0:
        return np.zeros_like(counts)
    w = np.clip(np.asarray(weights, dtype=float), 0.0, None)
    w = w / w.sum()
    deficit = np.clip((counts.sum() + batch) * w - counts, 0.0, None)
    if deficit.sum() <= 0:
        return round_design(w, batch)
    return round_design(deficit, batch)


def next_checkpoint(n: int, growth: float) -> int:
    """Next time on the geometric grid n -> max(n + 1, ceil(n (1 + growth))).

    Parameters
    ----------
    n : int
        Current time (samples).
    growth : float
        Relative step of the grid (e.g. 0.01: checkpoints 1 % apart).

    Returns
    -------
    int
        The next checkpoint, at least ``n + 1``.
    """
    return max(n + 1, int(np.ceil(n * (1.0 + growth))))


def portion(remaining: np.ndarray, budget: int) -> np.ndarray:
    """The planned pulls still owed, or a proportional share of them summing to at most ``budget``.

    Parameters
    ----------
    remaining : array_like of int, shape (K,)
        Pulls of the plan not yet made.
    budget : int
        Observations left.

    Returns
    -------
    numpy.ndarray of int64, shape (K,)
        ``remaining`` when it fits, else an apportionment of ``budget`` capped by ``remaining`` (at least
        one pull).
    """
    remaining = np.asarray(remaining, dtype=np.int64)
    if remaining.sum() <= budget:
        return remaining
    take = np.minimum(round_design(remaining, int(budget)), remaining)
    if take.sum() == 0:
        take[int(np.argmax(remaining))] = 1
    return take


def project_floor(w: np.ndarray, eps: float | np.ndarray) -> np.ndarray:
    """L-infinity projection of w onto {v in simplex : v >= eps}: v = max(w - s, eps) with sum_k v_k = 1.

    GK16's w^eps of C-tracking. Raising the arms below the floor to eps and taking the mass this needs from the
    others by one common shift s (water filling) makes the largest change max(max_k (eps - w_k), s) as small as
    any feasible point can. s solves the piecewise linear sum_k max(w_k - s, eps) = 1, exactly, on the sorted
    weights. At eps K = 1 the set is the uniform point alone; with GK16's eps_t = 1 / (2 sqrt(K^2 + t)),
    eps K <= 1/2 always.

    Parameters
    ----------
    w : numpy.ndarray, shape (K,)
        Nonnegative weights summing to 1.
    eps : float or numpy.ndarray, shape (n,)
        The floor, with 0 <= eps K <= 1 (up to a relative round-off of FLOOR_SLACK); an array of floors gives one
        projection per floor, each the one a scalar floor gives (the same arithmetic).

    Returns
    -------
    numpy.ndarray, shape (K,) or (n, K)
        The projection: a copy of w when no weight is below eps, the uniform weights when eps K >= 1.

    Raises
    ------
    InvalidInputError
        A floor that is negative, not a number, or with eps K > 1 (no point of the simplex is above it).
    """
    w = np.array(w, dtype=float)
    K = w.size
    floor = np.asarray(eps, dtype=float)[..., None]
    if not (floor.min() >= 0.0 and floor.max() * K <= 1.0 + FLOOR_SLACK):
        raise InvalidInputError(f"the floor eps = {eps} must lie in [0, 1/K]: with eps K > 1 it leaves no point "
                                f"of the {K}-simplex")
    if np.ndim(eps) == 0 and eps * K >= 1.0:  # one floor, and the set is one point
        return np.full(K, 1.0 / K)
    if np.ndim(eps) == 0 and w.min() >= eps:  # one floor, below every weight
        return w
    # with the top m weights above the floor: (sum of the top m) - m s + (K - m) eps = 1
    top = np.sort(w)[::-1]
    m = np.arange(1, K + 1)
    shifts = (np.cumsum(top) + (K - m) * floor - 1.0) / m
    # the right m: the smallest whose shift leaves the (m+1)-th weight at or below the floor
    below = np.r_[top[1:], -np.inf] - shifts <= floor
    if np.ndim(eps) == 0:
        return np.maximum(w - shifts[int(np.argmax(below))], eps)
    shift = np.take_along_axis(shifts, np.argmax(below, axis=-1)[..., None], axis=-1)
    return np.where(floor * K >= 1.0, 1.0 / K, np.where(w.min() >= floor, w, np.maximum(w - shift, floor)))


def c_tracking(cumulative: np.ndarray, counts: np.ndarray) -> int:
    """C-tracking: the arm furthest behind its cumulative target, argmax_k (cumulative_k - N_k).

    Parameters
    ----------
    cumulative : numpy.ndarray, shape (K,)
        sum over past steps of the target proportions (including this step's).
    counts : numpy.ndarray of int, shape (K,)
        Pulls per arm.

    Returns
    -------
    int
        The arm to pull (the smallest index on a tie).
    """
    return int(np.argmax(cumulative - counts))


def d_tracking(weights: np.ndarray, counts: np.ndarray) -> int:
    """D-tracking: an under-sampled arm (N_k < sqrt(t) - K/2) if any, else argmax_k (t w_k - N_k).

    Parameters
    ----------
    weights : numpy.ndarray, shape (K,)
        Target proportions.
    counts : numpy.ndarray of int, shape (K,)
        Pulls per arm (t = their sum).

    Returns
    -------
    int
        The arm to pull.
    """
    t = counts.sum()
    if counts.min() < np.sqrt(t) - counts.size / 2:
        return int(np.argmin(counts))
    return int(np.argmax(t * weights - counts))


def pull_by_pull(choose: Callable[[np.ndarray], int | np.ndarray], counts: np.ndarray, n: int) -> np.ndarray:
    """A batch of ``n`` pulls picked one at a time, the counts advancing after each.

    Parameters
    ----------
    choose : callable
        The counts so far -> the next arm (or the distinct arms the next pull observes).
    counts : numpy.ndarray of int, shape (K,)
        Observations per arm at the batch's start (not modified).
    n : int
        Pulls.

    Returns
    -------
    numpy.ndarray of int, shape (K,)
        Observations per arm of the batch.
    """
    counts = counts.copy()
    batch = np.zeros_like(counts)
    for _ in range(n):
        k = choose(counts)
        counts[k] += 1
        batch[k] += 1
    return batch
