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

import heapq
import itertools
from collections.abc import Iterator

import numpy as np

from .elimination import EliminationPlan

__all__ = ["MaxSum", "batched_max_sum"]


class MaxSum:
    """Max-sum variable elimination for the flat factor values ``values`` under ``plan``.

    The pass runs at construction. Attributes: ``value`` (max_a sum_e values_e(a_e)), ``best_action`` (a
    maximiser, ties broken by the lowest action index at each step), ``regrets`` and ``choices`` (per step, the
    local regrets r_l(z, k) in row order and the argmax k for every z).

    Parameters
    ----------
    plan : EliminationPlan
        The elimination order and index structure.
    values : numpy.ndarray, shape (plan.table_size,)
        The factor values (e.g. ``FactorGraph.means`` or estimates), flat as in the plan.
    """

    def __init__(self, plan: EliminationPlan, values: np.ndarray):
        self.plan = plan
        flat = np.empty(plan.n_functions_flat)
        flat[: plan.table_size] = values
        self.regrets: list[np.ndarray] = []
        self.choices: list[np.ndarray] = []  # argmax k for every z of each step
        for step, offset in zip(plan.steps, plan.message_offsets, strict=True):
            k = plan.n_actions[step.variable]
            phi = flat[step.index].sum(axis=1).reshape(-1, k)
            best = phi.max(axis=1)
            flat[offset : offset + best.size] = best
            self.regrets.append((best[:, None] - phi).ravel())
            self.choices.append(phi.argmax(axis=1))
        self.value = float(sum(flat[plan.message_offsets[r]] for r in plan.roots))
        # assignment happens in reverse elimination order; strides turn a scope assignment into z
        self._positions = plan.steps[::-1]
        self._regrets = self.regrets[::-1]
        self._choices = self.choices[::-1]
        self._strides = [
            np.asarray(
                [int(np.prod(s.shape[p + 1 :], dtype=np.int64)) for p in range(len(s.scope))], dtype=np.int64
            )
            for s in self._positions
        ]
        self._scopes = [np.asarray(s.scope, dtype=np.int64) for s in self._positions]
        self.best_action = self._complete(np.zeros(plan.n_agents, dtype=np.int64), 0)

    def _z(self, position: int, action: np.ndarray) -> int:
        scope = self._scopes[position]
        return int(action[scope] @ self._strides[position]) if scope.size else 0

    def _complete(self, action: np.ndarray, start: int) -> np.ndarray:
        """Greedy (zero-regret) assignment of the positions ``start..N-1``; modifies ``action``."""
        for p in range(start, len(self._positions)):
            action[self._positions[p].variable] = self._choices[p][self._z(p, action)]
        return action

    def _deviations(self, action: np.ndarray, after: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Cost, position and value of every single deviation of ``action`` at positions > ``after``."""
        costs, positions, values = [], [], []
        for p in range(after + 1, len(self._positions)):
            var = self._positions[p].variable
            k = self.plan.n_actions[var]
            z = self._z(p, action)
            r = self._regrets[p][z * k : (z + 1) * k]
            others = np.flatnonzero(np.arange(k) != action[var])
            costs.append(r[others])
            positions.append(np.full(others.size, p))
            values.append(others)
        if not costs:
            return np.empty(0), np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
        costs_a = np.concatenate(costs)
        order = np.argsort(costs_a, kind="stable")
        return costs_a[order], np.concatenate(positions)[order], np.concatenate(values)[order]

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
    """
    batch = values.shape[1]
    flat = np.empty((plan.n_functions_flat, batch))
    flat[: plan.table_size] = values
    choices = []
    for step, offset in zip(plan.steps, plan.message_offsets, strict=True):
        phi = flat[step.index].sum(axis=1).reshape(-1, plan.n_actions[step.variable], batch)
        flat[offset : offset + phi.shape[0]] = phi.max(axis=1)
        choices.append(phi.argmax(axis=1))
    maxima = sum(flat[plan.message_offsets[r]] for r in plan.roots)
    actions = np.zeros((batch, plan.n_agents), dtype=np.int64)
    columns = np.arange(batch)
    for step, choice in zip(plan.steps[::-1], choices[::-1], strict=True):
        z = np.zeros(batch, dtype=np.int64)
        for j, k in zip(step.scope, step.shape, strict=True):
            z = z * k + actions[:, j]
        actions[:, step.variable] = choice[z, columns]
    return np.asarray(maxima, dtype=float), actions

