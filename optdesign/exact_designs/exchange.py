"""The exchange: move one run at a time from a design point to the candidate that improves the criterion most.

Fedorov's exchange (Fedorov 1972, ch. 3; Atkinson, Donev & Tobias 2007, §12.5): every step prices moving one run
from each design point i to each candidate j at once (:mod:`optdesign.exact_designs.criteria`: the K x s table of gains
from two products V X_S^T, O(K s d)) and makes the best move while it improves the loss. Above ``TABLE_ENTRIES``
the single moves go point by point instead (each design point, smallest variance first, moves its runs to their
best candidates, O(K d) a point: Cook & Nachtsheim 1980's modified Fedorov exchange), which needs fewer
products per move; the whole table is then built only where a pass moves nothing. When no single move
improves, the design is a local optimum over all (i, j), as in Fedorov's original algorithm; the search then looks
for two runs to move at once (:mod:`optdesign.exact_designs.pair_moves`), makes the best pair when it improves the loss
and goes on with single moves, and ends when there is none. After a move V = X M^{-1} and h are updated by two rank-one
Sherman–Morrison steps (add x_j, then remove x_i: M stays nonsingular in between), O(K d) each; a fresh Cholesky factor
of M is taken every ``REFRESH_MOVES`` moves and after a pair, so rounding does not accumulate. With ``replicates=False``
a run only moves to a candidate without one. Fixed runs (``fixed``: runs already made or forced,
:mod:`optdesign.exact_designs.augment`) are part of the counts, so of M = M_fixed + sum of the new runs' x x^T, and
never move: only a candidate with more runs than fixed ones is a design point a run can leave.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, blas, cho_solve, cholesky

from .criteria import ExactCriterion
from .pair_moves import PAIR_MOVES, best_pair

__all__: list[str] = []  # internal: exact_design (optdesign.exact_designs.design) is the public entry point

#: a move must lower the loss by this much (relative to 1 + |loss|) to be made, so the search cannot cycle
MIN_GAIN = 1e-10
#: moves (a pair counts as one) before the search stops, whether or not it has reached a local optimum
MAX_STEPS = 100_000
#: single moves between two fresh factorisations of M
REFRESH_MOVES = 10
#: above this many entries (candidates x design points) single moves go point by point, not over the whole table
TABLE_ENTRIES = 20_000


class Exchange:
    """One exchange search from given counts (nonsingular information matrix), for one criterion."""

    def __init__(self, X: np.ndarray, counts: np.ndarray, criterion: ExactCriterion, replicates: bool,
                 pairs: bool = True, pair_moves: int = PAIR_MOVES, fixed: np.ndarray | None = None):
        self.X = X
        self.counts = counts.astype(np.int64).copy()
        #: runs that never move (included in ``counts``)
        self.fixed = np.zeros_like(self.counts) if fixed is None else fixed.astype(np.int64)
        self.criterion = criterion
        self.replicates = replicates
        self.pairs = pairs
        self.pair_moves = pair_moves
        self.moves = 0
        self.refresh()

    def factor(self) -> np.ndarray:
        """Lower Cholesky factor of M = sum_k n_k x_k x_k^T (LinAlgError when M is not positive definite)."""
        rows = np.flatnonzero(self.counts)
        Xs = self.X[rows]
        M = (Xs * self.counts[rows, None]).T @ Xs
        return cholesky((M + M.T) / 2, lower=True, check_finite=False)

    def refresh(self) -> None:
        """Recompute V = X M^{-1}, h, the criterion's per-candidate quantities and the loss from the counts."""
        L = self.factor()
        self.V = np.ascontiguousarray(cho_solve((L, True), self.X.T, check_finite=False).T)  # rank-one updates in place
        self.h = np.einsum("kj,kj->k", self.V, self.X)
        self.extra = self.criterion.per_candidate(self.V)
        self.loss = self.criterion.loss(L)

    def _rank_one(self, k: int, sign: float) -> None:
        """M <- M + sign x_k x_k^T: V <- V - c g u^T with u = M^{-1} x_k, g = X u, c = sign / (1 + sign h_k)."""
        u = self.V[k].copy()
        g = self.V @ self.X[k]
        c = sign / (1.0 + sign * self.h[k])
        self.criterion.update(self.extra, self.V, g, u, c)
        updated = blas.dger(-c, u, g, a=self.V.T, overwrite_a=True)  # V^T <- V^T - c u g^T, in place (BLAS ger)
        if not np.shares_memory(updated, self.V):  # a copy only if V was not C-contiguous
            self.V = np.ascontiguousarray(updated.T)
        self.h -= c * g * g

    def add(self, j: int) -> None:
        """One more run at candidate j."""
        self._rank_one(j, 1.0)
        self.counts[j] += 1

    def move(self, i: int, j: int) -> None:
        """Move one run from candidate i to candidate j."""
        self._rank_one(j, 1.0)
        self._rank_one(i, -1.0)
        self.counts[i] -= 1
        self.counts[j] += 1
        self.moves += 1

    def movable(self) -> np.ndarray:
        """The design points with a run that may move (more runs than fixed ones)."""
        return np.flatnonzero(self.counts > self.fixed)

    def move_gains(self, points: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(design points i, the K x s table of loss decreases of moving one run from each i to each candidate j);
        -inf where the move is not allowed (j = i, a singular M, or j already used without replicates). ``points``:
        some design points only (default: all with a run that may move)."""
        points = self.movable() if points is None else points
        table = self.criterion.gains(self.X, self.V, self.h, self.extra, points)
        table[points, np.arange(points.size)] = -np.inf
        if not self.replicates:
            table[self.counts > 0, :] = -np.inf
        return points, table

    def min_gain(self) -> float:
        """The smallest loss decrease worth a move."""
        return MIN_GAIN * (1.0 + abs(self.loss))

    def one_pass(self) -> bool:
        """Each design point in turn (smallest variance first) moves its runs to their best candidates while that
        improves the loss; True when some run moved. The single moves of large tables (``TABLE_ENTRIES``)."""
        moved = False
        points = self.movable()
        for i in points[np.argsort(self.h[points], kind="stable")]:
            while self.counts[i] > self.fixed[i]:
                gains = self.move_gains(np.array([i]))[1][:, 0]
                j = int(np.argmax(gains))
                if gains[j] <= self.min_gain():
                    break
                self.move(int(i), j)
                moved = True
        return moved

    def step(self) -> str | None:
        """The best improving single move (a pass of them over a large table), else the best improving pair (module
        docstring): "move", "pass", "pair" or None at a local optimum."""
        large = self.X.shape[0] * self.movable().size > TABLE_ENTRIES
        if large and self.one_pass():
            return "pass"
        points, table = self.move_gains()
        if points.size == 0:  # every run is fixed
            return None
        best = int(np.argmax(table))
        j, column = divmod(best, points.size)
        if table[j, column] > self.min_gain():
            self.move(int(points[column]), j)
            return "move"
        found = best_pair(self, points, table, self.min_gain(), self.pair_moves) if self.pairs else None
        if found is None:
            return None
        np.add.at(self.counts, found, [1, -1, 1, -1])
        self.moves += 2
        return "pair"

    def run(self) -> np.ndarray:
        """Steps until neither a move nor a pair improves the loss (or MAX_STEPS); the counts of the local optimum."""
        kept, since = self.counts.copy(), 0
        for _ in range(MAX_STEPS):
            made = self.step()
            since += 1
            if made == "move" and since < REFRESH_MOVES:
                continue
            try:
                self.refresh()
            except LinAlgError:  # a nearly singular move looked improving through rounding: back to the last factor
                self.counts = kept
                self.refresh()
                break
            if made is None:
                break
            kept, since = self.counts.copy(), 0
        return self.counts


def local_optimum(X: np.ndarray, counts: np.ndarray, criterion: ExactCriterion, replicates: bool,
                  pairs: bool = True, fixed: np.ndarray | None = None) -> tuple[np.ndarray, float, int]:
    """Run the exchange from ``counts`` (``fixed`` runs included, never moved): (counts of the local optimum, its
    loss, moves made); ``pairs=False``: single moves only."""
    search = Exchange(X, counts, criterion, replicates, pairs, fixed=fixed)
    final = search.run()
    return final, search.loss, search.moves
