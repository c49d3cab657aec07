"""The exact zero-sum matrix game the game-based samplers share (AdaHedge: :mod:`bandits.pure_exploration.adahedge`).

* :func:`solve_game` returns max_{z in simplex} min_j (M z)_j and an optimal z (the Frank–Wolfe sampling step
  over several near-minimal pieces); :func:`game_strategies` also the row player's optimal p (the column generation
  of :mod:`bandits.multiagent.fw_game`). After an affine map of M to entries in [1, 2] (which moves the value by
  the same map), the game is the packing program max 1^T q s.t. M^T q <= 1, q >= 0, whose origin is feasible:
  a dense tableau simplex with Bland's rule solves it exactly in a few pivots when M has few rows, and its
  dual (the reduced costs of the slacks) gives z, with support at most the number of rows, and its solution p.
"""

from __future__ import annotations

import numpy as np

from optdesign.errors import InvalidInputError

__all__ = ["GAME_METHODS", "game_strategies", "solve_game"]

#: the solvers of the game: the exact tableau simplex here, or HiGHS (scipy's linprog)
GAME_METHODS = ("simplex", "highs")

#: pivot tolerance of the simplex (the payoffs are mapped to [1, 2] first)
PIVOT_TOL = 1e-12
#: the tableau's answer is kept when its duality gap is at most this times the payoffs' span (else HiGHS)
GAP_TOL = 1e-9


def solve_game(M: np.ndarray, *, method: str = "simplex") -> tuple[np.ndarray, float]:
    """An optimal mixed strategy of the maximising column player of the zero-sum game with payoffs M.

    Parameters
    ----------
    M : numpy.ndarray, shape (J, K)
        Payoffs: the column player picks z in the simplex of R^K, the row player a row j, the payoff is (M z)_j.
    method : str
        ``"simplex"`` (the exact tableau method here) or ``"highs"`` (:func:`scipy.optimize.linprog`).

    Returns
    -------
    tuple
        ``(z, value)``: z in the simplex with min_j (M z)_j = value = max_z min_j (M z)_j.

    Raises
    ------
    InvalidInputError
        An empty or non-finite payoff matrix, or an unknown method.
    """
    z, _, value = game_strategies(M, method=method)
    return z, value


def game_strategies(M: np.ndarray, *, method: str = "simplex") -> tuple[np.ndarray, np.ndarray, float]:
    """Optimal mixed strategies of both players of the zero-sum game with payoffs M, from one solve.

    The packing program's solution q is the row player's strategy (normalised), its dual the column player's; von
    Neumann's theorem: min_j (M z)_j = value = max_k (M^T p)_k. When the tableau's answer misses that equality by more
    than a rounding error (degenerate games of many near-equal columns), HiGHS solves the game instead.

    Parameters
    ----------
    M : numpy.ndarray, shape (J, K)
        Payoffs: the column player picks z in the simplex of R^K (maximising), the row player p in that of R^J.
    method : str
        ``"simplex"`` (the exact tableau method here) or ``"highs"`` (:func:`scipy.optimize.linprog`).

    Returns
    -------
    tuple
        ``(z, p, value)``: optimal strategies of the column and the row player and the game's value.

    Raises
    ------
    InvalidInputError
        An empty or non-finite payoff matrix, or an unknown method.
    """
    M = np.atleast_2d(np.asarray(M, dtype=float))
    if M.size == 0 or not np.isfinite(M).all():
        raise InvalidInputError("the payoff matrix must be a nonempty matrix of finite numbers")
    if method not in GAME_METHODS:
        raise InvalidInputError(f"unknown game method {method!r}; valid: {', '.join(GAME_METHODS)}")
    J, K = M.shape
    if J == 1:
        z = np.zeros(K)
        z[int(np.argmax(M[0]))] = 1.0
        return z, np.ones(1), float(M[0].max())
    lo, span = float(M.min()), float(M.max() - M.min())
    if span <= 0:
        return np.full(K, 1.0 / K), np.full(J, 1.0 / J), lo
    if method == "simplex":
        z, p = _packing_simplex((M - lo) / span + 1.0)
        if (M.T @ p).max() - (M @ z).min() <= GAP_TOL * span:
            return z, p, float((M @ z).min())
    z, p = _highs(M)
    return z, p, float((M @ z).min())


def _packing_simplex(P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(z, p) from the packing program max 1^T q s.t. P^T q <= 1, q >= 0 (P > 0), by the simplex method from q = 0:
    p = q / sum(q), z from its dual.

    Dantzig's rule (the largest reduced cost enters) for the first pivots, then Bland's rule (the first
    improving column, the smallest basic index on a tie), which cannot cycle. Right-hand sides that rounding
    pushed below zero count as zero in the ratio test.
    """
    J, K = P.shape
    T = np.zeros((K + 1, J + K + 1))  # rows: K constraints, then the objective (reduced costs, negated value)
    T[:K, :J] = P.T
    T[np.arange(K), J + np.arange(K)] = 1.0
    T[:K, -1] = 1.0
    T[K, :J] = 1.0
    basis = np.arange(J, J + K)
    for pivot in range(50 * (J + K)):
        costs = T[K, :-1]
        col = int(costs.argmax()) if pivot < 4 * J else int(np.argmax(costs > PIVOT_TOL))
        if costs[col] <= PIVOT_TOL:
            break
        column = T[:K, col]
        positive = column > PIVOT_TOL
        rhs = np.clip(T[:K, -1], 0.0, None)
        ratios = np.where(positive, rhs / np.where(positive, column, 1.0), np.inf)
        row = int(ratios.argmin())
        if pivot >= 4 * J:  # Bland: the smallest basic index among the tied rows
            ties = np.flatnonzero(ratios <= ratios[row] * (1 + 1e-12) + PIVOT_TOL)
            row = int(ties[np.argmin(basis[ties])])
        pivot_row = T[row] / T[row, col]
        T -= T[:, col, None] * pivot_row
        T[row] = pivot_row
        basis[row] = col
    y = np.clip(-T[K, J:J + K], 0.0, None)  # the dual: z proportional to it
    q = np.zeros(J)
    primal = basis < J
    q[basis[primal]] = np.clip(T[:K, -1][primal], 0.0, None)
    return y / y.sum(), (q / q.sum() if q.sum() > 0 else np.full(J, 1.0 / J))


def _highs(M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(z, p) from the linear program max v s.t. M z >= v, sum z = 1, z >= 0 (HiGHS) and its multipliers."""
    from scipy.optimize import linprog

    J, K = M.shape
    res = linprog(np.r_[np.zeros(K), -1.0], A_ub=np.c_[-M, np.ones(J)], b_ub=np.zeros(J),
                  A_eq=np.r_[np.ones(K), 0.0][None], b_eq=[1.0], bounds=[(0, None)] * K + [(None, None)],
                  method="highs")
    z = np.clip(res.x[:K], 0.0, None)
    p = np.clip(-res.ineqlin.marginals, 0.0, None)
    return z / z.sum(), (p / p.sum() if p.sum() > 0 else np.full(J, 1.0 / J))
