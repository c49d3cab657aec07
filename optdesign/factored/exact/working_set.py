"""The working set of constraint generation: the joint actions it starts from, and how many it may hold.

The masters of exact T* and of the regret bound (:mod:`.constraint_generation`) keep their working set W as dense
rows, one joint action of N agents each, so W costs N numbers per joint action. Every single deviation from a* is
in W from the start (they carry the optimum's shape), so an instance whose N sum_i (K_i - 1) numbers exceed
WORKING_SET_ENTRIES is refused before anything is allocated (a ring of 20,000 agents with K = 2 would need 4e8), and
W never grows past WORKING_SET_ENTRIES / N joint actions (generation then stops with the bracket it has).
Up to :data:`.enumerated_separation.MAX_JOINT_ACTIONS` joint actions, the gap-order list and the best joint action
through each group action are read off one enumeration of the structure (the same joint actions, up to ties, as the
max-sum passes, in a fraction of the time: a bandit re-solving T* rebuilds them at every re-solve).
"""

from __future__ import annotations

import hashlib
import itertools
import weakref

import numpy as np

from ...errors import InstanceTooLargeError, TimeLimitReached
from ...runtime.deadline import check_budget
from ...validation.sizes import check_array_size, count_text
from ..graph.factor_graph import FactorGraph
from ..inference.max_sum import batched_max_sum
from .enumerated_separation import MAX_JOINT_ACTIONS, EnumeratedSeparation

__all__ = ["WORKING_SET_ENTRIES", "SeenJointActions", "best_first_actions", "best_through_entries",
           "check_working_set", "initial_working_set", "working_set_capacity", "working_set_fits"]

# numbers the working set may hold (int64: 400 MB), leaving room for the copies made while it grows
WORKING_SET_ENTRIES = 50_000_000
# the budget is checked every this many joint actions listed in gap order
CHECK_EVERY = 16
# best_through_entries per instance
_BEST_THROUGH: weakref.WeakKeyDictionary[FactorGraph, np.ndarray] = weakref.WeakKeyDictionary()


def working_set_capacity(fg: FactorGraph) -> int:
    """The most joint actions W may hold on ``fg``: WORKING_SET_ENTRIES / N.

    Parameters
    ----------
    fg : FactorGraph
        The instance.

    Returns
    -------
    int
        The capacity in joint actions (rows of N agents).
    """
    return WORKING_SET_ENTRIES // max(fg.n_agents, 1)


def _single_deviation_count(fg: FactorGraph) -> int:
    """sum_i (K_i - 1): the joint actions one agent away from a*."""
    return int(sum(k - 1 for k in fg.n_actions))


def working_set_fits(fg: FactorGraph) -> bool:
    """Whether the single deviations from a* (W's least content) fit in :func:`working_set_capacity`.

    Parameters
    ----------
    fg : FactorGraph
        The instance.

    Returns
    -------
    bool
        False when constraint generation would refuse ``fg`` (:func:`check_working_set`).
    """
    return _single_deviation_count(fg) <= working_set_capacity(fg)


def check_working_set(fg: FactorGraph) -> None:
    """Refuse, before allocating, an instance whose single deviations from a* alone overflow the working set.

    Parameters
    ----------
    fg : FactorGraph
        The instance.

    Raises
    ------
    InstanceTooLargeError
        N sum_i (K_i - 1) > WORKING_SET_ENTRIES; the message names T^MF, an upper bound on T* at any size.
    """
    if not working_set_fits(fg):
        entries = _single_deviation_count(fg) * fg.n_agents
        raise InstanceTooLargeError(
            f"constraint generation keeps its joint actions as rows of N = {count_text(fg.n_agents)} agents: the "
            f"{count_text(_single_deviation_count(fg))} single deviations from a* alone need {entries:.3g} numbers, "
            f"above its limit of {WORKING_SET_ENTRIES:.3g}; od.mf_characteristic_time bounds T* from above at this "
            "size, and a time_limit returns the closed-form bracket")


def initial_working_set(fg: FactorGraph, *, n_best: int | None = None) -> np.ndarray:
    """Joint actions to start from: the single deviations from a*, the ``n_best`` (default 20 N) smallest gaps, and
    for every factor e and group action b the best joint action with a_e = b (one max-sum each, or one enumeration
    of a small structure), as many as fit in
    :func:`working_set_capacity` (in that order of priority).

    Under a time budget (:func:`optdesign.runtime.deadline.time_budget`) the joint actions found before it runs out are
    returned (the single deviations at least).

    Parameters
    ----------
    fg : FactorGraph
        The instance; a* must be unique.
    n_best : int, optional
        How many joint actions after a* in gap order to include; 20 N by default.

    Returns
    -------
    numpy.ndarray, shape (M, N)
        Distinct joint actions other than a*, in lexicographic order.

    Raises
    ------
    InstanceTooLargeError
        The single deviations do not fit (:func:`check_working_set`).
    """
    check_working_set(fg)
    best = fg.best_action()
    room = working_set_capacity(fg) - _single_deviation_count(fg)
    n_best = min(20 * fg.n_agents if n_best is None else n_best, room)
    rows = []
    for i, k in enumerate(fg.n_actions):
        for b in range(k):
            if b != best[i]:
                a = best.copy()
                a[i] = b
                rows.append(a)
    try:
        rows.extend(best_first_actions(fg, n_best + 1))
        if fg.abar <= room - n_best:
            rows.extend(best_through_entries(fg))
    except TimeLimitReached:
        pass
    A = np.unique(np.asarray(rows, dtype=np.int64).reshape(-1, fg.n_agents), axis=0)
    return A[np.any(A != best, axis=1)]


def best_first_actions(fg: FactorGraph, n: int) -> list[np.ndarray]:
    """The ``n`` best joint actions in nondecreasing gap (a* first): by enumeration on small structures, else by
    best-first max-sum, checking the time budget every CHECK_EVERY of them (when it runs out: those found so far).

    Parameters
    ----------
    fg : FactorGraph
        The instance.
    n : int
        How many joint actions (at most all of them).

    Returns
    -------
    list of numpy.ndarray
        The joint actions, a* first; fewer than ``n`` when the time budget ran out.
    """
    if fg.n_joint_actions <= MAX_JOINT_ACTIONS:
        return list(EnumeratedSeparation.for_plan(fg.plan()).best_first(fg.means, n))
    rows: list[np.ndarray] = []
    try:
        for i, (_, a) in enumerate(itertools.islice(fg.iter_best(), min(n, fg.n_joint_actions))):
            if i % CHECK_EVERY == 0:
                check_budget("the initial working set")
            rows.append(a)
    except TimeLimitReached:
        pass
    return rows


def best_through_entries(fg: FactorGraph) -> np.ndarray:
    """For every factor e and group action b, the best joint action a with a_e = b (batched max-sum per factor).

    Computed once per instance (kept while ``fg`` lives): exact T* and the regret bound both start from it.

    Parameters
    ----------
    fg : FactorGraph
        The instance.

    Returns
    -------
    numpy.ndarray of int64, shape (fg.abar, N)
        Row i is the best joint action through the flat factor-table entry i (laid out like ``fg.means``); its
        gap is the smallest gap of the joint actions through that entry.

    Raises
    ------
    TimeLimitReached
        The enclosing :func:`optdesign.runtime.deadline.time_budget` ran out (checked between factors).
    InstanceTooLargeError
        The abar x N rows exceed :data:`optdesign.validation.sizes.MAX_ARRAY_ENTRIES` (checked before allocating).
    """
    known = _BEST_THROUGH.get(fg)
    if known is not None:
        return np.array(known)
    check_array_size(float(fg.abar) * fg.n_agents,
                     f"the best joint action through every factor-table entry ({fg.abar:,} rows of N agents)")
    plan = fg.plan()
    means = fg.means
    if fg.n_joint_actions <= MAX_JOINT_ACTIONS:
        _BEST_THROUGH[fg] = EnumeratedSeparation.for_plan(plan).best_through(means)
        return np.array(_BEST_THROUGH[fg])
    never = -2.0 * (np.abs(means).sum() + 1.0)  # below any joint action's value: excludes a group action
    rows = np.zeros((fg.abar, fg.n_agents), dtype=np.int64)
    for e in range(fg.n_factors):  # one batched max-sum per factor, a column per entry b of its table
        check_budget("the best joint actions through each group action")
        lo, hi = plan.factor_offsets[e], plan.factor_offsets[e + 1]
        forced = np.repeat(means[:, None], hi - lo, axis=1)
        forced[lo:hi] = never
        forced[np.arange(lo, hi), np.arange(hi - lo)] = means[lo:hi]
        rows[lo:hi] = batched_max_sum(plan, forced)[1]
    _BEST_THROUGH[fg] = rows
    return np.array(rows)


class SeenJointActions:
    """Which joint actions a working set already holds, without a copy of its rows: the code
    sum_i a_i prod_{j > i} K_j of each when prod_i K_i fits in int64 (a sorted array), else a 16-byte digest of its row.

    Parameters
    ----------
    n_actions : sequence of int
        K_i per agent.
    """

    def __init__(self, n_actions: tuple[int, ...] | list[int]):
        self.n_actions = tuple(int(k) for k in n_actions)
        self.coded = float(np.prod(np.asarray(self.n_actions, dtype=float))) < 2.0**62
        radix = np.asarray((*self.n_actions[1:], 1), dtype=np.int64)
        self.strides = np.cumprod(radix[::-1])[::-1] if self.coded else radix  # prod_{j > i} K_j
        self.codes = np.zeros(0, dtype=np.int64)
        self.digests: set[bytes] = set()

    def add(self, actions: np.ndarray) -> np.ndarray:
        """Record the joint actions not seen before and return them.

        Parameters
        ----------
        actions : numpy.ndarray of int64, shape (M, N)
            Joint actions, possibly repeated or seen before.

        Returns
        -------
        numpy.ndarray of int64, shape (M', N)
            The distinct ones not seen before, in lexicographic order.
        """
        if self.coded:  # mixed-radix codes by hand: numpy's ravel_multi_index takes at most 32 agents before numpy 2
            new = np.unique(actions.astype(np.int64) @ self.strides)
            new = new[~np.isin(new, self.codes, assume_unique=True)]
            self.codes = np.union1d(self.codes, new)
            return (new[:, None] // self.strides) % np.asarray(self.n_actions, dtype=np.int64)
        first: dict[bytes, int] = {}
        for j, a in enumerate(actions):
            first.setdefault(hashlib.blake2b(a.tobytes(), digest_size=16).digest(), j)
        fresh = {h: j for h, j in first.items() if h not in self.digests}
        self.digests.update(fresh)
        return np.unique(actions[list(fresh.values())], axis=0).reshape(-1, actions.shape[1])
