"""Two runs moved at once in the N-run pseudo-Bayesian exchange: the step out of a local optimum of single moves.

Moving one run from x_i1 to x_j1 and one from x_i2 to x_j2 changes every M_s by U C U^T, with U the linearised
rows [x~_j1, x~_i1, x~_j2, x~_i2] (x~ = sqrt(nu_s) x) and C = diag(1, -1, 1, -1), det C = 1. With
S_s = C + U^T M_s^{-1} U (4 x 4), the matrix determinant lemma and Woodbury's identity give

    det M_s' / det M_s = det S_s,    tr(B_s M_s'^{-1}) = tr(B_s M_s^{-1}) - tr(S_s^{-1} U^T M_s^{-1} B_s M_s^{-1} U),

so a pair's gain is the prior mean of log det S_s (D) or of tr(S_s^{-1} Q_s) (A, I), from the Gram matrices of the
whitened rows L_s^{-1} x~ (and C_s^T M_s^{-1} x~, B_s = C_s C_s^T) of the few candidates the pairs involve, batched
over the pairs and the draws (as :mod:`optdesign.exact_designs.pair_moves` does for one information matrix). The pairs
are combinations of the best ``PAIRS_FROM`` single moves, kept when the counts stay whole (and at most 1 without
replicates) and something moves.
"""

from __future__ import annotations

import numpy as np

from ..exact_designs.criteria import MIN_DET_RATIO
from .prior import BLOCK_ENTRIES

__all__ = ["PAIRS_FROM", "SIGNS", "pair_candidates", "pair_gains"]

#: the best single moves whose pairs are priced
PAIRS_FROM = 30
#: the signs of the columns of U: a run added at j1, taken from i1, added at j2, taken from i2
SIGNS = np.array([1, -1, 1, -1])


def pair_candidates(counts: np.ndarray, sources: np.ndarray, targets: np.ndarray, replicates: bool) -> np.ndarray:
    """The pairs of single moves (sources[u] -> targets[u], sources[v] -> targets[v]), u < v, as rows
    [j1, i1, j2, i2] of candidate indices, that leave whole counts (at most 1 without replicates) and move a run.

    Parameters
    ----------
    counts : numpy.ndarray
        Runs per candidate.
    sources, targets : numpy.ndarray
        The single moves' candidates, a run leaving ``sources[u]`` for ``targets[u]``.
    replicates : bool
        Whether a candidate may hold several runs.

    Returns
    -------
    numpy.ndarray, shape (P, 4)
        The pairs.
    """
    u, v = np.triu_indices(sources.size, k=1)
    combos = np.column_stack([targets[u], sources[u], targets[v], sources[v]])
    same = combos[:, :, None] == combos[:, None, :]
    net = (same * SIGNS[None, None, :]).sum(axis=2)  # the change of the count at each of the four candidates
    after = counts[combos] + net
    keep = np.all(after >= 0, axis=1) & np.any(net != 0, axis=1)
    if not replicates:
        keep &= np.all(after <= 1, axis=1)
    out: np.ndarray = combos[keep]
    return out


def _gram(vectors: np.ndarray, nu: np.ndarray) -> np.ndarray:
    """(S, n, n): the inner products of the linearised whitened rows sqrt(nu_s) v (rows n x p x S) in every draw."""
    scaled = vectors * np.sqrt(nu)[:, None, :]
    out: np.ndarray = np.einsum("aps,bps->sab", scaled, scaled)
    return out


def det_and_adjugate(m: np.ndarray, adjugate: bool) -> tuple[np.ndarray, dict[tuple[int, int], np.ndarray]]:
    """det m and (if asked) the upper triangle of adj m = det(m) m^{-1} of stacked symmetric 4 x 4 matrices, by
    Laplace's expansion in the 2 x 2 minors of rows (0, 1) and of rows (2, 3): elementwise over the stack, which
    is much faster than a batched LAPACK call per 4 x 4 matrix.

    Parameters
    ----------
    m : numpy.ndarray, shape (4, 4, ...)
        The matrices, entry (a, b) of all of them in ``m[a, b]``.
    adjugate : bool
        Whether the adjugate is wanted (A, I) or only the determinant (D).

    Returns
    -------
    tuple
        det (shape ``m.shape[2:]``) and {(a, b): adj_ab} for a <= b (empty without ``adjugate``).
    """
    top = {(c, d): m[0, c] * m[1, d] - m[0, d] * m[1, c] for c in range(4) for d in range(c + 1, 4)}
    low = {(c, d): m[2, c] * m[3, d] - m[2, d] * m[3, c] for c in range(4) for d in range(c + 1, 4)}
    det = (top[0, 1] * low[2, 3] - top[0, 2] * low[1, 3] + top[0, 3] * low[1, 2]
           + top[1, 2] * low[0, 3] - top[1, 3] * low[0, 2] + top[2, 3] * low[0, 1])
    if not adjugate:
        return det, {}
    adj = {}
    for a in range(4):  # adj_ab = (-1)^(a+b) det(m without row b and column a); m symmetric, so adj is too
        for b in range(a, 4):
            adj[a, b] = (-1.0) ** (a + b) * _minor3(m, [r for r in range(4) if r != b], [c for c in range(4) if c != a])
    return det, adj


def _minor3(m: np.ndarray, rows: list[int], cols: list[int]) -> np.ndarray:
    """The 3 x 3 determinant of m on the given rows and columns, elementwise over the stack."""
    (r0, r1, r2), (c0, c1, c2) = rows, cols
    out: np.ndarray = (m[r0, c0] * (m[r1, c1] * m[r2, c2] - m[r1, c2] * m[r2, c1])
                       - m[r0, c1] * (m[r1, c0] * m[r2, c2] - m[r1, c2] * m[r2, c0])
                       + m[r0, c2] * (m[r1, c0] * m[r2, c1] - m[r1, c1] * m[r2, c0]))
    return out


def pair_gains(y: np.ndarray, nu: np.ndarray, z: np.ndarray | None, prior: np.ndarray,
               pairs: np.ndarray) -> np.ndarray:
    """The gains (loss decreases) of the pairs, -inf where some M_s' is (nearly) singular (module doc).

    Parameters
    ----------
    y : numpy.ndarray, shape (n, p, S)
        L_s^{-1} x of the candidates the pairs involve.
    nu : numpy.ndarray, shape (n, S)
        Their GLM weights.
    z : numpy.ndarray or None
        C_s^T M_s^{-1} x of the same candidates (A, I), None for D.
    prior : numpy.ndarray, shape (S,)
        The prior weights.
    pairs : numpy.ndarray, shape (P, 4)
        Rows [j1, i1, j2, i2] of indices into the n candidates.

    Returns
    -------
    numpy.ndarray, shape (P,)
        The prior mean of log det S_s (D) or of tr(S_s^{-1} Q_s) (A, I).
    """
    G = _gram(y, nu)
    Q = None if z is None else _gram(z, nu)
    out = np.full(pairs.shape[0], -np.inf)
    step = max(1, BLOCK_ENTRIES // (16 * prior.size))
    for start in range(0, pairs.shape[0], step):
        index = pairs[start:start + step].T  # 4 x P
        block = G[:, index[:, None, :], index[None, :, :]].transpose(1, 2, 0, 3)  # S_s of every pair: 4 x 4 x S x P
        block = block + (np.diag(SIGNS.astype(float)))[:, :, None, None]
        det, adj = det_and_adjugate(block, Q is not None)
        ok = np.all(det > MIN_DET_RATIO, axis=0)
        if not ok.any():
            continue
        if Q is None:
            per_draw = np.log(det[:, ok])
        else:
            Qb = Q[:, index[:, None, :], index[None, :, :]].transpose(1, 2, 0, 3)
            per_draw = sum((1.0 if a == b else 2.0) * adj[a, b][:, ok] * Qb[a, b][:, ok] for a, b in adj) / det[:, ok]
        out[start + np.flatnonzero(ok)] = prior @ per_draw
    return out
