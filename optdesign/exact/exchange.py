"""The exchange: move one run at a time from a design point to the candidate that improves the criterion most.

Fedorov's exchange (Fedorov 1972, ch. 3; in the form of Cook & Nachtsheim 1980, "modified Fedorov"): each pass
visits the design points i in order of increasing variance h_i, evaluates moving one of their runs to every
candidate j at once (:mod:`optdesign.exact.criteria`: O(1) a pair after two products V x_i, O(K d) for all j) and
makes the best move while it improves the loss. A pass that moves nothing ends the search: no single run can then
be moved to improve the design (a local optimum over all pairs, as in Fedorov's original algorithm). After a move
V = X M^{-1} and h are updated by two rank-one Sherman–Morrison steps (add x_j, then remove x_i: M stays
nonsingular in between), O(K d) each; every pass starts from a fresh Cholesky factor of M, so rounding does not
accumulate. With ``replicates=False`` a run only moves to a candidate without one.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, cho_solve, cholesky

from .criteria import ExactCriterion

__all__: list[str] = []  # internal: exact_design (optdesign.exact.design) is the public entry point

#: a move must lower the loss by this much (relative to 1 + |loss|) to be made, so the search cannot cycle
MIN_GAIN = 1e-10
#: passes over the design points before the search stops (each pass that moves nothing ends it earlier)
MAX_PASSES = 1000


class Exchange:
    """One exchange search from given counts (nonsingular information matrix), for one criterion."""

    def __init__(self, X: np.ndarray, counts: np.ndarray, criterion: ExactCriterion, replicates: bool):
        self.X = X
        self.counts = counts.astype(np.int64).copy()
        self.criterion = criterion
        self.replicates = replicates
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
        self.V = cho_solve((L, True), self.X.T, check_finite=False).T
        self.h = np.einsum("kj,kj->k", self.V, self.X)
        self.extra = self.criterion.per_candidate(self.V)
        self.loss = self.criterion.loss(L)

    def _rank_one(self, k: int, sign: float) -> None:
        """M <- M + sign x_k x_k^T: V <- V - c g u^T with u = M^{-1} x_k, g = X u, c = sign / (1 + sign h_k)."""
        u = self.V[k].copy()
        g = self.V @ self.X[k]
        c = sign / (1.0 + sign * self.h[k])
        self.criterion.update(self.extra, self.V, g, u, c)
        self.V -= c * np.outer(g, u)
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

    def best_move(self, i: int) -> tuple[int, float]:
        """The candidate j whose move from i gains most, and the gain (loss decrease)."""
        gains = self.criterion.gains(self.V, self.h, self.extra, i, self.X[i])
        if not self.replicates:
            gains[self.counts > 0] = -np.inf
        j = int(np.argmax(gains))
        return j, float(gains[j])

    def one_pass(self) -> bool:
        """Visit every design point once (smallest variance first); True when some run moved."""
        moved = False
        points = np.flatnonzero(self.counts)
        for i in points[np.argsort(self.h[points], kind="stable")]:
            while self.counts[i] > 0:
                j, gain = self.best_move(int(i))
                if gain <= MIN_GAIN * (1.0 + abs(self.loss)):
                    break
                self.move(int(i), j)
                moved = True
        return moved

    def run(self) -> np.ndarray:
        """Passes until none moves a run (or MAX_PASSES); returns the counts of the local optimum."""
        for _ in range(MAX_PASSES):
            before = self.counts.copy()
            if not self.one_pass():
                break
            try:
                self.refresh()
            except LinAlgError:  # a nearly singular move looked improving through rounding: keep the pass before
                self.counts = before
                self.refresh()
                break
        return self.counts


def local_optimum(X: np.ndarray, counts: np.ndarray, criterion: ExactCriterion, replicates: bool
                  ) -> tuple[np.ndarray, float, int]:
    """Run the exchange from ``counts``: (counts of the local optimum, its loss, moves made)."""
    search = Exchange(X, counts, criterion, replicates)
    final = search.run()
    return final, search.loss, search.moves
