"""Max-sum inference on a factored reward theta(a) = sum_e theta_e(a_e), and m-best enumeration.

One pass of variable elimination (cost O(N K^{w+1}), ``w`` the order's width) gives the messages
u_l and, per step, the local *regrets*

    r_l(z, k) = u_l(z) - sum_{g in F_l} g(z, k)  >= 0.

For every joint action a the regrets along a add up to its gap (the messages telescope):

    Delta(a) = theta(a*) - theta(a) = sum_l r_l(z_l(a), a_{i_l}).

Assigning agents in reverse elimination order, a partial assignment can always be completed at
zero further regret (take the argmax), so joint actions can be listed in nondecreasing gap by a
best-first search over "deviations" (Lawler's partitioning on the elimination tree): a joint
action is its parent (the same action with its last deviation replaced by the argmax and the
rest completed greedily) plus one deviation. Each listed action costs O(N + N K log(N K)).
"""

from __future__ import annotations

import functools
import heapq
import itertools
import math
from collections.abc import Iterator

import numpy as np

from ...errors import InvalidInputError
from ...runtime.deadline import check_budget
from .elimination import SHARED_PLANS, EliminationPlan
from .flat_plan import plan_arrays, use_compiled

__all__ = ["MaxSum", "batched_max_sum", "gathered_sum", "max_ratio"]

# the enclosing time budget is checked every this many elimination steps
CHECK_EVERY = 64
# rows with at most this many inputs are summed column by column (a strided reduction over a short axis costs about
# four times more); wider rows keep numpy's reduction
COLUMN_SUM_INPUTS = 8


def gathered_sum(flat: np.ndarray, index: np.ndarray) -> np.ndarray:
    """sum_c flat[index[:, c]]: the inputs of every row of an elimination step, added in column order.

    Parameters
    ----------
    flat : numpy.ndarray, shape (F,) or (F, B)
        The flat function vector (one column per batch member).
    index : numpy.ndarray of int, shape (rows, inputs)
        The step's index (:class:`~.elimination.EliminationStep`), at least one input.

    Returns
    -------
    numpy.ndarray, shape (rows,) or (rows, B)
        The row sums, equal to ``flat[index].sum(axis=1)``.
    """
    if index.shape[1] > COLUMN_SUM_INPUTS:
        wide: np.ndarray = flat[index].sum(axis=1)
        return wide
    out: np.ndarray = flat[index[:, 0]]
    for c in range(1, index.shape[1]):
        out += flat[index[:, c]]
    return out


@functools.lru_cache(maxsize=SHARED_PLANS)
def _assignment_tables(plan: EliminationPlan) -> tuple:
    """What assigning a joint action along ``plan`` reads, computed once per plan: the steps in reverse elimination
    order (the assignment order), the strides that turn a scope's assignment into a message entry z, the scopes, the
    same padded to the widest scope (stride 0, so the single deviations of a joint action are read in one vectorised
    pass), the eliminated agents, their K, and each position's offsets into the flat regrets and the flat choices."""
    positions = plan.steps[::-1]
    strides = [np.asarray([math.prod(s.shape[p + 1:]) for p in range(len(s.scope))], dtype=np.int64)
               for s in positions]
    scopes = [np.asarray(s.scope, dtype=np.int64) for s in positions]
    width = max((len(s.scope) for s in positions), default=0)
    scope_pad = np.zeros((len(positions), width), dtype=np.int64)
    stride_pad = np.zeros((len(positions), width), dtype=np.int64)
    for p, (scope, stride) in enumerate(zip(scopes, strides, strict=True)):
        scope_pad[p, : scope.size], stride_pad[p, : scope.size] = scope, stride
    variables = np.asarray([s.variable for s in positions], dtype=np.int64)
    k = np.asarray([plan.n_actions[s.variable] for s in positions], dtype=np.int64)
    sizes = np.asarray([s.n_rows for s in plan.steps], dtype=np.int64)
    offsets = (np.cumsum(sizes) - sizes)[::-1].copy()
    states = np.asarray([s.message_size for s in plan.steps], dtype=np.int64)
    choice_offsets = (np.cumsum(states) - states)[::-1].copy()
    for array in (*strides, *scopes, scope_pad, stride_pad, variables, k, offsets, choice_offsets):
        array.flags.writeable = False  # shared by every MaxSum on the plan
    return positions, strides, scopes, scope_pad, stride_pad, variables, k, offsets, choice_offsets


@functools.lru_cache(maxsize=SHARED_PLANS)
def _column_sums(plan: EliminationPlan) -> bool:
    """Whether every step adds its inputs column by column (1 to COLUMN_SUM_INPUTS of them), as the compiled pass."""
    return all(1 <= s.index.shape[1] <= COLUMN_SUM_INPUTS for s in plan.steps)


class MaxSum:
    """Max-sum variable elimination for the flat factor values ``values`` under ``plan``.

    The pass runs at construction. Attributes: ``value`` (max_a sum_e values_e(a_e)), ``best_action`` (a
    maximiser, ties broken by the lowest action index at each step), ``regrets`` and ``choices`` (per step, the
    local regrets r_l(z, k) in row order and the argmax k for every z). With ``keep_regrets=False`` the regrets
    are not stored (``regrets`` is None: on a ring of 10^5 agents with K = 10 they are 800 MB, most of the pass's
    time): :meth:`runner_up` still works, :meth:`iter_best` needs them.

    Parameters
    ----------
    plan : EliminationPlan
        The elimination order and index structure.
    values : numpy.ndarray, shape (plan.table_size,)
        The factor values (e.g. ``FactorGraph.means`` or estimates), flat as in the plan.
    keep_regrets : bool
        Store the local regrets of every step (needed by :meth:`iter_best`).
    compiled : bool, optional
        Run the pass compiled (:mod:`.max_sum_kernels`, the same numbers) or in numpy (which checks the time budget
        between steps); None (default): :func:`.flat_plan.compiled_by_default`. Plans with a step of more than
        ``COLUMN_SUM_INPUTS`` inputs always run in numpy.

    Raises
    ------
    InvalidInputError
        A ``compiled`` option that is not a bool or None.
    TimeLimitReached
        The enclosing :func:`optdesign.runtime.deadline.time_budget` ran out during the pass.
    """

    def __init__(self, plan: EliminationPlan, values: np.ndarray, *, keep_regrets: bool = True,
                 compiled: bool | None = None):
        self.plan = plan
        if use_compiled(plan, compiled) and _column_sums(plan):
            self._compiled_pass(values, keep_regrets)
        else:
            self._pass(values, keep_regrets)
        self.value = float(sum(self._flat[plan.message_offsets[r]] for r in plan.roots))
        (self._positions, self._strides, self._scopes, self._scope_pad, self._stride_pad, self._variables, self._k,
         self._regret_offsets, self._choice_offsets) = _assignment_tables(plan)
        self.best_action = self._complete(np.zeros(plan.n_agents, dtype=np.int64), 0)

    def _pass(self, values: np.ndarray, keep_regrets: bool) -> None:
        """The elimination pass in numpy, checking the time budget every CHECK_EVERY steps."""
        plan = self.plan
        flat = np.empty(plan.n_functions_flat)
        flat[: plan.table_size] = values
        self.regrets: list[np.ndarray] | None = [] if keep_regrets else None  # views into one flat vector
        self.choices: list[np.ndarray] = []  # argmax k for every z of each step
        flat_regrets = np.empty(plan.n_rows if keep_regrets else 0)
        start = 0
        for n, (step, offset) in enumerate(zip(plan.steps, plan.message_offsets, strict=True)):
            if n % CHECK_EVERY == 0:
                check_budget("max-sum inference")
            k = plan.n_actions[step.variable]
            phi = gathered_sum(flat, step.index).reshape(-1, k)
            best = phi.max(axis=1)
            flat[offset : offset + best.size] = best
            if self.regrets is not None:
                regrets = flat_regrets[start : start + phi.size]
                np.subtract(best[:, None], phi, out=regrets.reshape(phi.shape))
                self.regrets.append(regrets)
            self.choices.append(phi.argmax(axis=1))
            start += phi.size
        self._flat, self._flat_regrets = flat, flat_regrets
        self._flat_choices = np.concatenate(self.choices) if self.choices else np.zeros(0, dtype=np.int64)

    def _compiled_pass(self, values: np.ndarray, keep_regrets: bool) -> None:
        """The same pass in one compiled call (:mod:`.max_sum_kernels`: the same numbers)."""
        from .max_sum_kernels import forward

        a = plan_arrays(self.plan)
        check_budget("max-sum inference")
        self._flat, self._flat_regrets, self._flat_choices = forward(
            np.asarray(values, dtype=float), a.K, a.row_off, a.msg_off, a.inputs, a.n_cols, a.state_off, a.n_flat,
            keep_regrets)
        self.choices = [self._flat_choices[a.state_off[m]: a.state_off[m + 1]] for m in range(a.K.size)]
        self.regrets = ([self._flat_regrets[a.row_off[m]: a.row_off[m + 1]] for m in range(a.K.size)]
                        if keep_regrets else None)

    def _z(self, position: int, action: np.ndarray) -> int:
        scope = self._scopes[position]
        return int(action[scope] @ self._strides[position]) if scope.size else 0

    def _complete(self, action: np.ndarray, start: int) -> np.ndarray:
        """Greedy (zero-regret) assignment of the positions ``start..N-1``; modifies ``action``."""
        from .max_sum_kernels import assign

        return assign(action, start, self._scope_pad, self._stride_pad, self._variables, self._choice_offsets,
                      self._flat_choices)

    def runner_up(self) -> tuple[float, np.ndarray] | None:
        """The second joint action of :meth:`iter_best` and its gap, without the stored regrets: a*'s cheapest
        single deviation (the first in iter_best's order on ties), completed greedily; None for one joint action.

        Returns
        -------
        tuple of (float, numpy.ndarray) or None
            (gap, joint action), equal to the second item :meth:`iter_best` yields.

        Raises
        ------
        TimeLimitReached
            The enclosing :func:`optdesign.runtime.deadline.time_budget` ran out.
        """
        star = self.best_action
        best: tuple[float, int, int] | None = None
        for p, step in enumerate(self._positions):
            if p % CHECK_EVERY == 0:
                check_budget("max-sum inference")
            k = self.plan.n_actions[step.variable]
            z = self._z(p, star)
            offset = self.plan.message_offsets[len(self._positions) - 1 - p]
            # the step's local regrets at row z, as the stored ones are computed (same sums, same order)
            regrets = self._flat[offset + z] - gathered_sum(self._flat, step.index[z * k:(z + 1) * k])
            regrets[star[step.variable]] = np.inf
            v = int(np.argmin(regrets))
            if np.isfinite(regrets[v]) and (best is None or regrets[v] < best[0]):
                best = (float(regrets[v]), p, v)
        if best is None:
            return None
        gap, p, v = best
        action = star.copy()
        action[self._positions[p].variable] = v
        return gap, self._complete(action, p + 1)

    def _deviations(self, action: np.ndarray, after: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Cost, position and value of every single deviation of ``action`` at positions > ``after``."""
        p = np.arange(after + 1, len(self._positions))
        if not p.size:
            return np.empty(0), np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
        k = self._k[p]
        z = np.einsum("pw,pw->p", action[self._scope_pad[p]], self._stride_pad[p])
        positions = np.repeat(p, k)
        values = np.arange(int(k.sum())) - np.repeat(np.cumsum(k) - k, k)  # 0..k_p - 1 for every position
        if self.regrets is None:
            raise InvalidInputError("iter_best needs the local regrets: build MaxSum with keep_regrets=True")
        costs = self._flat_regrets[np.repeat(self._regret_offsets[p] + z * k, k) + values]
        others = values != np.repeat(action[self._variables[p]], k)
        costs, positions, values = costs[others], positions[others], values[others]
        order = np.argsort(costs, kind="stable")
        return costs[order], positions[order], values[order]

    def iter_best(self) -> Iterator[tuple[float, np.ndarray]]:
        """Yield (gap, joint action) for every joint action in nondecreasing gap, a* first.

        Gaps are sums of local regrets; they agree with theta(a*) - theta(a) to rounding.

        Yields
        ------
        tuple of (float, numpy.ndarray)
            The gap and a fresh copy of the joint action (int64, shape (N,)); the generator is lazy and lists
            every joint action exactly once if run to the end.
        """
        counter = itertools.count()
        # heap entries: (gap, tiebreak, parent node, rank of this child among the parent's)
        root = {"action": self.best_action.copy(), "last": -1, "gap": 0.0}
        heap: list = [(0.0, next(counter), None, root)]
        while heap:
            gap, _, parent_rank, node = heapq.heappop(heap)
            if parent_rank is not None:  # materialise a child lazily, queue its next sibling
                parent, rank = parent_rank
                p, v = int(parent["dev_pos"][rank]), int(parent["dev_val"][rank])
                action = parent["action"].copy()
                action[self._positions[p].variable] = v
                node = {"action": self._complete(action, p + 1), "last": p, "gap": gap}
                if rank + 1 < parent["dev_cost"].size:
                    nxt = parent["gap"] + float(parent["dev_cost"][rank + 1])
                    heapq.heappush(heap, (nxt, next(counter), (parent, rank + 1), None))
            node["dev_cost"], node["dev_pos"], node["dev_val"] = self._deviations(node["action"], node["last"])
            if node["dev_cost"].size:
                heapq.heappush(heap, (gap + float(node["dev_cost"][0]), next(counter), (node, 0), None))
            yield gap, node["action"].copy()


def batched_max_sum(plan: EliminationPlan, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """max_a sum_e values_e(a_e) and a maximising joint action for every column of ``values`` (table_size, B).

    One elimination pass serves all B columns (the per-step numpy overhead, which dominates on long chains, is
    paid once); the maximisers are read back in reverse elimination order. Returns ((B,) maxima, (B, N) actions).

    Parameters
    ----------
    plan : EliminationPlan
        The elimination order and index structure.
    values : numpy.ndarray, shape (plan.table_size, B)
        B sets of flat factor values, one per column.

    Returns
    -------
    maxima : numpy.ndarray, shape (B,)
        max_a sum_e values_e(a_e) for every column.
    actions : numpy.ndarray of int64, shape (B, N)
        A maximising joint action for every column.

    Raises
    ------
    TimeLimitReached
        The enclosing :func:`optdesign.runtime.deadline.time_budget` ran out.
    """
    batch = values.shape[1]
    flat = np.empty((plan.n_functions_flat, batch))
    flat[: plan.table_size] = values
    choices = []
    for n, (step, offset) in enumerate(zip(plan.steps, plan.message_offsets, strict=True)):
        if n % CHECK_EVERY == 0:
            check_budget("max-sum inference")
        phi = gathered_sum(flat, step.index).reshape(-1, plan.n_actions[step.variable], batch)
        flat[offset : offset + phi.shape[0]] = phi.max(axis=1)
        choices.append(phi.argmax(axis=1))
    maxima = sum(flat[plan.message_offsets[r]] for r in plan.roots)
    actions = np.zeros((batch, plan.n_agents), dtype=np.int64)
    columns = np.arange(batch)
    for n, (step, choice) in enumerate(zip(plan.steps[::-1], choices[::-1], strict=True)):
        if n % CHECK_EVERY == 0:
            check_budget("max-sum inference")
        z = np.zeros(batch, dtype=np.int64)
        for j, k in zip(step.scope, step.shape, strict=True):
            z = z * k + actions[:, j]
        actions[:, step.variable] = choice[z, columns]
    return np.asarray(maxima, dtype=float), actions


def max_ratio(plan: EliminationPlan, num: np.ndarray, den: np.ndarray, *, floor: float = 1.0) -> float:
    """max(floor, max_{a != a*} num(a) / den(a)) for factored num, den with num(a*) = den(a*) = 0, den > 0 elsewhere.

    Dinkelbach's iteration: rho <- num(a) / den(a) at a = argmax_a [num(a) - rho den(a)] (one max-sum each)
    until that maximum is 0 (attained at a*); rho increases strictly, so it stops finitely.

    Parameters
    ----------
    plan : EliminationPlan
        The elimination order and index structure.
    num, den : numpy.ndarray, shape (plan.table_size,)
        Flat factor terms of the numerator and the denominator, as in the plan.
    floor : float
        The value returned when no ratio exceeds it (the iteration starts there).

    Returns
    -------
    float
        The largest ratio, or ``floor``.

    Raises
    ------
    TimeLimitReached
        The enclosing :func:`optdesign.runtime.deadline.time_budget` ran out.
    """
    rho = floor
    for _ in range(1000):
        ms = MaxSum(plan, num - rho * den, keep_regrets=False)
        if ms.value <= 1e-12 * rho * max(1.0, float(np.abs(den).max())):
            return rho
        idx = plan.group_indices(ms.best_action[None, :])[0]
        new = float(num[idx].sum() / den[idx].sum())
        if new <= rho * (1 + 1e-14):
            return rho
        rho = new
    return rho
