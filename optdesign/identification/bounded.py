"""Best-arm identification among arms whose rewards lie in [0, 1], the learner knowing nothing else of them.

Arm k has a distribution F_k on [0, 1]; here a finite support s (shared by the arms, any points of [0, 1]) and
probabilities p_k on it. The learner's model is every distribution on [0, 1], so moving arm k's mean to x costs, per
observation, KL_inf: the least KL(F_k, G) over distributions G on [0, 1] with mean at least x (above its mean) or at
most x (below), Honda & Takemura's dual (2010, Thm 8)

    K+(F, x) = max over lambda in [0, 1 / (1 - x)] of E_F log(1 - lambda (X - x))

and its reflection below the mean (:mod:`optdesign.identification.bounded_kernels`, compiled; :func:`kl_inf_program`
is the primal, a cvxpy model over distributions on s and the ends 0 and 1). With i the best arm the piece of arm j is

    f_j(w) = min over x in [mu_j, mu_i] of w_i K-(F_i, x) + w_j K+(F_j, x),

concave and positively homogeneous in w (a minimum of linear functions: :func:`pair_cost_program` is the joint
convex program over both alternatives), and 1 / T* = max over the simplex of min_j f_j(w): the lower bound of
best-arm identification among distributions on [0, 1] (Garivier & Kaufmann 2016, Thm 1, on this model; Agrawal,
Koolen & Juneja 2020). On two atoms {0, 1} it is Bernoulli's T*. T* is computed by cutting planes on a linear program,
certified (:mod:`optdesign.identification.cutting_planes`), or by Garivier & Kaufmann's equalisation
(``method="equalise"``), certified the same way.
"""

from __future__ import annotations

import time

import numpy as np
import numpy.typing as npt

from .._lazy import cp
from ..errors import InvalidInputError, SolverError
from ..runtime.solvers import solve
from ..validation import as_count, as_matrix, as_tolerance, as_vector, unique_argmax
from .cutting_planes import MAX_CUTS, cutting_plane_time, equalised_time, time_doc, top_m_time
from .pairs import TIGHT, IdentificationTime

__all__ = ["bounded_characteristic_time", "bounded_pieces", "check_bounded_arms", "kl_inf", "kl_inf_program",
           "kl_inf_rows", "pair_cost_program"]

#: how far a row of probabilities may sum from one (it is then renormalised)
SUM_TOLERANCE = 1e-9


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


def _atoms(support: np.ndarray) -> np.ndarray:
    """The support with the ends 0 and 1: the atoms an alternative needs (Honda & Takemura 2010)."""
    return np.union1d(support, [0.0, 1.0])


def _alternative(p: np.ndarray, s: np.ndarray, atoms: np.ndarray) -> tuple[cp.Variable, cp.Expression]:
    """A distribution q on the atoms and KL(F, q) (F's probabilities on s placed on the atoms)."""
    full = np.zeros(atoms.size)
    np.add.at(full, np.searchsorted(atoms, s), p)
    q = cp.Variable(atoms.size, nonneg=True)
    return q, cp.sum(cp.rel_entr(full, q))


def _solved(program: cp.Problem, solver: str | None, what: str) -> float:
    """The optimal value of a reference model, solved tightly (default CLARABEL), or a SolverError with its status."""
    solve(program, solver or "CLARABEL", solver_options=TIGHT)
    if program.value is None:
        raise SolverError(f"{what} was not solved (status {program.status})")
    return float(program.value)


def kl_inf_program(probs: npt.ArrayLike, support: npt.ArrayLike, x: float, *, solver: str | None = None) -> float:
    """KL_inf(F, x) as the primal cvxpy model (module docstring): the reference the compiled dual is held to.

    Parameters
    ----------
    probs, support : array_like
        F, as :func:`kl_inf` takes it.
    x : float
        The mean to reach, in (0, 1).
    solver : str, optional
        A conic solver with the exponential cone (default CLARABEL).

    Returns
    -------
    float
        The least KL(F, G).

    Raises
    ------
    InvalidInputError
        What :func:`kl_inf` refuses.
    SolverError
        The model was not solved.
    """
    P, s = check_bounded_arms(probs, support)
    if not 0.0 < float(x) < 1.0:
        raise InvalidInputError(f"x must lie in (0, 1), got {x!r}")
    atoms = _atoms(s)
    q, divergence = _alternative(P[0], s, atoms)
    above = float(x) >= float(P[0] @ s)
    reach = atoms @ q >= float(x) if above else atoms @ q <= float(x)
    return _solved(cp.Problem(cp.Minimize(divergence), [cp.sum(q) == 1, reach]), solver, "the KL_inf model")


def pair_cost_program(probs: npt.ArrayLike, support: npt.ArrayLike, w: npt.ArrayLike, best: int, other: int, *,
                      solver: str | None = None) -> float:
    """f_j(w) as one joint convex model: min w_i KL(F_i, G_i) + w_j KL(F_j, G_j) over distributions on [0, 1] with
    mean(G_i) <= mean(G_j) (module docstring), the reference of :func:`bounded_pieces`.

    Parameters
    ----------
    probs, support : array_like
        The arms' distributions, one per row, on the support.
    w : array_like, shape (K,)
        Nonnegative weights.
    best, other : int
        The arms i and j.
    solver : str, optional
        A conic solver with the exponential cone (default CLARABEL).

    Returns
    -------
    float
        The pair's cost.

    Raises
    ------
    InvalidInputError
        Distributions :func:`check_bounded_arms` refuses, negative weights, or arms that are not two different
        indices.
    SolverError
        The model was not solved.
    """
    P, s = check_bounded_arms(probs, support)
    wt = as_vector(w, "w", length=P.shape[0])
    if np.any(wt < 0) or not all(isinstance(k, (int, np.integer)) and 0 <= k < P.shape[0] for k in (best, other)) \
            or best == other:
        raise InvalidInputError(f"w must be nonnegative and best, other two different arms of {P.shape[0]}, got "
                                f"best={best!r}, other={other!r}")
    atoms = _atoms(s)
    qi, di = _alternative(P[best], s, atoms)
    qj, dj = _alternative(P[other], s, atoms)
    program = cp.Problem(cp.Minimize(wt[best] * di + wt[other] * dj),
                         [cp.sum(qi) == 1, cp.sum(qj) == 1, atoms @ qi <= atoms @ qj])
    return _solved(program, solver, "the pair's model")


def bounded_pieces(probs: np.ndarray, support: np.ndarray, w: np.ndarray, *, best: int | None = None,
                   gradients: bool = True) -> tuple[int, np.ndarray, np.ndarray | None, np.ndarray]:
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

    Returns
    -------
    tuple
        ``(best, values, gradients, closest)``: the arm i, f_j(w) for every other arm j in increasing index (shape
        (K - 1,)), their gradients (K-(F_i, x_j) in column i, K+(F_j, x_j) in column j; shape (K - 1, K)), and the
        closest common mean x_j of each piece.
    """
    from .bounded_kernels import pair_pieces

    P = np.ascontiguousarray(probs, dtype=float)
    s = np.ascontiguousarray(support, dtype=float)
    i = int(np.argmax(P @ s)) if best is None else int(best)
    values, x, gi, gj = pair_pieces(P, s, np.asarray(w, dtype=float), i)
    if not gradients:
        return i, values, None, x
    others = np.delete(np.arange(P.shape[0]), i)
    G = np.zeros((others.size, P.shape[0]))
    G[:, i] = gi
    G[np.arange(others.size), others] = gj
    return i, values, G, x


def _values_and_gradients(P: np.ndarray, s: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    _, values, G, _ = bounded_pieces(P, s, w)
    assert G is not None
    return values, G


@time_doc
def bounded_characteristic_time(probs: npt.ArrayLike, support: npt.ArrayLike, *, m: int = 1, method: str = "program",
                                solver: str | None = None, tol: float = 1e-6,
                                max_cuts: int = MAX_CUTS) -> IdentificationTime:
    """T* and w* of best-arm (or top-m) identification among distributions on [0, 1], certified (module docstring).

    Parameters
    ----------
    probs : array_like, shape (K, L)
        The arms' distributions, one per row, with a unique largest mean (m = 1) or distinct m-th and (m+1)-th.
    support : array_like, shape (L,)
        Their support, in [0, 1].
    m : int
        The answer's size: 1, the best arm; m > 1, the m best arms, whose pieces are the pairs (i among them, j
        outside), by cutting planes only.
    method : str
        ``"program"`` (default): cutting planes on a linear program; ``"equalise"``: the fast path, Garivier &
        Kaufmann's equalisation with these pieces (:func:`optdesign.identification.bounded_kernels.equalise`),
        certified by weak duality with the multipliers that are optimal at its weights.
    %(program)s

    Raises
    ------
    InvalidInputError
        Distributions :func:`check_bounded_arms` refuses, fewer than two arms, means that tie for the largest (the
        m-th largest), m outside [1, K), or an unknown method (the equalisation for m > 1).
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
