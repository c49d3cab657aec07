"""The names of the design methods, apart from :mod:`.dispatch` so that the command line's help can list them
without importing the solvers."""

from __future__ import annotations

__all__ = ["METHODS", "MINMAX_METHODS"]

#: every ``method=`` of the G/D/XY designs
METHODS = ("auto", "cvxpy", "barrier", "frank-wolfe", "multiplicative", "exchange", "corank")
#: the methods of the min-max designs (XY, XY-oracle, transductive)
MINMAX_METHODS = ("auto", "cvxpy", "barrier")
