"""T* of best-arm identification from any concave, positively homogeneous pieces, certified: Kelley's cutting planes
on a linear program (the reference), and the certificate of weights found by a fast path.

With i the best arm and f_j(w) (j != i) the pieces of a question whose divergences are not those of one exponential
family (Gaussian arms of unknown variances: :mod:`optdesign.identification.variances`; bounded arms:
:mod:`optdesign.identification.bounded`), 1 / T* = max over the simplex of min_j f_j(w). Each f_j is a minimum of
functions linear in w, so its gradient c at any w gives a cut f_j(w') <= c^T w' that holds everywhere: the linear
program max t s.t. t <= c_r^T w over the cuts c_r collected at the iterates w_r bounds 1 / T* from above. The program
is built once with its cuts a Parameter and re-solved; the iterations stop when the certified bracket is within
``tol``: the best iterate's pieces give T <= 1 / min_j f_j(w), the program's multipliers over its cuts give the lower
bound (weak duality, :mod:`optdesign.identification.certificate`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from .._lazy import cp
from ..docstrings import shared_doc
from ..errors import SolverError
from ..runtime.solvers import solve
from .certificate import certified_bracket
from .pairs import TIGHT, IdentificationTime

__all__ = ["MAX_CUTS", "cutting_plane_time", "equalised_time"]

#: cuts the linear program holds (every iteration adds K - 1); past it the best bracket found is returned
MAX_CUTS = 4000

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

#: the pieces' values f_j(w), shape (K - 1,), and gradients, shape (K - 1, K), at weights w
PieceFunction = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


def _closest_pairs(best: int, values: np.ndarray, n_arms: int) -> np.ndarray:
    others = np.delete(np.arange(n_arms), best)
    return np.array([(best, j) for j in others[values <= values.min() * (1 + 1e-6)]], dtype=np.int64)


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
                              active=_closest_pairs(best, values, w.size), status="optimal", solver=solver,
                              solve_time=time.perf_counter() - start)


def cutting_plane_time(pieces: PieceFunction, n_arms: int, best: int, *, solver: str | None = None,
                       tol: float = 1e-6, max_cuts: int = MAX_CUTS) -> IdentificationTime:
    """T* and w* by Kelley's cutting planes (module docstring), certified.

    Parameters
    ----------
    pieces : callable
        w -> (values, gradients) of the K - 1 pieces.
    n_arms : int
        K.
    best : int
        The best arm (reported in the closest pairs).
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
    SolverError
        The linear program was not solved.
    """
    K = n_arms
    start = time.perf_counter()
    w = np.full(K, 1.0 / K)
    values, G = pieces(w)
    scale = float(values.min())  # the program runs on cuts / scale, of order one
    rows = max(K - 1, min(int(max_cuts), MAX_CUTS))
    C = cp.Parameter((rows, K))
    wv, t = cp.Variable(K, nonneg=True), cp.Variable()
    cuts = t <= C @ wv
    program = cp.Problem(cp.Maximize(t), [cp.sum(wv) == 1, cuts])
    bank = np.full((rows, K), 10.0 * float(G.max()) / scale + 10.0)  # unused rows: never binding
    used, incumbent, lower, status, name = 0, (float(values.min()), w, values, G), 0.0, "", ""
    while used + K - 1 <= rows:
        bank[used:used + K - 1] = G / scale
        used += K - 1
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
                              active=_closest_pairs(best, values, K), status=status, solver=name,
                              solve_time=time.perf_counter() - start)
