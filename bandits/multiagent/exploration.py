"""Covering sets A0 of joint actions and the forced-exploration rule of MF-TaS (paper §6.2, App. C.3).

A covering set A0 holds, for every group action (e, b), some joint action a with a_e = b; at least
max_e A_e joint actions are needed. Two constructions:

* :func:`build_a0` — the paper's Alg. 4 (BUILD-A0): for each factor e in turn, scan the global actions
  A(1), A(2), ... and add A(i) whenever it realises a group action of e not yet counted, with the
  counters I_{e,b} = sum_{a in A0} 1{a_e = b} of the text (so an action added for one factor also
  counts for the others). We order A lexicographically (C order, agent 0 most significant). Then the
  scan is a closed form that never enumerates A: the first action realising an uncounted b is the
  *embedding* of b (b on S_e, 0 elsewhere), the smallest action with a_e = b. So for each factor, the
  uncounted group actions are embedded in lexicographic order. abs(A0) <= Abar - rho + 1. The paper's
  Example 1 (4-cycle, K = 2) prints 7 actions for its run of Alg. 4; this reading gives 9, and no
  relabelling of the agents with lexicographic scans reproduces 7 (checked), so the paper's order of A
  is unknown.
* :func:`greedy_cover` — the improvement suggested after Alg. 4: repeatedly add the joint action that
  realises the most not-yet-covered group actions. That is a max-sum over 0/1 tables (one variable
  elimination per added action), so it scales to thousands of agents. On a line with K actions it
  finds K^2 actions, the minimum.

Forced exploration (paper §6.2): U_{t,e} = {b : N_{e,b}(t) < sqrt(t / abs(A0))}; if some U_{t,e} is
non-empty, play an A0 action covering the least-sampled under-explored (e, b). ``exploration="dtracking"``
uses sqrt(t) - Abar/2 instead: the forced-exploration level of Garivier & Kaufmann's D-tracking (COLT 2016),
sqrt(t) - K/2, with the Abar group actions in the place of the K arms. In batches
(:func:`forced_plays`) the rule looks at the level at the batch's end time t': every (e, b) below it gets
its deficit ceil(level) - N_{e,b} through the A0 action assigned to it (``cover_of``, the first
member that covers it), and an A0 action is played as often as the largest deficit it is assigned.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from optdesign import FactorGraph
from optdesign.errors import InvalidInputError
from optdesign.factored import MaxSum

from ..core.validation import check_choice
from .joint_actions import GroupIndexer

__all__ = ["CoveringSet", "build_a0", "covering_set", "exploration_level", "forced_plays", "greedy_cover"]

COVERS = ("greedy", "build-a0")
EXPLORATION = ("paper", "dtracking", "none")


@dataclass(frozen=True, eq=False)
class CoveringSet:
    """Joint actions ``actions`` (M x N) covering every group action; ``flat`` (M x rho) their group
    actions; ``cover_of[j]`` the index in ``actions`` of the first member realising flat group action j."""

    #: the members of A0, one joint action per row (M, N)
    actions: npt.NDArray[np.int64]
    #: flat group-action positions of every member (M, rho)
    flat: npt.NDArray[np.int64]
    #: for every flat group action, the first member realising it (Abar,)
    cover_of: npt.NDArray[np.int64]
    #: the construction: ``"greedy"`` or ``"build-a0"``
    method: str

    @property
    def size(self) -> int:
        """abs(A0), the number of members."""
        return int(self.actions.shape[0])


def _covering(indexer: GroupIndexer, actions: list[npt.NDArray[np.int64]], method: str) -> CoveringSet:
    A = np.asarray(actions, dtype=np.int64).reshape(len(actions), indexer.n_agents)
    flat = indexer.flat(A)
    cover_of = np.full(indexer.abar, -1, dtype=np.int64)
    for j in range(A.shape[0] - 1, -1, -1):  # the first member wins
        cover_of[flat[j]] = j
    if np.any(cover_of < 0):  # cannot happen for the two constructions; guards hand-made sets
        raise InvalidInputError(f"the set does not cover group actions {np.flatnonzero(cover_of < 0)[:5].tolist()}")
    return CoveringSet(A, flat, cover_of, method)


def build_a0(fg: FactorGraph) -> CoveringSet:
    """The paper's BUILD-A0 (App. C.3, Alg. 4) with A in lexicographic order (see the module docstring).

    Parameters
    ----------
    fg : FactorGraph
        The structure (agents, action counts, scopes); the mean tables are not read.

    Returns
    -------
    CoveringSet
        At most Abar - rho + 1 joint actions (``method="build-a0"``).
    """
    indexer = GroupIndexer(fg)
    covered = np.zeros(indexer.abar, dtype=bool)
    actions: list[np.ndarray] = []
    for e, (scope, table) in enumerate(zip(fg.scopes, fg.tables, strict=True)):
        grid = np.indices(table.shape).reshape(len(scope), -1)  # column p: group action p (C order)
        by_agent = grid[np.argsort(scope)]  # rows in increasing agent id: the lexicographic key
        order = np.lexsort(by_agent[::-1])  # primary key = the smallest agent id
        for p in order:
            if covered[indexer.offsets[e] + p]:
                continue
            a = np.zeros(fg.n_agents, dtype=np.int64)
            a[list(scope)] = grid[:, p]
            actions.append(a)
            covered[indexer.flat(a[None, :])[0]] = True
    return _covering(indexer, actions, "build-a0")


def greedy_cover(fg: FactorGraph) -> CoveringSet:
    """Greedy cover: add argmax_a #{e : (e, a_e) not yet covered} (one max-sum per action) until all are.

    Parameters
    ----------
    fg : FactorGraph
        The structure; the mean tables are not read.

    Returns
    -------
    CoveringSet
        The greedy members in the order added (``method="greedy"``).
    """
    indexer = GroupIndexer(fg)
    plan = fg.plan()
    uncovered = np.ones(indexer.abar)
    actions: list[np.ndarray] = []
    while uncovered.any():
        a = MaxSum(plan, uncovered).best_action
        actions.append(a)
        uncovered[indexer.flat(a[None, :])[0]] = 0.0
    return _covering(indexer, actions, "greedy")


def covering_set(fg: FactorGraph, method: str = "greedy") -> CoveringSet:
    """A0 by name: ``"greedy"`` (default) or ``"build-a0"`` (the paper's Alg. 4).

    Parameters
    ----------
    fg : FactorGraph
        The structure; the mean tables are not read.
    method : str
        ``"greedy"`` (:func:`greedy_cover`) or ``"build-a0"`` (:func:`build_a0`).

    Returns
    -------
    CoveringSet
        The covering set.

    Raises
    ------
    InvalidInputError
        An unknown method.
    """
    return greedy_cover(fg) if check_choice(method, "cover", COVERS) == "greedy" else build_a0(fg)


def exploration_level(rule: str, t: int, cover_size: int, abar: int) -> float:
    """Count below which a group action is under-explored at time t (rounds).

    Parameters
    ----------
    rule : str
        ``"paper"``: sqrt(t / abs(A0)) (MF-TaS §6.2); ``"dtracking"``: sqrt(t) - Abar/2 (GK16); else none.
    t : int
        Time in rounds (the batch's end time).
    cover_size : int
        abs(A0).
    abar : int
        Number of group actions Abar.

    Returns
    -------
    float
        The level (-inf for ``"none"``: nothing is ever under-explored).
    """
    if rule == "paper":
        return float(np.sqrt(t / cover_size))
    if rule == "dtracking":
        return float(np.sqrt(t) - abar / 2.0)
    return -np.inf


def forced_plays(cover: CoveringSet, counts: npt.NDArray[np.int64], level: float) -> npt.NDArray[np.int64] | None:
    """Plays of each A0 action lifting every group action with N_{e,b} < level to ceil(level), or None
    when no group action is under-explored (then the policy tracks its allocation).

    Parameters
    ----------
    cover : CoveringSet
        A0.
    counts : ndarray of int, shape (Abar,)
        The current counts N_{e,b}.
    level : float
        The exploration level (:func:`exploration_level`).

    Returns
    -------
    ndarray of int64, shape (abs(A0),) or None
        Plays of every member: the largest deficit among the group actions assigned to it (``cover_of``).
    """
    under = counts < level
    if not under.any():
        return None
    deficit = int(np.ceil(level)) - counts[under]
    reps = np.zeros(cover.size, dtype=np.int64)
    np.maximum.at(reps, cover.cover_of[under], np.maximum(deficit, 1))
    return reps
