"""Public entry points of the classical designs: A-, I-, c/L-, E-, Ds- and Kiefer phi_p-optimal.

Each minimises a criterion Phi(A(w)) of the information matrix A(w) = X^T diag(w) X over designs w >= 0,
sum_k w_k = 1 (and A w <= b when ``constraints`` are given), with ``value`` in the criterion's own units (a
variance, :mod:`~optdesign.linear.classical.criteria`), a certified ``lower_bound`` and ``gap``; how it is solved
is :mod:`~optdesign.linear.classical.dispatch`.
"""

from __future__ import annotations

from numpy.typing import ArrayLike

from ...docstrings import shared_doc
from ...result import DesignResult
from ...vocabulary import ClassicalMethod
from ..dispatch import DEFAULT_TOL, within_time_limit
from .constraints import ConstraintsLike
from .dispatch import classical_design
from .problems import a_problem, c_problem, ds_problem, e_problem, i_problem, phi_problem

__all__ = ["a_optimal", "c_optimal", "ds_optimal", "e_optimal", "i_optimal", "phi_optimal"]

_DOC = {
    "arms": """    X : array_like
        The candidates, K x d, one per row; they must span R^d.""",
    "options": """    constraints : LinearConstraints or (A, b) or list of them, optional
        Linear constraints A w <= b on the weights (:func:`optdesign.linear.classical.constraints.budget`,
        ``caps``, ``augment``, ``group_totals``); solved by the cvxpy model and certified over the constrained
        designs.
    solver : str, optional
        Conic solver of the cvxpy path (``"CLARABEL"``, ``"SCS"``, ``"MOSEK"``); the default chain otherwise.
    method : str
        ``"auto"`` (default: the fast path, then the cvxpy model if its certified gap exceeds ``tol``), ``"fast"``
        or ``"cvxpy"``.
    tol : float
        Certified relative gap at which the fast path stops (``value / lower_bound - 1``).
    time_limit : float, optional
        Seconds for the whole call; when they are spent, or at the first Ctrl-C inside
        :func:`optdesign.runtime.deadline.graceful_interrupt`, the best certified design so far is returned (status
        ``"not_converged"`` or ``"interrupted"``, RuntimeWarning if its gap exceeds ``tol``).""",
    "returns": """    DesignResult
        ``weights`` on the rows of X, ``value`` (the criterion at the weights), ``lower_bound`` and ``gap``
        (certified; ``efficiency`` = lower_bound / value), ``status``, ``method`` (``"exchange"``, ``"lp"``,
        ``"generation"``, ``"cvxpy"``)""",
    "raises": """    InvalidInputError
        NaN/inf entries, wrong shapes, arms that do not span R^d, an unknown method, infeasible constraints or
        constraints that allow no estimating design, ``method="fast"`` with constraints.
    InstanceTooLargeError
        ``method="cvxpy"`` (or constraints) on a conic model above its size limit.
    SolverError
        Every conic solver of the chain failed.""",
}

_shared_doc = shared_doc(_DOC)


@_shared_doc
def a_optimal(X: ArrayLike, *, constraints: ConstraintsLike = None, solver: str | None = None,
              method: ClassicalMethod = "auto", tol: float = DEFAULT_TOL,
              time_limit: float | None = None) -> DesignResult:
    """A-optimal design argmin_w tr A(w)^{-1}: the smallest average variance of the parameter estimates.

    Certificate: tr(A^{-1})^2 / max_k x_k^T A^{-2} x_k (equivalence theorem: max_k x_k^T A^{-2} x_k = tr A^{-1}
    at the optimum; Fedorov 1972, Thm 2.9.2).

    Parameters
    ----------
%(arms)s
%(options)s

    Returns
    -------
%(returns)s.

    Raises
    ------
%(raises)s

    Examples
    --------
    Quadratic regression on {-1, 0, 1}: weights 1/4, 1/2, 1/4 and tr A^{-1} = 8.

    >>> import numpy as np
    >>> import optdesign as od
    >>> x = np.array([-1.0, 0.0, 1.0])
    >>> res = od.a_optimal(np.column_stack([np.ones(3), x, x**2]))
    >>> print(np.round(res.weights, 4), round(res.value, 4), res.gap <= 1e-4)
    [0.25 0.5  0.25] 8.0 True
    """
    return within_time_limit(time_limit, tol, lambda: classical_design(
        a_problem(X), constraints=constraints, solver=solver, method=method, tol=tol))


@_shared_doc
def i_optimal(X: ArrayLike, region: ArrayLike | None = None, *, region_weights: ArrayLike | None = None,
              moments: ArrayLike | None = None, constraints: ConstraintsLike = None, solver: str | None = None,
              method: ClassicalMethod = "auto", tol: float = DEFAULT_TOL,
              time_limit: float | None = None) -> DesignResult:
    """I-optimal (IV-, Q-optimal) design argmin_w tr(A(w)^{-1} B): the average prediction variance over a region.

    B = sum_j rho_j z_j z_j^T / sum_j rho_j for region points z_j (rows, in the coordinates of X) with weights rho_j,
    or the given moment matrix; the candidates, uniformly, by default.

    Parameters
    ----------
%(arms)s
    region : array_like, optional
        Region points, m x d; X by default.
    region_weights : array_like, optional
        Nonnegative weights of the region points; equal by default.
    moments : array_like, optional
        The d x d moment matrix B itself (symmetric PSD), instead of ``region``.
%(options)s

    Returns
    -------
%(returns)s.

    Raises
    ------
%(raises)s

    Examples
    --------
    Straight line on {-1, 0, 1}, averaged over the three points: the ends, equally.

    >>> import numpy as np
    >>> import optdesign as od
    >>> X = np.column_stack([np.ones(3), [-1.0, 0.0, 1.0]])
    >>> res = od.i_optimal(X)
    >>> print(np.round(res.weights, 4), round(res.value, 4))
    [0.5 0.  0.5] 1.6667
    """
    return within_time_limit(time_limit, tol, lambda: classical_design(
        i_problem(X, region, region_weights, moments), constraints=constraints, solver=solver, method=method, tol=tol))


@_shared_doc
def c_optimal(X: ArrayLike, c: ArrayLike, *, constraints: ConstraintsLike = None, solver: str | None = None,
              method: ClassicalMethod = "auto", tol: float = DEFAULT_TOL,
              time_limit: float | None = None) -> DesignResult:
    """c-optimal design argmin_w c^T A(w)^- c, or L-optimal argmin_w tr(C A(w)^- C^T) for a matrix C of rows.

    The variance of the estimate of c^T theta (summed over the rows of C). c need not be estimable by every design:
    a design whose A(w) does not have c in its range has value inf, and the optimum is often singular. X may be
    rank deficient; c must lie in the range of X^T X. The fast path of c is Elfving's linear program (Elfving
    1952: value (min ||u||_1 : X^T u = c)^2), that of L the Frank–Wolfe exchange.

    Parameters
    ----------
    X : array_like
        The candidates, K x d, one per row.
    c : array_like
        The vector c (length d), or the rows of C (k x d) for L-optimality.
%(options)s

    Returns
    -------
%(returns)s; ``criterion`` is ``"c-optimal"`` or ``"l-optimal"``, ``extras["rank"]`` the
        rank of X when it is below d.

    Raises
    ------
%(raises)s
        Also c zero or not in the range of X^T X.

    Examples
    --------
    Extrapolating a straight line on [-1, 1] to x = 2 (c = (1, 2)): weights 1/4 at -1, 3/4 at 1, variance 4.

    >>> import numpy as np
    >>> import optdesign as od
    >>> X = np.array([[1.0, -1.0], [1.0, 1.0]])
    >>> res = od.c_optimal(X, [1.0, 2.0])
    >>> print(np.round(res.weights, 4), round(res.value, 4), res.method)
    [0.25 0.75] 4.0 lp
    """
    return within_time_limit(time_limit, tol, lambda: classical_design(
        c_problem(X, c), constraints=constraints, solver=solver, method=method, tol=tol))


@_shared_doc
def e_optimal(X: ArrayLike, *, constraints: ConstraintsLike = None, solver: str | None = None,
              method: ClassicalMethod = "auto", tol: float = DEFAULT_TOL,
              time_limit: float | None = None) -> DesignResult:
    """E-optimal design argmax_w lambda_min(A(w)); ``value`` is 1 / lambda_min, the largest variance of c^T theta
    over unit vectors c (minimised).

    A semidefinite model (max tau : A(w) - tau I PSD), certified by its dual Z (tr Z = 1):
    1 / max_k x_k^T Z x_k bounds the optimum from below. The fast path solves it on a working set of candidates
    and prices Z over all of them.

    Parameters
    ----------
%(arms)s
%(options)s

    Returns
    -------
%(returns)s.

    Raises
    ------
%(raises)s

    Examples
    --------
    Quadratic regression on {-1, 0, 1}: weights 1/5, 3/5, 1/5 and lambda_min = 1/5.

    >>> import numpy as np
    >>> import optdesign as od
    >>> x = np.array([-1.0, 0.0, 1.0])
    >>> res = od.e_optimal(np.column_stack([np.ones(3), x, x**2]))
    >>> print(np.round(res.weights, 3), round(res.value, 3))
    [0.2 0.6 0.2] 5.0
    """
    return within_time_limit(time_limit, tol, lambda: classical_design(
        e_problem(X), constraints=constraints, solver=solver, method=method, tol=tol))


@_shared_doc
def ds_optimal(X: ArrayLike, subset: ArrayLike, *, constraints: ConstraintsLike = None, solver: str | None = None,
               method: ClassicalMethod = "auto", tol: float = DEFAULT_TOL,
              time_limit: float | None = None) -> DesignResult:
    """Ds-optimal design: D-optimal for the parameters ``subset`` (s of them), the others a nuisance.

    Maximises log det M_s(A(w)), M_s = A_ss - A_sr A_rr^- A_rs the Schur complement; ``value`` is
    det(M_s)^{-1/s} = det((A^{-1})_ss)^{1/s}, the geometric mean of the variances of the s estimates (Atwood 1969).
    subset = all columns is D-optimality (value det(A)^{-1/d}).

    Parameters
    ----------
%(arms)s
    subset : array_like of int
        The distinct column indices of the parameters of interest.
%(options)s

    Returns
    -------
%(returns)s; ``extras["subset"]`` the sorted indices.

    Raises
    ------
%(raises)s
        Also a subset that is empty, repeats an index or leaves 0..d-1.

    Examples
    --------
    The quadratic coefficient of a quadratic on {-1, 0, 1}: weights 1/4, 1/2, 1/4 and variance 4.

    >>> import numpy as np
    >>> import optdesign as od
    >>> x = np.array([-1.0, 0.0, 1.0])
    >>> res = od.ds_optimal(np.column_stack([np.ones(3), x, x**2]), [2])
    >>> print(np.round(res.weights, 4), round(res.value, 4))
    [0.25 0.5  0.25] 4.0
    """
    return within_time_limit(time_limit, tol, lambda: classical_design(
        ds_problem(X, subset), constraints=constraints, solver=solver, method=method, tol=tol))


@_shared_doc
def phi_optimal(X: ArrayLike, p: float, *, constraints: ConstraintsLike = None, solver: str | None = None,
                method: ClassicalMethod = "auto", tol: float = DEFAULT_TOL,
              time_limit: float | None = None) -> DesignResult:
    """Kiefer's phi_p-optimal design argmin_w (tr(A(w)^{-p}) / d)^{1/p} (Kiefer 1974), 0 <= p <= inf.

    p = 0 is D (value det(A)^{-1/d}), p = 1 is A (value tr(A^{-1}) / d), p = inf is E (value 1 / lambda_min); the
    value increases with p. The cvxpy model exists for p in {0, 1, 2, inf}; other p are solved by the certified
    Frank–Wolfe path (``method="cvxpy"`` and constraints raise for them).

    Parameters
    ----------
%(arms)s
    p : float
        The order, 0 <= p <= inf.
%(options)s

    Returns
    -------
%(returns)s; ``extras["p"]``.

    Raises
    ------
%(raises)s
        Also p negative or NaN, and a p without a conic model with ``method="cvxpy"`` or constraints.

    Examples
    --------
    >>> import numpy as np
    >>> import optdesign as od
    >>> x = np.array([-1.0, 0.0, 1.0])
    >>> res = od.phi_optimal(np.column_stack([np.ones(3), x, x**2]), 1)
    >>> print(np.round(res.weights, 4), round(res.value, 4))
    [0.25 0.5  0.25] 2.6667
    """
    return within_time_limit(time_limit, tol, lambda: classical_design(
        phi_problem(X, p), constraints=constraints, solver=solver, method=method, tol=tol))
