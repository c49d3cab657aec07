"""The exchange of grouped designs: runs moved, runs exchanged between groups, groups given another setting.

A design is the candidate of each run, ``rows`` (N indices into X, in the order of its
:class:`~optdesign.exact.group_structure.GroupStructure`: group after group). Three kinds of move, each priced
exactly (:mod:`optdesign.exact.group_structure`, :mod:`optdesign.exact.block_information`):

* a run moved to another candidate (``run_moves``): every allowed candidate priced at once by the rank-three
  update of M (its own row and its groups' column sums change), O(K p) for the variances x_j^T M^{-1} x_i; the
  allowed candidates are all of them (blocked designs; without replicates the unused ones), or those sharing the
  run's tied settings (designs with hard-to-change factors, :mod:`optdesign.exact.plot_layout`: its easy-to-change
  factors);
* two runs of different groups exchanged (``swap_move``, blocked designs): X^T X stays, two group sums change, a
  rank-three update priced for every pair of runs at once;
* a group of grouping l given another setting of the kind of factor it ties (``reset_moves``: a whole plot, a
  sub-plot, a row or a column): its n runs change, M' = M + U C U^T of rank 3n, priced for every setting at once
  by the determinant lemma and Woodbury's identity on 3n x 3n matrices when 3n < p, else by rebuilding each
  setting's M' (O(n p^2 + p^3)), whichever is smaller.

The search passes over the groups of each grouping in turn, then the runs, then the best exchange between groups,
and makes each improving move as it finds it; it stops after a pass that moves nothing. The order is that of the
split-plot coordinate exchange (Jones & Goos 2007, after Meyer & Nachtsheim 1995), whose steps change one factor of
one whole plot or run over a grid of its levels; a step here ranges over a candidate set instead: every setting of
a group's tied kind, every free setting (all those factors at once) of a run. After every move M, its factor,
M^{-1} and X M^{-1} are recomputed from the runs (O(N p^2 + K p^2)), so no rounding accumulates.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from scipy.linalg import LinAlgError, cho_solve, cholesky

from .block_information import SWAP_1, SWAP_2, low_rank_gains
from .criteria import MIN_DET_RATIO, ExactCriterion, LinearCriterion
from .exchange import MIN_GAIN
from .group_structure import GroupStructure
from .plot_layout import Layout

__all__: list[str] = []  # internal: blocked_design and the plot designs are the public entry points

#: passes over the design (groups, runs, exchanges) before the search stops, local optimum or not
MAX_PASSES = 500
#: draws of a start (its runs reshuffled or redrawn) before the start is given up as singular
START_TRIES = 20
#: exchanges between groups are priced when the runs make at most this many pairs (N(N - 1) / 2)
MAX_SWAP_PAIRS = 200_000
#: M counts as singular when its smallest Cholesky pivot squared falls below this fraction of its largest diagonal
SINGULAR_RTOL = 1e-12


class GroupSearch:
    """One exchange search from the runs ``rows`` (nonsingular M) of a grouped design.

    ``layout`` (designs with hard-to-change factors): the candidates' settings per kind of factor, grouping l tying
    kind l, so a run only moves among the candidates sharing its tied settings and each group may take another
    setting of its kind; None: any candidate (without ``replicates``: any unused one), and runs may be exchanged
    between groups (one grouping, diagonal Gamma).
    """

    def __init__(self, X: np.ndarray, rows: np.ndarray, structure: GroupStructure, criterion: ExactCriterion,
                 replicates: bool = True, layout: Layout | None = None):
        self.X = X
        self.rows = rows.astype(np.int64).copy()
        self.structure = structure
        self.Zt = structure.indicator()
        self.gamma = structure.gamma
        self.shrink = np.diag(self.gamma).copy()  # c_g of one grouping (exchanges between groups)
        self.group = structure.members[:, 0]
        self.n_groups = int(self.gamma.shape[0])
        self.criterion = criterion
        self.B = criterion.B if isinstance(criterion, LinearCriterion) else None
        self.replicates = replicates
        self.layout = layout
        self.gammas = np.einsum("gr,gh,hr->r", self.Zt, self.gamma, self.Zt)  # z_r^T Gamma z_r of every run
        # fixed by the structure and the layout, so computed once: the strides and free candidates of the layout,
        # and the pairs of runs in different groups (the exchanges)
        self.strides = () if layout is None else layout.strides
        self.free = 0 if layout is None else layout.free
        first, second = np.triu_indices(self.rows.size if self.swappable() else 0, 1)
        apart = self.group[first] != self.group[second]
        self.pairs = first[apart], second[apart]
        # the runs of every group of each grouping, and the C of their change (fixed by the structure)
        self.resets: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        for level in range(0 if layout is None else layout.tied):
            for g in structure.groups(level).tolist():
                runs = np.flatnonzero(structure.members[:, level] == g)
                self.resets[level, g] = runs, structure.change_matrix(runs)
        self.moves = 0
        self.refresh()

    def refresh(self) -> None:
        """M, its inverse, X M^{-1}, the variances, the group sums and the loss from the runs (LinAlgError: M
        singular)."""
        Xr = self.X[self.rows]
        S = self.Zt @ Xr
        GS = self.gamma @ S
        M = Xr.T @ Xr - S.T @ GS
        M = (M + M.T) / 2
        L = cholesky(M, lower=True, check_finite=False)
        if np.min(np.diag(L)) ** 2 <= SINGULAR_RTOL * np.max(np.diag(M)):
            raise LinAlgError("the information matrix is singular")
        self.M, self.L, self.S, self.GS = M, L, S, GS
        self.A = self.Zt.T @ GS  # a_r = S^T Gamma z_r of every run
        self.Minv = cho_solve((L, True), np.eye(M.shape[0]), check_finite=False)
        self.V = self.X @ self.Minv
        self.h = np.einsum("kj,kj->k", self.V, self.X)
        self.loss = self.criterion.loss(L)
        if self.B is not None:
            self.VB = self.V @ self.B
            self.b = np.einsum("kj,kj->k", self.VB, self.V)

    def min_gain(self) -> float:
        """The smallest loss decrease worth a move."""
        return MIN_GAIN * (1.0 + abs(self.loss))

    def allowed(self, r: int) -> np.ndarray:
        """The candidates run r may move to (module docstring)."""
        if self.layout is not None:
            free = self.free
            block = self.rows[r] // free
            return np.arange(block * free, (block + 1) * free)
        if self.replicates:
            return np.arange(self.X.shape[0])
        used = np.zeros(self.X.shape[0], dtype=bool)
        used[self.rows] = True
        return np.flatnonzero(~used)

    def move_gains(self, r: int, J: np.ndarray) -> np.ndarray:
        """Loss decreases of moving run r to each candidate of J (-inf: singular): U = [x_j, x_i, a_r] and
        C = diag(1, -1, 0) - gamma_r f f^T - f e3^T - e3 f^T, f = (1, -1, 0) (:mod:`~.group_structure`)."""
        i = int(self.rows[r])
        a, c = self.A[r], float(self.gammas[r])
        u, w = self.Minv @ self.X[i], self.Minv @ a
        G = np.empty((J.size, 3, 3))
        G[:, 0, 0] = self.h[J]
        G[:, 0, 1:] = self.V[J] @ np.column_stack([self.X[i], a])  # x_j^T M^{-1} [x_i, a_r], one product
        G[:, 1, 1], G[:, 1, 2], G[:, 2, 2] = self.h[i], float(self.X[i] @ w), float(a @ w)
        Q = None
        if self.B is not None:
            Bu, Bw = self.B @ u, self.B @ w
            Q = np.empty((J.size, 3, 3))
            Q[:, 0, 0], Q[:, 0, 1], Q[:, 0, 2] = self.b[J], self.VB[J] @ u, self.VB[J] @ w
            Q[:, 1, 1], Q[:, 1, 2], Q[:, 2, 2] = float(u @ Bu), float(u @ Bw), float(w @ Bw)
            Q = _symmetric(Q)
        C = np.array([[1.0 - c, c, -1.0], [c, -1.0 - c, 1.0], [-1.0, 1.0, 0.0]])
        gains = low_rank_gains(self.criterion, C, _symmetric(G), Q)
        gains[J == i] = -np.inf
        return gains

    def run_moves(self) -> bool:
        """Each run in turn moves to its best allowed candidate when that improves the loss; True if one moved."""
        moved = False
        for r in range(self.rows.size):
            J = self.allowed(r)
            if J.size <= 1 and self.layout is not None:
                continue  # no free factor: the run's candidate is its groups' settings
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
        first, second = self.pairs
        keep = self.rows[first] != self.rows[second]
        first, second = first[keep], second[keep]
        R = np.vstack([self.S, self.X[self.rows]])  # the group sums, then the runs
        index = (self.group[first], self.group[second], self.n_groups + first, self.n_groups + second)
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

    def reset_gains(self, level: int, g: int) -> np.ndarray:
        """Loss decreases of giving group g of grouping ``level`` each setting of the kind it ties (-inf: singular,
        or its current setting).

        Parameters
        ----------
        level : int
            The grouping.
        g : int
            The group (an index into the groups of all groupings).

        Returns
        -------
        numpy.ndarray
            One gain per setting.
        """
        assert self.layout is not None
        runs, C = self.resets[level, g]
        codes = self.rows[runs]
        stride, radix = self.strides[level], self.layout.radices[level]
        current = (codes // stride) % radix  # Layout.setting with the strides computed once
        settings = np.arange(radix)
        new = codes[None, :] + (settings[:, None] - current[None, :]) * stride
        P, n, p = settings.size, runs.size, self.X.shape[1]
        U = np.concatenate([self.X[new], np.broadcast_to(self.X[codes], (P, n, p)),
                            np.broadcast_to(self.A[runs], (P, n, p))], axis=1)  # U^T of each setting, P x 3n x p
        gains = self._change_gains(U, C)
        gains[int(current[0])] = -np.inf
        return gains

    def _change_gains(self, U: np.ndarray, C: np.ndarray) -> np.ndarray:
        """Loss decreases of the changes M + U_k^T C U_k (U stacked as rows, P x r x p): by the r x r determinant
        lemma and Woodbury's identity when r < p, else by each M' rebuilt."""
        r, p = C.shape[0], self.M.shape[0]
        if r < p:
            W = U @ self.Minv
            G = W @ U.transpose(0, 2, 1)
            Q = None if self.B is None else (W @ self.B) @ W.transpose(0, 2, 1)
            return low_rank_gains(self.criterion, C, (G + G.transpose(0, 2, 1)) / 2,
                                  None if Q is None else (Q + Q.transpose(0, 2, 1)) / 2)
        Ms = self.M + U.transpose(0, 2, 1) @ C @ U
        Ms = (Ms + Ms.transpose(0, 2, 1)) / 2
        sign, logdet = np.linalg.slogdet(Ms)
        log_ratio = logdet - 2.0 * np.sum(np.log(np.diag(self.L)))
        ok = (sign > 0) & (log_ratio > np.log(MIN_DET_RATIO))
        gains = np.full(Ms.shape[0], -np.inf)
        if self.B is None:
            gains[ok] = log_ratio[ok]
        else:
            losses = np.trace(np.linalg.solve(Ms[ok], np.broadcast_to(self.B, Ms[ok].shape)), axis1=1, axis2=2)
            gains[ok] = self.loss - losses
        return gains

    def reset_moves(self) -> bool:
        """Each group of each grouping in turn takes its best setting when that improves the loss; True if one
        moved."""
        assert self.layout is not None
        moved = False
        for level in range(self.layout.tied):
            stride, radix = self.strides[level], self.layout.radices[level]
            for g in self.structure.groups(level).tolist():
                gains = self.reset_gains(level, g)
                best = int(np.argmax(gains))
                if gains[best] > self.min_gain():
                    runs = self.resets[level, g][0]
                    rows = self.rows.copy()
                    rows[runs] += (best - (rows[runs] // stride) % radix) * stride
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
        return self.layout is None and self.n_groups > 1 and self.rows.size * (self.rows.size - 1) <= 2 * MAX_SWAP_PAIRS

    def run(self) -> np.ndarray:
        """Passes (groups, runs, an exchange between groups) until one moves nothing; the runs reached."""
        rows: np.ndarray
        for _ in range(MAX_PASSES):
            moved = self.reset_moves() if self.layout is not None else False
            moved = self.run_moves() or moved
            if self.swappable():
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
    """The stacked matrices A (P x 3 x 3) with their lower triangles copied from the upper ones."""
    A[:, 1, 0], A[:, 2, 0], A[:, 2, 1] = A[:, 0, 1], A[:, 0, 2], A[:, 1, 2]
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
    members = best.structure.members
    # the runs of each cell (the same group in every grouping) by candidate: M does not change
    order = np.lexsort((best.rows, *members.T[::-1]))
    return Searched(best.rows[order], losses, moves)
