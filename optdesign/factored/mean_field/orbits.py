"""T^MF (m = 1) with one allocation per orbit of agents: Kelley's cutting planes in r dimensions, certified.

On the binary classes of :mod:`.mean_field` (a*_i with value p_i, the other K_i - 1 actions with q_i =
(1 - p_i)/(K_i - 1)) and with p shared by the agents of each orbit (:mod:`.symmetry`), the objective

    F(p) = max over class patterns x of sum_e 1{x_e != 0} (prod_{i in S_e} 1/u_i(x_i) + prod_{i in S_e} 1/p_i)

is convex in p in (0, 1)^r (every term is 1 / (product of affine functions of p)), and its minimum equals T^MF
Delta_min^2 (averaging over the group loses nothing). One batched max-sum pass gives F and, by Danskin's theorem,
a subgradient at each point of a batch (the gradient of the maximising pattern's sum). The cuts
F(p) >= F(p_k) + g_k . (p - p_k) are global under-estimators, so the linear program min z over the box [0, 1]^r
bounds min F from below, and the best F(p_k) from above: the bracket is certified at every pass, and a ring of
10^5 agents (r = 1) costs a few dozen max-sum passes instead of a conic program with 8 N rows.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import cast

import numpy as np
import scipy.sparse as sp

from ...errors import TimeLimitReached
from ...result import MeanFieldSolution, relative_gap
from ...runtime.deadline import stop_reason
from ...runtime.solvers import SolveInfo
from ...vocabulary import Status
from ..inference.elimination import EliminationPlan
from ..inference.max_sum import batched_max_sum

# OrbitMeanField is the solver of MeanFieldModel (it takes that model's class maps): reached through it
__all__ = ["MAX_ORBITS"]

# the Kelley search is used when the structure has at most this many orbits with K_i >= 2
MAX_ORBITS = 4
MAX_PASSES = 200
# passes are cheap: the search goes on to this certified gap whatever the caller's tol (a ring of 10 agents: 11
# passes instead of 9 for 1e-6), so the value agrees with the conic program to its accuracy
SEARCH_TOL = 1e-9
# evaluation points stay within this factor of the best point's p and 1 - p
TRUST = 16.0
# the search stops when neither bound moved for this many passes
STALL_PASSES = 5
# points are evaluated this far inside (0, 1) (F is infinite on the boundary); the LP still ranges over [0, 1]^r
INTERIOR = 1e-6


class OrbitMeanField:
    """The tied m = 1 program on a binary class plan: class 0 of agent i is a*_i, class 1 the other K_i - 1 actions.

    ``P`` maps class log-values to the log of each group-action product, ``D`` maps the products to the terms f_e(x)
    (both as in :class:`~optdesign.factored.MeanFieldModel`); ``n_actions`` are the K_i, ``orbits`` labels the agents.
    """

    def __init__(self, class_plan: EliminationPlan, P: sp.csr_matrix, D: sp.csr_matrix, n_actions: Sequence[int],
                 orbits: np.ndarray):
        self.plan, self.P, self.D = class_plan, P, D
        k_full = np.asarray(n_actions, dtype=float)
        n_classes = np.asarray(class_plan.n_actions, dtype=np.int64)
        agent_of_class = np.repeat(np.arange(n_classes.size), n_classes)
        self.is_rest = np.concatenate([np.arange(c) for c in n_classes]) > 0
        # log(K_i - 1) for the rest class (its value is (1 - p) / (K_i - 1))
        self.log_mult = np.zeros(agent_of_class.size)
        self.log_mult[self.is_rest] = np.log(k_full[agent_of_class[self.is_rest]] - 1)
        # agents with K_i = 1 have one class, fixed at 1: only orbits of agents with a choice are variables
        free = n_classes[agent_of_class] > 1
        labels = np.full(agent_of_class.size, -1, dtype=np.int64)
        _, labels[free] = np.unique(orbits[agent_of_class[free]], return_inverse=True)
        self.orbit_of_class, self.free = labels, free
        self.n_orbits = int(labels.max()) + 1 if free.any() else 0
        self.uniform = np.zeros(self.n_orbits)
        self.uniform[labels[free]] = 1.0 / k_full[agent_of_class[free]]

    def log_values(self, points: np.ndarray) -> np.ndarray:
        """Class log-values (n_classes, B) at orbit points (B, r): log p for a*, log((1 - p)/(K - 1)) for the rest."""
        out = np.zeros((self.orbit_of_class.size, points.shape[0]))
        free = self.free
        p = points[:, self.orbit_of_class[free]].T
        out[free] = np.where(self.is_rest[free, None], np.log1p(-p) - self.log_mult[free, None], np.log(p))
        return out

    def evaluate(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """F and one subgradient at every point of the batch (B, r)."""
        log_u = self.log_values(points)
        products = np.exp(-(self.P @ log_u))
        values, patterns = batched_max_sum(self.plan, self.D @ products)
        chosen = self.plan.group_indices(patterns)  # (B, n_factors)
        # D^T of the chosen entries' indicator: each deviating entry, and its factor's a*-entry once per deviation
        batch, n_tab = points.shape[0], self.plan.table_size
        deviating = chosen != self.plan.factor_offsets[:-1]
        column = np.repeat(np.arange(batch) * n_tab, chosen.shape[1]).reshape(chosen.shape)
        hits = np.concatenate([(chosen + column)[deviating], (self.plan.factor_offsets[:-1] + column)[deviating]])
        weight = np.bincount(hits, minlength=batch * n_tab).reshape(batch, n_tab).T
        d_log_u = -(self.P.T @ (products * weight))  # dF / d log u_c
        free = self.free
        p = points[:, self.orbit_of_class[free]].T
        chain = np.where(self.is_rest[free, None], -1.0 / (1.0 - p), 1.0 / p)
        grads = np.zeros((batch, self.n_orbits))
        np.add.at(grads.T, self.orbit_of_class[free], d_log_u[free] * chain)
        return values, grads

    def class_values(self, point: np.ndarray) -> np.ndarray:
        """Class values v (p for a*, (1 - p)/(K - 1) for the rest) at one orbit point (r,)."""
        return np.exp(self.log_values(point[None, :])[:, 0])

    def solve(self, tol: float, *, max_passes: int = MAX_PASSES) -> MeanFieldSolution:
        """Kelley's method from the uniform allocation; every pass evaluates the LP minimiser and its r-neighbours.
        A time budget that runs out ends the search with the bracket so far (status ``"not_converged"``), or raises
        TimeLimitReached during the first pass."""
        start = time.perf_counter()
        r = self.n_orbits
        if r == 0:
            value = float(self.evaluate(np.zeros((1, 0)))[0][0])
            return self._result(np.zeros(0), value, value, 0, "optimal", start, cuts=1)
        eye = np.eye(r)
        batch = np.vstack([self.uniform, self.uniform + eye * self.uniform * 0.5, self.uniform * 0.5])
        points, values, grads = [], [], []
        lower, model_min, scale, step = 0.0, -np.inf, None, 0.25
        status: Status = "max_passes"
        passes, stalled, last = 0, 0, (np.inf, -np.inf)
        while passes < max_passes:
            batch = np.clip(batch, INTERIOR, 1.0 - INTERIOR)
            try:  # under a time budget (optdesign.runtime.deadline): the bracket of the passes so far
                f, g = self.evaluate(batch)
            except TimeLimitReached:
                if not passes:
                    raise
                status = stop_reason()
                break
            passes += 1
            scale = scale or float(f.min())
            points.append(batch)
            values.append(f / scale)
            grads.append(g / scale)
            P_, F_, G_ = np.vstack(points), np.concatenate(values), np.vstack(grads)
            best = int(np.argmin(F_))
            minimiser, bound = (self._model_min_1d if r == 1 else self._model_min_lp)(F_, G_, P_, best, lower)
            if minimiser is None:  # the LP solver gave up (seen at gaps near 1e-8 in three dimensions)
                status = "lp_failed"
                break
            model_min = max(model_min, bound)  # early models can be negative: progress is measured on them
            lower = max(lower, bound)
            if relative_gap(F_[best], lower) <= min(tol, SEARCH_TOL):
                break
            stalled = stalled + 1 if (F_[best], model_min) == last else 0
            last = (F_[best], model_min)
            if stalled >= STALL_PASSES:
                status = "stalled"
                break
            # evaluate within a factor TRUST of the best point's p and 1 - p (any point gives a valid cut; points near
            # the boundary give steep, uninformative ones)
            centre = np.clip(minimiser, P_[best] / TRUST, 1.0 - (1.0 - P_[best]) / TRUST)
            step = max(min(step, float(np.max(np.abs(centre - P_[best])))), 1e-12)
            batch = np.vstack([centre, centre + eye * step / 2, centre - eye * step / 2])
        best = int(np.argmin(np.concatenate(values)))
        upper = float(np.concatenate(values)[best])
        # the caller's tol decides: an early stop whose certificate meets it is a solve
        status = "optimal" if relative_gap(upper, lower) <= tol else status
        scale = cast(float, scale)  # set by the first pass
        return self._result(np.vstack(points)[best], upper * scale, lower * scale, passes, status, start,
                            cuts=len(np.concatenate(values)))

    @staticmethod
    def _model_min_lp(F: np.ndarray, G: np.ndarray, P: np.ndarray, best: int,
                      lower: float) -> tuple[np.ndarray | None, float]:
        """Minimiser and certified minimum of the cutting-plane model max_k F_k + g_k (p - p_k) over [0, 1]^r.

        The LP is written in p - p_best and (z - F_best) / sigma, sigma the current gap, so its tolerances stay
        relative to the gap (rows normalised). Its multipliers, renormalised into a convex combination of the cuts,
        give the bound min over the box of that combination, whatever the LP solver's accuracy.
        """
        from scipy.optimize import linprog  # scipy.optimize costs 0.6 s to import: only when r > 1

        r = P.shape[1]
        sigma = max(F[best] - lower, 1e-12 * F[best])
        A = np.hstack([G, -sigma * np.ones((F.size, 1))])
        norm = np.linalg.norm(A, axis=1)
        b = np.einsum("kr,kr->k", G, P - P[best]) - (F - F[best])
        lp = linprog(np.r_[np.zeros(r), 1.0], A_ub=A / norm[:, None], b_ub=b / norm,
                     bounds=[(-x, 1.0 - x) for x in P[best]] + [(None, None)], method="highs")
        if lp.status != 0:
            return None, 0.0
        mu = np.clip(-lp.ineqlin.marginals / norm, 0.0, None)
        if mu.sum() <= 0:
            return P[best] + lp.x[:r], 0.0
        mu = mu / mu.sum()
        corner = (mu @ G < 0).astype(float)  # the box corner minimising the combination
        return P[best] + lp.x[:r], float(mu @ (F + np.einsum("kr,kr->k", G, corner - P)))

    @staticmethod
    def _model_min_1d(F: np.ndarray, G: np.ndarray, P: np.ndarray, best: int,
                      lower: float) -> tuple[np.ndarray | None, float]:
        """The same in one dimension, exactly: min over [0, 1] of max_k l_k(p) is the largest, over pairs of a
        non-increasing cut l_k and a non-decreasing cut l_l, of min_p max(l_k, l_l) (each pair alone is a valid
        bound): where they cross, or at the box end the crossing lies beyond. Values are taken on the flatter
        cut of the pair, in the form F_k + g_k (p - p_k), so steep cuts from near the boundary lose no precision."""
        g, x = G[:, 0], P[:, 0]
        down, up = np.flatnonzero(g <= 0), np.flatnonzero(g >= 0)
        if not down.size or not up.size:  # monotone model: its minimum is at an end of the box
            end = 0.0 if not down.size else 1.0
            return np.array([end]), float(np.max(F + g * (end - x)))
        d, u = down[:, None], up[None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            # l_d(p) = l_u(p) at p = (F_d - F_u + g_u x_u - g_d x_d) / (g_u - g_d), written around p_best
            x0 = P[best, 0]
            cross = x0 + ((F[d] - F[u]) + g[u] * (x[u] - x0) - g[d] * (x[d] - x0)) / (g[u] - g[d])
        cross = np.where(g[u] > g[d], cross, 0.0)
        at = np.clip(cross, 0.0, 1.0)
        flatter = np.where(np.abs(g[d]) <= np.abs(g[u]), d, u)
        k = np.where(cross >= 1.0, d, np.where(cross <= 0.0, u, flatter))
        value = F[k] + g[k] * (at - x[k])
        best_pair = np.unravel_index(np.argmax(value), value.shape)
        return np.array([at[best_pair]]), float(value[best_pair])

    def _result(self, point: np.ndarray, upper: float, lower: float, passes: int, status: Status, start: float,
                cuts: int) -> MeanFieldSolution:
        info = SolveInfo(status, "orbit-kelley", time.perf_counter() - start)
        return MeanFieldSolution(class_v=self.class_values(point), t=upper, upper=upper, lower=lower,
                                 gap=relative_gap(upper, lower), info=info, compile_time=0.0, orbit_point=point,
                                 passes=passes, cuts=cuts)
