"""A certified bracket on T* = 1 / max_w min_p f_p(w) from any proportions, for pieces f_p that are concave and
positively homogeneous of degree one in w (every piece of an identification problem: a weighted divergence to the
closest alternative).

Euler's identity f_p(w) = <grad f_p(w), w> and concavity give, for any mixture lambda of the pieces and any v in the
simplex, min_p f_p(v) <= sum_p lambda_p f_p(v) <= sum_p lambda_p <grad f_p(w), v> <= max_k (lambda^T G)_k, with G
the pieces' gradients at w. So 1 / max_k (lambda^T G)_k <= T* <= 1 / min_p f_p(w): weak duality, whatever w and
lambda; at an optimum with the optimal multipliers both ends meet.
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidInputError

__all__ = ["best_mixture", "certified_bracket"]


def certified_bracket(values: np.ndarray, gradients: np.ndarray,
                      mixture: np.ndarray | None = None) -> tuple[float, float]:
    """Bounds lower <= T* <= upper from the pieces' values and gradients at proportions w (module docstring).

    Parameters
    ----------
    values : numpy.ndarray, shape (J,)
        f_p(w) for every piece.
    gradients : numpy.ndarray, shape (J, K)
        Their gradients at w.
    mixture : numpy.ndarray, shape (J,), optional
        Nonnegative weights on the pieces (e.g. a solver's dual multipliers); None: the best one, by
        :func:`best_mixture`.

    Returns
    -------
    tuple of float
        ``(lower, upper)``; upper is inf when some piece is 0 at w, lower is 0 when the mixture certifies nothing.

    Raises
    ------
    InvalidInputError
        No pieces, shapes that disagree, NaN values or gradients, or a mixture that is not nonnegative
        finite numbers, one per piece and not all zero.
    """
    values, G = np.asarray(values, dtype=float), np.asarray(gradients, dtype=float)
    if values.ndim != 1 or values.size == 0 or G.shape[:1] != values.shape or G.ndim != 2:
        raise InvalidInputError(f"values of shape (J,) with J >= 1 and gradients of shape (J, K) are needed, got "
                                f"{values.shape} and {G.shape}")
    if np.isnan(values).any() or np.isnan(G).any():
        raise InvalidInputError("the pieces' values and gradients must be numbers (no NaN)")
    value = float(values.min())
    upper = 1.0 / value if value > 0 else float("inf")
    if mixture is None:
        p = best_mixture(G, value if value > 0 else float(np.max(G)))
    else:
        p = np.asarray(mixture, dtype=float)
        if not (p.shape == (G.shape[0],) and np.all(np.isfinite(p)) and np.all(p >= 0) and p.sum() > 0):
            raise InvalidInputError(f"the mixture must be {G.shape[0]} nonnegative finite numbers, not all zero")
    bound = float(np.max(p @ G)) / p.sum()
    lower = 1.0 / bound if bound > 0 else 0.0
    return min(lower, upper), upper


def best_mixture(G: np.ndarray, scale: float) -> np.ndarray:
    """The mixture p minimising max_k (p^T G)_k over the simplex, by a linear program (uniform if it fails).

    The program runs on G / scale (``scale`` about min_p f_p(w), so that its value is about 1: the solver's absolute
    tolerances, about 1e-7, would swamp a program whose entries are all tiny, e.g. arms 1e-6 apart); the caller
    evaluates the bound at the returned p exactly, so the tolerances never make it invalid.

    Parameters
    ----------
    G : numpy.ndarray, shape (J, K)
        The pieces' gradients.
    scale : float
        A positive scale of the entries (ignored when not positive and finite).

    Returns
    -------
    numpy.ndarray, shape (J,)
        Nonnegative weights, not all zero.
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
