"""Separation oracle of exact T*: the joint actions a != a* with the largest R(a) = H(a) / Delta(a)^2.

Both terms are factored, H(a) = sum_e h_e(a_e) with h >= 0 and Delta(a) = sum_e g_e(a_e) with
Delta(a*) = 0 and Delta(a) >= Delta_min > 0 for a != a* (single g_e may be negative). R grows with H
and falls with Delta, so of two partial assignments of the eliminated agents that share the separator
state z, one with (Delta <= Delta', H >= H') is at least as good under every completion: variable
elimination keeps, per separator state, the Pareto frontier of (Delta, H) pairs (its first k layers
for the k best actions) in place of the single maximum of max-sum. A pair is dropped once no completion
can reach the threshold tau, by either bound (maxima over completions from max-sum in both directions):

    (H + max Hc) / max(Delta + min Dc, Delta_min)^2 < tau,
    H - 2 tau x Delta + tau x^2 + max (Hc - 2 tau x Dc) < 0     (Delta^2 >= 2 x Delta - x^2, a few x).

tau is the k-th best ratio of joint actions already evaluated (single deviations from a*, max-sum on
the tangent of H - R Delta^2 at the best one, the caller's candidates), or the caller's threshold.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InstanceTooLargeError, InvalidInputError
from ..validation import as_count, as_vector
from .elimination import EliminationPlan
from .inference import MaxSum

# per elimination pass: stored frontier points, and partial pairs formed by one merge, are refused beyond this
MAX_STATES = 20_000_000
# a partial pair is pruned only if its bound is below tau by this relative margin (rounding)
PRUNE_RTOL = 1e-9
# max-sum linearisation rounds used to raise the initial threshold
LINEARISATION_ROUNDS = 4
# tangent points x of Delta^2 >= 2 x Delta - x^2 used as extra pruning bounds (geometric in [Delta_min, Delta_hi])
TANGENTS = 8
# for k > 1, thresholds best * f (f in GUESSES) are tried before the k-th best evaluated ratio
GUESSES = (0.8, 0.5, 0.25, 0.1)


@dataclass(frozen=True)
class Separation:
    """Result of :func:`most_violated`: a*, the Delta floor used, and the joint actions with largest ratios.

    ``actions`` (n, N): the n <= k largest ratios that reach the threshold, by decreasing ratio (``ratios``).
    ``max_ratio`` is the exact maximum over a != a* whenever ``exact``; otherwise the best ratio evaluated,
    and every ratio is at most ``upper_bound`` (below the threshold). Work counters, summed (maximised)
    over the ``n_passes`` passes: frontier points kept over all messages (``n_states``), partial pairs
    formed before pruning (``n_pairs``), the largest frontier of one separator state (``peak_frontier``).
    """

    max_ratio: float
    actions: np.ndarray
    ratios: np.ndarray
    exact: bool
    upper_bound: float
    best_action: np.ndarray
    delta_min: float
    n_states: int
    n_pairs: int
    peak_frontier: int
    n_passes: int


def most_violated(plan: EliminationPlan, h: np.ndarray, gap: np.ndarray, *, delta_min: float | None = None, k: int = 1,
                  threshold: float = 0.0, candidates: ArrayLike | None = None,
                  max_states: int = MAX_STATES) -> Separation:
    """Exact max of H(a) / Delta(a)^2 over joint actions a != a*, and the k joint actions attaining the largest ratios.

    ``h`` and ``gap`` are flat over the factor tables (length ``plan.table_size``); ``gap`` must give
    Delta = 0 at a single joint action a* (found by max-sum) and Delta > 0 elsewhere; h need not vanish
    at a*, whose ratio is never considered. ``delta_min`` defaults to the second smallest Delta and may
    not exceed it. Only actions with ratio >= ``threshold`` are returned (a positive threshold also
    prunes). ``candidates`` (m, N) are evaluated first to raise the pruning threshold; they never change
    the answer. ``max_states`` bounds, per pass, the stored frontier points and the pairs of one merge.
    """
    h, gap = as_vector(h, "h", length=plan.table_size), as_vector(gap, "gap", length=plan.table_size)
    if np.any(h < 0):
        raise InvalidInputError("h must be nonnegative")
    k, max_states = as_count(k, "k"), as_count(max_states, "max_states")
    if (threshold := _real(threshold, "threshold")) < 0:
        raise InvalidInputError(f"threshold must be >= 0, got {threshold}")
    star, dmin = _best_and_gap_min(plan, gap)
    if delta_min is not None:
        delta_min = _real(delta_min, "delta_min")
        if not 0 < delta_min <= dmin * (1 + 1e-9):
            raise InvalidInputError(f"delta_min must lie in (0, {dmin:.6g}] (the smallest gap), got {delta_min:.6g}")
        dmin = delta_min

    pool = _Pool(plan, h, gap, star)
    pool.add(_single_deviations(plan, star) if candidates is None
             else np.concatenate([_single_deviations(plan, star), _joint(candidates, plan)]))
    _linearise(pool, k)

    # For k > 1 the k-th best evaluated ratio is often far below the true one: try the thresholds
    # best * f first; a pass is conclusive once k actions reach its threshold.
    guesses = [*(pool.ranked()[0][0] * f for f in GUESSES if k > 1 and pool.ratios.size), 0.0]
    base = _Bounds(plan, np.stack([h, -gap]))
    n_states = n_pairs = peak = passes = 0
    for guess in guesses:
        passes += 1
        floor = max(threshold, pool.kth(k))
        tau = max(floor, guess)
        solver = _Elimination(plan, h, gap, star, dmin, k, tau, max_states, base)
        pool.add(solver.run())
        n_states, n_pairs, peak = n_states + solver.n_states, n_pairs + solver.n_pairs, max(peak, solver.peak_frontier)
        if tau <= floor or np.count_nonzero(pool.ratios >= tau) >= k:
            break
    ratios, actions = pool.ranked()
    best = float(ratios[0]) if ratios.size else 0.0
    n = min(k, int(np.count_nonzero(ratios >= threshold)))
    return Separation(
        max_ratio=best, actions=actions[:n].copy(), ratios=ratios[:n].copy(), exact=bool(best >= solver.pruned_bound),
        upper_bound=float(max(best, solver.pruned_bound)), best_action=star, delta_min=float(dmin),
        n_states=n_states, n_pairs=n_pairs, peak_frontier=peak, n_passes=passes)


def _real(value: float, name: str) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        out = np.nan
    if isinstance(value, bool) or not np.isfinite(out):
        raise InvalidInputError(f"{name} must be a finite real number, got {value!r}")
    return out


def _joint(actions: ArrayLike, plan: EliminationPlan) -> np.ndarray:
    a = np.asarray(actions)
    a = a[None, :] if a.ndim == 1 else a
    if a.ndim != 2 or a.shape[1] != plan.n_agents or (a.size and not np.issubdtype(a.dtype, np.integer)):
        raise InvalidInputError(f"candidates must be an integer array of shape (m, N={plan.n_agents})")
    if np.any(a < 0) or np.any(a >= np.asarray(plan.n_actions)):
        raise InvalidInputError("candidate joint action out of range: a_i must lie in 0..K_i-1")
    return a.astype(np.int64)


def _best_and_gap_min(plan: EliminationPlan, gap: np.ndarray) -> tuple[np.ndarray, float]:
    """a* (the unique minimiser of Delta) and Delta_min, by max-sum over -gap."""
    ms = MaxSum(plan, -gap)
    scale = max(1.0, float(np.abs(gap).max()) * len(plan.scopes))
    if abs(ms.value) > 1e-9 * scale:
        raise InvalidInputError(f"gap is inconsistent: the smallest Delta(a) is {-ms.value:.6g}, not 0")
    second = next(itertools.islice(ms.iter_best(), 1, None), None)
    if second is None:
        raise InvalidInputError("the instance has a single joint action: no a != a* to separate")
    if second[0] <= 1e-12 * scale:
        raise InvalidInputError(f"Delta is zero at two joint actions ({ms.best_action.tolist()} and "
                                f"{second[1].tolist()}): a* must be unique")
    return ms.best_action.copy(), float(second[0])


def _positions(plan: EliminationPlan, actions: np.ndarray) -> np.ndarray:
    """(M, n_factors) flat positions of the group actions of each joint action."""
    cols = [plan.factor_offsets[e] + np.ravel_multi_index(tuple(actions[:, i] for i in s),
                                                          tuple(plan.n_actions[i] for i in s))
            for e, s in enumerate(plan.scopes)]
    return np.stack(cols, axis=1) if cols else np.zeros((actions.shape[0], 0), dtype=np.int64)


def _single_deviations(plan: EliminationPlan, star: np.ndarray) -> np.ndarray:
    rows = [np.zeros((0, plan.n_agents), dtype=np.int64)]
    for i, K in enumerate(plan.n_actions):
        block = np.tile(star, (K, 1))
        block[:, i] = np.arange(K)
        rows.append(np.delete(block, star[i], axis=0))
    return np.concatenate(rows)


class _Pool:
    """Distinct evaluated joint actions (a* excluded) with their exact ratios."""

    def __init__(self, plan: EliminationPlan, h: np.ndarray, gap: np.ndarray, star: np.ndarray):
        self.plan, self.h, self.gap, self.star = plan, h, gap, star
        self.actions, self.ratios = np.zeros((0, plan.n_agents), dtype=np.int64), np.zeros(0)

    def add(self, actions: np.ndarray) -> None:
        actions = actions[np.any(actions != self.star, axis=1)]
        if actions.size:
            idx = _positions(self.plan, actions)
            ratios = self.h[idx].sum(axis=1) / self.gap[idx].sum(axis=1) ** 2
            self.actions, first = np.unique(np.concatenate([self.actions, actions]), axis=0, return_index=True)
            self.ratios = np.concatenate([self.ratios, ratios])[first]

    def kth(self, k: int) -> float:
        return float(np.sort(self.ratios)[-k]) if self.ratios.size >= k else 0.0

    def ranked(self) -> tuple[np.ndarray, np.ndarray]:
        order = np.argsort(-self.ratios, kind="stable")
        return self.ratios[order], self.actions[order]


def _linearise(pool: _Pool, k: int) -> None:
    """Add the k max-sum maximisers of h - 2 lam D0 gap, lam = R(a0) and D0 = Delta(a0) at the best a0 so far.

    H(a) - lam Delta(a)^2 <= H(a) - 2 lam D0 Delta(a) + lam D0^2 (tangent at a0); repeat while a0 changes.
    """
    seen = None
    for _ in range(LINEARISATION_ROUNDS):
        if not pool.ratios.size:
            return
        ratios, actions = pool.ranked()
        if seen is not None and np.array_equal(actions[0], seen):
            return
        seen = actions[0]
        d0 = pool.gap[_positions(pool.plan, seen[None, :])].sum()
        found = []
        for _, action in MaxSum(pool.plan, pool.h - 2.0 * ratios[0] * d0 * pool.gap).iter_best():
            if np.any(action != pool.star):
                found.append(action)
            if len(found) >= k:
                break
        pool.add(np.asarray(found, dtype=np.int64).reshape(-1, pool.plan.n_agents))


def _group_order(group: np.ndarray, D: np.ndarray) -> np.ndarray:
    """Permutation sorting by (group, Delta): a fast float key, checked, else an exact complex key."""
    if D.size < 2:
        return np.arange(D.size)
    lo = float(D.min())
    order = np.argsort(group * (2.0 * (float(D.max()) - lo) + 1.0) + (D - lo))
    g, d = group[order], D[order]
    same = g[1:] == g[:-1]
    if np.all(g[1:] >= g[:-1]) and np.all(d[1:][same] >= d[:-1][same]):
        return order
    return np.argsort(group + 1j * D)  # complex numbers sort lexicographically


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
        for step, offset in zip(plan.steps, plan.message_offsets, strict=True):
            rows.append(flat[:, step.index].sum(axis=2))
            flat[:, offset: offset + step.message_size] = rows[-1].reshape(F, step.message_size, -1).max(axis=2)
        outside: list = [None] * len(plan.steps)
        at_roots = np.stack([flat[:, plan.message_offsets[r]] for r in plan.roots], axis=1)
        for j, r in enumerate(plan.roots):
            outside[r] = (at_roots.sum(axis=1) - at_roots[:, j])[:, None]
        for m in range(len(plan.steps) - 1, -1, -1):
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
            h_max = sum(self.inside[0, plan.message_offsets[r]] for r in plan.roots)
            x = np.geomspace(dmin, max(dmin, np.sqrt(h_max / tau)), TANGENTS)
            self.mu, self.const = 2.0 * tau * x, tau * x**2
            tangents = _Bounds(plan, h[None, :] - self.mu[:, None] * gap[None, :], base.columns)
            self.inside = np.concatenate([self.inside, tangents.inside])
            self.outside = [np.concatenate(pair) for pair in zip(self.outside, tangents.outside, strict=True)]

    def run(self) -> np.ndarray:
        plan = self.plan
        for m, step in enumerate(plan.steps):
            K = plan.n_actions[step.variable]
            factors = [c for c, msg in self.columns[m] if msg is None]
            inputs = [(msg, step.index[:, c] - plan.message_offsets[msg]) for c, msg in self.columns[m]
                      if msg is not None]
            start = _Points(np.arange(step.n_rows), self.gap[step.index[:, factors]].sum(axis=1),
                            self.h[step.index[:, factors]].sum(axis=1),
                            np.arange(step.n_rows) % K == self.star[step.variable], np.zeros((step.n_rows, 0), int))
            pts = self._combine(start, inputs, np.repeat(self.outside[m], K, axis=1))
            pts = pts.take(_pareto_layers(pts.row // K, pts.D, pts.H, pts.star, self.k))
            counts = np.bincount(pts.row // K, minlength=step.message_size)
            self.frontiers[m] = (pts, np.cumsum(counts) - counts, counts, [msg for msg, _ in inputs])
            self.n_states += pts.D.size
            self.peak_frontier = max(self.peak_frontier, int(counts.max(initial=0)))
            if self.n_states > self.max_states:
                raise InstanceTooLargeError(f"Pareto elimination stores {self.n_states} frontier points, above the "
                                            f"limit max_states={self.max_states}")
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
        for j, (mu, const) in enumerate(zip(self.mu, self.const, strict=True)):
            value = pts.H - mu * pts.D + const + rest[2 + j]
            below = value < -PRUNE_RTOL * (pts.H + mu * np.abs(pts.D) + const + np.abs(rest[2 + j]))
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
                raise InstanceTooLargeError(f"Pareto elimination would form {total} partial pairs in one merge, "
                                            f"above the limit max_states={self.max_states}")
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
