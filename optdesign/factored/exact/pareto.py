"""Pareto variable elimination: the pass of :func:`optdesign.factored.exact.separation.most_violated` at one threshold.

Variable elimination along an :class:`~optdesign.factored.EliminationPlan` that keeps, per separator
state, the first k Pareto layers of the (Delta, H) pairs of the eliminated agents (small Delta, large H) in place of
the single maximum of max-sum, and drops a pair once no completion can reach the threshold tau (bounds from max-sum
over the completions, both ways, and tangents of Delta^2; :mod:`optdesign.factored.exact.separation` states them). Back
pointers give the surviving complete joint actions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import InstanceTooLargeError
from ...runtime.deadline import check_budget
from ..inference.elimination import EliminationPlan

__all__: list[str] = []  # the machinery of separation.most_violated, its only caller

# a partial pair is pruned only if its bound is below tau by this relative margin (rounding)
PRUNE_RTOL = 1e-9
# the enclosing time budget is checked at every elimination step, and every this many steps of the bounds' passes
CHECK_EVERY = 64
# tangent points x of Delta^2 >= 2 x Delta - x^2 used as extra pruning bounds (geometric in [Delta_min, Delta_hi])
TANGENTS = 8


def _group_order(group: np.ndarray, D: np.ndarray) -> np.ndarray:
    """Stable permutation sorting by (group, Delta): a fast float key, checked, else an exact lexicographic sort."""
    if D.size < 2:
        return np.arange(D.size)
    lo = float(D.min())
    order = np.argsort(group * (2.0 * (float(D.max()) - lo) + 1.0) + (D - lo), kind="stable")
    g, d = group[order], D[order]
    same = g[1:] == g[:-1]
    if np.all(g[1:] >= g[:-1]) and np.all(d[1:][same] >= d[:-1][same]):
        return order
    return np.lexsort((D, group))


def _pareto_layers(group: np.ndarray, D: np.ndarray, H: np.ndarray, star: np.ndarray, layers: int) -> np.ndarray:
    """Indices (sorted by group, then Delta) of the points in the first ``layers`` Pareto layers per group.

    In (group, Delta) order a point is dominated when an earlier point of its group has H at least as
    large (running lexicographic complex maximum of (group, H)). Points flagged a* never dominate: the
    completion they surely beat may be a* itself. Ties in Delta may keep a dominated point, never drop one.
    """
    order = _group_order(group, D)
    g, h = group[order].astype(float), H[order]
    dominates = g + 1j * np.where(star[order], -1.0, h)
    keep = np.zeros(D.size, dtype=bool)
    alive = np.arange(D.size)
    for _ in range(layers):
        if not alive.size:
            break
        running = np.maximum.accumulate(dominates[alive])[:-1]
        new = np.ones(alive.size, dtype=bool)
        new[1:] = (running.real < g[alive[1:]]) | (running.imag < h[alive[1:]])
        keep[alive[new]] = True
        alive = alive[~new]
    return order[keep]


def _row_sums(table: np.ndarray, index: np.ndarray) -> np.ndarray:
    """table[..., index].sum(axis=-1) added left to right (the compiled pass adds in the same order)."""
    if index.shape[1] == 0:
        return np.zeros((*table.shape[:-1], index.shape[0]))
    total = table[..., index[:, 0]]
    for c in range(1, index.shape[1]):
        total = total + table[..., index[:, c]]
    return total


def _tangents(plan: EliminationPlan, inside: np.ndarray, dmin: float, tau: float) -> tuple[np.ndarray, np.ndarray]:
    """The tangent bounds' slopes 2 tau x and constants tau x^2, x geometric in [Delta_min, sqrt(H_max / tau)]."""
    h_max = sum(inside[0, plan.message_offsets[r]] for r in plan.roots)
    x = np.geomspace(dmin, max(dmin, np.sqrt(h_max / tau)), TANGENTS)
    return 2.0 * tau * x, tau * x**2


class _Bounds:
    """Max-sum of each row of ``values`` (F, table size) both ways: ``inside`` (flat, factors then messages:
    maxima over each message's subtree), ``outside[l]`` (F, message size: maxima outside that subtree).
    ``columns[l]`` names, for each input column of step l, the message it reads (None: a factor).
    """

    def __init__(self, plan: EliminationPlan, values: np.ndarray, columns: list | None = None):
        if columns is None:
            message_of = {int(o): m for m, o in enumerate(plan.message_offsets)}
            columns = [[(c, message_of.get(int(s.index[0, c]))) for c in range(s.index.shape[1])] for s in plan.steps]
        self.columns = columns
        F = values.shape[0]
        flat = np.empty((F, plan.n_functions_flat))
        flat[:, : plan.table_size] = values
        rows = []
        for n, (step, offset) in enumerate(zip(plan.steps, plan.message_offsets, strict=True)):
            if n % CHECK_EVERY == 0:
                check_budget("separation")
            rows.append(_row_sums(flat, step.index))
            flat[:, offset: offset + step.message_size] = rows[-1].reshape(F, step.message_size, -1).max(axis=2)
        outside: list = [None] * len(plan.steps)
        at_roots = np.stack([flat[:, plan.message_offsets[r]] for r in plan.roots], axis=1)
        for j, r in enumerate(plan.roots):
            outside[r] = (at_roots.sum(axis=1) - at_roots[:, j])[:, None]
        for m in range(len(plan.steps) - 1, -1, -1):
            if m % CHECK_EVERY == 0:
                check_budget("separation")
            step = plan.steps[m]
            total = rows[m] + np.repeat(outside[m], plan.n_actions[step.variable], axis=1)
            for c, msg in columns[m]:
                if msg is not None:
                    pos = step.index[:, c]
                    order = np.argsort(pos, kind="stable")
                    starts = np.flatnonzero(np.diff(pos[order], prepend=-1))  # every message entry occurs
                    outside[msg] = np.maximum.reduceat((total - flat[:, pos])[:, order], starts, axis=1)
        self.inside, self.outside = flat, outside


@dataclass
class _Points:
    """Partial pairs: row of the current step, Delta, H, a* flag, and point index in each merged message."""

    row: np.ndarray
    D: np.ndarray
    H: np.ndarray
    star: np.ndarray
    ptr: np.ndarray

    def take(self, keep: np.ndarray) -> _Points:
        return _Points(self.row[keep], self.D[keep], self.H[keep], self.star[keep], self.ptr[keep])


class _Elimination:
    """One Pareto elimination pass at threshold ``tau``; ``run`` returns the surviving complete joint actions."""

    def __init__(self, plan: EliminationPlan, h: np.ndarray, gap: np.ndarray, star: np.ndarray, dmin: float,
                 k: int, tau: float, max_states: int, base: _Bounds):
        self.plan, self.h, self.gap, self.star = plan, h, gap, star
        self.dmin, self.k, self.tau, self.max_states = dmin, k, tau, max_states
        self.pruned_bound, self.n_states, self.n_pairs, self.peak_frontier = 0.0, 0, 0, 0
        # per message: (points grouped by separator state, start of each state's group, group sizes, inputs)
        self.frontiers: dict[int, tuple[_Points, np.ndarray, np.ndarray, list[int]]] = {}
        self.columns, self.inside, self.outside = base.columns, base.inside, base.outside
        self.mu, self.const = np.zeros(0), np.zeros(0)
        if tau > 0:  # bounds (1, 0), (0, -1) of ``base``, then one tangent (1, -2 tau x) per x
            self.mu, self.const = _tangents(plan, self.inside, dmin, tau)
            tangents = _Bounds(plan, h[None, :] - self.mu[:, None] * gap[None, :], base.columns)
            self.inside = np.concatenate([self.inside, tangents.inside])
            self.outside = [np.concatenate(pair) for pair in zip(self.outside, tangents.outside, strict=True)]

    def run(self) -> np.ndarray:
        plan = self.plan
        for m, step in enumerate(plan.steps):
            check_budget("separation")
            K = plan.n_actions[step.variable]
            factors = [c for c, msg in self.columns[m] if msg is None]
            inputs = [(msg, step.index[:, c] - plan.message_offsets[msg]) for c, msg in self.columns[m]
                      if msg is not None]
            start = _Points(np.arange(step.n_rows), _row_sums(self.gap, step.index[:, factors]),
                            _row_sums(self.h, step.index[:, factors]),
                            np.arange(step.n_rows) % K == self.star[step.variable], np.zeros((step.n_rows, 0), int))
            pts = self._combine(start, inputs, np.repeat(self.outside[m], K, axis=1))
            pts = pts.take(_pareto_layers(pts.row // K, pts.D, pts.H, pts.star, self.k))
            counts = np.bincount(pts.row // K, minlength=step.message_size)
            self.frontiers[m] = (pts, np.cumsum(counts) - counts, counts, [msg for msg, _ in inputs])
            self.n_states += pts.D.size
            self.peak_frontier = max(self.peak_frontier, int(counts.max(initial=0)))
            if self.n_states > self.max_states:
                raise _too_many_states(self.n_states, self.max_states)
        # the empty-scope messages (one per connected component) combine into complete joint actions
        inputs = [(r, np.zeros(1, dtype=np.int64)) for r in plan.roots]
        start = _Points(np.zeros(1, int), np.zeros(1), np.zeros(1), np.ones(1, bool), np.zeros((1, 0), int))
        pts = self._combine(start, inputs, np.zeros((self.inside.shape[0], 1)))
        return self._actions(pts.ptr[_pareto_layers(pts.row, pts.D, pts.H, pts.star, self.k)])

    def _prune(self, pts: _Points, rest: np.ndarray) -> _Points:
        """The pairs that may still complete to a ratio >= tau (``rest``: maxima over completions per pair)."""
        bound = (pts.H + rest[0]) / np.maximum(pts.D - rest[1], self.dmin) ** 2
        drop = bound < self.tau * (1.0 - PRUNE_RTOL)
        if drop.any():
            self.pruned_bound = max(self.pruned_bound, float(bound[drop].max()))
        if self.mu.size:  # every tangent at once: a pair below one of them is dropped
            mu, const, tangent = self.mu[:, None], self.const[:, None], rest[2:]
            value = pts.H - mu * pts.D + const + tangent
            below = (value < -PRUNE_RTOL * (pts.H + mu * np.abs(pts.D) + const + np.abs(tangent))).any(axis=0)
            if np.any(below & ~drop):
                self.pruned_bound = max(self.pruned_bound, self.tau)
            drop |= below
        return pts.take(~drop)

    def _combine(self, pts: _Points, inputs: list, outside: np.ndarray) -> _Points:
        """Sums of each row's pairs with the input messages' frontier points, pruned after each merge.

        ``inputs``: (message id, its state at each row); bounds add the unmerged inputs' inside maxima.
        """
        rest = [outside]
        for msg, z in inputs[::-1]:
            rest.append(rest[-1] + self.inside[:, self.plan.message_offsets[msg] + z])
        rest = rest[::-1]  # rest[j]: outside plus inputs j, j+1, ...
        pts = self._prune(pts, rest[0][:, pts.row])
        for j, (msg, z_of_row) in enumerate(inputs):
            front, starts, sizes, _ = self.frontiers[msg]
            z = z_of_row[pts.row]
            counts = sizes[z]
            total = int(counts.sum())
            if total > self.max_states:
                raise _too_many_pairs(total, self.max_states)
            self.n_pairs += total
            src = np.repeat(np.arange(pts.row.size), counts)
            pt = np.repeat(starts[z] - (np.cumsum(counts) - counts), counts) + np.arange(total)
            pts = _Points(pts.row[src], pts.D[src] + front.D[pt], pts.H[src] + front.H[pt],
                          pts.star[src] & front.star[pt], np.concatenate([pts.ptr[src], pt[:, None]], axis=1))
            pts = self._prune(pts, rest[j + 1][:, pts.row])
            if j + 1 < len(inputs):
                pts = pts.take(_pareto_layers(pts.row, pts.D, pts.H, pts.star, self.k))
        return pts

    def _actions(self, ptr: np.ndarray) -> np.ndarray:
        """Joint actions of the final points, following the back-pointers down the elimination."""
        plan = self.plan
        actions = np.zeros((ptr.shape[0], plan.n_agents), dtype=np.int64)
        points = {r: ptr[:, j] for j, r in enumerate(plan.roots)}
        for m in range(len(plan.steps) - 1, -1, -1):
            front, _, _, inputs = self.frontiers[m]
            p = points.pop(m)
            actions[:, plan.steps[m].variable] = front.row[p] % plan.n_actions[plan.steps[m].variable]
            for c, msg in enumerate(inputs):
                points[msg] = front.ptr[p, c]
        return actions


class _CompiledBounds:
    """The bounds of ``_Bounds`` (rows (1, 0) and (0, -1) of (H, Delta)) from the compiled loops, in the flat layout."""

    def __init__(self, plan: EliminationPlan, h: np.ndarray, gap: np.ndarray):
        from ..inference.flat_plan import plan_arrays
        from .pareto_kernels import bounds

        self.arrays = plan_arrays(plan)
        self.inside, self.outside = bounds(self.arrays, np.stack([h, -gap]), plan.table_size)


class _CompiledElimination:
    """``_Elimination`` in one compiled call (:mod:`optdesign.factored.exact.pareto_kernels`): the same points, counts
    and joint actions; the time budget is checked before the pass, not between its steps."""

    def __init__(self, plan: EliminationPlan, h: np.ndarray, gap: np.ndarray, star: np.ndarray, dmin: float,
                 k: int, tau: float, max_states: int, base: _CompiledBounds):
        from .pareto_kernels import bounds

        self.plan, self.h, self.gap, self.star = plan, h, gap, star
        self.dmin, self.k, self.tau, self.max_states, self.arrays = dmin, k, tau, max_states, base.arrays
        self.pruned_bound, self.n_states, self.n_pairs, self.peak_frontier = 0.0, 0, 0, 0
        self.inside, self.outside = base.inside, base.outside
        self.mu, self.const = np.zeros(0), np.zeros(0)
        if tau > 0:
            self.mu, self.const = _tangents(plan, self.inside, dmin, tau)
            inside, outside = bounds(self.arrays, h[None, :] - self.mu[:, None] * gap[None, :], plan.table_size)
            self.inside, self.outside = np.concatenate([self.inside, inside]), np.concatenate([self.outside, outside])

    def run(self) -> np.ndarray:
        from .pareto_kernels import TOO_MANY_PAIRS, TOO_MANY_STATES, elimination_pass

        check_budget("separation")
        a = self.arrays
        actions, self.pruned_bound, self.n_states, self.n_pairs, self.peak_frontier, status, count = elimination_pass(
            a.K, a.variable, a.row_off, a.msg_off, a.inputs, a.n_cols, a.col_msg, a.roots, a.state_off, self.h,
            self.gap, self.star.astype(np.int64), float(self.dmin), int(self.k), float(self.tau), int(self.max_states),
            self.inside, self.outside, self.mu, self.const, PRUNE_RTOL)
        if status == TOO_MANY_STATES:
            raise _too_many_states(count, self.max_states)
        if status == TOO_MANY_PAIRS:
            raise _too_many_pairs(count, self.max_states)
        return actions


def _too_many_states(count: int, limit: int) -> InstanceTooLargeError:
    return InstanceTooLargeError(f"Pareto elimination stores {count} frontier points, above the limit "
                                 f"max_states={limit}")


def _too_many_pairs(count: int, limit: int) -> InstanceTooLargeError:
    return InstanceTooLargeError(f"Pareto elimination would form {count} partial pairs in one merge, above the limit "
                                 f"max_states={limit}")
