"""One Frank–Wolfe step on a factor graph: the near-tied pieces of the objective and the game over joint actions.

Frank–Wolfe sampling (Wang, Tzeng & Proutiere, NeurIPS 2021) climbs F(w) = min_{a != a_hat} f_a(w), the pieces
f_a(w) = D(a)^2 / (2 sigma^2 H_w(a)) of :mod:`bandits.multiagent.problem`, over the marginal polytope: the convex hull
of the indicator marginals e_a of the joint actions (e_a has a 1 at (e, a_e) for every factor e), where
max F = 1 / (2 sigma^2 T*) (MF-TaS eq. 1, the factor 2 of docs/notes/conventions.md). Each f_a is concave and
homogeneous of degree 1 in w, so <grad f_a(w), w> = f_a(w) (Euler). The step at w:

* :func:`near_tied_pieces`, the r-subdifferential: the pieces with f_a(w) <= (1 + r) F(w) (a relative slack r),
  at most m of them, the closest first. The m smallest f_a are the m largest ratios H_w(a) / D(a)^2, which the Pareto
  variable elimination of exact T*'s separation returns (:func:`optdesign.factored.most_violated` with ``k=m``),
  its pruning threshold raised by the caller's candidates; its cost is polynomial in the number of agents for a
  bounded tree width. Up to :data:`ENUMERATED_MAX` joint actions the same answer is read by enumeration
  (:class:`optdesign.factored.EnumeratedSeparation`, faster there); past the elimination's state cap, the exact best
  response alone (:func:`bandits.multiagent.best_response.exact_best_response`). ``search=False`` keeps to the
  candidates (a lazy step between searches).
* :func:`frank_wolfe_step`, the game max_{z in the polytope} min_{p in the simplex} sum_i p_i <grad f_i(w), z - w>
  by column generation: the game restricted to the joint actions generated so far is solved for both players
  (:func:`bandits.pure_exploration.games.game_strategies`); the row player's mixture p gives the linear gain
  G_p = sum_i p_i grad f_i(w), whose best joint action argmax_a sum_e G_p(e, a_e) is one max-sum
  (:class:`optdesign.factored.MaxSum`). While it beats the restricted value it is added; once it does not, the
  restricted solution is optimal over the whole polytope (min_p max_a <G_p, e_a - w> is attained). One piece is one
  max-sum. The direction is a mixture of at most as many joint actions as pieces (a basic solution). Agents that no
  piece's gain distinguishes take a_hat's actions (``prefer``): a_hat's entries are in every piece's H.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from optdesign.errors import InstanceTooLargeError, InvalidInputError
from optdesign.factored import EnumeratedSeparation, MaxSum, Separation, most_violated, unique_joint_actions
from optdesign.validation import as_count, as_nonnegative, as_vector

from ..pure_exploration.games import GAME_METHODS, game_strategies
from .alternatives import joint_piece_gradients
from .best_response import exact_best_response
from .glrt import FactoredGLRT, GLRState

__all__ = ["ENUMERATED_MAX", "FrankWolfeStep", "NearTiedPieces", "candidate_ratios", "enumerated", "frank_wolfe_step",
           "is_tied", "near_tied_pieces"]

#: joint actions up to which the pieces are read by enumeration (as exact T*'s separation does), else eliminated
ENUMERATED_MAX = 20_000
#: column-generation rounds of one step; past them the restricted game's solution is returned (``exact=False``)
MAX_COLUMNS = 200
#: a second-best gap at most this times max(1, max |local gap| x factors) is a tie (as the separation judges it)
TIE_RTOL = 1e-12
#: the preferred joint action's entries gain this times the largest gradient entry (ties only)
TIE_BREAK = 1e-9
#: relative tolerance of the column generation's optimality test (on the scale of the pieces' values)
GAME_TOL = 1e-9


@dataclass(frozen=True)
class NearTiedPieces:
    """The pieces within the slack of the minimum at (theta_hat, w), the closest first.

    Parameters
    ----------
    actions : numpy.ndarray of int, shape (n, N)
        The alternative joint actions.
    values : numpy.ndarray, shape (n,)
        f_a(w), nondecreasing; ``values[0]`` is F(w) when ``exact``.
    gradients : numpy.ndarray, shape (n, Abar)
        grad f_a(w) per piece.
    exact : bool
        Whether the minimum and the listed pieces are certified (False past the elimination's state cap, or without
        a search).
    closest : numpy.ndarray of int, shape (c, N)
        The at most ``limit`` closest alternatives found, within the slack or not (candidates for later steps).
    """

    actions: np.ndarray
    values: np.ndarray
    gradients: np.ndarray
    exact: bool
    closest: np.ndarray


@dataclass(frozen=True)
class FrankWolfeStep:
    """The Frank–Wolfe direction z = sum_v q_v e_{a_v}, a mixture of joint actions, and the game's value.

    Parameters
    ----------
    actions : numpy.ndarray of int, shape (M, N)
        The joint actions of the mixture's support, the largest weight first.
    weights : numpy.ndarray, shape (M,)
        Their weights q (positive, summing to 1).
    value : float
        max_z min_i <grad f_i(w), z - w>: the game's value at the returned direction.
    pieces : numpy.ndarray, shape (n,)
        The row player's optimal mixture p over the pieces.
    columns : int
        Max-sum calls (joint actions generated, repeats included).
    exact : bool
        Whether the column generation closed (the value is the game's over the whole polytope).
    """

    actions: np.ndarray
    weights: np.ndarray
    value: float
    pieces: np.ndarray
    columns: int
    exact: bool


def near_tied_pieces(state: GLRState, weights: ArrayLike, *, slack: float, limit: int,
                     candidates: ArrayLike | None = None, search: bool = True) -> NearTiedPieces:
    """The r-subdifferential of F at w: the at most ``limit`` pieces with f_a(w) <= (1 + slack) F(w).

    Parameters
    ----------
    state : GLRState
        The factored GLR at (theta_hat, w) (:meth:`bandits.multiagent.problem.FactoredProblem.glr_state` with the
        weights w): its answer, h and search; its best listed alternative seeds the elimination.
    weights : array_like, shape (Abar,)
        The w the state was built at (counts or proportions, positive).
    slack : float
        The relative slack r >= 0.
    limit : int
        At most this many pieces (>= 1), the m of the m smallest values.
    candidates : array_like of int, shape (c, N), optional
        Joint actions evaluated first (the previous step's pieces): they raise the elimination's pruning threshold.
    search : bool
        Search every joint action (default); False keeps to the candidates and the state's best listed alternative
        (when there are any; ``exact`` is then False).

    Returns
    -------
    NearTiedPieces
        The pieces, their values and gradients.

    Raises
    ------
    InvalidInputError
        ``state`` not a GLRState, weights of the wrong length or not positive, a negative slack, a limit below 1,
        malformed candidates, or an empirical tie for the best joint action (F = 0, no direction).
    """
    if not isinstance(state, GLRState):
        raise InvalidInputError(f"state must be a factored GLRState, got {type(state).__name__}")
    glrt = state.glrt
    w = as_vector(weights, "weights", length=glrt.indexer.abar)
    if np.any(w <= 0):
        raise InvalidInputError("the weights must be positive (every group action observed)")
    as_nonnegative(slack, "slack")
    limit = as_count(limit, "limit")
    if is_tied(state):
        raise InvalidInputError("the estimate has no unique best joint action: F(w) = 0 and no ascent direction")
    actions, ratios, exact = _smallest_pieces(state, limit, candidates, bool(search))
    closest = actions
    keep = ratios >= ratios[0] / (1.0 + slack)
    actions, ratios = actions[keep], ratios[keep]
    flat, D, H = state.gaps(actions)  # h vanishes at a_hat's entries: H sums over the changed factors
    gradients = joint_piece_gradients(flat, state.star, D, H, 1.0 / w, np.sqrt(glrt.sigma2))
    return NearTiedPieces(actions, 1.0 / (2.0 * glrt.sigma2 * ratios), gradients, exact, closest)


def enumerated(glrt: FactoredGLRT) -> bool:
    """Whether :func:`near_tied_pieces` reads the pieces by enumeration (at most :data:`ENUMERATED_MAX` joint actions).

    Parameters
    ----------
    glrt : FactoredGLRT
        The structure's test.

    Returns
    -------
    bool
        True when the structure has at most ENUMERATED_MAX joint actions.
    """
    return math.prod(glrt.plan.n_actions) <= ENUMERATED_MAX


def is_tied(state: GLRState) -> bool:
    """Whether the estimate has no unique best joint action (D_min = 0 to rounding): F = 0 and no piece has a gradient.

    Parameters
    ----------
    state : GLRState
        The factored GLR at (theta_hat, w).

    Returns
    -------
    bool
        True when the second-best joint action ties with a_hat, within :data:`TIE_RTOL` of the local gaps' scale.

    Raises
    ------
    InvalidInputError
        ``state`` is not a GLRState.
    """
    if not isinstance(state, GLRState):
        raise InvalidInputError(f"state must be a factored GLRState, got {type(state).__name__}")
    scale = max(1.0, float(np.abs(state.gap).max()) * state.star.size)
    return bool(state.d_min() <= TIE_RTOL * scale)


def candidate_ratios(state: GLRState, candidates: ArrayLike | None) -> tuple[np.ndarray, np.ndarray]:
    """The candidates and the state's best listed alternative, without repeats nor a_hat, with their H / D^2.

    Parameters
    ----------
    state : GLRState
        The factored GLR at (theta_hat, w).
    candidates : array_like of int, shape (c, N), or None
        Joint actions.

    Returns
    -------
    tuple
        ``(actions, ratios)``: the joint actions, shape (m, N), and H_w(a) / D(a)^2 for each, where
        f_a(w) = 1 / (2 sigma^2 ratio) (0 for a tie with a_hat).

    Raises
    ------
    InvalidInputError
        ``state`` not a GLRState, or malformed candidates.
    """
    if not isinstance(state, GLRState):
        raise InvalidInputError(f"state must be a factored GLRState, got {type(state).__name__}")
    glrt = state.glrt
    known = [glrt.indexer.check(candidates)] if candidates is not None else []
    if state.argmin_action is not None:
        known.append(state.argmin_action[None, :])
    pool = np.concatenate(known) if known else np.zeros((0, glrt.indexer.n_agents), dtype=np.int64)
    pool = unique_joint_actions(pool[np.any(pool != state.best[None, :], axis=1)])[0]
    _, D, H = state.gaps(pool)
    return pool, np.where(D > 0, H / np.where(D > 0, D, 1.0) ** 2, 0.0)


def _smallest_pieces(state: GLRState, limit: int, candidates: ArrayLike | None,
                     search: bool) -> tuple[np.ndarray, np.ndarray, bool]:
    """The at most ``limit`` joint actions with the largest H / D^2, their ratios, exactness."""
    glrt = state.glrt
    if limit == 1 and search and state.exhausted and state.argmin_action is not None:
        # the state already holds the exact best response (it read every alternative): no second search
        _, D, H = state.gaps(state.argmin_action[None, :])
        return state.argmin_action[None, :].copy(), H / D**2, True
    pool, ratios = candidate_ratios(state, candidates)
    if not search and pool.shape[0]:
        order = np.argsort(-ratios, kind="stable")[:limit]
        return pool[order], ratios[order], False
    gap = state.gap
    sep: Separation | None = None
    if enumerated(glrt):
        sep = EnumeratedSeparation.for_plan(glrt.plan).separate(state.h, gap, state.best, k=limit, threshold=0.0,
                                                                delta_min=state.d_min())
    else:
        try:
            sep = most_violated(glrt.plan, state.h, gap, k=limit, candidates=pool if pool.shape[0] else None)
        except InstanceTooLargeError:
            sep = None
    if sep is not None and sep.actions.shape[0]:
        return sep.actions, sep.ratios, sep.exact
    response = exact_best_response(state)  # the elimination gave up: the best response alone
    assert response.action is not None
    _, D, H = state.gaps(response.action[None, :])
    return response.action[None, :], H / D**2, response.exact


def frank_wolfe_step(glrt: FactoredGLRT, gradients: ArrayLike, weights: ArrayLike, *,
                     warm: ArrayLike | None = None, prefer: ArrayLike | None = None,
                     method: str = "simplex") -> FrankWolfeStep:
    """The direction max_{z in the marginal polytope} min_i <g_i, z - w> by column generation over joint actions.

    Parameters
    ----------
    glrt : FactoredGLRT
        The structure's elimination plan and group indexer.
    gradients : array_like, shape (n, Abar)
        The pieces' gradients g_i at w (rows of :attr:`NearTiedPieces.gradients`, nonnegative).
    weights : array_like, shape (Abar,)
        The point w of the marginal polytope (each factor's entries sum to 1); <g_i, w> = f_i(w) by Euler.
    warm : array_like of int, shape (c, N), optional
        Joint actions to start the restricted game with (the previous step's support).
    prefer : array_like of int, shape (N,), optional
        A joint action (the answer a_hat) whose actions the max-sums take on agents where the gain leaves a tie (the
        factors no near-tied piece changes): its entries are in every piece's H.
    method : str
        The restricted games' solver: ``"simplex"`` (exact tableau) or ``"highs"`` (scipy's linprog).

    Returns
    -------
    FrankWolfeStep
        The mixture of joint actions, the game's value and the pieces' mixture.

    Raises
    ------
    InvalidInputError
        Not a FactoredGLRT, gradients or weights of the wrong shape or not finite, negative gradients, malformed
        warm joint actions, or an unknown method.
    """
    if not isinstance(glrt, FactoredGLRT):
        raise InvalidInputError(f"glrt must be a FactoredGLRT, got {type(glrt).__name__}")
    ix = glrt.indexer
    G = np.atleast_2d(np.asarray(gradients, dtype=float))
    w = as_vector(weights, "weights", length=ix.abar)
    if G.ndim != 2 or G.shape[1] != ix.abar or G.shape[0] == 0 or not np.isfinite(G).all() or np.any(G < 0):
        raise InvalidInputError(f"gradients must be a nonempty (n, Abar={ix.abar}) array of finite numbers >= 0")
    if method not in GAME_METHODS:
        raise InvalidInputError(f"unknown game method {method!r}; valid: {', '.join(GAME_METHODS)}")
    base = G @ w
    columns = _Columns(glrt, G, base)
    bonus = np.zeros(ix.abar)
    if prefer is not None:
        bonus[ix.flat(ix.check(prefer))[0]] = TIE_BREAK * max(float(G.max()), np.finfo(float).tiny)
    if G.shape[0] == 1:  # one piece: its best joint action
        columns.add(_best_vertex(glrt, G[0] + bonus))
        return FrankWolfeStep(columns.actions(), np.ones(1), float(columns.payoffs()[0, 0]), np.ones(1), 1, True)
    if warm is not None:
        columns.add_all(ix.check(warm))
    columns.add(_best_vertex(glrt, G[int(np.argmin(base))] + bonus))
    tol = GAME_TOL * max(float(base.max()), np.finfo(float).tiny)
    calls, closed = 1, False  # max-sum calls; whether no joint action beats the restricted game
    while not closed and calls <= MAX_COLUMNS:
        q, p, value = game_strategies(columns.payoffs(), method=method)
        candidate = _best_vertex(glrt, p @ G + bonus)
        calls += 1
        gain = float((p @ G)[ix.flat(candidate[None, :])[0]].sum() - p @ base)
        closed = gain <= value + tol or not columns.add(candidate)
    order = np.argsort(-q, kind="stable")
    order = order[q[order] > 0]  # the support, the largest weight first
    return FrankWolfeStep(columns.actions()[order], q[order] / q[order].sum(), value, p, calls, closed)


def _best_vertex(glrt: FactoredGLRT, gain: np.ndarray) -> np.ndarray:
    """argmax_a sum_e gain(e, a_e), one max-sum."""
    return MaxSum(glrt.plan, gain, keep_regrets=False).best_action.copy()


class _Columns:
    """The joint actions of the restricted game, without repeats, and their payoffs <g_i, e_a - w>."""

    def __init__(self, glrt: FactoredGLRT, G: np.ndarray, base: np.ndarray) -> None:
        self.glrt, self.G, self.base = glrt, G, base
        self._rows: list[np.ndarray] = []
        self._seen: set[bytes] = set()
        self._payoffs: list[np.ndarray] = []

    def add(self, action: np.ndarray) -> bool:
        key = np.ascontiguousarray(action, dtype=np.int64).tobytes()
        if key in self._seen:
            return False
        self._seen.add(key)
        self._rows.append(np.asarray(action, dtype=np.int64))
        flat = self.glrt.indexer.flat(action[None, :])[0]
        self._payoffs.append(self.G[:, flat].sum(axis=1) - self.base)
        return True

    def add_all(self, actions: np.ndarray) -> None:
        for a in actions:
            self.add(a)

    def actions(self) -> np.ndarray:
        return np.stack(self._rows)

    def payoffs(self) -> np.ndarray:
        return np.stack(self._payoffs, axis=1)
