"""An elimination plan as flat arrays, the form the compiled loops read (:mod:`.max_sum_kernels`,
:mod:`optdesign.factored.exact.pareto_kernels`); built once per plan. Importing it does not import numba.

A compiled pass cannot check the enclosing time budget (:mod:`optdesign.runtime.deadline`) between its steps, so the
callers take the compiled path outside a budget, and inside one only on plans of at most :data:`COMPILED_MAX_ROWS`
rows; plans whose index copy would be large stay in numpy (:func:`compiled_by_default`).
"""

from __future__ import annotations

import functools
import weakref
from typing import NamedTuple

import numpy as np

from ...errors import InvalidInputError
from ...runtime.deadline import remaining_budget
from .elimination import SHARED_PLANS, EliminationPlan

__all__ = ["COMPILED_MAX_ENTRIES", "COMPILED_MAX_ROWS", "PlanArrays", "compiled_by_default", "plan_arrays",
           "use_compiled"]

#: inside a time budget, the compiled passes run on plans of at most this many rows (the numpy ones beyond)
COMPILED_MAX_ROWS = 100_000
#: the flat arrays hold a copy of the plan's index (8 bytes an entry): plans of more entries run in numpy (160 MB)
COMPILED_MAX_ENTRIES = 20_000_000


class PlanArrays(NamedTuple):
    """An elimination plan as flat arrays (step m: its rows ``row_off[m]:row_off[m + 1]`` of ``inputs``)."""

    K: np.ndarray  # K of each step's agent
    variable: np.ndarray  # each step's agent
    row_off: np.ndarray  # (S + 1,)
    msg_off: np.ndarray  # flat position of each message
    inputs: np.ndarray  # (rows, C): the flat positions each row reads, padded with 0
    n_cols: np.ndarray  # input columns of each step
    col_msg: np.ndarray  # (S, C): the message an input column reads, -1 for a factor
    roots: np.ndarray  # the steps whose message has an empty scope
    n_flat: int  # length of the flat function vector
    state_off: np.ndarray  # (S + 1,): message m's entries are states state_off[m]:state_off[m + 1] of all messages
    scope_off: np.ndarray  # (S + 1,): step m's message scope is scope_vars[scope_off[m]:scope_off[m + 1]]
    scope_vars: np.ndarray  # the agents of every step's message scope, in order


_PLANS: weakref.WeakKeyDictionary[EliminationPlan, PlanArrays] = weakref.WeakKeyDictionary()


def plan_arrays(plan: EliminationPlan) -> PlanArrays:
    """The flat arrays of ``plan``, built once per plan.

    Parameters
    ----------
    plan : EliminationPlan
        The plan.

    Returns
    -------
    PlanArrays
        Its steps' sizes, offsets, index rows and the messages their columns read.
    """
    cached = _PLANS.get(plan)
    if cached is not None:
        return cached
    S = len(plan.steps)
    width = max((s.index.shape[1] for s in plan.steps), default=0)
    message_of = {int(o): m for m, o in enumerate(plan.message_offsets)}
    row_off = np.zeros(S + 1, dtype=np.int64)
    row_off[1:] = np.cumsum([s.n_rows for s in plan.steps])
    index = np.zeros((int(row_off[-1]), max(width, 1)), dtype=np.int64)
    col_msg = np.full((S, max(width, 1)), -1, dtype=np.int64)
    for m, step in enumerate(plan.steps):
        index[row_off[m]: row_off[m + 1], : step.index.shape[1]] = step.index
        for c in range(step.index.shape[1]):
            col_msg[m, c] = message_of.get(int(step.index[0, c]), -1)
    arrays = PlanArrays(
        K=np.array([plan.n_actions[s.variable] for s in plan.steps], dtype=np.int64),
        variable=np.array([s.variable for s in plan.steps], dtype=np.int64), row_off=row_off,
        msg_off=np.asarray(plan.message_offsets, dtype=np.int64), inputs=index,
        n_cols=np.array([s.index.shape[1] for s in plan.steps], dtype=np.int64), col_msg=col_msg,
        roots=np.asarray(plan.roots, dtype=np.int64), n_flat=int(plan.n_functions_flat),
        state_off=np.concatenate([[0], np.cumsum([s.message_size for s in plan.steps])]).astype(np.int64),
        scope_off=np.concatenate([[0], np.cumsum([len(s.scope) for s in plan.steps])]).astype(np.int64),
        scope_vars=np.array([j for s in plan.steps for j in s.scope], dtype=np.int64))
    _PLANS[plan] = arrays
    return arrays


def compiled_by_default(plan: EliminationPlan) -> bool:
    """Whether a pass over ``plan`` runs compiled when the caller does not say: on a plan of at most
    :data:`COMPILED_MAX_ENTRIES` index entries, and inside a time budget of at most :data:`COMPILED_MAX_ROWS` rows.

    Parameters
    ----------
    plan : EliminationPlan
        The plan.

    Returns
    -------
    bool
        True for the compiled pass.
    """
    small = plan.n_rows <= COMPILED_MAX_ROWS
    return _index_entries(plan) <= COMPILED_MAX_ENTRIES and (small or remaining_budget() is None)


def use_compiled(plan: EliminationPlan, compiled: bool | None) -> bool:
    """A caller's ``compiled`` option resolved: True or False as given, None as :func:`compiled_by_default` says.

    Parameters
    ----------
    plan : EliminationPlan
        The plan the pass runs on.
    compiled : bool or None
        The option.

    Returns
    -------
    bool
        True for the compiled pass.

    Raises
    ------
    InvalidInputError
        An option that is neither None nor a bool.
    """
    if compiled is None:
        return compiled_by_default(plan)
    if not isinstance(compiled, (bool, np.bool_)):
        raise InvalidInputError(f"compiled must be True, False or None, got {compiled!r}")
    return bool(compiled)


@functools.lru_cache(maxsize=SHARED_PLANS)
def _index_entries(plan: EliminationPlan) -> int:
    return sum(s.index.size for s in plan.steps)
