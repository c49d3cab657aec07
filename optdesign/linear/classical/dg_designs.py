"""Public entry points of the D- and G-optimal designs, on the simplex or under linear constraints A w <= b.

On the simplex both are the Kiefer–Wolfowitz design of :mod:`optdesign.linear.dispatch` (its fast paths: exchange,
co-rank, Frank–Wolfe, barrier; its cvxpy models), the D-optimal one reported in D units. Under constraints the two
differ: D is Kiefer's phi_0 on the constrained polytope (:mod:`~optdesign.linear.classical.dispatch`: its working
set, certified over the polytope), G the min-max SOCP of :mod:`~optdesign.linear.classical.minmax_g`.
"""

from __future__ import annotations

from dataclasses import replace

from numpy.typing import ArrayLike

from ...docstrings import shared_doc
from ...errors import InvalidInputError
from ...result import DesignResult
from ...validation import as_arms, as_tolerance
from ...vocabulary import DesignMethod
from ..designs import OPTIONS_DOC, unconstrained_d_optimal, unconstrained_g_optimal
from ..dispatch import DEFAULT_TOL, check_method, check_solver, within_time_limit
from .constraints import ConstraintsLike, as_constraints
from .designs import phi_optimal
from .minmax_g import constrained_g_design

__all__ = ["d_optimal", "g_optimal"]

_DOC = {
    "arms": """    X : array_like
        The candidates, K x d, one per row; they must span R^d.
    constraints : LinearConstraints or (A, b) or list of them, optional
        Linear constraints A w <= b on the weights (:func:`optdesign.linear.classical.constraints.budget`,
        ``caps``, ``augment``, ``group_totals``); with them only ``method="auto"`` or ``"cvxpy"``.""",
    "options": OPTIONS_DOC.format(gd=', ``"frank-wolfe"``, ``"multiplicative"``, ``"exchange"``, ``"corank"``'),
    "raises": """    InvalidInputError
        Arms that do not span R^d, NaN/inf entries, wrong shapes, an unknown method, a method other than ``"auto"``
        or ``"cvxpy"`` with constraints, infeasible constraints or constraints whose designs estimate nothing.
    InstanceTooLargeError
        ``method="cvxpy"`` on a conic model above its size limit.
    SolverError
        Every conic solver of the chain failed (the message names each status).""",
}

_shared_doc = shared_doc(_DOC)


def _constrained_method(method: object, name: str) -> None:
    if check_method(method) not in ("auto", "cvxpy"):
        raise InvalidInputError(f"{name} with constraints is solved by its conic model: method must be 'auto' or "
                                f"'cvxpy', got {method!r}")


@_shared_doc
def g_optimal(X: ArrayLike, *, constraints: ConstraintsLike = None, solver: str | None = None,
              method: DesignMethod = "auto", tol: float = DEFAULT_TOL, time_limit: float | None = None) -> DesignResult:
    """G-optimal design argmin_w max_x x^T A(w)^{-1} x; on the simplex the optimal value is d (Kiefer–Wolfowitz).

    On the simplex the fast path is the D-optimal Frank–Wolfe (same optimum by Kiefer–Wolfowitz, certified by
    max_k x_k^T A^{-1} x_k / d - 1), on an active set with full pricing (``"exchange"``) from EXCHANGE_MIN_ARMS arms;
    when K - d = r is small (r^2 <= CORANK_RATIO d) ``auto`` takes the co-rank path (``"corank"``: variances from the
    left null space of X, O(K r^2) a step; w = 1/d when K = d). ``method="cvxpy"`` solves the min-max SOCP with
    Y = X. Under constraints the min-max SOCP on a working set of rows, certified by its dual
    (:mod:`~optdesign.linear.classical.minmax_g`); the optimum then exceeds d.

    Parameters
    ----------
%(arms)s
%(options)s

    Returns
    -------
    DesignResult
        ``weights`` on the rows of X, ``value`` (the G-value at the weights, also in ``g_value``), ``lower_bound``
        and ``gap`` (certified), ``status``, ``method``; ``constraints`` (their rows) under constraints.

    Raises
    ------
%(raises)s

    Examples
    --------
    Three arms of the plane: the uniform design reaches the optimum d = 2, which is also the lower bound. A cap of
    0.2 on the third arm raises the optimum to 4 / (1 + 3 x 0.2) = 2.5.

    >>> import numpy as np
    >>> import optdesign as od
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> res = od.g_optimal(X)
    >>> print(round(res.value, 3), res.lower_bound, res.gap <= 1e-4)
    2.0 2.0 True
    >>> np.round(res.weights, 3)
    array([0.333, 0.333, 0.333])
    >>> capped = od.g_optimal(X, constraints=od.caps([1.0, 1.0, 0.2]))
    >>> print(round(capped.value, 3), capped.gap <= 1e-4, round(capped.weights[2], 3))
    2.5 True 0.2
    """
    if constraints is None:
        return unconstrained_g_optimal(X, solver=solver, method=method, tol=tol, time_limit=time_limit)
    _constrained_method(method, "g_optimal")
    check_solver(solver)
    arms, tol = as_arms(X), as_tolerance(tol)
    cons = as_constraints(constraints, arms.shape[0])
    if cons is None:
        return unconstrained_g_optimal(arms, solver=solver, method=method, tol=tol, time_limit=time_limit)
    return within_time_limit(time_limit, tol, lambda: constrained_g_design(arms, cons, solver, tol))


@_shared_doc
def d_optimal(X: ArrayLike, *, constraints: ConstraintsLike = None, solver: str | None = None,
              method: DesignMethod = "auto", tol: float = DEFAULT_TOL, time_limit: float | None = None) -> DesignResult:
    """D-optimal design argmax_w log det A(w); ``value`` is the D-criterion det A(w)^(-1/d) (variance units).

    ``lower_bound`` = value d / G (Atwood 1969: the D-efficiency (det A(w) / det A*)^(1/d) is at least d / G, G the
    G-value max_k x_k^T A(w)^{-1} x_k, in ``g_value``), so ``gap`` = G / d - 1; on the simplex G = d at the optimum
    (Kiefer–Wolfowitz), and the design is G-optimal too. The same value as ``phi_optimal(X, 0)`` and
    ``criterion_value(X, res.weights, "d")``. Under constraints the design is ``phi_optimal(X, 0, constraints=...)``,
    certified over the constrained designs.

    Parameters
    ----------
%(arms)s
%(options)s

    Returns
    -------
    DesignResult
        ``weights`` on the rows of X, ``value`` det A(w)^(-1/d), ``lower_bound`` and ``gap`` (certified),
        ``g_value``, ``status``, ``method``; ``fallback`` when ``auto`` kept an uncertified design; ``constraints``
        (their rows) under constraints.

    Raises
    ------
%(raises)s

    Examples
    --------
    The D-optimal design is also G-optimal (Kiefer–Wolfowitz): its G-value is d.

    >>> import numpy as np
    >>> import optdesign as od
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> res = od.d_optimal(X)
    >>> print(round(res.value, 4), round(res.g_value, 3), res.gap <= 1e-4)
    1.7321 2.0 True
    """
    if constraints is None:
        return unconstrained_d_optimal(X, solver=solver, method=method, tol=tol, time_limit=time_limit)
    _constrained_method(method, "d_optimal")
    res = phi_optimal(X, 0.0, constraints=constraints, solver=solver, method="auto" if method == "auto" else "cvxpy",
                      tol=tol, time_limit=time_limit)
    extras = {key: value for key, value in res.extras.items() if key != "p"}
    return replace(res, criterion="d-optimal", extras=extras)
