"""The value of a classical criterion at a given design: one call for every criterion (and for D and G).

The criteria are those of :mod:`~optdesign.linear.classical.criteria`, each in its own units and minimised; the
design is normalised first (every criterion is homogeneous of degree -1 in A(w)). Singular designs are allowed:
a criterion that the design cannot estimate has value inf.
"""

from __future__ import annotations

from numpy.typing import ArrayLike

from ...errors import InvalidInputError
from ...validation import check_weights
from ...vocabulary import CLASSICAL_CRITERIA, ClassicalCriterion, check_option
from ..criteria import g_value
from .problems import make_problem

__all__ = ["criterion_value"]


def criterion_value(X: ArrayLike, w: ArrayLike, criterion: ClassicalCriterion, *, c: ArrayLike | None = None,
                    region: ArrayLike | None = None, region_weights: ArrayLike | None = None,
                    moments: ArrayLike | None = None, subset: ArrayLike | None = None,
                    p: float | None = None) -> float:
    """The criterion at the design w, in the units of its design function's ``value`` (D excepted, see below).

    ``"a"``: tr A^{-1}; ``"i"``: tr(A^{-1} B); ``"c"``: tr(C A^- C^T) (c a vector or a matrix of rows); ``"e"``:
    1 / lambda_min(A); ``"ds"``: det((A^-)_ss)^{1/s}; ``"phi"``: (tr(A^{-p}) / d)^{1/p}; ``"d"``: det(A)^{-1/d}
    (phi_0, the D-criterion in variance units); ``"g"``: max_k x_k^T A^{-1} x_k. The ``value`` of
    :func:`optdesign.d_optimal` is the G-value ``"g"`` (d at the optimum), not ``"d"``. The same arguments as the
    design functions select c, the region, the subset or p.

    Parameters
    ----------
    X : array_like, shape (K, d)
        The candidates.
    w : array_like, shape (K,)
        The design: nonnegative weights with a positive sum (normalised here).
    criterion : str
        One of ``"a"``, ``"i"``, ``"c"``, ``"e"``, ``"ds"``, ``"phi"``, ``"d"``, ``"g"``.
    c : array_like, optional
        The vector or rows of ``"c"``.
    region : array_like, optional
        Region points of ``"i"`` (X by default).
    region_weights : array_like, optional
        Their weights.
    moments : array_like, optional
        The moment matrix of ``"i"`` instead of points.
    subset : array_like of int, optional
        The parameters of ``"ds"``.
    p : float, optional
        The order of ``"phi"``.

    Returns
    -------
    float
        The value; inf when A(w) does not estimate what the criterion needs.

    Raises
    ------
    InvalidInputError
        An unknown criterion, a missing or extra argument, bad weights, or what the design function refuses.

    Examples
    --------
    >>> import numpy as np
    >>> import optdesign as od
    >>> x = np.array([-1.0, 0.0, 1.0])
    >>> X = np.column_stack([np.ones(3), x, x**2])
    >>> print(od.criterion_value(X, [0.25, 0.5, 0.25], "a"), od.criterion_value(X, [0.5, 0.0, 0.5], "a"))
    8.0 inf
    >>> print(round(od.criterion_value(X, [0.5, 0.0, 0.5], "c", c=[0.0, 1.0, 0.0]), 6))
    1.0
    """
    name = check_option(criterion, "criterion", CLASSICAL_CRITERIA)
    given = {"c": c, "region": region, "region_weights": region_weights, "moments": moments, "subset": subset, "p": p}
    allowed = {"a": (), "i": ("region", "region_weights", "moments"), "c": ("c",), "e": (), "ds": ("subset",),
               "phi": ("p",), "d": (), "g": ()}[name]
    extra = [key for key, value in given.items() if value is not None and key not in allowed]
    if extra:
        raise InvalidInputError(f"criterion {name!r} takes no {', '.join(extra)}")
    required = {"c": c, "ds": subset, "phi": p}
    if name in required and required[name] is None:
        raise InvalidInputError(f"criterion {name!r} needs {dict(c='c', ds='subset', phi='p')[name]}")
    problem = make_problem(X, name, given)
    weights = check_weights(w, "w")
    if weights.size != problem.X.shape[0]:
        raise InvalidInputError(f"w must have one weight per candidate ({problem.X.shape[0]}), got {weights.size}")
    weights = weights / weights.sum()
    if name == "g":
        return g_value(problem.X, weights)
    return problem.criterion.value(problem.X, weights)
