"""The factored GLRT (MF-TaS §6.3). From theta_hat_e(b) = sum / N per group action (the factored problem's estimate)
and a_hat = argmax_a sum_e theta_hat_e(a_e) (max-sum), the Gaussian GLR statistic is

    Lambda_t = min_{a != a_hat} D(a)^2 / (2 sigma^2 H(a)),
    D(a) = sum_e (theta_hat_e(a_hat_e) - theta_hat_e(a_e)),   H(a) = sum_e h_e(a_e),
    h_e(b) = 1{b != a_hat_e} (1/N_{e,a_hat_e} + 1/N_{e,b}),

the closed form of inf over {lambda : lambda(a) >= lambda(a_hat)} of sum_{e,b} N_{e,b} (theta_hat_e(b) -
lambda_e(b))^2 / (2 sigma^2). Both D and H are factored, so max-sum maximises each, but not their ratio.

**Exact statistic** (:meth:`GLRState.exact`). Joint actions are listed in nondecreasing D by best-first enumeration
(``MaxSum(plan, theta_hat).iter_best()``); with lambda the smallest ratio listed so far and D_k the next gap, every
unlisted action has ratio >= LB(D_k), from two bounds on H: H <= H_max (one max-sum on h) and the Lagrangian cuts
H(a) <= (D(a) - g(c)) / c, g(c) = min_{a != a_hat} [D(a) - c H(a)] (one max-sum and a 2-best step). Enumeration
stops, exactly, once LB(D_k) >= lambda (derivations, and the cuts' effect at MF-TaS's stopping times: the *Notes*
page of the documentation, section "The factored GLRT"). Cuts are added at the tangent slope c = D_0 / (2 H_0) of
the level curve D = sqrt(2 sigma^2 lambda H) through the current minimiser (D_0, H_0).

**Threshold test** (:meth:`GLRState.exceeds`): the same search, for "Lambda_t > beta". It fails as soon as some listed
action has ratio <= beta, which is usually the second-best action and costs one max-sum. It passes once LB(D_k) > beta.

**Conservative statistic** (:meth:`GLRState.conservative`): D_min^2 / (2 sigma^2 H_max) <= Lambda_t, with
D_min the empirical second-best gap (delta-PAC still: stopping on a lower bound of Lambda can only stop later).

A search is capped at ``max_enumerated`` listed actions. Past the cap it returns the certified lower bound
min(lambda, LB(D_k)) <= Lambda_t (``exact=False``), so the stopping rule stays delta-correct. A single-factor
instance (plain best-arm identification) and a structure of at most ``ENUMERATE_ALL`` joint actions take a
vectorised path: every alternative's D and H at once (D kept when a state is reweighted at the same theta_hat).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from optdesign import FactorGraph
from optdesign.errors import InvalidInputError
from optdesign.factored import EnumeratedSeparation, MaxSum
from optdesign.validation import as_count

from .joint_actions import GroupIndexer

__all__ = ["FactoredGLRT", "GLRState", "GLRValue"]

#: the ``glrt`` options of the factored algorithms
GLRT_MODES = ("exact", "conservative")
#: relative safety margin on the enumeration bound (gaps from summed regrets vs direct sums)
BOUND_MARGIN = 1e-9
#: structures of at most this many joint actions are read whole (vectorised), without the search
ENUMERATE_ALL = 2048


@dataclass(frozen=True)
class GLRValue:
    """Lambda_t with its certificate: ``value`` is exact when ``exact``, else a certified lower bound."""

    #: Lambda_t, or a certified lower bound on it
    value: float
    #: whether ``value`` is Lambda_t itself (the search closed within ``max_enumerated``)
    exact: bool
    #: alternatives listed by the best-first enumeration
    enumerated: int
    #: Lagrangian cuts added
    cuts: int


class FactoredGLRT:
    """The factored GLRT for one structure (module docstring): ``glrt(theta_hat, counts)`` is a :class:`GLRState`.

    Parameters
    ----------
    structure : FactorGraph
        Agents, action counts and scopes (the mean tables are not read).
    indexer : GroupIndexer, optional
        The structure's indexer, when one exists already (built otherwise).
    sigma : float
        Noise standard deviation of every observation.
    max_enumerated : int
        Cap on the alternatives a search lists; past it the statistic is a certified lower bound.
    max_cuts : int
        Cap on the Lagrangian cuts of a search (0: the H_max bound alone).

    Raises
    ------
    InvalidInputError
        ``max_enumerated`` < 1 or ``max_cuts`` < 0.
    """

    def __init__(self, structure: FactorGraph, indexer: GroupIndexer | None = None, *, sigma: float = 1.0,
                 max_enumerated: int = 20_000, max_cuts: int = 8) -> None:
        if max_enumerated < 1 or max_cuts < 0:
            raise InvalidInputError("max_enumerated must be >= 1 and max_cuts >= 0")
        self.plan = structure.plan()
        self.indexer = indexer or GroupIndexer(structure)
        self.sigma2, self.max_enumerated, self.max_cuts = float(sigma) ** 2, int(max_enumerated), int(max_cuts)
        self.single = structure.n_factors == 1 and len(structure.scopes[0]) == structure.n_agents  # plain BAI

    def __call__(self, theta: npt.ArrayLike, counts: npt.ArrayLike) -> GLRState:
        return GLRState(self, np.asarray(theta, dtype=float), np.asarray(counts))


class GLRState:
    """Lambda_t for one (theta_hat, N): the empirical best ``best`` and a resumable search.

    The answers share one search, resumed where the last stopped; ``found`` is the smallest ratio listed so far.

    Parameters
    ----------
    glrt : FactoredGLRT
        The test (structure, sigma, caps).
    theta : ndarray, shape (Abar,)
        theta_hat, the empirical means.
    counts : ndarray of int, shape (Abar,)
        N_{e,b}, the observation counts (or positive weights).
    same_theta : GLRState, optional
        A state at the same theta_hat: its a_hat and gaps D(a) are reused (a reweighting; only H is new).

    Raises
    ------
    InvalidInputError
        ``same_theta`` belongs to another test or holds another theta_hat.
    """

    def __init__(self, glrt: FactoredGLRT, theta: npt.NDArray[np.float64], counts: np.ndarray, *,
                 same_theta: GLRState | None = None) -> None:
        self.glrt, self.theta = glrt, theta
        ix = glrt.indexer
        read_whole = glrt.single or math.prod(glrt.plan.n_actions) <= ENUMERATE_ALL
        self._enumerated_gaps: tuple[np.ndarray, np.ndarray] | None = None  # the alternatives and D(a): theta alone
        if same_theta is not None:
            if same_theta.glrt is not glrt or not np.array_equal(same_theta.theta, theta):
                raise InvalidInputError("same_theta must be a state of this test at the same theta_hat")
            self.maxsum: MaxSum | None = same_theta.maxsum
            self.best: np.ndarray = same_theta.best
            self._enumerated_gaps = same_theta._enumerated_gaps
        else:
            self.maxsum = None if read_whole else MaxSum(glrt.plan, theta)  # built by the search when it needs it
            self.best = self._enumerated_best() if self.maxsum is None else self.maxsum.best_action.copy()
        self.star = ix.flat(self.best[None, :])[0]
        self.top = float(theta[self.star].sum())
        inv = np.divide(1.0, counts, out=np.full(counts.shape, np.inf), where=counts != 0)  # 1 / N, inf where N = 0
        self.h = h = inv + inv[self.star][ix.factor_of]
        h[self.star] = 0.0
        self.gap = theta[self.star][ix.factor_of] - theta  # theta_hat_e(a_hat_e) - theta_hat_e(b): D(a) sums them
        self.unobserved = bool(np.any(counts <= 0))
        self.found = np.inf  # smallest ratio among listed alternatives
        self._argmin: tuple[float, float] | None = None  # (D, H) of that alternative
        #: the listed alternative of smallest ratio (the best response when the search is exact)
        self.argmin_action: np.ndarray | None = None
        self.enumerated = 0
        self.exhausted = False  # every alternative listed, or the bound proved the minimum
        self._cuts: list[tuple[float, float]] = []
        self._hmax: float | None = None
        self._iter: Iterator[tuple[float, np.ndarray]] | None = None
        self._pending: tuple[float, np.ndarray] | None = None
        self._dmin: float | None = None
        if self.unobserved:  # an alternative can move an unobserved mean at no cost
            self.found, self.exhausted = 0.0, True
        elif read_whole:
            self._enumerate_all()

    def _ratio(self, D: float, H: float) -> float:
        return D * D / (2.0 * self.glrt.sigma2 * H) if D > 0 else 0.0

    def gaps(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The group actions of joint actions, their gaps D(a) = sum_e gap_e(a_e) and variances H(a) = sum_e h_e(a_e).

        Parameters
        ----------
        actions : numpy.ndarray of int, shape (R, N)
            Valid joint actions, one per row (unchecked, as
            :meth:`~bandits.multiagent.joint_actions.GroupIndexer.flat`: the search's hot path).

        Returns
        -------
        tuple of numpy.ndarray
            ``(flat, D, H)``: flat of shape (R, n_factors), D and H of shape (R,).
        """
        flat = self.glrt.indexer.flat(actions)
        return flat, self.gap[flat].sum(axis=1), self.h[flat].sum(axis=1)

    def _evaluate(self, action: np.ndarray) -> tuple[float, float]:
        _, D, H = self.gaps(action[None, :])
        return float(D[0]), float(H[0])

    def _record(self, D: float, H: float, action: np.ndarray) -> None:
        r = self._ratio(D, H)
        if r < self.found or self.argmin_action is None:
            self.found, self._argmin, self.argmin_action = min(r, self.found), (D, H), action.copy()

    @property
    def h_max(self) -> float:
        """H_max = max_a H(a), one max-sum on the table h."""
        if self._hmax is None:
            self._hmax = MaxSum(self.glrt.plan, self.h).value
        return self._hmax

    def _peek(self) -> tuple[float, np.ndarray] | None:
        """The next (gap, action) of the best-first enumeration (a_hat itself skipped), or None."""
        if self._pending is None and not self.exhausted:
            if self._iter is None:
                self.maxsum = self.maxsum or MaxSum(self.glrt.plan, self.theta)
                self._iter = self.maxsum.iter_best()
                next(self._iter)  # a_hat, gap 0
            self._pending = next(self._iter, None)
            self.exhausted = self._pending is None
            if self._dmin is None:  # the first alternative listed is the empirical second best
                self._dmin = np.inf if self._pending is None else max(float(self._pending[0]), 0.0)
        return self._pending

    def _add_cut(self) -> None:
        """Lagrangian cut at the tangent slope through the current minimiser (module docstring)."""
        if self._argmin is None or len(self._cuts) >= self.glrt.max_cuts or min(self._argmin) <= 0:
            return
        D0, H0 = self._argmin
        c = D0 / (2.0 * H0)
        if any(abs(c - c_old) <= 1e-12 * c for c_old, _ in self._cuts):
            return
        ms = MaxSum(self.glrt.plan, self.theta + c * self.h)
        for _, a in ms.iter_best():  # the minimiser of D - cH over a != a_hat: at most the 2nd item
            if not np.array_equal(a, self.best):
                D, H = self._evaluate(a)
                self._cuts.append((c, D - c * H))
                self._record(D, H, a)
                return

    def lower_bound(self, D: float) -> float:
        """Lower bound on the ratio of every alternative with gap >= D (both bounds of the docstring).

        Parameters
        ----------
        D : float
            A gap D(a) = theta_hat(a_hat) - theta_hat(a) >= 0.

        Returns
        -------
        float
            max of D^2 / (2 sigma^2 H_max) and the cuts' bounds, shrunk by ``BOUND_MARGIN``.
        """
        s2 = 2.0 * self.glrt.sigma2
        lb = D * D / (s2 * self.h_max) if self.h_max > 0 else np.inf
        for c, g in self._cuts:
            x = max(D, 2.0 * g) if g > 0 else D
            if x > g:
                lb = max(lb, c * x * x / (s2 * (x - g)))
        return lb * (1.0 - BOUND_MARGIN)

    def _enumerated_best(self) -> np.ndarray:  # a_hat by enumeration (the first in C order on an exact tie)
        enum = EnumeratedSeparation.for_plan(self.glrt.plan)
        return enum.actions[int(np.argmax(self.theta[enum.positions].sum(axis=1)))].copy()

    def _enumerate_all(self) -> None:
        """Every alternative at once from its group positions (|A| x n_factors; one factor or few joint actions)."""
        enum = EnumeratedSeparation.for_plan(self.glrt.plan)
        if self._enumerated_gaps is None:
            others = np.flatnonzero(np.any(enum.actions != self.best, axis=1))
            self._enumerated_gaps = others, self.gap[enum.positions[others]].sum(axis=1)
        others, D = self._enumerated_gaps
        H, actions = self.h[enum.positions[others]].sum(axis=1), enum.actions[others]
        ratios = np.where(D > 0, D**2 / (2.0 * self.glrt.sigma2 * np.where(D > 0, H, 1.0)), 0.0)
        self.enumerated, self.exhausted, self._hmax = int(ratios.size), True, float(H.max(initial=0.0))
        self._dmin = float(D.min()) if ratios.size else np.inf
        if ratios.size:
            self.found = float(ratios.min())
            self.argmin_action = actions[int(np.argmin(ratios))].copy()

    def _search(self, beta: float | None, limit: int | None = None) -> None:
        """Advance until exact (or, with ``beta``, until "Lambda > beta" is decided), the cap or ``limit`` listed."""
        cap = self.glrt.max_enumerated if limit is None else min(limit, self.glrt.max_enumerated)
        while not self.exhausted:
            if beta is not None and self.found <= beta:
                return
            item = self._peek()
            if item is None:
                return
            gap, action = item
            if self.enumerated:  # bounds only once something is listed: the 2nd best often decides alone
                lb = self.lower_bound(gap)
                if lb >= self.found:
                    self.exhausted = True  # every unlisted alternative has a ratio >= the minimum found
                    return
                if beta is not None and lb > beta:
                    return
            if self.enumerated >= cap:
                return
            self._pending = None
            D, H = self._evaluate(action)
            self.enumerated += 1
            before = self.found
            self._record(D, H, action)
            if D <= 0:  # empirical tie for the best: Lambda = 0
                self.found, self.exhausted = 0.0, True
                return
            if self.found < before:
                self._add_cut()

    def advance(self, listed: int) -> bool:
        """List at most ``listed`` more alternatives towards the exact statistic.

        Parameters
        ----------
        listed : int
            Alternatives the search may list in this call (>= 0).

        Returns
        -------
        bool
            Whether the statistic and its minimiser ``argmin_action`` are now exact.
        """
        self._search(None, self.enumerated + as_count(listed, "listed", minimum=0))
        return self.exhausted

    def settle(self, action: np.ndarray) -> None:
        """Record the minimiser found by another exact method: the statistic becomes exact at ``action``.

        Parameters
        ----------
        action : numpy.ndarray of int, shape (N,)
            A joint action other than ``best`` with the smallest ratio D(a)^2 / (2 sigma^2 H(a)).

        Raises
        ------
        InvalidInputError
            ``action`` is not a joint action of the structure's shape, or is ``best`` itself.
        """
        action = np.asarray(action)
        if action.shape != self.best.shape or np.array_equal(action, self.best):
            raise InvalidInputError(f"settle needs a joint action of shape {self.best.shape} other than the "
                                    f"empirical best, got {action.tolist()}")
        D, H = self._evaluate(action)
        self._record(D, H, action)
        self.exhausted = True

    def d_min(self) -> float:
        """Empirical second-best gap D_min = theta_hat(a_hat) - theta_hat(a_(2)).

        Returns
        -------
        float
            D_min (inf when a_hat is the only joint action or some group action is unobserved).
        """
        if self._dmin is None:
            self._peek()
        return np.inf if self._dmin is None else self._dmin

    def conservative(self) -> float:
        """D_min^2 / (2 sigma^2 H_max) <= Lambda_t.

        Returns
        -------
        float
            The conservative statistic (0 when some group action is unobserved).
        """
        d = self.d_min()
        return 0.0 if self.unobserved else np.inf if not np.isfinite(d) else self._ratio(d, self.h_max)

    def exact(self) -> GLRValue:
        """Lambda_t (exact unless the enumeration cap was hit: then a certified lower bound).

        Returns
        -------
        GLRValue
            The statistic, whether it is exact, and the search's effort.
        """
        self._search(None)
        if self.exhausted:
            return GLRValue(self.found, True, self.enumerated, len(self._cuts))
        item = self._peek()
        bound = self.found if item is None else min(self.found, self.lower_bound(item[0]))
        return GLRValue(bound, False, self.enumerated, len(self._cuts))

    def exceeds(self, beta: float) -> bool:
        """The threshold test Lambda_t > beta, decided with as little enumeration as possible.

        Parameters
        ----------
        beta : float
            The threshold beta(t, delta).

        Returns
        -------
        bool
            True when Lambda_t > beta is certified (past the cap: its lower bound exceeds beta).
        """
        if self.found <= beta:
            return False
        self._search(beta)
        if self.found <= beta:
            return False
        if self.exhausted:
            return True
        item = self._peek()
        return item is None or self.lower_bound(item[0]) > beta
