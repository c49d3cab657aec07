"""Best-arm identification among arms whose rewards lie in [0, 1], the learner knowing nothing else of them.

Arm k has a distribution F_k on [0, 1]; here a finite support s (shared by the arms, any points of [0, 1]) and
probabilities p_k on it. The learner's model is every distribution on [0, 1], so moving arm k's mean to x costs, per
observation, KL_inf: the least KL(F_k, G) over distributions G on [0, 1] with mean at least x (above its mean) or at
most x (below), Honda & Takemura's dual (2010, Thm 8)

    K+(F, x) = max over lambda in [0, 1 / (1 - x)] of E_F log(1 - lambda (X - x))

and its reflection below the mean (:mod:`optdesign.identification.bounded_kernels`, compiled;
:func:`optdesign.identification.bounded_programs.kl_inf_program` is the primal, a cvxpy model over distributions on s
and the ends 0 and 1). With i the best arm the piece of arm j is

    f_j(w) = min over x in [mu_j, mu_i] of w_i K-(F_i, x) + w_j K+(F_j, x),

concave and positively homogeneous in w (a minimum of linear functions:
:func:`optdesign.identification.bounded_programs.pair_cost_program` is the joint convex program over both
alternatives), and 1 / T* = max over the simplex of min_j f_j(w): the lower bound of
best-arm identification among distributions on [0, 1] (Garivier & Kaufmann 2016, Thm 1, on this model; Agrawal,
Koolen & Juneja 2020). On two atoms {0, 1} it is Bernoulli's T*. T* is computed by cutting planes on a linear program,
certified (:mod:`optdesign.identification.cutting_planes`), or by Garivier & Kaufmann's equalisation
(``method="equalise"``), certified the same way.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from ..errors import InvalidInputError
from ..validation import as_count, as_matrix, as_nonnegative, as_tolerance, as_vector, unique_argmax
from .cutting_planes import MAX_CUTS, cutting_plane_time, equalised_time, time_doc, top_m_time
from .epsilon_good import epsilon_ends
from .pairs import IdentificationTime

__all__ = ["bounded_characteristic_time", "bounded_pieces", "check_bounded_arms", "check_shift", "kl_inf",
           "kl_inf_rows"]

#: how far a row of probabilities may sum from one (it is then renormalised)
SUM_TOLERANCE = 1e-9
#: the margin within which an answer's mean counts as on the edge of epsilon-goodness (rounding of mu_j - epsilon)
ROUNDING = 1e-12


def check_bounded_arms(probs: npt.ArrayLike, support: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Rows of probabilities on a support in [0, 1], checked.

    Parameters
    ----------
    probs : array_like, shape (K, L) or (L,)
        One distribution per row (nonnegative, summing to one).
    support : array_like, shape (L,)
        The support points, in [0, 1].

    Returns
    -------
    tuple of numpy.ndarray
        ``(P, s)``: P of shape (K, L), its rows renormalised; s of shape (L,).

    Raises
    ------
    InvalidInputError
        Non-finite entries, a support point outside [0, 1], a negative probability, a row not summing to one, or
        shapes that disagree.
    """
    s = as_vector(support, "support")
    if np.any(s < 0) or np.any(s > 1):
        raise InvalidInputError(f"the support must lie in [0, 1], got {s.tolist()!r}")
    P = as_matrix(np.atleast_2d(np.asarray(probs, dtype=float)), "probs", n_cols=s.size)
    if np.any(P < 0) or np.any(np.abs(P.sum(axis=1) - 1.0) > SUM_TOLERANCE * s.size):
        raise InvalidInputError("every row of probs must be nonnegative and sum to one")
    return P / P.sum(axis=1, keepdims=True), s


def kl_inf(probs: npt.ArrayLike, support: npt.ArrayLike, x: float) -> float:
    """KL_inf(F, x): the least KL(F, G) over distributions G on [0, 1] whose mean is at least x when x is above
    F's mean, at most x when below (0 at the mean; module docstring).

    Parameters
    ----------
    probs : array_like, shape (L,)
        F's probabilities on the support.
    support : array_like, shape (L,)
        The support, in [0, 1].
    x : float
        The mean G must reach, in [0, 1].

    Returns
    -------
    float
        KL_inf (inf at x = 1 or 0 when F is not the point mass there).

    Raises
    ------
    InvalidInputError
        A distribution :func:`check_bounded_arms` refuses, or x outside [0, 1].

    Examples
    --------
    >>> from optdesign.identification import kl_inf
    >>> round(kl_inf([0.6, 0.4], [0.0, 1.0], 0.7), 6)  # Bernoulli: kl(0.4, 0.7)
    0.192042
    """
    from .bounded_kernels import kl_inf_above

    P, s = check_bounded_arms(probs, support)
    if not 0.0 <= float(x) <= 1.0:
        raise InvalidInputError(f"x must lie in [0, 1], got {x!r}")
    if float(x) >= float(P[0] @ s):
        return float(kl_inf_above(P[0], s, float(x))[0])
    return float(kl_inf_above(P[0], 1.0 - s, 1.0 - float(x))[0])


def kl_inf_rows(probs: np.ndarray, support: np.ndarray, x: float) -> np.ndarray:
    """KL_inf(F_k, x) of every row F_k, on the side of x each mean lies (:func:`kl_inf`); the arrays are taken as they
    are (the hot path of thresholding: :func:`check_bounded_arms` checks them once).

    Parameters
    ----------
    probs : numpy.ndarray, shape (K, L)
        One distribution per row.
    support : numpy.ndarray, shape (L,)
        The support, in [0, 1].
    x : float
        The mean to reach, in (0, 1).

    Returns
    -------
    numpy.ndarray, shape (K,)
        The costs per observation of moving every row's mean to x.
    """
    from .bounded_kernels import kl_inf_above

    P = np.ascontiguousarray(probs, dtype=float)
    s = np.ascontiguousarray(support, dtype=float)
    return np.array([kl_inf_above(row, s, x)[0] if row @ s <= x else kl_inf_above(row, 1.0 - s, 1.0 - x)[0]
                     for row in P])


def bounded_pieces(probs: np.ndarray, support: np.ndarray, w: np.ndarray, *, best: int | None = None,
                   gradients: bool = True, shift: float = 0.0,
                   scale: float = 1.0) -> tuple[int, np.ndarray, np.ndarray | None, np.ndarray]:
    """The pieces f_j(w) of best-arm identification among distributions on [0, 1] (module docstring); the arrays
    are taken as they are (the hot path: :func:`check_bounded_arms` checks them once).

    Parameters
    ----------
    probs : numpy.ndarray, shape (K, L)
        One distribution per row.
    support : numpy.ndarray, shape (L,)
        The support, in [0, 1].
    w : numpy.ndarray, shape (K,)
        Nonnegative weights or counts.
    best : int, optional
        The arm i the pieces put above the others (default: the first largest mean); a piece is 0 where
        mu_j >= mu_i.
    gradients : bool
        Also build the gradients (else None in their place).
    shift : float
        s in [0, 1): with ``scale`` c, the pieces {lambda_j >= c lambda_i + s} of epsilon-good identification, min
        over x of w_i K-(F_i, x) + w_j K+(F_j, c x + s) (0 where mu_j >= c mu_i + s); s = 0 and c = 1 are best-arm
        identification's, c = 1 and s = epsilon additive epsilon's.
    scale : float
        c >= 1: 1 / (1 - epsilon) for multiplicative epsilon (s = 0).

    Returns
    -------
    tuple
        ``(best, values, gradients, closest)``: the arm i, f_j(w) for every other arm j in increasing index (shape
        (K - 1,)), their gradients (K-(F_i, x_j) in column i, K+(F_j, c x_j + s) in column j; shape (K - 1, K)),
        and the closest mean x_j of arm i in each piece.

    Raises
    ------
    InvalidInputError
        A shift outside [0, 1) or a scale that is not a finite positive number (the two numbers are checked; the
        arrays are not).
    """
    from .bounded_kernels import pair_pieces

    P = np.ascontiguousarray(probs, dtype=float)
    s = np.ascontiguousarray(support, dtype=float)
    i = int(np.argmax(P @ s)) if best is None else int(best)
    if not (0.0 <= shift < 1.0 and 0.0 < scale < np.inf):  # NaN fails both
        raise InvalidInputError(f"shift must lie in [0, 1) and scale be a finite positive number, got shift = "
                                f"{shift!r}, scale = {scale!r}")
    values, x, gi, gj = pair_pieces(P, s, np.asarray(w, dtype=float), i, float(shift), float(scale))
    if not gradients:
        return i, values, None, x
    others = np.delete(np.arange(P.shape[0]), i)
    G = np.zeros((others.size, P.shape[0]))
    G[:, i] = gi
    G[np.arange(others.size), others] = gj
    return i, values, G, x


def check_shift(epsilon: object) -> float:
    """epsilon-good identification's slack on [0, 1]: a number in [0, 1), checked.

    Parameters
    ----------
    epsilon : object
        The slack.

    Returns
    -------
    float
        epsilon.

    Raises
    ------
    InvalidInputError
        A slack that is not a number in [0, 1) (no arm on [0, 1] lies 1 or more above another).
    """
    shift = as_nonnegative(epsilon, "epsilon")
    if shift >= 1.0:
        raise InvalidInputError(f"epsilon must be below 1 on [0, 1] (no arm lies 1 above another), got {shift}")
    return shift


def _values_and_gradients(P: np.ndarray, s: np.ndarray, w: np.ndarray, best: int | None = None, shift: float = 0.0,
                          scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    _, values, G, _ = bounded_pieces(P, s, w, best=best, shift=shift, scale=scale)
    assert G is not None
    return values, G


def _anchored_time(P: np.ndarray, s: np.ndarray, answer: int, ends: tuple[float, float], method: str,
                   solver: str | None, tol: float, max_cuts: int) -> IdentificationTime:
    """The max-min of the pieces of one answer (every other arm j kept below c mu_answer + s, ``ends`` = (s, c)),
    certified: the equalisation when asked and its certified gap is within tol, else the cutting planes. The
    equalisation assumes every piece vanishes with either weight, true while every moved pair stays inside [0, 1]
    (c mu_answer + s < 1, mu_j >= s); outside, its answer is kept only when its certificate says so."""
    if method == "equalise":
        from .bounded_kernels import equalise

        start = time.perf_counter()
        w, _ = equalise(P, s, answer, *ends)
        if np.all(np.isfinite(w)):
            result = equalised_time(w, *_values_and_gradients(P, s, w, answer, *ends), answer, "equalisation", start)
            if result.gap <= tol:
                return result
    return cutting_plane_time(lambda w: _values_and_gradients(P, s, w, answer, *ends), P.shape[0], answer,
                              solver=solver, tol=tol, max_cuts=max_cuts)


def _epsilon_good_time(P: np.ndarray, s: np.ndarray, ends: tuple[float, float], method: str, solver: str | None,
                       tol: float, max_cuts: int) -> IdentificationTime:
    """T* of epsilon-good identification (``ends`` = (s, c): every other mean below c mu_i + s): the least max-min
    over the strictly epsilon-good answers i (beyond rounding), the lower bound the least of theirs. An answer is
    solved unless its bound T_i >= 1 / min_j K-(F_i, (mu_j - s) / c) (a piece is at most w_i K-(F_i, x) there)
    already exceeds the least T found: answers near the edge of epsilon-goodness have T near infinity."""
    means = P @ s
    shift, scale = ends
    answers = [i for i in range(means.size) if np.all(np.delete(means, i) < scale * means[i] + shift - ROUNDING)]
    costs = np.array([kl_inf_rows(P, s, max((float(mj) - shift) / scale, 0.0)) for mj in means])  # [j, i]
    np.fill_diagonal(costs, np.inf)
    floors = {i: 1.0 / max(float(costs[:, i].min()), np.finfo(float).tiny) for i in answers}
    results: list[IdentificationTime] = []
    for i in sorted(answers, key=floors.__getitem__):
        if results and floors[i] >= min(r.value for r in results):
            break
        results.append(_anchored_time(P, s, i, ends, method, solver, tol, max_cuts))
    best = min(results, key=lambda r: r.value)
    lower = min(r.lower_bound for r in results)
    return replace(best, lower_bound=lower, gap=(best.value - lower) / best.value,
                   solve_time=sum(r.solve_time for r in results))


@time_doc
def bounded_characteristic_time(probs: npt.ArrayLike, support: npt.ArrayLike, *, m: int = 1, epsilon: float = 0.0,
                                kind: str = "additive", method: str = "program", solver: str | None = None,
                                tol: float = 1e-6, max_cuts: int = MAX_CUTS) -> IdentificationTime:
    """T* and w* of best-arm, top-m or epsilon-good identification among distributions on [0, 1], certified (module
    docstring).

    Parameters
    ----------
    probs : array_like, shape (K, L)
        The arms' distributions, one per row, with a unique largest mean (m = 1) or distinct m-th and (m+1)-th.
    support : array_like, shape (L,)
        Their support, in [0, 1].
    m : int
        The answer's size: 1, the best arm; m > 1, the m best arms, whose pieces are the pairs (i among them, j
        outside), by cutting planes only.
    epsilon : float
        In [0, 1): any arm within epsilon of the best is a correct answer (m = 1). T* is the least, over the strictly
        epsilon-good answers i, of the max-min of the pieces {lambda_j >= lambda_i + epsilon}; the lower bound the
        least of theirs. 0: best-arm identification.
    kind : str
        ``"additive"`` (default: mu_i >= max mu - epsilon) or ``"multiplicative"`` (mu_i >= (1 - epsilon) max mu,
        the pieces {lambda_j >= lambda_i / (1 - epsilon)}; a positive best mean).
    method : str
        ``"program"`` (default): cutting planes on a linear program; ``"equalise"``: the fast path, Garivier &
        Kaufmann's equalisation with these pieces (:func:`optdesign.identification.bounded_kernels.equalise`),
        certified by weak duality with the multipliers that are optimal at its weights.
    %(program)s

    Raises
    ------
    InvalidInputError
        Distributions :func:`check_bounded_arms` refuses, fewer than two arms, means that tie for the largest (the
        m-th largest; at epsilon = 0), m outside [1, K), m > 1 with epsilon > 0, an epsilon outside [0, 1), an
        unknown kind or method (the equalisation for m > 1), or a multiplicative epsilon whose best mean is 0.
    SolverError
        The linear program was not solved.

    Examples
    --------
    >>> import optdesign as od
    >>> r = od.bounded_characteristic_time([[0.2, 0.8], [0.6, 0.4]], [0.0, 1.0], method="equalise")
    >>> round(r.value, 2)  # on {0, 1}: Bernoulli's T* of the means 0.8 and 0.4
    11.58
    """
    P, s = check_bounded_arms(probs, support)
    if P.shape[0] < 2:
        raise InvalidInputError("best-arm identification needs at least two arms (rows of probs)")
    tol = as_tolerance(tol)
    max_cuts = as_count(max_cuts, "max_cuts", minimum=1)
    if method not in ("program", "equalise"):
        raise InvalidInputError(f"method must be 'program' or 'equalise', got {method!r}")
    ends = epsilon_ends(check_shift(epsilon), kind)
    if ends != (0.0, 1.0):
        if isinstance(m, bool) or m != 1:
            raise InvalidInputError(f"epsilon-good answers are single arms (m = 1), got m = {m!r}")
        if kind == "multiplicative" and not float((P @ s).max()) > 0:
            raise InvalidInputError("a multiplicative epsilon needs a positive best mean (every mean is 0)")
        return _epsilon_good_time(P, s, ends, method, solver, tol, max_cuts)
    if isinstance(m, bool) or m != 1:
        return top_m_time(lambda w, i: bounded_pieces(P, s, w, best=i)[1:3], P @ s, m, method, solver=solver,
                          tol=tol, max_cuts=max_cuts)
    best = unique_argmax(P @ s, "means")
    if method == "equalise":
        from .bounded_kernels import equalise

        start = time.perf_counter()
        w, _ = equalise(P, s, best)
        values, G = _values_and_gradients(P, s, w)
        return equalised_time(w, values, G, best, "equalisation", start)
    return cutting_plane_time(lambda w: _values_and_gradients(P, s, w), P.shape[0], best, solver=solver, tol=tol,
                              max_cuts=max_cuts)
