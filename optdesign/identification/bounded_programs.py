"""The primal convex models of arms with rewards in [0, 1] (:mod:`optdesign.identification.bounded`), as cvxpy
programs over distributions on the support and the ends 0 and 1 (Honda & Takemura 2010: an alternative needs no other
atoms): KL_inf(F, x), the least KL(F, G) over G whose mean reaches x, and a pair's cost, the least
w_i KL(F_i, G_i) + w_j KL(F_j, G_j) with mean(G_i) + shift <= mean(G_j). They are the references the compiled duals
(:mod:`optdesign.identification.bounded_kernels`) are held to.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .._lazy import cp
from ..errors import InvalidInputError, SolverError
from ..runtime.solvers import solve
from ..validation import as_tolerance, as_vector
from .bounded import check_bounded_arms, check_shift
from .pairs import TIGHT

__all__ = ["kl_inf_program", "pair_cost_program"]


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
        F, as :func:`optdesign.identification.kl_inf` takes it.
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
        What :func:`optdesign.identification.kl_inf` refuses.
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
                      shift: float = 0.0, scale: float = 1.0, solver: str | None = None) -> float:
    """f_j(w) as one joint convex model: min w_i KL(F_i, G_i) + w_j KL(F_j, G_j) over distributions on [0, 1] with
    scale mean(G_i) + shift <= mean(G_j) (module docstring), the reference of
    :func:`optdesign.identification.bounded_pieces`.

    Parameters
    ----------
    probs, support : array_like
        The arms' distributions, one per row, on the support.
    w : array_like, shape (K,)
        Nonnegative weights.
    best, other : int
        The arms i and j.
    shift : float
        s in [0, 1): arm j's mean is put s above arm i's (additive epsilon-good identification; 0, best-arm).
    scale : float
        c > 0: arm j's mean is put above c times arm i's (multiplicative epsilon: 1 / (1 - epsilon)).
    solver : str, optional
        A conic solver with the exponential cone (default CLARABEL).

    Returns
    -------
    float
        The pair's cost.

    Raises
    ------
    InvalidInputError
        Distributions :func:`optdesign.identification.check_bounded_arms` refuses, negative weights, arms that are
        not two different indices, a shift outside [0, 1), or a scale that is not a positive number.
    SolverError
        The model was not solved.
    """
    P, s = check_bounded_arms(probs, support)
    wt = as_vector(w, "w", length=P.shape[0])
    if np.any(wt < 0) or not all(isinstance(k, (int, np.integer)) and 0 <= k < P.shape[0] for k in (best, other)) \
            or best == other:
        raise InvalidInputError(f"w must be nonnegative and best, other two different arms of {P.shape[0]}, got "
                                f"best={best!r}, other={other!r}")
    shift = check_shift(shift)
    scale = as_tolerance(scale, "scale")  # a finite positive number
    atoms = _atoms(s)
    qi, di = _alternative(P[best], s, atoms)
    qj, dj = _alternative(P[other], s, atoms)
    program = cp.Problem(cp.Minimize(wt[best] * di + wt[other] * dj),
                         [cp.sum(qi) == 1, cp.sum(qj) == 1, scale * (atoms @ qi) + shift <= atoms @ qj])
    return _solved(program, solver, "the pair's model")
