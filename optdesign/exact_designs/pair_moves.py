"""Two runs moved at once: the move out of a local optimum of the one-run exchange.

At a design where no single run can be moved to improve the criterion, two moves (i1 -> j1, i2 -> j2) together may
still improve it: each alone loses a little, together they gain. The pair's change of M is M + U C U^T with
U = [x_j1, x_i1, x_j2, x_i2] and C = diag(1, -1, 1, -1), priced exactly in O(1) by the 4 x 4 determinant lemma and
Woodbury's identity (``optdesign.exact_designs.criteria.ExactCriterion.block_gains``). All K x s one-run moves are
priced at once, the ``PAIR_MOVES`` best of them kept (the least damaging, in the spirit of the K x L restriction of
the KL exchange, Atkinson, Donev & Tobias 2007, §12.6) and every pair among them priced; the best improving pair,
if any, is the next step of the search. Pairs are checked for feasibility: net counts stay >= the fixed runs (0
without any) and <= 1 without replicates.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from .criteria import ExactCriterion

__all__: list[str] = []  # internal: exact_design (optdesign.exact_designs.design) is the public entry point

#: one-run moves (the best by their own gain) among which every pair is priced
PAIR_MOVES = 30
#: C = diag(1, -1, 1, -1): add x_j1, remove x_i1, add x_j2, remove x_i2
SIGNS = np.array([1.0, -1.0, 1.0, -1.0])


class Search(Protocol):
    """What pricing pairs reads of an exchange search (:class:`optdesign.exact_designs.exchange.Exchange`)."""

    X: np.ndarray  # candidates, K x d
    V: np.ndarray  # X M^{-1}
    counts: np.ndarray
    fixed: np.ndarray  # runs that never move (included in counts)
    criterion: ExactCriterion
    replicates: bool


def _feasible(counts: np.ndarray, U: np.ndarray, replicates: bool, fixed: np.ndarray) -> np.ndarray:
    """For each row (j1, i1, j2, i2) of U: whether the counts after both moves stay in range (no fixed run moved)."""
    net = (U[:, :, None] == U[:, None, :]) @ SIGNS  # net change of the count at each of the four candidates
    after = counts[U] + net
    ok: np.ndarray = np.all(after >= fixed[U], axis=1)
    return ok if replicates else ok & np.all(after <= 1, axis=1)


def pair_gains(search: Search, points: np.ndarray, table: np.ndarray, moves: int = PAIR_MOVES
               ) -> tuple[np.ndarray, np.ndarray]:
    """Every feasible pair among the ``moves`` best one-run moves of ``table`` (K x s gains of moving a run from
    points[c] to j, :meth:`optdesign.exact_designs.exchange.Exchange.move_gains`): (P x 4 candidates (j1, i1, j2,
    i2), the P loss decreases of making both moves)."""
    flat = table.ravel()
    finite = np.flatnonzero(np.isfinite(flat))
    if finite.size > moves:
        finite = finite[np.argpartition(-flat[finite], moves - 1)[:moves]]
    top = np.sort(finite)  # the same pairs in the same order, whatever the partition did
    j, column = np.divmod(top, points.size)
    first, second = np.triu_indices(top.size, 1)
    U = np.column_stack([j[first], points[column[first]], j[second], points[column[second]]]).astype(np.int64)
    U = U[_feasible(search.counts, U, search.replicates, search.fixed)]
    if U.shape[0] == 0:
        return U, np.zeros(0)
    involved, index = np.unique(U, return_inverse=True)
    index = index.reshape(U.shape)
    H = search.V[involved] @ search.X[involved].T  # x_p^T M^{-1} x_q
    S = H[index[:, :, None], index[:, None, :]] + np.diag(SIGNS)  # C^{-1} = C
    cross = search.criterion.cross(search.V, involved)
    Q = None if cross is None else cross[index[:, :, None], index[:, None, :]]
    return U, search.criterion.block_gains(S, Q)


def best_pair(search: Search, points: np.ndarray, table: np.ndarray, min_gain: float,
              moves: int = PAIR_MOVES) -> np.ndarray | None:
    """The best pair of :func:`pair_gains`, its candidates (j1, i1, j2, i2); None when no pair lowers the loss by
    more than ``min_gain``."""
    U, gains = pair_gains(search, points, table, moves)
    if gains.size == 0:
        return None
    best = int(np.argmax(gains))
    return U[best] if gains[best] > min_gain else None
