"""The exchange of grouped designs: runs moved within their group, runs exchanged between groups, whole plots reset.

A design is the candidate of each run, ``rows`` (N indices into X, group after group). Three kinds of move, each
priced exactly (:mod:`optdesign.exact.block_information`):

* a run moved to another candidate (``run_moves``): every allowed candidate priced at once by the rank-three
  update of M (its own row and its group's column sums change), O(K p) for the variances x_j^T M^{-1} x_i; the
  allowed candidates are all of them (blocked designs; without replicates the unused ones), or those sharing the
  run's whole-plot setting (split-plot designs: the easy-to-change factors of one run);
* two runs of different groups exchanged (``swap_move``, blocked designs): X^T X stays, two group sums change, a
  rank-three update priced for every pair of runs at once;
* a whole plot given another setting of the hard-to-change factors (``plot_moves``, split-plot designs): every run
  of the plot changes, so each setting's M is rebuilt (its p x p determinant or inverse, O(n_g p^2 + p^3)).

The search passes over the whole plots, then the runs, then the best exchange between groups, and makes each
improving move as it finds it; it stops after a pass that moves nothing. The order is that of the split-plot
coordinate exchange (Jones & Goos 2007, after Meyer & Nachtsheim 1995), whose steps change one factor of one whole
plot or run over a grid of its levels; a step here ranges over a candidate set instead: every hard-to-change
setting of a whole plot, every easy-to-change setting (all those factors at once) of a run. After every move M,
its factor, M^{-1} and X M^{-1} are recomputed from the runs (O(N p^2 + K p^2)), so no rounding accumulates.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from scipy.linalg import LinAlgError, cho_solve, cholesky

from .block_information import MOVE, MOVE_C, SWAP_1, SWAP_2, group_sums, information, low_rank_gains
from .criteria import MIN_DET_RATIO, ExactCriterion, LinearCriterion
from .exchange import MIN_GAIN

__all__: list[str] = []  # internal: blocked_design and split_plot_design are the public entry points

#: passes over the design (whole plots, runs, exchanges) before the search stops, local optimum or not
MAX_PASSES = 500
#: draws of a start (its runs reshuffled or redrawn) before the start is given up as singular
START_TRIES = 20
#: exchanges between groups are priced when the runs make at most this many pairs (N(N - 1) / 2)
MAX_SWAP_PAIRS = 200_000
#: M counts as singular when its smallest Cholesky pivot squared falls below this fraction of its largest diagonal
SINGULAR_RTOL = 1e-12


class GroupSearch:
    """One exchange search from the runs ``rows`` (nonsingular M) of a grouped design.

    ``plots`` (split-plot designs) is the number of sub-plot candidates Ks: candidate a Ks + t is whole-plot setting
    a with sub-plot setting t, and a run only moves within its plot's setting; None: any candidate (without
    ``replicates``: any unused one), and runs may be exchanged between groups.
    """

    def __init__(self, X: np.ndarray, rows: np.ndarray, sizes: np.ndarray, shrink: np.ndarray,
                 criterion: ExactCriterion, replicates: bool = True, plots: int | None = None):
        self.X = X
        self.rows = rows.astype(np.int64).copy()
        self.sizes = sizes
        self.shrink = shrink
        self.group = np.repeat(np.arange(sizes.size), sizes)
        self.criterion = criterion
        self.B = criterion.B if isinstance(criterion, LinearCriterion) else None
        self.replicates = replicates
        self.plots = plots
        self.moves = 0
        self.refresh()

    def refresh(self) -> None:
        """M, its inverse, X M^{-1}, the variances and the loss from the runs (LinAlgError: M singular)."""
        M = information(self.X, self.rows, self.sizes, self.shrink)
        L = cholesky(M, lower=True, check_finite=False)
        if np.min(np.diag(L)) ** 2 <= SINGULAR_RTOL * np.max(np.diag(M)):
            raise LinAlgError("the information matrix is singular")
        self.M, self.L = M, L
        self.Minv = cho_solve((L, True), np.eye(M.shape[0]), check_finite=False)
        self.V = self.X @ self.Minv
        self.h = np.einsum("kj,kj->k", self.V, self.X)
        self.S = group_sums(self.X, self.rows, self.sizes)
        self.loss = self.criterion.loss(L)
        if self.B is not None:
            self.VB = self.V @ self.B
            self.b = np.einsum("kj,kj->k", self.VB, self.V)

    def min_gain(self) -> float:
        """The smallest loss decrease worth a move."""
        return MIN_GAIN * (1.0 + abs(self.loss))

    def allowed(self, r: int) -> np.ndarray:
        """The candidates run r may move to (module docstring)."""
        if self.plots is not None:
            level = self.rows[r] // self.plots
            return np.arange(level * self.plots, (level + 1) * self.plots)
        if self.replicates:
            return np.arange(self.X.shape[0])
        used = np.zeros(self.X.shape[0], dtype=bool)
        used[self.rows] = True
        return np.flatnonzero(~used)

    def move_gains(self, r: int, J: np.ndarray) -> np.ndarray:
        """Loss decreases of moving run r to each candidate of J (-inf: singular)."""
        i, g = int(self.rows[r]), int(self.group[r])
        s = self.S[g]
        u, w = self.Minv @ self.X[i], self.Minv @ s
        G = np.empty((J.size, 3, 3))
        G[:, 0, 0], G[:, 0, 1], G[:, 0, 2] = self.h[J], self.V[J] @ self.X[i], self.V[J] @ s
        G[:, 1, 1], G[:, 1, 2], G[:, 2, 2] = self.h[i], float(self.X[i] @ w), float(s @ w)
        Q = None
        if self.B is not None:
            Bu, Bw = self.B @ u, self.B @ w
            Q = np.empty((J.size, 3, 3))
            Q[:, 0, 0], Q[:, 0, 1], Q[:, 0, 2] = self.b[J], self.VB[J] @ u, self.VB[J] @ w
            Q[:, 1, 1], Q[:, 1, 2], Q[:, 2, 2] = float(u @ Bu), float(u @ Bw), float(w @ Bw)
            Q = _symmetric(Q)
        gains = low_rank_gains(self.criterion, MOVE - self.shrink[g] * MOVE_C, _symmetric(G), Q)
        gains[J == i] = -np.inf
        return gains

    def run_moves(self) -> bool:
        """Each run in turn moves to its best allowed candidate when that improves the loss; True if one moved."""
        moved = False
        for r in range(self.rows.size):
            J = self.allowed(r)
            if J.size == 0:
                continue
            gains = self.move_gains(r, J)
            best = int(np.argmax(gains))
            if gains[best] > self.min_gain():
                rows = self.rows.copy()
                rows[r] = J[best]
                moved = self._make(rows) or moved
        return moved

    def swap_gains(self) -> tuple[np.ndarray, np.ndarray]:
        """(P x 2 pairs of runs in different groups at different candidates, the loss decrease of exchanging each)."""
        first, second = np.triu_indices(self.rows.size, 1)
        keep = (self.group[first] != self.group[second]) & (self.rows[first] != self.rows[second])
        first, second = first[keep], second[keep]
        R = np.vstack([self.S, self.X[self.rows]])  # the group sums, then the runs
        index = (self.group[first], self.group[second], self.sizes.size + first, self.sizes.size + second)
        G = _swap_stack(R @ self.Minv @ R.T, *index)
        Q = None if self.B is None else _swap_stack(R @ (self.Minv @ self.B @ self.Minv) @ R.T, *index)
        C = -(self.shrink[index[0], None, None] * SWAP_1 + self.shrink[index[1], None, None] * SWAP_2)
        return np.column_stack([first, second]), low_rank_gains(self.criterion, C, G, Q)

    def swap_move(self) -> bool:
        """The best exchange of two runs between groups, made when it improves the loss; True if made."""
        pairs, gains = self.swap_gains()
        if gains.size == 0:
            return False
        best = int(np.argmax(gains))
        if gains[best] <= self.min_gain():
            return False
        rows = self.rows.copy()
        rows[pairs[best]] = rows[pairs[best][::-1]]
        return self._make(rows)

    def plot_losses(self, g: int) -> np.ndarray:
        """The loss with whole plot g at each whole-plot setting (inf where M would be singular)."""
        assert self.plots is not None
        runs = np.flatnonzero(self.group == g)
        sub = self.rows[runs] % self.plots
        settings = self.X.shape[0] // self.plots
        Xg = self.X[np.arange(settings)[:, None] * self.plots + sub[None, :]]  # settings x n_g x p
        s = Xg.sum(axis=1)
        old = self.X[self.rows[runs]]
        base = self.M - old.T @ old + self.shrink[g] * np.outer(self.S[g], self.S[g])
        Ms = base + np.einsum("ani,anj->aij", Xg, Xg) - self.shrink[g] * np.einsum("ai,aj->aij", s, s)
        sign, logdet = np.linalg.slogdet(Ms)
        ok = (sign > 0) & (logdet - 2.0 * np.sum(np.log(np.diag(self.L))) > np.log(MIN_DET_RATIO))
        losses = np.full(settings, np.inf)
        if self.B is None:
            losses[ok] = -logdet[ok]
        else:
            losses[ok] = np.trace(np.linalg.solve(Ms[ok], np.broadcast_to(self.B, Ms[ok].shape)), axis1=1, axis2=2)
        return losses

    def plot_moves(self) -> bool:
        """Each whole plot in turn takes its best whole-plot setting when that improves the loss; True if one moved."""
        assert self.plots is not None
        Ks, moved = self.plots, False
        for g in range(self.sizes.size):
            losses = self.plot_losses(g)
            best = int(np.argmin(losses))
            if losses[best] < self.loss - self.min_gain():
                runs = np.flatnonzero(self.group == g)
                rows = self.rows.copy()
                rows[runs] = best * Ks + rows[runs] % Ks
                moved = self._make(rows) or moved
        return moved

    def _make(self, rows: np.ndarray) -> bool:
        """Move to the runs ``rows`` and recompute; back to the former runs (False) if M turns singular."""
        kept, self.rows = self.rows, rows
        try:
            self.refresh()
        except LinAlgError:  # a nearly singular move that looked improving through rounding
            self.rows = kept
            self.refresh()
            return False
        self.moves += 1
        return True

    def swappable(self) -> bool:
        """Whether exchanges between groups are priced: blocked designs of several groups, at most MAX_SWAP_PAIRS
        pairs of runs."""
        return self.sizes.size > 1 and self.rows.size * (self.rows.size - 1) <= 2 * MAX_SWAP_PAIRS

    def run(self) -> np.ndarray:
        """Passes (whole plots, runs, an exchange between groups) until one moves nothing; the runs reached."""
        rows: np.ndarray
        for _ in range(MAX_PASSES):
            moved = self.plot_moves() if self.plots is not None else False
            moved = self.run_moves() or moved
            if self.plots is None and self.swappable():
                moved = self.swap_move() or moved
            if not moved:
                break
        rows = self.rows
        return rows


def _swap_stack(H: np.ndarray, g1: np.ndarray, g2: np.ndarray, r1: np.ndarray, r2: np.ndarray) -> np.ndarray:
    """U^T A U (P x 3 x 3) for U = [s_g1, s_g2, x_r2 - x_r1] of each exchange, from H = R^T A R over the stacked group
    sums and runs R (rows ``g`` and ``r`` of H)."""
    out = np.empty((g1.size, 3, 3))
    out[:, 0, 0], out[:, 1, 1], out[:, 0, 1] = H[g1, g1], H[g2, g2], H[g1, g2]
    out[:, 0, 2] = H[g1, r2] - H[g1, r1]
    out[:, 1, 2] = H[g2, r2] - H[g2, r1]
    out[:, 2, 2] = H[r1, r1] + H[r2, r2] - 2.0 * H[r1, r2]
    return _symmetric(out)


def _symmetric(A: np.ndarray) -> np.ndarray:
    """The stacked matrices A with their lower triangles copied from the upper ones."""
    i, j = np.triu_indices(A.shape[-1], 1)
    A[:, j, i] = A[:, i, j]
    return A


class Searched(NamedTuple):
    """The best local optimum over the starts: its runs (sorted within each group), the loss each start reached, the
    moves made over all starts."""

    rows: np.ndarray
    losses: list[float]
    moves: int


def best_of_starts(draw: Callable[[int], np.ndarray], build: Callable[[np.ndarray], GroupSearch], restarts: int,
                   deadline: float) -> Searched:
    """The search from start 0 and ``restarts`` more (none begun after ``deadline``, a perf_counter time): ``draw(k)``
    gives the runs of start k, drawn again up to START_TRIES times while M is singular (such a start is skipped).

    Raises
    ------
    LinAlgError
        No start had a nonsingular information matrix.
    """
    best: GroupSearch | None = None
    losses: list[float] = []
    moves = 0
    for k in range(restarts + 1):
        if k and time.perf_counter() > deadline:
            break
        search = None
        for _ in range(START_TRIES):
            try:
                search = build(draw(k))
                break
            except LinAlgError:
                continue
        if search is None:
            continue
        search.run()
        moves += search.moves
        losses.append(search.loss)
        if best is None or search.loss < best.loss:
            best = search
    if best is None:
        raise LinAlgError("every start was singular")
    group = best.group
    order = np.lexsort((best.rows, group))  # the runs of each group by candidate: M does not change
    return Searched(best.rows[order], losses, moves)
