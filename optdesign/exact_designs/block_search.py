"""The exchange of grouped designs: runs moved, runs exchanged between groups, groups given another setting.

A design is the candidate of each run, ``rows`` (N indices into X, in the order of its
:class:`~optdesign.exact_designs.group_structure.GroupStructure`: group after group). Three kinds of move, each priced
exactly (:mod:`optdesign.exact_designs.group_structure`, :mod:`optdesign.exact_designs.block_information`):

* a run moved to another candidate (``GroupSearch.move_gains``): every allowed candidate priced by the
  rank-three update of M (its own row and its groups' column sums change), O(K p) for the variances
  x_j^T M^{-1} x_i; the allowed candidates are all of them (blocked designs; without replicates the unused ones), or
  those sharing the run's tied settings (designs with hard-to-change factors,
  :mod:`optdesign.exact_designs.plot_layout`: its easy-to-change factors);
* two runs of different groups exchanged (``GroupSearch.swap_gains``, blocked designs): X^T X stays, two group
  sums change, a rank-three update priced for every pair of runs;
* a group of grouping l given another setting of the kind of factor it ties (``GroupSearch.reset_gains``: a
  whole plot, a sub-plot, a row or a column): its n runs change, M' = M + U C U^T of rank 3n, priced for every
  setting by the determinant lemma and Woodbury's identity on 3n x 3n matrices when 3n < p, else by rebuilding each
  setting's M' (O(n p^2 + p^3)), whichever is smaller.

The search passes over the groups of each grouping in turn, then the runs, then the best exchange between groups,
and makes each improving move as it finds it; it stops after a pass that moves nothing. The order is that of the
split-plot coordinate exchange (Jones & Goos 2007, after Meyer & Nachtsheim 1995), whose steps change one factor of
one whole plot or run over a grid of its levels; a step here ranges over a candidate set instead: every setting of
a group's tied kind, every free setting (all those factors at once) of a run. After every move M, its factor,
M^{-1} and X M^{-1} are recomputed from the runs (O(N p^2 + K p^2)), so no rounding accumulates.

The pricing and the passes are compiled (:mod:`optdesign.exact_designs.block_kernels`,
:mod:`optdesign.exact_designs.block_passes`, numba, imported on the first search): a search is one compiled call over
arrays that this module sets up once per problem (:class:`~optdesign.exact_designs.block_state.Plan`: everything the
structure, the layout and the criterion fix) and once per start (:class:`~optdesign.exact_designs.block_state.State`).
The starts share the plan (``GroupSearch.restart``).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from types import ModuleType
from typing import NamedTuple

import numpy as np
from scipy.linalg import LinAlgError

from .block_state import State, make_plan, new_state
from .criteria import ExactCriterion
from .exchange import MIN_GAIN
from .group_structure import GroupStructure
from .plot_layout import Layout

__all__: list[str] = []  # internal: blocked_design and the plot designs are the public entry points

#: draws of a start (its runs reshuffled or redrawn) before the start is given up as singular
START_TRIES = 20


def _kernels() -> tuple[ModuleType, ModuleType]:
    """The compiled pricing and passes (numba is imported here, on the first search)."""
    from . import block_kernels, block_passes

    return block_kernels, block_passes


class GroupSearch:
    """One exchange search from the runs ``rows`` (nonsingular M) of a grouped design.

    ``layout`` (designs with hard-to-change factors): the candidates' settings per kind of factor, grouping l tying
    kind l, so a run only moves among the candidates sharing its tied settings and each group may take another
    setting of its kind; None: any candidate (without ``replicates``: any unused one), and runs may be exchanged
    between groups (one grouping, diagonal Gamma).

    Raises
    ------
    LinAlgError
        M of the runs ``rows`` is numerically singular.
    ValueError
        ``rows`` is not one candidate index per run.
    """

    def __init__(self, X: np.ndarray, rows: np.ndarray, structure: GroupStructure, criterion: ExactCriterion,
                 replicates: bool = True, layout: Layout | None = None):
        self.X = X
        self.structure = structure
        self.criterion = criterion
        self.layout = layout
        self.plan, self.reset_index = make_plan(X, structure, criterion, replicates, layout)
        self.group = self.plan.group
        self._start(rows)

    def _start(self, rows: np.ndarray) -> None:
        """The state of the runs ``rows`` (LinAlgError: M singular; ValueError: not a candidate per run, which the
        compiled code, without bounds checks, must never read)."""
        K, N = self.plan.X.shape[0], self.plan.members.shape[0]
        if rows.shape != (N,) or rows.min() < 0 or rows.max() >= K:
            raise ValueError(f"the runs must be {N} candidate indices in [0, {K}), got shape {rows.shape}")
        self.state: State = new_state(self.plan, rows)
        self.refresh()

    def restart(self, rows: np.ndarray) -> GroupSearch:
        """A new search of the same problem from the runs ``rows``, sharing this one's plan.

        Parameters
        ----------
        rows : numpy.ndarray of int
            The candidate of every run.

        Returns
        -------
        GroupSearch
            The search, its moves not yet made.

        Raises
        ------
        LinAlgError
            M of the runs ``rows`` is numerically singular.
        ValueError
            ``rows`` is not one candidate index per run.
        """
        search = copy.copy(self)
        search._start(rows)
        return search

    @property
    def rows(self) -> np.ndarray:
        """The candidate of every run."""
        return self.state.rows

    @property
    def M(self) -> np.ndarray:
        """The information matrix of the runs."""
        return self.state.M

    @property
    def loss(self) -> float:
        """-log det M (D) or tr(B M^{-1}) (A, I)."""
        return float(self.state.scalars[0])

    @property
    def moves(self) -> int:
        """The moves made."""
        return int(self.state.scalars[1])

    def refresh(self) -> None:
        """M, its inverse, X M^{-1}, the variances, the group sums and the loss from the runs (LinAlgError: M
        singular)."""
        if not _kernels()[0].refresh(self.plan, self.state):
            raise LinAlgError("the information matrix is singular")

    def min_gain(self) -> float:
        """The smallest loss decrease worth a move."""
        return MIN_GAIN * (1.0 + abs(self.loss))

    def allowed(self, r: int) -> np.ndarray:
        """The candidates run r may move to (module docstring).

        Parameters
        ----------
        r : int
            The run.

        Returns
        -------
        numpy.ndarray of int
            The candidates.

        Raises
        ------
        ValueError
            r not a run.
        """
        if not 0 <= r < self.plan.members.shape[0]:
            raise ValueError(f"no run {r}: the design has {self.plan.members.shape[0]}")
        J = np.empty(self.plan.X.shape[0], dtype=np.int64)
        return J[:_kernels()[1].allowed(self.plan, self.state, r, J)]

    def move_gains(self, r: int, J: np.ndarray) -> np.ndarray:
        """Loss decreases of moving run r to each candidate of J (-inf: singular, or its own candidate).

        Parameters
        ----------
        r : int
            The run.
        J : numpy.ndarray of int
            Candidates.

        Returns
        -------
        numpy.ndarray
            One gain per candidate of J.

        Raises
        ------
        ValueError
            r not a run, or J not candidate indices.
        """
        K, N = self.plan.X.shape[0], self.plan.members.shape[0]
        J = np.ascontiguousarray(J, dtype=np.int64)
        if not 0 <= r < N or (J.size and (J.min() < 0 or J.max() >= K)):
            raise ValueError(f"run {r} of {N} or candidates outside [0, {K})")
        kernels = _kernels()[0]
        gains = np.empty(J.size)
        kernels.move_gains_into(self.plan, self.state, r, J, J.size, gains,
                                kernels.scratch(self.plan.X.shape[1], self.plan.rank))
        return gains

    def swap_gains(self) -> tuple[np.ndarray, np.ndarray]:
        """(P x 2 pairs of runs in different groups at different candidates, the loss decrease of exchanging each)."""
        gains = np.empty(self.plan.first.size)
        _kernels()[0].swap_gains(self.plan, self.state, gains)
        keep = self.rows[self.plan.first] != self.rows[self.plan.second]
        return np.column_stack([self.plan.first[keep], self.plan.second[keep]]), gains[keep]

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
        kernels = _kernels()[0]
        t = self.reset_index[level, g]
        gains = np.empty(int(self.plan.radices[t]))
        kernels.reset_gains_into(self.plan, self.state, t, gains, kernels.scratch(self.plan.X.shape[1], self.plan.rank))
        return gains

    def run(self) -> np.ndarray:
        """Passes (groups, runs, an exchange between groups) until one moves nothing; the runs reached."""
        _kernels()[1].search(self.plan, self.state)
        return self.rows


class Searched(NamedTuple):
    """The best local optimum over the starts: its runs (sorted within each group), the loss each start reached, the
    moves made over all starts."""

    rows: np.ndarray
    losses: list[float]
    moves: int


def best_of_starts(draw: Callable[[int], np.ndarray], build: Callable[[np.ndarray], GroupSearch], restarts: int,
                   deadline: float) -> Searched:
    """The search from start 0 and ``restarts`` more (none begun after ``deadline``, a perf_counter time): ``draw(k)``
    gives the runs of start k, drawn again up to START_TRIES times while M is singular (such a start is skipped);
    ``build(rows)`` sets up the search of the first nonsingular start, the later ones share its plan
    (``GroupSearch.restart``).

    Raises
    ------
    LinAlgError
        No start had a nonsingular information matrix.
    """
    best: GroupSearch | None = None
    template: GroupSearch | None = None
    losses: list[float] = []
    moves = 0
    for k in range(restarts + 1):
        if k and time.perf_counter() > deadline:
            break
        search = None
        for _ in range(START_TRIES):
            try:
                rows = draw(k)
                search = build(rows) if template is None else template.restart(rows)
                break
            except LinAlgError:
                continue
        if search is None:
            continue
        template = template or search
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
