"""A certified bracket on the characteristic time T*(mu) from any proportions, by concavity of F = min_j f_j.

Every oracle here reports T* with a lower bound (the toolkit's rule: every optimum carries a certificate); this is
how a problem whose oracle is a root finding or a first-order method certifies it.
"""

from __future__ import annotations

import numpy as np

from optdesign.errors import InvalidInputError

from .problem import Problem

__all__ = ["certified_bracket"]


def certified_bracket(problem: Problem, mu: np.ndarray, w: np.ndarray,
                      mixture: np.ndarray | None = None) -> tuple[float, float]:
    """A certified bracket lower <= T*(mu) <= upper from proportions w, by concavity of F = min_j f_j.

    Upper: 1 / F(w) (w is feasible). Lower: for any mixture p of the pieces, F(v) <= sum_j p_j f_j(v) =
    (p^T G) v <= max_k (p^T G)_k on the simplex, so 1 / T* = max_v F(v) <= max_k (p^T G)_k (weak duality).
    Without a mixture the best one is found by a small linear program, min_p max_k (p^T G)_k (the pieces
    within 10 % of the minimum at w suffice near an optimum; all are used); an oracle that knows the optimal
    multipliers passes them and skips it.

    Parameters
    ----------
    problem : Problem
        The structure.
    mu : numpy.ndarray
        The parameter.
    w : numpy.ndarray, shape (K,)
        Proportions (a point of the simplex, e.g. an approximate w*).
    mixture : numpy.ndarray, shape (J,), optional
        Nonnegative weights on the pieces at (mu, w), in the order of their ``answers`` (normalised here).

    Returns
    -------
    tuple of float
        ``(lower, upper)`` bounds on T*(mu).

    Raises
    ------
    InvalidInputError
        A bad parameter, proportions that are not nonnegative finite numbers, one per arm, summing to more
        than 0, or a mixture that is not such numbers, one per piece.
    """
    mu = problem.check_parameter(mu)
    w = np.asarray(problem.check_weights(w), dtype=float)
    if not (np.all(np.isfinite(w)) and np.all(w >= 0) and w.sum() > 0):
        raise InvalidInputError("the proportions must be nonnegative finite numbers, not all zero")
    pieces = problem.pieces(mu, w / w.sum())
    G = pieces.gradients
    assert G is not None
    upper = 1.0 / pieces.value if pieces.value > 0 else float("inf")
    if mixture is None:
        p = _best_mixture(G, pieces.value if pieces.value > 0 else float(np.max(G)))
    else:
        p = np.asarray(mixture, dtype=float)
        if not (p.shape == (G.shape[0],) and np.all(np.isfinite(p)) and np.all(p >= 0) and p.sum() > 0):
            raise InvalidInputError(f"the mixture must be {G.shape[0]} nonnegative finite numbers, not all zero")
    bound = float(np.max(p @ G)) / p.sum()
    lower = 1.0 / bound if bound > 0 else 0.0
    return lower, upper


def _best_mixture(G: np.ndarray, scale: float) -> np.ndarray:
    """The mixture p minimising max_k (p^T G)_k over the simplex, by a linear program (uniform if it fails).

    The program runs on G / scale (``scale`` about F(w), so that its value is about 1: the solver's absolute
    tolerances, about 1e-7, would swamp a program whose entries are all tiny, e.g. arms 1e-6 apart); the caller
    evaluates the bound at the returned p exactly, so the tolerances never make it invalid.
    """
    from scipy.optimize import linprog

    J, K = G.shape
    if scale > 0 and np.isfinite(scale):
        G = G / scale
    # minimise s over (p, s): G^T p <= s, sum p = 1, p >= 0
    c = np.r_[np.zeros(J), 1.0]
    res = linprog(c, A_ub=np.c_[G.T, -np.ones(K)], b_ub=np.zeros(K), A_eq=np.r_[np.ones(J), 0.0][None],
                  b_eq=[1.0], bounds=[(0, None)] * J + [(None, None)], method="highs")
    p = np.clip(res.x[:J], 0.0, None) if res.status == 0 else np.zeros(J)
    return p if p.sum() > 0 else np.ones(J)
