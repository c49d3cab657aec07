"""A certified bracket on the characteristic time T*(mu) from any proportions, by concavity of F = min_j f_j.

Every oracle here reports T* with a lower bound (the toolkit's rule: every optimum carries a certificate); this is
how a problem whose oracle is a root finding or a first-order method certifies it.
"""

from __future__ import annotations

import numpy as np

from optdesign.errors import InvalidInputError
from optdesign.identification import certified_bracket as bracket

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
    assert pieces.gradients is not None
    if pieces.values.size == 0:
        raise InvalidInputError("the parameter has no alternative answer: T* is 0")
    return bracket(pieces.values, pieces.gradients, mixture)
