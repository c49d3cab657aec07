"""T* of questions whose alternatives swap two arms, from any concave, positively homogeneous pieces, certified:
Kelley's cutting planes on a linear program (the reference), and the certificate of weights found by a fast path.

With (i, j) the pairs of a question (best-arm identification: the best arm i and every other arm j; top m: i among
the m best, j outside them) and f_ij(w) their pieces, for divergences that are not those of one exponential family
(Gaussian arms of unknown variances: :mod:`optdesign.identification.variances`; bounded arms:
:mod:`optdesign.identification.bounded`), 1 / T* = max over the simplex of min_(i,j) f_ij(w). Each piece is a
minimum of functions linear in w, so its gradient c at any w gives a cut f_ij(w') <= c^T w' that holds everywhere:
the linear program max t s.t. t <= c_r^T w over the cuts c_r collected at the iterates w_r bounds 1 / T* from above.
The program is built with its cuts a Parameter and re-solved, its size doubled when the cuts fill it (a program
of few cuts solves fast, one padded to thousands does not); the iterations stop when the certified bracket
is within ``tol``: the best iterate's pieces give T <= 1 / min f_ij(w), the program's multipliers over its cuts give
the lower bound (weak duality, :mod:`optdesign.identification.certificate`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .._lazy import cp
from ..docstrings import shared_doc
from ..errors import InvalidInputError, SolverError
from ..runtime.solvers import solve
from .certificate import certified_bracket
from .pairs import TIGHT, IdentificationTime, top_m_pairs

__all__ = ["MAX_CUTS", "cutting_plane_time", "equalised_time", "pieces_of_pairs", "top_m_time"]

#: cuts the linear program holds (every iteration adds one per pair); past it the best bracket found is returned
MAX_CUTS = 4000
#: the program's first size, in cuts per pair (iterations); it doubles when full, up to ``max_cuts``
FIRST_CUTS = 16

#: the options and the answer of every T* computed by these cutting planes or a certified fast path, documented once
time_doc = shared_doc({"program": """solver : str, optional
        The linear program's solver (default CLARABEL).
    tol : float
        The relative certified gap at which the iterations stop (default 1e-6).
    max_cuts : int
        The cuts the program holds; past them the best bracket found is returned with its gap.

    Returns
    -------
    IdentificationTime
        T* (E[tau] >= T* kl(delta, 1 - delta)), w*, a certified lower bound, the gap and the closest pairs."""})

#: the pieces' values f_ij(w), shape (P,), and gradients, shape (P, K), at weights w
PieceFunction = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


def _closest_pairs(pairs: np.ndarray, values: np.ndarray) -> np.ndarray:
    closest: np.ndarray = np.asarray(pairs, dtype=np.int64)[values <= values.min() * (1 + 1e-6)]
    return closest


def _best_pairs(best: int, n_arms: int) -> np.ndarray:
    return np.array([(best, j) for j in range(n_arms) if j != best], dtype=np.int64).reshape(-1, 2)


def pieces_of_pairs(leader_pieces: Callable[[int], tuple[np.ndarray, np.ndarray | None]], pairs: np.ndarray,
                    n_arms: int) -> tuple[np.ndarray, np.ndarray | None]:
    """The pieces of any pairs (i, j), i put above j, from the pieces of each leader i against every other arm.

    Parameters
    ----------
    leader_pieces : callable
        i -> (values of shape (K - 1,), gradients of shape (K - 1, K) or None): arm i above every other arm j, in
        increasing j.
    pairs : numpy.ndarray of int, shape (P, 2)
        The pairs (i, j).
    n_arms : int
        K.

    Returns
    -------
    tuple
        The pairs' values, shape (P,), and gradients, shape (P, K) (None when the leaders' are).

    Raises
    ------
    InvalidInputError
        Pairs that are not of shape (P, 2), or not two different arms among the K.
    """
    pairs = np.asarray(pairs)
    if pairs.ndim != 2 or pairs.shape[1] != 2 or pairs.dtype.kind not in "iu":
        raise InvalidInputError(f"pairs must be integer pairs of shape (P, 2), got shape {pairs.shape}")
    values = np.empty(pairs.shape[0])
    G: np.ndarray | None = np.empty((pairs.shape[0], n_arms))
    # the pairs checked and grouped by leader in one pass: Top-Two's challenger asks at every pull, often of few pairs
    rows_of: dict[int, list[int]] = {}
    seconds = pairs[:, 1].tolist()
    for row, (i, j) in enumerate(zip(pairs[:, 0].tolist(), seconds, strict=True)):
        if not (0 <= i < n_arms and 0 <= j < n_arms and i != j):
            raise InvalidInputError(f"every pair must hold two different arms among the {n_arms}")
        rows_of.setdefault(i, []).append(row)
    for i in sorted(rows_of):
        rows = rows_of[i]
        v, g = leader_pieces(i)
        cols = [seconds[r] - (seconds[r] > i) for r in rows]
        values[rows] = v[cols]
        if g is None or G is None:
            G = None
        else:
            G[rows] = g[cols]
    return values, G


def equalised_time(w: np.ndarray, values: np.ndarray, G: np.ndarray, best: int, solver: str,
                   start: float) -> IdentificationTime:
    """The certified answer of weights w found by equalisation: T = 1 / min_j f_j(w), and the lower bound of the
    multipliers 1 / g_j that are optimal where the pieces are equal (g_j the gradient's entry of arm j).

    Parameters
    ----------
    w : numpy.ndarray, shape (K,)
        The weights (summing to one).
    values, G : numpy.ndarray
        The pieces and their gradients at w.
    best : int
        The best arm i.
    solver : str
        The fast path's name, reported.
    start : float
        ``time.perf_counter()`` when the computation began.

    Returns
    -------
    IdentificationTime
        T, w, the certified lower bound and gap, the closest pairs.
    """
    others = np.delete(np.arange(w.size), best)
    gj = G[np.arange(others.size), others]
    lower, T = certified_bracket(values, G, 1.0 / np.maximum(gj, np.finfo(float).tiny))
    return IdentificationTime(value=T, weights=w, lower_bound=lower, gap=(T - lower) / T,
                              active=_closest_pairs(_best_pairs(best, w.size), values), status="optimal",
                              solver=solver, solve_time=time.perf_counter() - start)


def _cut_program(rows: int, K: int) -> tuple[Any, Any, Any, Any]:
    """max t s.t. sum w = 1, w >= 0, t <= C w: the program, the cuts' Parameter C (rows x K), w and the cuts."""
    C = cp.Parameter((rows, K))
    wv, t = cp.Variable(K, nonneg=True), cp.Variable()
    cuts = t <= C @ wv
    return cp.Problem(cp.Maximize(t), [cp.sum(wv) == 1, cuts]), C, wv, cuts


def cutting_plane_time(pieces: PieceFunction, n_arms: int, pairs: int | np.ndarray, *, solver: str | None = None,
                       tol: float = 1e-6, max_cuts: int = MAX_CUTS) -> IdentificationTime:
    """T* and w* by Kelley's cutting planes (module docstring), certified.

    Parameters
    ----------
    pieces : callable
        w -> (values, gradients) of the pieces, one per pair.
    n_arms : int
        K.
    pairs : int or numpy.ndarray of int, shape (P, 2)
        The pieces' pairs (i, j), reported as the closest pairs; an int: the best arm i of best-arm identification,
        the pairs (i, j) for every other arm j.
    solver : str, optional
        The linear program's solver (default CLARABEL).
    tol : float
        The relative certified gap at which the iterations stop.
    max_cuts : int
        The cuts the program holds; past them the best bracket found is returned with its gap.

    Returns
    -------
    IdentificationTime
        T*, w*, a certified lower bound, the gap and the closest pairs.

    Raises
    ------
    InvalidInputError
        A piece that is zero at the uniform weights (T* is infinite).
    SolverError
        The linear program was not solved.
    """
    K = n_arms
    pairs = _best_pairs(pairs, K) if isinstance(pairs, (int, np.integer)) else np.asarray(pairs, dtype=np.int64)
    P = pairs.shape[0]
    start = time.perf_counter()
    w = np.full(K, 1.0 / K)
    values, G = pieces(w)
    if not values.min() > 0:  # a piece vanishing at positive weights vanishes at every weight
        raise InvalidInputError("a piece is zero at the uniform weights: T* is infinite (two arms tie to rounding)")
    scale = float(values.min())  # the program runs on cuts / scale, of order one
    capacity = max(P, min(int(max_cuts), MAX_CUTS))
    pad = 10.0 * float(G.max()) / scale + 10.0  # the value of unused rows: never binding
    bank = np.empty((0, K))
    used, incumbent, lower, status, name = 0, (float(values.min()), w, values, G), 0.0, "", ""
    while used + P <= capacity:
        if used + P > bank.shape[0]:  # the program grows by doubling: an LP of few cuts solves fast
            bank = np.vstack([bank[:used], np.full((min(capacity, max(2 * bank.shape[0], FIRST_CUTS * P)) - used, K),
                                                   pad)])
            program, C, wv, cuts = _cut_program(bank.shape[0], K)
        bank[used:used + P] = G / scale
        used += P
        C.value = bank
        # an inaccurate answer is kept: the bracket is evaluated exactly from its weights and multipliers
        info = solve(program, solver or "CLARABEL", solver_options=TIGHT, accept_inaccurate=True)
        status, name = info.status, info.solver
        if wv.value is None or cuts.dual_value is None:
            raise SolverError(f"the cutting-plane program was not solved (status {info.status})")
        p = np.maximum(np.asarray(cuts.dual_value, dtype=float)[:used], 0.0)
        if p.sum() > 0:
            lower = max(lower, p.sum() / (float(np.max(p @ bank[:used])) * scale))
        w = np.maximum(np.asarray(wv.value, dtype=float), 0.0)
        w /= w.sum()
        values, G = pieces(w)
        if values.min() > incumbent[0]:
            incumbent = (float(values.min()), w, values, G)
        if 1.0 - lower * incumbent[0] <= tol:
            break
    value, w, values, G = incumbent
    lower = max(lower, certified_bracket(values, G)[0])
    T = 1.0 / value
    return IdentificationTime(value=T, weights=w, lower_bound=min(lower, T), gap=(T - min(lower, T)) / T,
                              active=_closest_pairs(pairs, values), status=status, solver=name,
                              solve_time=time.perf_counter() - start)


def top_m_time(leader_pieces: Callable[[np.ndarray, int], tuple[np.ndarray, np.ndarray | None]], means: np.ndarray,
               m: int, method: str, *, solver: str | None, tol: float, max_cuts: int) -> IdentificationTime:
    """T* and w* of top-m identification by cutting planes on the pairs (i among the m best, j outside them).

    Parameters
    ----------
    leader_pieces : callable
        (w, i) -> the pieces of arm i above every other arm at w: values (K - 1,), gradients (K - 1, K).
    means : numpy.ndarray, shape (K,)
        The arms' means.
    m : int
        The answer's size, 1 <= m < K.
    method : str
        Must be ``"program"`` (the equalisation is best-arm identification's).
    solver, tol, max_cuts
        As :func:`cutting_plane_time`.

    Returns
    -------
    IdentificationTime
        T*, w*, a certified lower bound, the gap and the closest pairs.

    Raises
    ------
    InvalidInputError
        m outside [1, K), a tie at the m-th largest mean, or ``method="equalise"``.
    SolverError
        The linear program was not solved.
    """
    pairs = top_m_pairs(means, m)
    if method != "program":
        raise InvalidInputError(f"method {method!r} is best-arm identification's (m = 1); top m uses 'program'")
    K = len(means)

    def pieces(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        values, G = pieces_of_pairs(lambda i: leader_pieces(w, i), pairs, K)
        assert G is not None
        return values, G

    return cutting_plane_time(pieces, K, pairs, solver=solver, tol=tol, max_cuts=max_cuts)
