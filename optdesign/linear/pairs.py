"""Min-max designs over all pairwise differences of many items, without listing the directions.

XY-allocation and the transductive design without theta minimise F(w) = max_{i<j} ||z_i - z_j||^2_{A(w)^{-1}}
over n(n-1)/2 directions: 5e7 of them for Fiez et al.'s n = 10,000 arms in R^2, too many to hand a
solver. Two facts make the full set unnecessary:

* for fixed w, F(w) is the squared diameter of the whitened items L^{-1} z_i (A(w) = L L^T), found
  exactly by :func:`top_pairs`, a scan that skips the blocks of pairs its bounds exclude and holds about
  PAIR_CHUNK_ENTRIES numbers at a time;
* the dual certificate F* >= f_p(w)^2 / max_k h_k(w) of :mod:`optdesign.linear.criteria` holds for any
  distribution p over directions, in particular one supported on a subset of the pairs.

So :func:`pairwise_design` solves the design on a working set of pairs, scans all pairs at its
weights (an upper bound F(w)), adds the pairs above the working-set value, and stops when the
upper bound over all pairs and the working set's certified lower bound are within ``tol``
(constraint generation; the certificate is on the full problem).

:func:`top_pairs` and :func:`max_pair_variance` are public (``optdesign.linear``): elimination bandits (RAGE,
the static XY rules) scan pairs of arms the same way between designs.
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
PAIR_BLOCK = 128  # items per block of the scan (more when n > PAIR_BLOCK * MAX_PAIR_BLOCKS)
MAX_PAIR_BLOCKS = 1024  # blocks at most: the block-pair bounds hold MAX_PAIR_BLOCKS^2 numbers
PARTITION_PAIRS = 64  # pair values per item about as costly as building a block partition


def pair_count(n: int) -> int:
    """Number of unordered pairs of n items."""
    return n * (n - 1) // 2


def _partition(C: np.ndarray, norms: np.ndarray, along: np.ndarray, size: int) -> tuple[np.ndarray, ...]:
    """Blocks of ``size`` consecutive items of the centred items C (d x n) taken in the order ``along``, each
    block sorted by decreasing norm.

    Returns (the order of the items, the block-pair bounds, C in that order, the norms of block b in row b,
    padded with -inf). The bound of blocks a <= b (upper triangle; -inf below) is
    min(||c_a - c_b|| + r_a + r_b, m_a + m_b) for block centres c, radii r about them and largest norms m: no
    pair of the two blocks is farther apart."""
    d, n = C.shape
    blocks = -(-n // size)
    padded = np.full(blocks * size, -np.inf)
    padded[:n] = norms[along]
    within = np.argsort(-padded.reshape(blocks, size), axis=1, kind="stable")
    padded = np.take_along_axis(padded.reshape(blocks, size), within, axis=1)  # the padding sorts last
    flat = (within + np.arange(0, blocks * size, size)[:, None]).ravel()
    order = along[flat[flat < n]]
    ordered = C[:, order]
    full = np.zeros((d, blocks * size))
    full[:, :n] = ordered
    full = full.reshape(d, blocks, size)
    centres = full.sum(axis=2) / np.minimum(size, n - np.arange(0, n, size))
    spread = full - centres[:, :, None]
    radii = np.sqrt(np.where(padded > -np.inf, np.einsum("ijk,ijk->jk", spread, spread), 0.0).max(axis=1))
    top = padded[:, 0]  # the largest norm of each block comes first
    sq = np.einsum("ij,ij->j", centres, centres)
    gaps = sq[:, None] + sq[None, :] - 2.0 * (centres.T @ centres)
    bounds = np.sqrt(np.maximum(gaps, 0.0, out=gaps), out=gaps) + radii[:, None] + radii[None, :]
    np.minimum(bounds, top[:, None] + top[None, :], out=bounds)
    bounds[np.arange(blocks)[:, None] > np.arange(blocks)] = -np.inf
    return order, bounds, ordered, padded


def _first_pair(C: np.ndarray, norms: np.ndarray) -> tuple[int, int, float]:
    """The item farthest from the centroid, the item farthest from it, and their squared distance."""
    i0 = int(np.argmax(norms))
    reach = norms**2 + norms[i0] ** 2 - 2.0 * (C.T @ C[:, i0])
    reach[i0] = -np.inf
    j0 = int(np.argmax(reach))
    return i0, j0, float(reach[j0])


def _blocks(C: np.ndarray, norms: np.ndarray, best: float, size: int) -> tuple[np.ndarray, ...]:
    """:func:`_partition` by decreasing norm, or along the principal axis when its bounds leave fewer pairs at
    ``best`` (the second is not built when the first leaves about as many pair values as building it costs)."""
    n = C.shape[1]
    counts = np.minimum(size, n - np.arange(0, n, size))

    def pairs_left(bounds: np.ndarray) -> float:
        """Pair values in the block pairs whose bound reaches ``best``."""
        return float(np.outer(counts, counts)[bounds >= np.sqrt(best)].sum())

    order, bounds, C, padded = _partition(C, norms, np.argsort(-norms), size)
    if pairs_left(bounds) > PARTITION_PAIRS * n:
        axis = np.linalg.eigh(C @ C.T)[1][:, -1]
        along = _partition(C, norms[order], np.argsort(axis @ C), size)
        if pairs_left(along[1]) < pairs_left(bounds):
            order, bounds, C, padded = order[along[0]], along[1], along[2], along[3]
    return order, bounds, C, padded


class _PairScan:
    """State of the block scan: the largest distance so far and the top-k pairs above ``floor`` kept so far."""

    def __init__(self, n: int, k: int, floor: float, first: tuple[int, int], best: float, margin: float):
        self.n, self.k, self.floor, self.best, self.margin = n, k, floor, best, margin
        i, j = min(first), max(first)
        self.seed = i * n + j
        keep = k > 0 and best > floor
        self.values = np.array([best] if keep else [])
        self.pairs = np.array([[i, j]] if keep else np.empty((0, 2)), dtype=np.int64)
        self.kth = best if keep and k == 1 else -np.inf  # the k-th largest value kept so far (-inf until k are kept)

    def reach(self) -> float:
        """Bounds at or below this distance cannot change the result (rounding margin)."""
        cutoff = self.best if self.k == 0 else min(self.best, max(self.floor, self.kth))
        cut = cutoff * (1 - 1e-9) - self.margin
        return float(np.sqrt(cut)) if cut > 0 else -np.inf

    def add(self, block: np.ndarray, lo: int, cols: np.ndarray) -> None:
        """Take in the squared distances of rows lo.. against the columns ``cols``: the maximum and the top k."""
        flat = block.ravel()
        largest = int(np.argmax(flat))
        self.best = max(self.best, float(flat[largest]))
        k = self.k
        if k == 0:
            return
        above = max(self.floor, self.kth)
        if k > 1:
            idx = np.flatnonzero(flat > above)
        else:  # the largest value only: no second pass
            idx = np.array([largest] if flat[largest] > above else [], dtype=np.int64)
        if idx.size > k:
            idx = idx[np.argpartition(flat[idx], idx.size - k)[idx.size - k :]]
        r, c = np.divmod(idx, block.shape[1])
        found = np.stack([lo + r, cols[c]], axis=1)
        new = found[:, 0] * self.n + found[:, 1] != self.seed
        self.values = np.concatenate([self.values, flat[idx][new]])
        self.pairs = np.concatenate([self.pairs, found[new]])
        if self.values.size > k:
            top = np.argpartition(self.values, self.values.size - k)[self.values.size - k :]
            self.values, self.pairs = self.values[top], self.pairs[top]
        if self.values.size == k:
            self.kth = float(self.values.min())


def _scan_row(scan: _PairScan, a: int, budget: int, bounds: np.ndarray, padded: np.ndarray, C: np.ndarray,
              norms: np.ndarray, squared: np.ndarray) -> int:
    """Pairs of block a with the blocks its bound does not exclude, largest bound first, in slices of about
    ``budget`` pair values (doubling up to PAIR_CHUNK_ENTRIES); returns the next budget. The items are the
    columns of C in scan order, with their norms, squared norms and the norms of block b in row b of ``padded``."""
    size = padded.shape[1]
    cand = np.flatnonzero(bounds[a] > scan.reach())
    cand = cand[np.argsort(-bounds[a, cand], kind="stable")]
    lo = a * size
    while cand.size:
        s = scan.reach()
        cand = cand[bounds[a, cand] > s]
        if not cand.size:
            break
        rows = lo + int(np.count_nonzero(padded[a] > s - padded[cand, 0].max()))
        cols_mask = padded[cand] > s - norms[lo]
        widths = cols_mask.sum(axis=1)
        take = max(1, int(np.searchsorted(np.cumsum(widths), budget // max(rows - lo, 1), "right")))
        budget = min(2 * budget, PAIR_CHUNK_ENTRIES)
        if rows == lo:
            break  # no item of block a reaches the farthest remaining column
        taken, cand = cand[:take], cand[take:]
        cols = (taken[:, None] * size + np.arange(size))[cols_mask[:take]]
        if not cols.size:
            continue
        block = squared[lo:rows, None] + squared[None, cols] - 2.0 * (C[:, lo:rows].T @ C[:, cols])
        if a in taken:  # pairs within block a (its columns are consecutive): i < j only
            at = int(np.argmax(taken == a))
            start = int(widths[:at].sum())
            own = block[:, start : start + int(widths[at])]
            own[cols[start : start + own.shape[1]][None, :] <= np.arange(lo, rows)[:, None]] = -np.inf
        scan.add(block, lo, cols)
    return budget


def top_pairs(V: np.ndarray, k: int = 0, floor: float = -np.inf) -> tuple[float, np.ndarray]:
    """The farthest pairs of columns of V: max_{i<j} ||v_i - v_j||^2 and the top ``k`` pairs above ``floor``.

    V is d x n; the pairs are rows (i, j), i < j, largest squared distance first. Exact, without scanning all
    n(n-1)/2 pairs. The items, centred, are cut into blocks of PAIR_BLOCK items, and two bounds skip the pairs
    that cannot beat the largest distance found so far and cannot enter the requested top-k (above ``floor`` and
    the k-th value kept so far):

    * block centres: a pair of blocks a, b is at most ||c_a - c_b|| + r_a + r_b apart (centres c, radii r);
      it prunes items spread along a curve or a surface with similar norms (Fiez et al.'s many arms, a sphere);
    * norms: ||v_i - v_j|| <= ||v_i|| + ||v_j|| (about the centroid), per block pair and per item (each block
      is sorted by decreasing norm, so the items that may still pair up are a prefix of it); it prunes when
      only a few large-norm items pair up, as near an optimal design.

    A first pair (the item farthest from the centroid, and the item farthest from it) gives a first cutoff.
    The blocks are consecutive items by decreasing norm, or along the principal axis when the norm blocks
    leave more than PARTITION_PAIRS n pairs at that cutoff and the axis blocks leave fewer. The blocks with
    the largest bounds are scanned first, in slices that grow up to PAIR_CHUNK_ENTRIES pair values.

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
    C = V - V.mean(axis=1, keepdims=True)  # distances do not move; norms about the centroid bound them tighter
    norms = np.sqrt(np.einsum("ij,ij->j", C, C))
    i0, j0, best = _first_pair(C, norms)
    size = max(PAIR_BLOCK, -(-n // MAX_PAIR_BLOCKS))
    order, bounds, C, padded = _blocks(C, norms, best, size)
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)
    i0, j0 = int(position[i0]), int(position[j0])
    norms = norms[order]
    squared = norms**2
    # rounding of the computed distances, at most (2 max norm)^2
    scan = _PairScan(n, k, floor, (i0, j0), best, margin=4e-12 * squared[i0])
    row_reach = bounds.max(axis=1)
    budget = PAIR_CHUNK_ENTRIES // 32  # pair values of the next block: small first, while the cutoff is low
    for a in np.argsort(-row_reach, kind="stable"):
        if row_reach[a] <= scan.reach():
            break  # the rows are taken by decreasing bound: the later ones are bounded too
        budget = _scan_row(scan, a, budget, bounds, padded, C, norms, squared)
    if scan.values.size == 0:
        return scan.best, np.empty((0, 2), dtype=np.int64)
    ranked = np.argsort(-scan.values, kind="stable")[:k]
    pairs = np.sort(order[scan.pairs[ranked]], axis=1)  # back to the caller's indices, i < j
    return scan.best, pairs


def max_pair_variance(A: np.ndarray, Z: np.ndarray, *, rcond: float = 1e-12) -> float:
    """The largest variance of a pairwise difference: max_{i<j} (z_i - z_j)^T A^+ (z_i - z_j).

    A is a PSD information matrix (A^+ its pseudo-inverse); the value is inf when some difference has a component
    in the null space of A (it cannot be estimated). Exact over all n (n - 1) / 2 pairs by :func:`top_pairs` on the
    whitened items, without listing them.

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
