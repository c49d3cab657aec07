"""The passes of the exchange of grouped designs, compiled: groups given new settings, runs moved, runs exchanged.

One search (``optdesign.exact_designs.block_search.GroupSearch.run``) is a single call of :func:`search`: passes
over the groups of each grouping that may take another setting of the kind they tie (designs with hard-to-change
factors), then over the runs, then the best exchange of two runs between groups (blocked designs), each improving move
made as it is found (a gain above MIN_GAIN (1 + |loss|)), until a pass moves nothing or MAX_PASSES have run. The moves
are priced by
:mod:`optdesign.exact_designs.block_kernels` and the state recomputed from the runs after each move; a move that turns M
numerically singular is undone. The plan and the state are the named tuples of
:mod:`optdesign.exact_designs.block_state`; the passes are inlined into :func:`search` (numba's ``inline="always"``),
which keeps its compilation short.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .block_kernels import move_gains_into, refresh, reset_gains_into, scratch, swap_gains
from .block_state import Plan, State

__all__ = ["allowed", "search"]


@njit(cache=True)
def _make(plan: Plan, state: State, rows: np.ndarray) -> bool:
    """Move to the runs ``rows`` and recompute; back to the former runs (False) if M turns singular."""
    kept = state.rows.copy()
    for r in range(rows.size):
        state.rows[r] = rows[r]
    if refresh(plan, state):
        state.scalars[1] += 1.0
        return True
    for r in range(rows.size):
        state.rows[r] = kept[r]
    refresh(plan, state)
    return False


@njit(cache=True, inline="always")
def _best(gains: np.ndarray, n: int) -> int:
    """The first index of the largest of gains[:n] (n >= 1)."""
    best = 0
    for t in range(1, n):
        if gains[t] > gains[best]:
            best = t
    return best


@njit(cache=True, inline="always")
def allowed(plan: Plan, state: State, r: int, J: np.ndarray) -> int:
    """The candidates run r may move to, written to the start of J; their number. With a layout: the ``free``
    candidates sharing its tied settings; else all of them (with replicates) or the unused ones."""
    K = int(plan.X.shape[0])
    if plan.free > 0:
        first = (state.rows[r] // plan.free) * plan.free
        for t in range(plan.free):
            J[t] = first + t
        return int(plan.free)
    if plan.replicates:
        for t in range(K):
            J[t] = t
        return K
    used = np.zeros(K, dtype=np.bool_)
    for i in state.rows:
        used[i] = True
    n = 0
    for k in range(K):
        if not used[k]:
            J[n] = k
            n += 1
    return n


@njit(cache=True, inline="always")
def _run_pass(plan: Plan, state: State, J: np.ndarray, gains: np.ndarray, buffers: tuple) -> bool:
    """Each run in turn moves to its best allowed candidate when that improves the loss (by more than MIN_GAIN
    (1 + |loss|)); True if one moved."""
    moved = False
    for r in range(state.rows.size):
        n = allowed(plan, state, r, J)
        if n == 0 or (n <= 1 and plan.free > 0):
            continue  # nowhere to go; with a layout and no free factor the run's candidate is its groups' settings
        move_gains_into(plan, state, r, J, n, gains, buffers)
        best = _best(gains, n)
        if gains[best] > plan.limits[0] * (1.0 + abs(state.scalars[0])):
            rows = state.rows.copy()
            rows[r] = J[best]
            if _make(plan, state, rows):
                moved = True
    return moved


@njit(cache=True, inline="always")
def _reset_pass(plan: Plan, state: State, gains: np.ndarray, buffers: tuple) -> bool:
    """Each group that may take another setting, in turn, takes its best one when that improves the loss; True if one
    moved."""
    moved = False
    for t in range(plan.strides.size):
        stride, radix = plan.strides[t], plan.radices[t]
        reset_gains_into(plan, state, t, gains, buffers)
        best = _best(gains, radix)
        if gains[best] > plan.limits[0] * (1.0 + abs(state.scalars[0])):
            rows = state.rows.copy()
            for k in range(plan.reset_starts[t], plan.reset_starts[t + 1]):
                r = plan.reset_runs[k]
                rows[r] += (best - (rows[r] // stride) % radix) * stride
            if _make(plan, state, rows):
                moved = True
    return moved


@njit(cache=True, inline="always")
def _swap_pass(plan: Plan, state: State, gains: np.ndarray) -> bool:
    """The best exchange of two runs between groups, made when it improves the loss; True if made."""
    if plan.first.size == 0:
        return False
    swap_gains(plan, state, gains)
    best = _best(gains, plan.first.size)
    if not gains[best] > plan.limits[0] * (1.0 + abs(state.scalars[0])):
        return False
    rows = state.rows.copy()
    r1, r2 = plan.first[best], plan.second[best]
    rows[r1], rows[r2] = rows[r2], rows[r1]
    return _make(plan, state, rows)


@njit(cache=True)
def search(plan: Plan, state: State) -> None:
    """Passes (groups, runs, an exchange between groups) until one moves nothing, or MAX_PASSES; the state is then
    that of the runs reached, ``scalars[1]`` the moves made."""
    J = np.empty(plan.X.shape[0], dtype=np.int64)
    gains = np.empty(plan.width)
    buffers = scratch(state.M.shape[0], plan.rank)
    for _ in range(plan.max_passes):
        moved = _reset_pass(plan, state, gains, buffers)
        if _run_pass(plan, state, J, gains, buffers):
            moved = True
        if _swap_pass(plan, state, gains):
            moved = True
        if not moved:
            break
