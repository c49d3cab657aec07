"""Public entry points of the linear designs: XY-allocation, XY-oracle, transductive; G-/D-optimal on the simplex.

The public G- and D-optimal designs, which also take constraints, are :mod:`optdesign.linear.classical.dg_designs`.

Each states its problem; how it is solved (fast path, cvxpy fallback, time limits) is :mod:`optdesign.linear.dispatch`.
When Y is all pairwise differences of many items (more than PAIR_LIST_LIMIT pairs), the directions are not
listed: :mod:`optdesign.linear.pairs` generates the pairs that bind and certifies the design over all of them.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..docstrings import shared_doc
from ..errors import InvalidInputError
from ..result import DesignResult
from ..validation import as_arms, as_matrix, as_tolerance, as_vector, check_direction_scale
from ..vocabulary import DesignMethod
from .directions import oracle_directions, pairwise_differences
from .dispatch import (
    DEFAULT_TOL,
    check_method,
    in_d_units,
    kiefer_wolfowitz_design,
    minmax_design,
    replace_bound,
    within_time_limit,
)
from .models import DOptimalModel, MinMaxDesignModel, d_optimal_model_fits, minmax_model_fits
from .pairs import pair_count, pairwise_design

__all__ = ["transductive", "unconstrained_d_optimal", "unconstrained_g_optimal", "xy_allocation", "xy_oracle"]

OPTIONS_DOC = """    solver : str, optional
        Conic solver of the cvxpy path (``"CLARABEL"``, ``"SCS"``, ``"MOSEK"``); the default chain otherwise.
    method : str
        ``"auto"`` (default), ``"cvxpy"``, ``"barrier"``{gd}.
    tol : float
        Certified relative gap at which the fast path stops (``value / lower_bound - 1``).
    time_limit : float, optional
        Seconds for the whole call; when they are spent, or at the first Ctrl-C inside
        :func:`optdesign.runtime.deadline.graceful_interrupt`, the best certified design so far is returned (status
        ``"not_converged"`` or ``"interrupted"``, RuntimeWarning if its gap exceeds ``tol``)."""


# the parameter, return and error descriptions every public design shares (substituted by _shared_doc)
_DOC = {
    "arms": """    X : array_like
        The arms, K x d, one per row; they must span R^d.""",
    "options": OPTIONS_DOC.format(gd=""),
    "options_gd": OPTIONS_DOC.format(gd=', ``"frank-wolfe"``, ``"multiplicative"``, ``"exchange"``, ``"corank"``'),
    "returns": "        ``weights`` on the rows of X, ``value`` (the criterion at the weights), ``lower_bound`` and "
               "``gap``\n        (certified), ``status``, ``method``",
    "invalid": "        Arms that do not span R^d, NaN/inf entries, wrong shapes, an unknown method",
    "raises": """    InstanceTooLargeError
        ``method="cvxpy"`` on a conic model above its size limit.
    SolverError
        Every conic solver of the chain failed (the message names each status).""",
}


_shared_doc = shared_doc(_DOC)


@_shared_doc
def unconstrained_g_optimal(X: ArrayLike, *, solver: str | None = None, method: DesignMethod = "auto",
                            tol: float = DEFAULT_TOL, time_limit: float | None = None) -> DesignResult:
    """:func:`optdesign.g_optimal` on the simplex: the D-optimal fast paths (Kiefer–Wolfowitz), ``value`` the G-value.

    Parameters
    ----------
%(arms)s
%(options_gd)s

    Returns
    -------
    DesignResult
%(returns)s, ``g_value`` (the same as ``value``).

    Raises
    ------
    InvalidInputError
%(invalid)s.
%(raises)s
    """

    def model(X: np.ndarray, solver: str | None) -> DesignResult:
        # Kiefer–Wolfowitz: the exact optimum d is sharper than the dual bound
        res = MinMaxDesignModel(X, X, solver=solver).solve(criterion="g-optimal")
        return replace_bound(res, float(X.shape[1]))

    return within_time_limit(time_limit, tol, lambda: kiefer_wolfowitz_design(
        X, solver, method, tol, "g-optimal", model, lambda K, d: minmax_model_fits(K, K)))


@_shared_doc
def unconstrained_d_optimal(X: ArrayLike, *, solver: str | None = None, method: DesignMethod = "auto",
                            tol: float = DEFAULT_TOL, time_limit: float | None = None) -> DesignResult:
    """:func:`optdesign.d_optimal` on the simplex: ``value`` det A(w)^(-1/d), the G-value in ``g_value``.

    Parameters
    ----------
%(arms)s
%(options_gd)s

    Returns
    -------
    DesignResult
%(returns)s, ``g_value``; ``fallback`` when ``auto`` kept an uncertified design.

    Raises
    ------
    InvalidInputError
%(invalid)s.
%(raises)s
    """
    def solve() -> DesignResult:
        res = kiefer_wolfowitz_design(X, solver, method, tol, "d-optimal",
                                      lambda X, solver: DOptimalModel(X, solver=solver).solve(), d_optimal_model_fits)
        return in_d_units(np.asarray(X, dtype=float), res)  # X was validated by the design

    return within_time_limit(time_limit, tol, solve)


@_shared_doc
def xy_allocation(
    X: ArrayLike, Y: ArrayLike | None = None, *, solver: str | None = None, method: DesignMethod = "auto",
    tol: float = DEFAULT_TOL, time_limit: float | None = None,
) -> DesignResult:
    """XY-allocation argmin_w max_{y in Y} y^T A(w)^{-1} y (Soare et al. 2014, eq. 14, continuous).

    ``Y`` defaults to all pairwise differences of the rows of X (generated, not listed, above
    PAIR_LIST_LIMIT pairs: :mod:`optdesign.linear.pairs`).

    Parameters
    ----------
%(arms)s
    Y : array_like, optional
        Directions, m x d; all pairwise differences of the rows of X by default.
%(options)s

    Returns
    -------
    DesignResult
%(returns)s; ``extras['directions']`` and ``extras['working_directions']`` when
        the directions are generated.

    Raises
    ------
    InvalidInputError
%(invalid)s.
%(raises)s

    Examples
    --------
    The same three arms: the difference (1, -1) of the first two binds, so the design pulls only them,
    and the certified lower bound matches the value.

    >>> import numpy as np
    >>> import optdesign as od
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> res = od.xy_allocation(X)
    >>> print(round(res.value, 2), round(res.lower_bound, 2))
    4.0 4.0
    >>> np.round(res.weights, 2)
    array([0.5, 0.5, 0. ])
    """
    def solve() -> DesignResult:
        arms = as_arms(X)
        if Y is None:
            return _all_pairs_design(arms, arms, solver, method, tol, "xy", "X has a single distinct arm")
        directions = as_matrix(Y, "Y", n_cols=arms.shape[1])
        return minmax_design(arms, directions, solver=solver, method=method, tol=tol, criterion="xy")

    return within_time_limit(time_limit, tol, solve)


PAIR_LIST_LIMIT = 20_000  # above this many pairs, designs generate the pairs they need (optdesign.linear.pairs)
EXPLICIT_PAIR_MAX = 2_000_000  # ... unless the pairs tie (symmetric items) and the full list fits (100 MB at d = 6)


def _all_pairs_design(X: np.ndarray, Z: np.ndarray, solver: str | None, method: DesignMethod, tol: float,
                      criterion: str, single: str) -> DesignResult:
    """min_w max_{z, z' in Z} ||z - z'||^2_{A(w)^{-1}}: an explicit direction list up to PAIR_LIST_LIMIT
    pairs, constraint generation over pairs above it (same certificate, on all pairs)."""
    def explicit() -> DesignResult:
        Y = pairwise_differences(Z)
        if Y.shape[0] == 0:
            raise InvalidInputError(f"{single}: there is nothing to identify")
        return minmax_design(X, Y, solver=solver, method=method, tol=tol, criterion=criterion)

    n_pairs = pair_count(Z.shape[0])
    if n_pairs <= PAIR_LIST_LIMIT:
        return explicit()
    check_method(method)
    tol = as_tolerance(tol)

    def solve(Y: np.ndarray, w0: np.ndarray | None, inner_tol: float) -> DesignResult:
        return minmax_design(X, Y, solver=solver, method=method, tol=inner_tol, criterion=criterion, w0=w0)

    return pairwise_design(X, Z, solve, tol=tol, explicit=explicit if n_pairs <= EXPLICIT_PAIR_MAX else None)


def _oracle_design(X: np.ndarray, Z: np.ndarray, theta: ArrayLike, solver: str | None, method: DesignMethod, tol: float,
                   criterion: str, key: str, name: str) -> DesignResult:
    """min_w max_{z != z*} ||z* - z||^2_{A(w)^{-1}} / ((z* - z)^T theta)^2; extras[key] = index of z*."""
    theta_v = as_vector(theta, "theta", length=X.shape[1])
    Y, best = oracle_directions(Z, theta_v, name)
    check_direction_scale(Y, X, "the oracle directions (z* - z) / gap(z)", rescale=f"theta or {name}")
    res = minmax_design(X, Y, solver=solver, method=method, tol=tol, criterion=criterion)
    res.extras[key] = best
    return res


@_shared_doc
def xy_oracle(X: ArrayLike, theta: ArrayLike, *, solver: str | None = None, method: DesignMethod = "auto",
              tol: float = DEFAULT_TOL, time_limit: float | None = None) -> DesignResult:
    """XY-oracle design; value H_LB = min_w max_{x != x*} ||x* - x||^2_{A(w)^{-1}} / Delta(x)^2 (Soare eq. 6).

    ``extras['best_arm']`` is x* = argmax_x x^T theta, which must be unique.

    Parameters
    ----------
%(arms)s
    theta : array_like
        The parameter, length d; x* = argmax_x x^T theta must be unique.
%(options)s

    Returns
    -------
    DesignResult
%(returns)s; ``extras['best_arm']`` is the index of x*.

    Raises
    ------
    InvalidInputError
%(invalid)s, a tie for the best arm.
%(raises)s

    Examples
    --------
    >>> import numpy as np
    >>> import optdesign as od
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> res = od.xy_oracle(X, theta=np.array([1.0, 0.5]))
    >>> print(round(res.value, 2), res.extras["best_arm"], res.lower_bound <= res.value)
    4.79 2 True
    """
    def solve() -> DesignResult:
        arms = as_arms(X)
        return _oracle_design(arms, arms, theta, solver, method, tol, "xy-oracle", "best_arm", "X")

    return within_time_limit(time_limit, tol, solve)


@_shared_doc
def transductive(
    X: ArrayLike, Z: ArrayLike, theta: ArrayLike | None = None, *, solver: str | None = None,
    method: DesignMethod = "auto", tol: float = DEFAULT_TOL, time_limit: float | None = None,
) -> DesignResult:
    """Transductive design (Fiez et al. 2019): measure on X, identify the best of Z.

    Without theta: min_w max_{z, z' in Z} ||z - z'||^2_{A(w)^{-1}}. With theta: rho* =
    min_w max_{z != z*} ||z* - z||^2_{A(w)^{-1}} / ((z* - z)^T theta)^2, where the lower bound is
    E[tau] >= rho* log(1/(2.4 delta)) for unit Gaussian noise. In the multi-armed case
    (X = Z = canonical basis) rho* = min_w max_a (1/w_1 + 1/w_a) / Delta_a^2, so the
    Garivier–Kaufmann Gaussian characteristic time is T*_GK = 2 rho*.
    ``extras['best_item']`` is the index of z* when theta is given.

    Parameters
    ----------
%(arms)s
    Z : array_like
        The items to identify the best of, n x d.
    theta : array_like, optional
        The parameter, length d (the oracle design rho*); z* = argmax_z z^T theta must be unique.
%(options)s

    Returns
    -------
    DesignResult
%(returns)s; ``extras['best_item']`` is the index of z* when theta is given.

    Raises
    ------
    InvalidInputError
%(invalid)s, a tie for the best item.
%(raises)s

    Examples
    --------
    Measure on the three arms to tell apart two items that differ along (0.2, -0.2):

    >>> import numpy as np
    >>> import optdesign as od
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> Z = np.array([[1.0, 0.0], [0.8, 0.2]])
    >>> res = od.transductive(X, Z, theta=np.array([1.0, 0.5]))
    >>> print(round(res.value, 2), res.extras["best_item"])
    16.0 0
    """
    def solve() -> DesignResult:
        arms = as_arms(X)
        items = check_direction_scale(as_matrix(Z, "Z", n_cols=arms.shape[1]), arms, "Z")
        if theta is not None:
            return _oracle_design(arms, items, theta, solver, method, tol, "transductive-oracle", "best_item", "Z")
        return _all_pairs_design(arms, items, solver, method, tol, "transductive", "Z has a single distinct item")

    return within_time_limit(time_limit, tol, solve)
