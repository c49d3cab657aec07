"""The option strings and statuses that travel across the API, as ``Literal`` types with their allowed tuples.

Each alias is the one source of truth for its strings: signatures take it (``method: DesignMethod = "auto"``),
so a type checker flags a misspelt option, and the run-time checks compare against the tuple derived from it
with ``typing.get_args`` (``DESIGN_METHODS``), so both always agree. :func:`check_option` is that check.

Designs on arm sets (:mod:`optdesign.linear`)
    DesignMethod, MinMaxMethod, ClassicalMethod and ClassicalCriterion (:mod:`optdesign.linear.classical`)
Designs of generalised linear models (:mod:`optdesign.glm`)
    GlmLink (the model's link and response family)
Lower bounds on factor graphs (:mod:`optdesign.factored`)
    ExactMethod and ExactFormulation (T*), RegretMethod, RegretStrategy and Restriction (Graves–Lai constant),
    OrderHeuristic (elimination orders), CharTimeKind (``CharTimeResult.method``)
Results
    Status: what the ``status`` field of a result holds
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Literal, TypeVar, get_args

from .errors import InvalidInputError

__all__ = [
    "CHAR_TIME_KINDS",
    "CLASSICAL_CRITERIA",
    "CLASSICAL_METHODS",
    "DESIGN_METHODS",
    "EXACT_FORMULATIONS",
    "EXACT_METHODS",
    "GLM_LINKS",
    "MINMAX_METHODS",
    "ORDER_HEURISTICS",
    "REGRET_METHODS",
    "REGRET_STRATEGIES",
    "RESTRICTIONS",
    "STATUSES",
    "CharTimeKind",
    "ClassicalCriterion",
    "ClassicalMethod",
    "DesignMethod",
    "ExactFormulation",
    "ExactMethod",
    "GlmLink",
    "MinMaxMethod",
    "OrderHeuristic",
    "RegretMethod",
    "RegretStrategy",
    "Restriction",
    "Status",
    "check_option",
]

#: how a G/D/XY-type design is solved: ``"auto"`` picks the certified fast path (then cvxpy if it falls short)
DesignMethod = Literal["auto", "cvxpy", "barrier", "frank-wolfe", "multiplicative", "exchange", "corank"]
#: the methods a max of quadratic forms over directions admits (Frank–Wolfe stalls above its optimum)
MinMaxMethod = Literal["auto", "cvxpy", "barrier"]
#: how a classical design (A, I, c, E, Ds, phi_p) is solved: the certified fast path, the cvxpy model, or the fast path
#: then the model when it falls short of tol
ClassicalMethod = Literal["auto", "fast", "cvxpy"]
#: the criteria :func:`optdesign.criterion_value` evaluates
ClassicalCriterion = Literal["a", "i", "c", "e", "ds", "phi", "d", "g"]
#: a GLM's link, which fixes its weight nu(eta): ``"logit"``, ``"probit"``, ``"cloglog"`` (binary response),
#: ``"log"`` (Poisson counts), ``"identity"`` (the normal linear model, nu = 1)
GlmLink = Literal["logit", "probit", "cloglog", "log", "identity"]
#: how the exact T* handles "every joint action a != a*": list them all, generate them as they bind, or pick
ExactMethod = Literal["auto", "enumerate", "generate"]
#: the program of the enumerated T*: over the cliques of a junction tree, or over all joint actions
ExactFormulation = Literal["junction-tree", "global"]
#: the Graves–Lai constant (``"exact"``) or its mean-field upper bound (``"mf"``)
RegretMethod = Literal["exact", "mf"]
#: how ``"exact"`` regret handles its rows (as :data:`ExactMethod` for T*)
RegretStrategy = Literal["auto", "enumerate", "generate"]
#: the convex restriction of the mean-field regret program
Restriction = Literal["secant", "constant"]
#: greedy elimination-order heuristics (``order="auto"`` chooses between them)
OrderHeuristic = Literal["min-fill", "min-degree"]
#: what a CharTimeResult holds: T* (``"exact"``) or T^MF(m) (``"mean-field"``)
CharTimeKind = Literal["exact", "mean-field"]
#: the ``status`` of a result: ``"optimal"`` (certified to tol, or the conic solver's optimum),
#: ``"optimal_inaccurate"`` (a conic solver's answer accepted by the certificate), ``"not_converged"`` (a time or
#: iteration limit), ``"interrupted"`` (Ctrl-C); the orbit search of T^MF also stops at ``"max_passes"``,
#: ``"stalled"`` or ``"lp_failed"``
Status = Literal["optimal", "optimal_inaccurate", "not_converged", "interrupted", "max_passes", "stalled",
                 "lp_failed"]

#: the strings of :data:`DesignMethod`, in its order
DESIGN_METHODS: tuple[DesignMethod, ...] = get_args(DesignMethod)
#: the strings of :data:`MinMaxMethod`, in its order
MINMAX_METHODS: tuple[MinMaxMethod, ...] = get_args(MinMaxMethod)
#: the strings of :data:`ClassicalMethod`, in its order
CLASSICAL_METHODS: tuple[ClassicalMethod, ...] = get_args(ClassicalMethod)
#: the strings of :data:`ClassicalCriterion`, in its order
CLASSICAL_CRITERIA: tuple[ClassicalCriterion, ...] = get_args(ClassicalCriterion)
#: the strings of :data:`GlmLink`, in its order
GLM_LINKS: tuple[GlmLink, ...] = get_args(GlmLink)
#: the strings of :data:`ExactMethod`, in its order
EXACT_METHODS: tuple[ExactMethod, ...] = get_args(ExactMethod)
#: the strings of :data:`ExactFormulation`, in its order
EXACT_FORMULATIONS: tuple[ExactFormulation, ...] = get_args(ExactFormulation)
#: the strings of :data:`RegretMethod`, in its order
REGRET_METHODS: tuple[RegretMethod, ...] = get_args(RegretMethod)
#: the strings of :data:`RegretStrategy`, in its order
REGRET_STRATEGIES: tuple[RegretStrategy, ...] = get_args(RegretStrategy)
#: the strings of :data:`Restriction`, in its order
RESTRICTIONS: tuple[Restriction, ...] = get_args(Restriction)
#: the strings of :data:`OrderHeuristic`, in its order
ORDER_HEURISTICS: tuple[OrderHeuristic, ...] = get_args(OrderHeuristic)
#: the strings of :data:`CharTimeKind`, in its order
CHAR_TIME_KINDS: tuple[CharTimeKind, ...] = get_args(CharTimeKind)
#: the strings of :data:`Status`, in its order
STATUSES: tuple[Status, ...] = get_args(Status)

_S = TypeVar("_S", bound=str)


def check_option(value: object, name: str, allowed: Collection[_S]) -> _S:
    """``value`` if it is one of ``allowed`` (a tuple of this module), else an error naming ``name`` and them.

    Parameters
    ----------
    value : object
        The option as passed (any object: a non-string is refused like an unknown string).
    name : str
        The argument's name in the error message.
    allowed : collection of str
        The accepted strings, e.g. :data:`DESIGN_METHODS`.

    Returns
    -------
    str
        ``value``, typed as the ``Literal`` of ``allowed``.

    Raises
    ------
    InvalidInputError
        ``value`` is not one of ``allowed``; the message lists them.
    """
    if not isinstance(value, str) or value not in allowed:
        raise InvalidInputError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
    return value  # type: ignore[return-value]
