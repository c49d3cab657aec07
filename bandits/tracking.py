"""Tracking a target allocation in batches.

Given current pull counts N (summing to n) and a target distribution w, a batch of b pulls is
spread so that N + batch stays close to (n + b) w: the deficits max((n + b) w - N, 0) are
apportioned by efficient rounding (:func:`optdesign.round_design`). Per-arm deviations from the
target stay bounded by a constant independent of n (C-tracking of Garivier & Kaufmann 2016 in
batch form), so a static design advanced by a geometric grid of checkpoints pulls what the greedy
rule of Soare et al. would, up to O(K) pulls per arm.
"""

from __future__ import annotations

import numpy as np

from optdesign import round_design

__all__ = ["next_checkpoint", "portion", "track"]


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
