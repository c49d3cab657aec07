"""Locally optimal designs of a GLM: every linear-model criterion applied to the linearised candidates.

At a guess theta0 of the parameter, the information of a design w is M(w) = sum_i w_i nu_i x_i x_i^T with
nu_i = nu(x_i^T theta0) (:mod:`optdesign.glm.weights`), that of the linear model whose candidates are
f_i = sqrt(nu_i) x_i. So the locally D-, A- or I-optimal design is the linear design of the rows f_i, with its
certificate unchanged (Chernoff 1953; R OptimalDesign's ``Fx_glm``, whose convention is followed here: the
criteria apply to the linearised candidates, the I-criterion's default region included).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, cast

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidInputError
from ..exact_designs import ExactDesignResult, exact_design
from ..linear import a_optimal, d_optimal, i_optimal
from ..linear.dispatch import DEFAULT_TOL
from ..result import DesignResult
from ..validation import as_matrix, check_scale
from ..vocabulary import CLASSICAL_METHODS, DESIGN_METHODS, ClassicalMethod, DesignMethod, GlmLink, check_option
from .weights import candidate_matrix, glm_weights

if TYPE_CHECKING:
    from ..exact_designs.design import ExactCriterionName
    from ..formulas import CandidateSet

__all__ = ["GLM_CRITERIA", "glm_design", "glm_model_matrix"]

#: the criteria of :func:`glm_design`
GLM_CRITERIA: tuple[str, ...] = ("D", "A", "I")


def glm_model_matrix(X: ArrayLike | CandidateSet, theta0: ArrayLike, link: GlmLink) -> np.ndarray:
    """The linearised candidates f_i = sqrt(nu(x_i^T theta0)) x_i: M(w) = sum_i w_i f_i f_i^T is the GLM's information.

    Every design function of a linear model, given these rows, returns the design locally optimal at theta0
    (``od.d_optimal``, ``od.a_optimal``, ``od.i_optimal``, ``od.exact_design``, ...), with its certificate.

    Parameters
    ----------
    X : array_like or CandidateSet
        The candidates, K x p, one per row (a model matrix).
    theta0 : array_like
        The parameter the design is local to, length p.
    link : str
        ``"logit"``, ``"probit"``, ``"cloglog"``, ``"log"`` (Poisson) or ``"identity"``
        (:func:`optdesign.glm.glm_weights`).

    Returns
    -------
    numpy.ndarray, shape (K, p)
        The rows sqrt(nu_i) x_i.

    Raises
    ------
    InvalidInputError
        What :func:`optdesign.glm.glm_weights` refuses, or linearised candidates whose largest entry lies outside
        [1e-100, 1e100] (every weight underflowing: theta0 far too large for the candidates).

    Examples
    --------
    The simple logistic model at theta0 = (0, 1): the locally D-optimal design puts half the weight at each of
    eta = +-1.5434 (mu = 0.176 and 0.824); on a grid of step 0.01, at the grid points on either side of them.

    >>> import numpy as np
    >>> import optdesign as od
    >>> x = np.linspace(-4, 4, 801)
    >>> F = od.glm_model_matrix(np.column_stack([np.ones_like(x), x]), [0.0, 1.0], "logit")
    >>> res = od.d_optimal(F, tol=1e-8)
    >>> x[res.support]
    array([-1.55, -1.54,  1.54,  1.55])
    >>> round(float(res.weights[x > 0].sum()), 6)
    0.5
    """
    X = as_matrix(candidate_matrix(X), "X")
    nu = glm_weights(X, theta0, link)
    return check_scale(np.sqrt(nu)[:, None] * X, "the linearised candidates sqrt(nu) X")


def glm_design(X: ArrayLike | CandidateSet, theta0: ArrayLike, link: GlmLink, criterion: str = "D",
               n: int | None = None, *, moments: ArrayLike | None = None, solver: str | None = None,
               tol: float = DEFAULT_TOL, time_limit: float | None = None,
               method: DesignMethod | ClassicalMethod = "auto") -> DesignResult | ExactDesignResult:
    """The design of a GLM locally optimal at theta0: approximate (``n`` None) or with ``n`` runs.

    The D-, A- or I-optimal design of the linearised candidates sqrt(nu(x_i^T theta0)) x_i
    (:func:`glm_model_matrix`): ``od.d_optimal``, ``od.a_optimal`` or ``od.i_optimal`` when ``n`` is None, else
    ``od.exact_design(F, n, criterion)``. The I-criterion averages nu(x)^{-1} Var(mu_hat(x)) ~ f(x)^T M^{-1} f(x)
    over the linearised candidates by default (OptimalDesign's convention); ``moments`` gives another region, e.g.
    X^T X / K for the variance of the linear predictor x^T theta_hat.

    Parameters
    ----------
    X : array_like or CandidateSet
        The candidates, K x p, one per row.
    theta0 : array_like
        The parameter the design is local to, length p.
    link : str
        ``"logit"``, ``"probit"``, ``"cloglog"``, ``"log"`` (Poisson) or ``"identity"``.
    criterion : {"D", "A", "I"}
        The criterion.
    n : int, optional
        The number of runs of an exact design; an approximate design when None.
    moments : array_like, optional
        I only: the region's moment matrix B (p x p) of tr(B M^{-1}).
    solver : str, optional
        Conic solver of a cvxpy path.
    tol : float
        Certified relative gap of the approximate design (also the one behind an exact design's bound).
    time_limit : float, optional
        Seconds for the whole call.
    method : str
        The solver of the approximate design, passed to the design function: for D that of ``od.d_optimal``
        (``"auto"``, ``"cvxpy"``, ``"barrier"``, ``"frank-wolfe"``, ``"multiplicative"``, ``"exchange"``,
        ``"corank"``), for A and I that of ``od.a_optimal`` and ``od.i_optimal`` (``"auto"``, ``"fast"``,
        ``"cvxpy"``). An exact design (``n`` given) takes ``"auto"`` only.

    Returns
    -------
    DesignResult or ExactDesignResult
        The approximate design (``value`` as the linear function reports it, det M^(-1/p) for D) or the exact
        design, certified; ``link`` names the link.

    Raises
    ------
    InvalidInputError
        What :func:`glm_model_matrix` refuses, an unknown criterion, ``moments`` without criterion ``"I"``, and
        a method the design function does not offer, and what the design function refuses (linearised candidates
        that do not span R^p, ``n < p``).

    Examples
    --------
    Ten runs of the locally D-optimal design of a Poisson regression with log link at theta0 = (1, -0.5) on
    [0, 10]: five at x = 0 and five at x = -2 / theta_1 = 4.

    >>> import numpy as np
    >>> import optdesign as od
    >>> x = np.linspace(0, 10, 101)
    >>> res = od.glm_design(np.column_stack([np.ones_like(x), x]), [1.0, -0.5], "log", n=10)
    >>> x[res.support], res.counts[res.support]
    (array([0., 4.]), array([5, 5]))
    """
    name = criterion.upper() if isinstance(criterion, str) else criterion
    if name not in GLM_CRITERIA:
        raise InvalidInputError(f"criterion must be one of {', '.join(GLM_CRITERIA)}, got {criterion!r}")
    if moments is not None and name != "I":
        raise InvalidInputError(f"moments= is the region of the I-criterion; criterion={criterion!r} takes none")
    if n is not None:
        if method != "auto":
            raise InvalidInputError(f"method={method!r} chooses the solver of an approximate design; with n={n!r} "
                                    f"only 'auto' is accepted")
    elif name == "D":
        check_option(method, "method", DESIGN_METHODS)
    else:
        check_option(method, "method", CLASSICAL_METHODS)
    F = glm_model_matrix(X, theta0, link)
    res: DesignResult | ExactDesignResult
    if n is not None:
        res = exact_design(F, n, cast("ExactCriterionName", name), moments=moments, time_limit=time_limit, tol=tol,
                           solver=solver)
    elif name == "D":
        res = d_optimal(F, solver=solver, tol=tol, time_limit=time_limit, method=cast(DesignMethod, method))
    elif name == "A":
        res = a_optimal(F, solver=solver, tol=tol, time_limit=time_limit, method=cast(ClassicalMethod, method))
    else:
        res = i_optimal(F, moments=moments, solver=solver, tol=tol, time_limit=time_limit,
                        method=cast(ClassicalMethod, method))
    return replace(res, link=link)
