"""Min-max designs over all pairwise differences of many items, without listing the directions.

XY-allocation and the transductive design without theta minimise F(w) = max_{i<j} ||z_i - z_j||^2_{A(w)^{-1}}
over n(n-1)/2 directions: 5e7 of them for Fiez et al.'s n = 10,000 arms in R^2, too many to hand a
solver. Two facts make the full set unnecessary:

* for fixed w, F(w) is the squared diameter of the whitened items L^{-1} z_i (A(w) = L L^T), found
  exactly by a chunked O(n^2 d) scan that holds about PAIR_CHUNK_ENTRIES numbers at a time;
* the dual certificate F* >= f_p(w)^2 / max_k h_k(w) of :mod:`optdesign.linear.criteria` holds for any
  distribution p over directions, in particular one supported on a subset of the pairs.

So :func:`pairwise_design` solves the design on a working set of pairs, scans all pairs at its
weights (an upper bound F(w)), adds the pairs above the working-set value, and stops when the
upper bound over all pairs and the working set's certified lower bound are within ``tol``
(constraint generation; the certificate is on the full problem).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import InvalidInputError
from ..result import DesignResult
from ..validation import as_arms, as_count, as_matrix, as_tolerance
from .criteria import whiten
from .generation import Pricer, generate_directions

__all__ = ["PairPricer", "max_pair_variance", "pairwise_design", "top_pairs"]

PAIR_CHUNK_ENTRIES = 2_000_000  # pair values held at once by the scan (16 MB)


def pair_count(n: int) -> int:
    """Number of unordered pairs of n items."""
    return n * (n - 1) // 2


def top_pairs(V: np.ndarray, k: int = 0, floor: float = -np.inf) -> tuple[float, np.ndarray]:
    """Largest squared distance max_{i<j} ||v_i - v_j||^2 between the columns of V (d x n), and
    up to ``k`` pairs (rows (i, j), i < j, largest first) whose squared distance exceeds ``floor``.

    Exact, without scanning all n(n-1)/2 pairs: the items are taken by decreasing norm, and since
    ||v_i - v_j||^2 <= (||v_i|| + ||v_j||)^2, a block of pairs is skipped once that bound cannot beat the
    largest distance found so far and cannot enter the requested top-k (above ``floor`` and the k-th value
    kept so far). Near an optimal design only the few largest-norm items pair up (at n = 20,000 in R^20,
    about 1 % of the pairs are scanned).

    Parameters
    ----------
    V : array_like, shape (d, n)
        The (whitened) items, one per column.
    k : int
        Most pairs to return (0: only the maximum).
    floor : float
        Only pairs with squared distance above it are returned.

    Returns
    -------
    max_value : float
        The largest squared distance (0 for fewer than two items).
    pairs : numpy.ndarray of int64, shape (at most k, 2)
        Column indices (i, j), i < j, largest distance first.

    Raises
    ------
    InvalidInputError
        ``V`` is not a finite 2-D array, or ``k`` is not a nonnegative integer.
    """
    V = as_matrix(V, "V")
    k = as_count(k, "k", minimum=0)
    n = V.shape[1]
    if n < 2:
        return 0.0, np.empty((0, 2), dtype=np.int64)
    squared = np.einsum("ij,ij->j", V, V)
    order = np.argsort(-squared, kind="stable")
    squared = squared[order]
    norms = np.sqrt(squared)
    Vs = V[:, order]
    best = -np.inf
    kth = -np.inf  # the k-th largest value kept so far (-inf until k are kept)
    kept_values = np.empty(0)
    kept_pairs = np.empty((0, 2), dtype=np.int64)
    a = 0
    while a < n - 1:
        # pairs whose bound does not exceed the cutoff cannot change the result (rounding margin 1e-9)
        cutoff = best if k == 0 else min(best, max(floor, kth))
        reach = np.sqrt(max(cutoff, 0.0)) * (1 + 1e-9) - norms[a] if cutoff > -np.inf else -np.inf
        if norms[a + 1] <= reach:  # every later pair is bounded by this one: done
            break
        stop = n if reach == -np.inf else a + 1 + int(np.searchsorted(-norms[a + 1:], -reach, side="left"))
        width = stop - (a + 1)
        b = min(a + max(1, PAIR_CHUNK_ENTRIES // width), n - 1, stop)
        # block: items a..b-1 against items a+1..stop-1; entry (r, c) is the pair (a + r, a + 1 + c)
        block = squared[a:b, None] + squared[None, a + 1 : stop] - 2.0 * (Vs[:, a:b].T @ Vs[:, a + 1 : stop])
        m = b - a  # pairs with j <= i, i.e. c < r, all lie in the first m columns
        block[:, :m][np.tril_indices(m, -1)] = -np.inf
        flat = block.ravel()
        best = max(best, float(flat.max()))
        if k > 0:
            idx = np.flatnonzero(flat > max(floor, kth))  # usually few: the floor is the working set's value
            if idx.size > k:
                idx = idx[np.argpartition(flat[idx], idx.size - k)[idx.size - k :]]
            r, c = np.divmod(idx, block.shape[1])
            kept_values = np.concatenate([kept_values, flat[idx]])
            kept_pairs = np.concatenate([kept_pairs, np.stack([a + r, a + 1 + c], axis=1)])
            if kept_values.size > k:
                top = np.argpartition(kept_values, kept_values.size - k)[kept_values.size - k :]
                kept_values, kept_pairs = kept_values[top], kept_pairs[top]
            if kept_values.size == k:
                kth = float(kept_values.min())
        a = b
    if kept_values.size == 0:
        return best, np.empty((0, 2), dtype=np.int64)
    ranked = np.argsort(-kept_values, kind="stable")[:k]
    pairs = np.sort(order[kept_pairs[ranked]], axis=1)  # back to the caller's indices, i < j
    return best, pairs


def max_pair_variance(A: np.ndarray, Z: np.ndarray, *, rcond: float = 1e-12) -> float:
    """max_{i<j} (z_i - z_j)^T A^+ (z_i - z_j) for a PSD information matrix A (pseudo-inverse), or
    inf when some difference has a component in the null space of A (it cannot be estimated).

    Exact over all n (n - 1) / 2 pairs by :func:`top_pairs` on the whitened items, without listing them.

    Parameters
    ----------
    A : array_like, shape (d, d)
        Symmetric positive semidefinite information matrix (symmetrised here).
    Z : array_like, shape (n, d)
        The items, one per row.
    rcond : float
        Eigenvalues below ``rcond`` times the largest count as zero.

    Returns
    -------
    float
        The largest variance of a difference; inf when one is not estimable (or A is zero).

    Raises
    ------
    InvalidInputError
        ``A`` not square, shapes that do not match, NaN/inf, or ``rcond`` negative or not finite.
    """
    A = as_matrix(A, "A")
    if A.shape[0] != A.shape[1]:
        raise InvalidInputError(f"A must be a square information matrix, got shape {A.shape}")
    Z = as_matrix(Z, "Z", n_cols=A.shape[0])
    if not (np.isfinite(rcond) and rcond >= 0):
        raise InvalidInputError(f"rcond must be a nonnegative number, got {rcond!r}")
    eigval, eigvec = np.linalg.eigh((A + A.T) / 2)
    keep = eigval > rcond * max(eigval.max(), 0.0)
    if not keep.any():
        return np.inf
    null_part = eigvec[:, ~keep].T @ Z.T  # equal columns <=> every difference lies in range(A)
    spread = np.abs(null_part - null_part[:, :1]).max(initial=0.0)
    if spread > 1e-8 * max(np.abs(Z - Z[0]).max(), 1e-300):
        return np.inf
    V = (eigvec[:, keep] / np.sqrt(eigval[keep])).T @ Z.T
    return top_pairs(V)[0]


class PairPricer(Pricer):
    """All pairwise differences z_i - z_j (i < j) of the items Z, priced by :func:`top_pairs`; keys are (i, j).

    Parameters
    ----------
    Z : numpy.ndarray, shape (n, d)
        The items, one per row; the n (n - 1) / 2 differences are never listed.
    """

    def __init__(self, Z: np.ndarray):
        self.Z = Z
        self.count = pair_count(Z.shape[0])

    def price(self, L: np.ndarray, k: int, floor: float = -np.inf) -> tuple[float, np.ndarray]:
        """:func:`top_pairs` of the whitened items L^{-1} z_i; keys are rows (i, j) with i < j."""
        return top_pairs(whiten(L, self.Z), k, floor)

    def rows(self, keys: np.ndarray) -> np.ndarray:
        """The differences z_i - z_j of the key rows (i, j)."""
        return self.Z[keys[:, 0]] - self.Z[keys[:, 1]]


def pairwise_design(
    X: np.ndarray,
    Z: np.ndarray,
    solve: Callable[[np.ndarray, np.ndarray | None, float], DesignResult],
    *,
    tol: float,
    batch: int | None = None,
    time_limit: float = 600.0,
    explicit: Callable[[], DesignResult] | None = None,
) -> DesignResult:
    """Design minimising max_{i<j} ||z_i - z_j||^2_{A(w)^{-1}} by constraint generation over pairs
    (:func:`optdesign.linear.generation.generate_directions`; ``extras['directions']`` counts all pairs).

    ``solve(Y, w0, tol)`` solves the min-max design on an explicit direction set (warm-started at w0).
    ``explicit()``, when given, solves the problem on the full list of differences: it is used instead when a
    whole batch of pairs ties at the uniform design (symmetric item sets).

    Parameters
    ----------
    X : array_like, shape (K, d)
        The arms; they must span R^d.
    Z : array_like, shape (n, d)
        The items whose differences are the directions.
    solve : callable
        ``solve(Y, w0, tol)`` -> DesignResult: the certified min-max design on explicit directions Y.
    tol : float
        Certified relative gap over all pairs.
    batch : int, optional
        Pairs in the first working set and most added per round; max(50, 40 d) by default.
    time_limit : float
        Seconds for the constraint-generation loop.
    explicit : callable, optional
        ``explicit()`` -> DesignResult on the full list of differences, for tied item sets.

    Returns
    -------
    DesignResult
        As :func:`optdesign.linear.generation.generate_directions`: F(w) over all pairs, certified bounds and
        ``extras`` ``directions`` (all pairs), ``working_directions`` and ``rounds``.

    Raises
    ------
    InvalidInputError
        Arms that do not span R^d, bad ``Z``, ``tol`` or ``batch``, or a single distinct item.
    SolverError
        A(w) on the working set stays numerically singular.
    """
    X = as_arms(X)
    Z = as_matrix(Z, "Z", n_cols=X.shape[1])
    tol = as_tolerance(tol)
    batch = max(50, 40 * Z.shape[1]) if batch is None else as_count(batch, "batch")
    return generate_directions(X, PairPricer(Z), solve, tol=tol, batch=batch, time_limit=time_limit,
                               explicit=explicit, nothing="Z has a single distinct item: there is nothing to identify")
