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

import functools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ...errors import InvalidInputError
from ...validation import as_count, as_vector
from ...validation.sizes import check_array_size
from ..graph.joint_action_sets import unique_joint_actions
from ..inference.elimination import SHARED_PLANS, EliminationPlan
from ..inference.flat_plan import use_compiled
from ..inference.max_sum import MaxSum
from .pareto import TANGENTS, _Bounds, _CompiledBounds, _CompiledElimination, _Elimination

__all__ = ["MAX_STATES", "Separation", "most_violated"]

# single deviations from a* that seed the pruning threshold, at most this many numbers in all (100 MB)
SEED_ENTRIES = 12_500_000

# per elimination pass: stored frontier points, and partial pairs formed by one merge, are refused beyond this
MAX_STATES = 20_000_000
# max-sum linearisation rounds used to raise the initial threshold
LINEARISATION_ROUNDS = 4
# for k > 1, thresholds best * f (f in GUESSES) are tried before the k-th best evaluated ratio
GUESSES = (0.8, 0.5, 0.25, 0.1)


@dataclass(frozen=True)
class Separation:
    """Result of :func:`most_violated`: a*, the Delta floor used, and the joint actions with largest ratios.

    ``max_ratio`` is the exact maximum over a != a* whenever ``exact``; otherwise the best ratio evaluated,
    and every ratio is at most ``upper_bound`` (below the threshold). The work counters are summed
    (``peak_frontier``: maximised) over the ``n_passes`` passes.
    """

    #: The largest ratio H(a) / Delta(a)^2 found over a != a* (the maximum when ``exact``).
    max_ratio: float
    #: The n <= k joint actions with the largest ratios that reach the threshold, shape (n, N), best first.
    actions: np.ndarray
    #: Their ratios, shape (n,), decreasing.
    ratios: np.ndarray
    #: Whether ``max_ratio`` is certified to be the maximum (no pruned pair could exceed it).
    exact: bool
    #: A bound on every ratio over a != a*: ``max_ratio`` when ``exact``, else the largest pruned bound.
    upper_bound: float
    #: a*, the joint action with Delta = 0, shape (N,).
    best_action: np.ndarray
    #: The floor on Delta of the pruning bounds (the ``delta_min`` argument, or the smallest positive Delta).
    delta_min: float
    #: Frontier points kept over all messages.
    n_states: int
    #: Partial pairs formed before pruning.
    n_pairs: int
    #: The largest frontier of one separator state.
    peak_frontier: int
    #: Elimination passes run (one per threshold tried).
    n_passes: int


def most_violated(plan: EliminationPlan, h: np.ndarray, gap: np.ndarray, *, delta_min: float | None = None, k: int = 1,
                  threshold: float = 0.0, candidates: ArrayLike | None = None,
                  max_states: int = MAX_STATES, compiled: bool | None = None) -> Separation:
    """Exact max of H(a) / Delta(a)^2 over joint actions a != a*, and the k joint actions attaining the largest ratios.

    H(a) = sum_e h_e(a_e) and Delta(a) = sum_e gap_e(a_e) are read from flat tables over the factors; a* (the
    single joint action with Delta = 0) is found by max-sum, and its ratio is never considered. A positive
    ``threshold`` also prunes, and ``candidates`` only raise the pruning threshold: neither changes the answer
    above the threshold.

    Parameters
    ----------
    plan : EliminationPlan
        Elimination order and index plan of the factor graph (``fg.plan()``); the tables follow its layout.
    h : array_like, shape (plan.table_size,)
        Nonnegative terms h_e(b) of H; h need not vanish at a*.
    gap : array_like, shape (plan.table_size,)
        Local gaps g_e(b) of Delta; Delta must be 0 at a single joint action and > 0 elsewhere (single entries
        may be negative).
    delta_min : float, optional
        Floor on Delta in the pruning bounds, in (0, smallest positive Delta]; the smallest positive Delta by default.
    k : int
        Number of joint actions to return (the k largest ratios).
    threshold : float
        Only joint actions with ratio >= ``threshold`` are returned (>= 0).
    candidates : array_like, shape (m, N), optional
        Joint actions evaluated first (e.g. the previous working set), to raise the pruning threshold.
    max_states : int
        Per pass, the largest number of stored frontier points, and of partial pairs formed by one merge.
    compiled : bool, optional
        Run the passes compiled (:mod:`optdesign.factored.exact.pareto_kernels`: the same points and answer) or in
        numpy (the reference, which checks the time budget between elimination steps). None (default): compiled
        outside a time budget, and inside one on small plans
        (:func:`optdesign.factored.inference.flat_plan.compiled_by_default`).

    Returns
    -------
    Separation
        ``max_ratio`` (exact when ``exact``), the k best ``actions`` with their ``ratios``, a*, work counters.

    Raises
    ------
    InvalidInputError
        A ``compiled`` option that is not a bool or None, wrong table lengths, negative ``h``, ``threshold`` or
        ``delta_min`` out of range, ``gap`` not zero at a unique joint action, a single joint action, malformed
        ``candidates``.
    InstanceTooLargeError
        A pass would store or form more than ``max_states`` frontier points or pairs, or the bounds over
        completions would exceed the array size limit (:func:`optdesign.validation.sizes.check_array_size`; a ring of
        10^5 agents with K = 10 does).
    TimeLimitReached
        The enclosing :func:`optdesign.runtime.deadline.time_budget` ran out (checked between elimination steps).
    """
    h, gap = as_vector(h, "h", length=plan.table_size), as_vector(gap, "gap", length=plan.table_size)
    if np.any(h < 0):
        raise InvalidInputError("h must be nonnegative")
    k, max_states = as_count(k, "k"), as_count(max_states, "max_states")
    if (threshold := _real(threshold, "threshold")) < 0:
        raise InvalidInputError(f"threshold must be >= 0, got {threshold}")
    # the bounds over completions hold (2 + TANGENTS) values per row and per message entry
    check_array_size((2 + TANGENTS) * float(plan.n_rows + plan.n_functions_flat), "exact separation's bounds",
                     instead="a smaller instance or a narrower elimination order")
    star, dmin = _best_and_gap_min(plan, gap)
    if delta_min is not None:
        delta_min = _real(delta_min, "delta_min")
        rounding = 1e-12 * max(1.0, float(np.abs(gap).max()) * len(plan.scopes))  # Delta_min from other sums
        if not 0 < delta_min <= dmin * (1 + 1e-9) + rounding:
            raise InvalidInputError(f"delta_min must lie in (0, {dmin:.6g}] (the smallest gap), got {delta_min:.6g}")
        dmin = delta_min

    pool = _Pool(plan, h, gap, star)
    pool.add(_single_deviations(plan, star) if candidates is None
             else np.concatenate([_single_deviations(plan, star), _joint(candidates, plan)]))
    _linearise(pool, k)

    # For k > 1 the k-th best evaluated ratio is often far below the true one: try the thresholds
    # best * f first; a pass is conclusive once k actions reach its threshold.
    guesses = [*(pool.ranked()[0][0] * f for f in GUESSES if k > 1 and pool.ratios.size), 0.0]
    compiled = use_compiled(plan, compiled)
    base = _CompiledBounds(plan, h, gap) if compiled else _Bounds(plan, np.stack([h, -gap]))
    elimination = _CompiledElimination if compiled else _Elimination
    n_states = n_pairs = peak = passes = 0
    for guess in guesses:
        passes += 1
        floor = max(threshold, pool.kth(k))
        tau = max(floor, guess)
        solver = elimination(plan, h, gap, star, dmin, k, tau, max_states, base)  # type: ignore[arg-type]
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
    ms = MaxSum(plan, -gap, keep_regrets=False)
    scale = max(1.0, float(np.abs(gap).max()) * len(plan.scopes))
    if abs(ms.value) > 1e-9 * scale:
        raise InvalidInputError(f"gap is inconsistent: the smallest Delta(a) is {-ms.value:.6g}, not 0")
    second = ms.runner_up()  # the second joint action in gap order
    if second is None:
        raise InvalidInputError("the instance has a single joint action: no a != a* to separate")
    if second[0] <= 1e-12 * scale:
        raise InvalidInputError(f"Delta is zero at two joint actions ({ms.best_action.tolist()} and "
                                f"{second[1].tolist()}): a* must be unique")
    return ms.best_action.copy(), float(second[0])


@functools.lru_cache(maxsize=SHARED_PLANS)
def _scope_strides(plan: EliminationPlan) -> tuple[np.ndarray, np.ndarray]:
    """Every factor's scope and C-order strides, padded to the widest scope (stride 0)."""
    width = max((len(s) for s in plan.scopes), default=0)
    scopes = np.zeros((len(plan.scopes), width), dtype=np.int64)
    strides = np.zeros((len(plan.scopes), width), dtype=np.int64)
    for e, s in enumerate(plan.scopes):
        scopes[e, : len(s)] = s
        strides[e, : len(s)] = [math.prod(plan.n_actions[j] for j in s[p + 1:]) for p in range(len(s))]
    return scopes, strides


def _positions(plan: EliminationPlan, actions: np.ndarray) -> np.ndarray:
    """(M, n_factors) flat positions of the group actions of each joint action."""
    scopes, strides = _scope_strides(plan)
    local = np.einsum("mew,ew->me", actions[:, scopes], strides) if scopes.size else 0
    return np.broadcast_to(plan.factor_offsets[:-1] + local, (actions.shape[0], len(plan.scopes))).astype(np.int64)


def _single_deviations(plan: EliminationPlan, star: np.ndarray) -> np.ndarray:
    """The joint actions one agent away from a*, as rows; none when they would hold more than SEED_ENTRIES numbers
    (they only seed the pruning threshold, so the answer does not depend on them: a ring of 20,000 agents would list
    20,000 x 20,000 of them)."""
    if float(sum(K - 1 for K in plan.n_actions)) * plan.n_agents > SEED_ENTRIES:
        return np.zeros((0, plan.n_agents), dtype=np.int64)
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
            self.actions, first = unique_joint_actions(np.concatenate([self.actions, actions]))
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
