"""The result of a continuous design: the weights, the criterion in its own units, its certificate, the G-value.

Every design function reports ``value``, the criterion it optimises at the returned weights, in that criterion's
own units (:data:`CRITERION_UNITS`, read through :attr:`DesignResult.units`), with a certified lower bound on its
optimum and the relative gap between them. The G-value max_x x^T A(w)^- x, which the G-optimal design minimises
and every design can be judged by, has a field of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .vocabulary import Status

__all__ = ["CRITERION_UNITS", "DesignResult", "better_certified", "jsonable", "relative_gap"]

#: what ``value`` measures, per ``criterion`` label (A(w) = X^T diag(w) X, the information of the design w; for GLM
#: designs the Fisher information at the parameter, M_s(w) at the prior's draw s)
CRITERION_UNITS: dict[str, str] = {
    "g-optimal": "max_x x^T A(w)^{-1} x over the candidates (d at the optimum)",
    "d-optimal": "det A(w)^(-1/d), the D-criterion in variance units",
    "a-optimal": "tr A(w)^{-1}",
    "i-optimal": "tr(A(w)^{-1} B), B the region's moment matrix (the average prediction variance)",
    "c-optimal": "c^T A(w)^- c",
    "l-optimal": "tr(C A(w)^- C^T)",
    "e-optimal": "1 / lambda_min(A(w))",
    "ds-optimal": "det((A(w)^-)_ss)^(1/s)",
    "phi-optimal": "(tr A(w)^(-p) / d)^(1/p), Kiefer's phi_p (det A(w)^(-1/d) at p = 0)",
    "xy": "max_{y in Y} y^T A(w)^{-1} y",
    "minmax": "max_{y in Y} y^T A(w)^{-1} y",
    "xy-oracle": "max_{x != x*} (x* - x)^T A(w)^{-1} (x* - x) / ((x* - x)^T theta)^2",
    "transductive": "max_{z, z' in Z} (z - z')^T A(w)^{-1} (z - z')",
    "transductive-oracle": "max_{z != z*} (z* - z)^T A(w)^{-1} (z* - z) / ((z* - z)^T theta)^2",
    "bayesian-d": "the prior's geometric mean of det M_s(w)^(-1/p)",
    "bayesian-a": "the prior's mean of tr M_s(w)^{-1}",
    "bayesian-i": "the prior's mean of tr(M_s(w)^{-1} B)",
    "minimax-d": "max_s det M_s(w)^(-1/p) over the parameter values",
    "standardised-maximin-d": "max_s (det M_s(w*_s) / det M_s(w))^(1/p): one over the worst D-efficiency",
}


@dataclass(frozen=True)
class DesignResult:
    """A continuous design w over the rows of X and what is known about it.

    ``value`` is the criterion named by ``criterion`` at ``weights``, in its own units (:attr:`units`): the
    G-value max_x x^T A(w)^{-1} x for a G-optimal design, det A(w)^(-1/d) for a D-optimal one, tr A(w)^{-1} for an
    A-optimal one. ``lower_bound`` is a certified lower bound on the optimal value, and ``gap`` the relative gap
    ``value / lower_bound - 1``, which bounds the relative error of ``value`` from above (``efficiency =
    lower_bound / value`` in R OptimalDesign's terms). ``g_value`` is the G-value of the design whatever it
    optimises; :func:`optdesign.design_diagnostics` gives its efficiency under every criterion.
    """

    #: the design w: one nonnegative weight per row of X, summing to 1
    weights: np.ndarray
    #: the criterion at ``weights`` (attained by them), in the units of :attr:`units`
    value: float
    #: ``"optimal"`` (gap within tol), ``"not_converged"`` (a limit stopped it), ``"interrupted"`` (Ctrl-C),
    #: or a conic solver's status
    status: Status
    #: ``"numpy"`` for the fast paths, else the conic solver that produced the design
    solver: str
    #: seconds spent solving
    solve_time: float
    #: certified relative gap ``value / lower_bound - 1`` (an upper bound on the relative error of ``value``)
    gap: float | None
    #: the path that produced the design: ``"exchange"``, ``"corank"``, ``"frank-wolfe"``, ``"barrier"``, ...
    method: str
    #: ``"g-optimal"``, ``"d-optimal"``, ``"a-optimal"``, ``"xy"``, ``"transductive"``, ... (:data:`CRITERION_UNITS`)
    criterion: str
    #: certified lower bound on the optimal value
    lower_bound: float | None = None
    #: iterations or pricing passes of the fast path
    iterations: int | None = None
    #: the G-value max_k x_k^T A(w)^- x_k over the rows of X (d at a G- or D-optimum, inf when A(w) does not
    #: estimate every row); filled by the G-, D- and classical designs, None where a design of directions
    #: (XY, transductive) or of a GLM prior does not compute it
    g_value: float | None = None
    #: rows of the linear constraints A w <= b the design satisfies; None on the simplex
    constraints: int | None = None
    #: the link of a GLM design (``"logit"``, ``"probit"``, ``"cloglog"``, ``"log"``); None for a linear model
    link: str | None = None
    #: why ``method="auto"`` kept this design although its gap exceeds ``tol``; None otherwise
    fallback: str | None = None
    #: diagnostics of the path that produced it (polishing, log-determinants, working sets, ...)
    extras: dict = field(default_factory=dict)

    @property
    def units(self) -> str:
        """What ``value`` measures (:data:`CRITERION_UNITS`; the criterion's name when it has no entry)."""
        return CRITERION_UNITS.get(self.criterion, self.criterion)

    @property
    def support(self) -> np.ndarray:
        """Indices of arms with weight above 1e-9 of the largest weight."""
        return np.flatnonzero(self.weights > 1e-9 * self.weights.max())

    @property
    def efficiency(self) -> float | None:
        """Certified efficiency lower bound ``lower_bound / value`` (1 at the optimum)."""
        if self.lower_bound is None or self.value <= 0:
            return None
        return self.lower_bound / self.value

    def to_dict(self) -> dict:
        """JSON-ready dictionary (arrays as lists).

        Returns
        -------
        dict
            The fields (``weights`` as a list), ``units``, ``support``, then the entries of ``extras`` (arrays as
            lists).
        """
        return {
            "criterion": self.criterion,
            "units": self.units,
            "value": self.value,
            "lower_bound": self.lower_bound,
            "gap": self.gap,
            "g_value": self.g_value,
            "status": self.status,
            "solver": self.solver,
            "method": self.method,
            "solve_time": self.solve_time,
            "iterations": self.iterations,
            "constraints": self.constraints,
            "link": self.link,
            "fallback": self.fallback,
            "weights": self.weights.tolist(),
            "support": self.support.tolist(),
            **{k: jsonable(v) for k, v in self.extras.items()},
        }


def jsonable(v: object) -> object:
    """``v`` with numpy arrays and scalars (also inside lists and tuples) turned into Python lists and numbers.

    Parameters
    ----------
    v : object
        A result field or an entry of ``extras``.

    Returns
    -------
    object
        The same value, JSON-ready.
    """
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    return v


def relative_gap(value: float, lower_bound: float) -> float:
    """value / lower_bound - 1 (an upper bound on the relative error of value); inf if no bound.

    Parameters
    ----------
    value : float
        The criterion attained by a design.
    lower_bound : float
        A certified lower bound on its optimum.

    Returns
    -------
    float
        The gap, at least 0; inf when the bound is not positive or the value not finite.
    """
    if lower_bound <= 0 or not np.isfinite(value):
        return float("inf")
    return max(value / lower_bound - 1.0, 0.0)


def better_certified(first: DesignResult, second: DesignResult) -> DesignResult:
    """The design of the two with the smaller certified gap (a design without one, gap None, counts as inf; a gap of
    exactly 0 stays 0); ``second`` on a tie.

    Parameters
    ----------
    first, second : DesignResult
        Two designs of one problem (e.g. a conic solve and a fast path).

    Returns
    -------
    DesignResult
        The one to report.
    """
    def gap(result: DesignResult) -> float:
        return float("inf") if result.gap is None else float(result.gap)

    return first if gap(first) < gap(second) else second
