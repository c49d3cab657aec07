"""LinGapE, linear gap-based exploration (Xu, Honda & Sugiyama, AISTATS 2018, "A fully adaptive algorithm
for pure exploration in linear bandits", Alg. 1), fixed confidence, as Fiez et al. (2019) ran it (epsilon = 0,
regulariser lambda = 1, the ratio arm selection of the authors' code LIN_GAP_ELIM.py); its top-m versions m-LinGapE
and LinGIFA (Réda, Kaufmann & Delahaye-Duriez, AISTATS 2021).

After one pull of every arm, with the ridge estimate theta_t = (lambda I + A_t)^{-1} b_t on all samples:

* empirical best i_t = argmax_z z^T theta_t and most ambiguous item
  j_t = argmax_{j != i_t} (z_j - z_{i_t})^T theta_t + beta_t(i_t, j_t), B(t) = that maximum;
* confidence width beta_t(i, j) = ||z_i - z_j||_{(lambda I + A_t)^{-1}} C_t with (Abbasi-Yadkori et al. 2011,
  Thm 2, and a union over the K^2 pairs)

      C_t = sigma sqrt(2 log(K^2 det(lambda I + A_t)^{1/2} / (delta lambda^{d/2}))) + lambda^{1/2} S,

  S >= ||theta|| (default: the instance's ||theta||, the bound the authors' code reads), K = |Z|;
* stopping: B(t) <= epsilon (epsilon = 0: every competitor's upper confidence gap is below zero), recommend i_t;
* arm selection for the direction y = z_{i_t} - z_{j_t}: ``selection="ratio"`` (the paper's ratio rule, the
  default of the code Fiez et al. ran) pulls argmin_a T_a / p_a(y), with p(y) = |w| / ||w||_1 for the
  minimum-L1 representation y = sum_a w_a x_a (a linear program, solved once per pair); ``"greedy"`` (the
  paper's greedy rule) pulls argmin_a ||y||^2_{(A + x_a x_a^T)^{-1}}.

Items Z may differ from the arms X (transductive): the items define i_t, j_t and y, the arms are pulled.

``width="frequentist"`` takes the confidence width of Réda et al.'s code instead (their "Frequentist" beta, after
Abbasi-Yadkori et al.), with lambda' = sigma / eta, L = max_k ||x_k|| and t the samples so far:

    C_t = sigma sqrt(2 log(1 / delta) + d log(1 + (t + 1) L^2 / (lambda'^2 d))) + lambda' S,

Abbasi-Yadkori et al.'s bound for the ridge lambda'^2. The estimate keeps the ridge ``lam``: their m-LinGapE's is 1
(``LinGapE``'s default), their LinGIFA's is lambda'^2 = (sigma / eta)^2 (``lam=None``, :class:`LinGIFA`'s default,
takes it under this width), in theta_t, in the widths' norms and in the greedy selection alike.

Top m (``m`` > 1; Réda et al. 2021, Alg. 1 with their gap indices B_ij(t) = (z_i - z_j)^T theta_t + beta_t(i, j), an
upper confidence bound on how much item i beats item j, and K^2 in C_t covering every pair):

* m-LinGapE (``LinGapE(m=...)``; m = 1 is LinGapE): J(t) the m empirical best items, b_t = argmax_{j in J(t)}
  max_{i not in J(t)} B_ij(t), c_t = argmax_{i not in J(t)} B_{i b_t}(t); stop at B_{c_t b_t}(t) <= epsilon;
* LinGIFA (:class:`LinGIFA`, a linear UGapE): the index B_j(t) = m-th largest of B_ij(t) over i != j, J(t) the m
  items of smallest index, b_t = argmax_{j in J(t)} B_j(t), c_t as above; stop at max_{j in J(t)} B_j(t) <= epsilon;
* both pull for y = z_{b_t} - z_{c_t} by the selection rule and recommend J(t) (a set of items: the top-m problem of
  :mod:`bandits.pure_exploration.linear_sets` scores it).

Batches: the rule is re-evaluated on a geometric grid of times (``growth``, default 1 %: the stopping time
overshoots by at most that fraction); within a batch the direction is fixed and the selection rule is applied
pull by pull (ratio: by tracking p(y) on its support; greedy: one Sherman–Morrison update per pull).
``growth=0`` re-evaluates after every pull as in the paper. The confidence bound holds at all times at once,
so checking the stopping rule on a subset of times keeps the run delta-correct.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import linprog

from optdesign.errors import InvalidInputError
from optdesign.validation import as_count

from ..core.algorithm import Algorithm, Policy
from ..core.environments import LinearBandit
from ..core.statistics import LinearStatistics
from ..core.tracking import portion, track
from ..core.validation import check_choice, check_growth, is_number
from ..pure_exploration.linear import LinearProblem
from ..pure_exploration.linear_sets import LinearTopMProblem
from ..pure_exploration.pieces import GLRStatistic
from ..pure_exploration.policy import PureExplorationPolicy
from ..pure_exploration.problem import Problem
from ..pure_exploration.sampler import Observations, SamplerState
from ..pure_exploration.stop import GapStop
from .common import linear_items

__all__ = ["LinGIFA", "LinGapE"]

SELECTIONS = ("ratio", "greedy")
#: the confidence widths C_t: this module's bound, or Réda et al.'s "Frequentist" beta (module docstring)
WIDTHS = ("bound", "frequentist")


def check_norm_bound(S: object) -> None:
    """Refuse a norm bound ``S`` that is neither None nor a nonnegative number (InvalidInputError)."""
    if S is not None and (isinstance(S, bool) or not isinstance(S, (int, float, np.integer, np.floating))
                          or not (np.isfinite(S) and S >= 0)):
        raise InvalidInputError(f"S (bound on ||theta||) must be a nonnegative number, got {S!r}")


def l1_ratio(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """p(y) = |w| / ||w||_1 for w = argmin ||w||_1 subject to X^T w = y (Xu et al. 2018, ratio selection), by
    linear programming on w = u - v, u, v >= 0. ``X`` holds the arms (K x d), ``y`` the direction (d,); raises
    InvalidInputError when y is not in the span of the arms."""
    K = X.shape[0]
    res = linprog(np.ones(2 * K), A_eq=np.hstack([X.T, -X.T]), b_eq=y, bounds=(0, None), method="highs")
    if res.status != 0:
        raise InvalidInputError(f"the direction y cannot be written as a combination of the arms ({res.message})")
    w = np.abs(res.x[:K] - res.x[K:])
    return w / w.sum()


@dataclass(frozen=True)
class LinGapE(Algorithm[LinearBandit]):
    """LinGapE (Xu, Honda & Sugiyama 2018) with gap tolerance ``epsilon`` >= 0, ridge ``lam`` > 0, norm bound
    ``S`` (None: ||theta||), arm ``selection`` "ratio" or "greedy", decision grid ``growth``; see the module
    docstring.

    Parameters
    ----------
    epsilon : float
        Gap tolerance (>= 0): stop when B(t) <= epsilon, i.e. the recommendation is epsilon-good (default 0:
        the best item).
    lam : float or None
        Ridge regulariser lambda > 0 of theta_t = (lambda I + A_t)^{-1} b_t and of C_t (default 1); None: (sigma /
        eta)^2 under ``width="frequentist"`` (the ridge of that width, Réda et al.'s LinGIFA), 1 under ``"bound"``.
    S : float or None
        Bound S >= ||theta|| in C_t; None reads the instance's ||theta|| (an oracle bound, as the authors' code).
    selection : str
        Arm selection for the direction z_i - z_j: ``"ratio"`` (argmin_a T_a / p_a(y), default) or ``"greedy"``
        (argmin_a ||y||^2 of the information after pulling a).
    growth : float
        Relative step in [0, 1] of the decision grid (default 1 %); 0 re-decides after every pull as the paper.
    m : int
        The answer's size (default 1, the best item; above 1 the m best items, m-LinGapE).
    width : str
        The confidence width C_t: ``"bound"`` (default, above) or ``"frequentist"`` (Réda et al.'s code).
    eta : float
        The ``"frequentist"`` width's eta > 0 (their 20).

    Raises
    ------
    InvalidInputError
        A negative epsilon, a nonpositive lam, a negative S, an unknown selection or width, growth outside [0, 1],
        m below 1 or a nonpositive eta.
    """

    epsilon: float = 0.0
    lam: float | None = 1.0
    S: float | None = None
    selection: str = "ratio"
    growth: float = 0.01
    m: int = 1
    width: str = "bound"
    eta: float = 20.0

    def __post_init__(self) -> None:
        if not (is_number(self.epsilon) and self.epsilon >= 0):
            raise InvalidInputError(f"epsilon (gap tolerance) must be a nonnegative number, got {self.epsilon!r}")
        if self.lam is not None and not (is_number(self.lam) and self.lam > 0):
            raise InvalidInputError(f"lam (ridge regulariser) must be a positive number or None, got {self.lam!r}")
        check_norm_bound(self.S)
        check_choice(self.selection, "selection", SELECTIONS)
        check_choice(self.width, "width", WIDTHS)
        if not (is_number(self.eta) and self.eta > 0):
            raise InvalidInputError(f"eta (of the frequentist width) must be a positive number, got {self.eta!r}")
        check_growth(self.growth)
        as_count(self.m, "m (the size of the answer)")

    @property
    def name(self) -> str:
        """``lingape``."""
        return "lingape"

    def ridge(self, sigma: float) -> float:
        """The ridge lambda of a run: ``lam``, or when it is None (sigma / eta)^2 under the frequentist width and 1
        under the bound.

        Parameters
        ----------
        sigma : float
            The instance's noise level.

        Returns
        -------
        float
            lambda > 0.
        """
        if self.lam is not None:
            return float(self.lam)
        return (float(sigma) / self.eta) ** 2 if self.width == "frequentist" else 1.0

    def start(self, env: LinearBandit, delta: float, rng: np.random.Generator) -> Policy:
        """A run at confidence ``delta`` under its own stop, B(t) <= epsilon (deterministic: ``rng`` is unused); the
        top-m problem scores it when m > 1."""
        problem = LinearProblem(env.X, env.Z, env.sigma) if self.m == 1 else \
            LinearTopMProblem(env.X, env.Z, self.m, env.sigma)
        return PureExplorationPolicy(problem, _LinGapEState(self, env, delta), GapStop(self.epsilon), self.growth)

    def describe(self) -> dict[str, Any]:
        """The options as a flat record, with the question (``problem = "top-m:m=M"``) when m > 1, so study reports
        give the top-m lower bound.

        Returns
        -------
        dict
            ``{"algorithm": name, option: value, ...}``.
        """
        record = super().describe()
        if self.m > 1:
            record["problem"] = f"top-m:m={self.m}"
        return record


@dataclass(frozen=True)
class LinGIFA(LinGapE):
    """LinGIFA (Réda, Kaufmann & Delahaye-Duriez 2021): the UGapE indices of the m best items on linear arms, under
    the stop max_{j in J(t)} B_j(t) <= epsilon (module docstring); the options are LinGapE's, with greedy arm
    selection by default (the authors' experiments).

    Parameters
    ----------
    epsilon, S, growth, m, width, eta
        As :class:`LinGapE`.
    lam : float or None
        As :class:`LinGapE`, with default None: 1 under the bound, (sigma / eta)^2 under ``width="frequentist"``, the
        ridge of the authors' LinGIFA (their code: B_inv = I / lambda'^2 with lambda' = sigma / eta; their m-LinGapE
        keeps 1).
    selection : str
        ``"greedy"`` (default) or ``"ratio"``.

    Raises
    ------
    InvalidInputError
        As :class:`LinGapE`.
    """

    lam: float | None = None
    selection: str = "greedy"

    @property
    def name(self) -> str:
        """``lingifa``."""
        return "lingifa"


class _LinGapEState(SamplerState):
    def __init__(self, algo: LinGapE, env: LinearBandit, delta: float) -> None:
        self.algo = algo
        self.X, self.Z, self.sigma = env.X, linear_items(env), env.sigma
        self.delta = float(delta)
        self.S = float(np.linalg.norm(env.theta)) if algo.S is None else float(algo.S)
        self.lam = algo.ridge(env.sigma)  # the ridge lambda of theta_t, the norms and the selection
        self.stats = LinearStatistics(self.X)
        self.solve_time = 0.0
        self._ratios: dict[tuple[int, int], np.ndarray] = {}
        self._state: tuple[int, int, float] | None = None  # (b_t, c_t, B(t)) at the current time
        self._top = np.zeros(0, dtype=np.int64)  # J(t)
        self.theta: np.ndarray | None = None

    @property
    def initialised(self) -> bool:
        """Every arm pulled once (the paper's initialisation)."""
        return bool(np.all(self.stats.counts >= 1))

    def confidence(self, logdet: float) -> float:
        """C_t = sigma sqrt(2 log(K^2 det(lam I + A)^{1/2} / (delta lam^{d/2}))) + lam^{1/2} S, or the frequentist
        width (module docstring)."""
        d, lam, K = self.X.shape[1], self.lam, self.Z.shape[0]
        if self.algo.width == "frequentist":
            t, scale = float(self.stats.counts.sum()), self.sigma / self.algo.eta
            L2 = float(np.max(np.einsum("ij,ij->i", self.X, self.X)))
            log_term = 2.0 * np.log(1.0 / self.delta) + d * np.log(1.0 + (t + 1.0) * L2 / (scale**2 * d))
            return float(self.sigma * np.sqrt(log_term) + scale * self.S)
        log_term = 2.0 * np.log(K) + 0.5 * logdet - np.log(self.delta) - 0.5 * d * np.log(lam)
        return float(self.sigma * np.sqrt(2.0 * log_term) + np.sqrt(lam) * self.S)

    def _decide(self) -> tuple[int, int, float]:
        """(b_t, c_t, B(t)) at the current counts (module docstring), kept until the next observation."""
        if self._state is None:
            d = self.X.shape[1]
            V = self.lam * np.eye(d) + self.stats.A
            L = np.linalg.cholesky(V)
            logdet = 2.0 * float(np.sum(np.log(np.diag(L))))
            self.theta = np.linalg.solve(V, self.stats.b)
            scores = self.Z @ self.theta
            gifa = isinstance(self.algo, LinGIFA)
            order = np.argsort(-scores, kind="stable")
            top = order[: self.algo.m]
            columns = np.arange(scores.size) if gifa else top
            B = self._indices(scores, L, columns, self.confidence(logdet))  # B[i, j]: how much i may beat j
            if gifa:  # UGapE's indices: the m-th largest B_ij over i != j; J(t) the m smallest
                index = np.sort(B, axis=0)[-self.algo.m]
                top = np.sort(np.argsort(index, kind="stable")[: self.algo.m])
            else:
                index = np.full(scores.size, -np.inf)
                index[top] = np.max(np.delete(B, top, axis=0), axis=0) if top.size < scores.size else -np.inf
            outside = np.setdiff1d(np.arange(scores.size), top)
            b = int(top[np.argmax(index[top])])
            column = B[:, b] if gifa else B[:, int(np.flatnonzero(top == b)[0])]
            c = int(outside[np.argmax(column[outside])])
            self._top = top
            self._state = (b, c, float(index[b] if gifa else column[c]))
        return self._state

    def _indices(self, scores: np.ndarray, L: np.ndarray, columns: np.ndarray, C: float) -> np.ndarray:
        """B_ij = (z_i - z_j)^T theta + C ||z_i - z_j||_{V^{-1}} (V = L L^T) for every item i and the items
        ``columns`` j (-inf where i = j): one triangular solve per column for a few columns, a Gram matrix for all."""
        if columns.size > self.algo.m:
            W = np.linalg.solve(L, self.Z.T)
            gram = W.T @ W
            sq = np.diag(gram)[:, None] + np.diag(gram)[None, columns] - 2.0 * gram[:, columns]
            norms = np.sqrt(np.maximum(sq, 0.0))
        else:
            norms = np.stack([np.sqrt(np.sum(np.linalg.solve(L, (self.Z - self.Z[j]).T) ** 2, axis=0))
                              for j in columns], axis=1)
        B = scores[:, None] - scores[None, columns] + C * norms
        B[columns, np.arange(columns.size)] = -np.inf
        return B

    def initial(self, problem: Problem, budget: int) -> np.ndarray:
        """One pull of every arm (a share when the budget is smaller)."""
        return portion(np.maximum(1 - self.stats.counts, 0), budget)

    def batch(self, obs: Observations, n: int) -> np.ndarray:
        """The arms not pulled yet, then the pulls of the pair (i_t, j_t) up to the next checkpoint."""
        if not self.initialised:
            return self.initial(obs.problem, obs.budget)
        return self.plan(obs, min(n, obs.budget))

    def plan(self, obs: Observations, n: int) -> np.ndarray:
        i, j, _ = self._decide()
        size = n  # growth 0: one pull
        y = self.Z[i] - self.Z[j]
        if self.algo.selection == "ratio":
            if (i, j) not in self._ratios:
                with self.solving():
                    self._ratios[(i, j)] = l1_ratio(self.X, y)
            p = self._ratios[(i, j)]
            counts = np.zeros(self.X.shape[0], dtype=np.int64)
            support = np.flatnonzero(p > 1e-12)
            if size == 1:  # the paper's rule exactly: argmin_a T_a / p_a
                counts[support[np.argmin(self.stats.counts[support] / p[support])]] = 1
            else:
                counts[support] = track(self.stats.counts[support], p[support], size)
            return counts
        return self._greedy(y, size)

    def _greedy(self, y: np.ndarray, size: int) -> np.ndarray:
        """``size`` pulls of argmin_a y^T (V + x_a x_a^T)^{-1} y, V updated after each (Sherman–Morrison)."""
        X = self.X
        Vinv = np.linalg.inv(self.lam * np.eye(X.shape[1]) + self.stats.A)
        counts = np.zeros(X.shape[0], dtype=np.int64)
        for _ in range(size):
            u, G = Vinv @ y, X @ Vinv
            # y^T (V + x x^T)^{-1} y = y^T V^{-1} y - (x^T V^{-1} y)^2 / (1 + x^T V^{-1} x): maximise the decrease
            gain = (X @ u) ** 2 / (1.0 + np.einsum("ij,ij->i", G, X))
            k = int(np.argmax(gain))
            counts[k] += 1
            g = G[k]
            Vinv -= np.outer(g, g) / (1.0 + g @ X[k])
        return counts

    def observe(self, counts: np.ndarray, sums: np.ndarray) -> None:
        self.stats.add(counts, sums)
        self._state = None

    def gap_index(self) -> float | None:
        """B(t), the largest upper confidence bound on a gap to the empirical best (None before every arm is pulled)."""
        return self._decide()[2] if self.initialised else None

    def recommendation(self) -> int:
        """J(t), the empirical best item (m = 1) or the m items as a bit mask, of the regularised estimate (0 before
        any pull)."""
        if self.stats.n == 0:
            return 0
        b = self._decide()[0]
        return b if self.algo.m == 1 else sum(1 << int(k) for k in self._top)

    def describe(self, statistic: GLRStatistic | None) -> dict[str, Any]:
        if not self.initialised:
            return {}
        i, j, B = self._decide()
        return {"best": i, "challenger": j, "B": B}
