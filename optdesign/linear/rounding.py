"""Rounding a continuous design to integer pull counts by efficient apportionment.

Pukelsheim & Rieder (1992), Pukelsheim "Optimal Design of Experiments" ch. 12: with p the size
of the support, start from n_i = ceil((n - p/2) w_i) and adjust one unit at a time: increase the
arm minimising n_i / w_i while the total is short, decrease the arm maximising (n_i - 1) / w_i
while it is over. Arms outside the support never receive pulls. The result is the efficient
apportionment: it maximises min_i n_i / w_i over allocations summing to n (for n >= p).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InstanceTooLargeError
from ..validation import as_count, check_weights

__all__ = ["MAX_PULLS", "round_design"]

#: the largest total ``n`` rounded exactly: (n - p/2) w_k is computed in float64, exact for integers up to 2^53
MAX_PULLS = 2**53


def round_design(weights: ArrayLike, n: int) -> np.ndarray:
    """Integer counts (same length as ``weights``) summing to ``n`` (see module doc).

    When n is smaller than the support some support arms get zero pulls; weights need not sum
    to one (they are normalised).

    Parameters
    ----------
    weights : array_like, shape (K,)
        A continuous design: nonnegative, with a positive sum.
    n : int
        Total number of pulls, positive.

    Returns
    -------
    numpy.ndarray of int64, shape (K,)
        Pull counts summing to ``n``, zero outside the support of ``weights``.

    Raises
    ------
    InvalidInputError
        Negative, non-finite or all-zero weights, or ``n`` not a positive integer.
    InstanceTooLargeError
        ``n`` above :data:`MAX_PULLS` (2^53), where float64 products no longer round exactly.
    """
    w = check_weights(weights, "weights")
    n = as_count(n, "n")
    if n > MAX_PULLS:
        raise InstanceTooLargeError(f"n = {n:.3g} pulls is above 2^53 = {MAX_PULLS:.3g}, the largest total that "
                                    "float64 rounds exactly; round a smaller total and scale")
    w = w / w.sum()
    support = w > 0
    p = int(support.sum())
    counts = np.zeros(w.size, dtype=np.int64)
    counts[support] = np.maximum(np.ceil((n - p / 2) * w[support]), 0).astype(np.int64)
    idx = np.flatnonzero(support)
    ws = w[idx]
    total = int(counts.sum())
    while total < n:
        k = idx[np.argmin(counts[idx] / ws)]
        counts[k] += 1
        total += 1
    while total > n:
        cand = counts[idx] > 0
        ratio = np.where(cand, (counts[idx] - 1) / ws, -np.inf)
        k = idx[np.argmax(ratio)]
        counts[k] -= 1
        total -= 1
    return counts
