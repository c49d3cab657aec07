"""The project's exception types.

Every error raised on purpose by :mod:`optdesign` (and :mod:`bandits`) derives from
:class:`OptDesignError`, so callers can catch one type; the subclasses also derive
from the matching built-in so that ``except ValueError`` keeps working.
"""

from __future__ import annotations

__all__ = ["InstanceTooLargeError", "InvalidInputError", "OptDesignError", "SolverError"]


class OptDesignError(Exception):
    """Base class of every error this project raises on purpose."""


class InvalidInputError(OptDesignError, ValueError):
    """An argument has the wrong shape, type or value; the message names it."""


class SolverError(OptDesignError, RuntimeError):
    """A convex solver failed; the message names the solver and its status.

    Parameters
    ----------
    message : str
        What failed, with every solver tried and its status or exception.
    solver : str, optional
        The (last) solver that failed, e.g. ``"CLARABEL"``; kept as ``self.solver``.
    status : str, optional
        Its cvxpy status (``"infeasible"``, ``"time_limit"``, ...); kept as ``self.status``.
    """

    def __init__(self, message: str, *, solver: str | None = None, status: str | None = None):
        super().__init__(message)
        self.solver = solver
        self.status = status


class InstanceTooLargeError(OptDesignError):
    """An exact method was asked to solve an instance above its documented size limit."""
