"""Refusing, before a run, a problem that lacks a capability the sampling rule needs (one message naming both, and
the problem classes that offer it: :mod:`bandits.pure_exploration.capabilities`)."""

from __future__ import annotations

import inspect
from collections.abc import Iterable

from optdesign.errors import InvalidInputError

from .capabilities import CAPABILITIES, Capabilities, MissingCapability, offered

__all__ = ["require"]


def require(problem: Capabilities, rule: str, needs: Iterable[str]) -> None:
    """Refuse a problem that lacks a capability the rule needs, naming both.

    Parameters
    ----------
    problem : Problem
        The problem of the run.
    rule : str
        The rule's name (for the message).
    needs : iterable of str
        Capabilities the rule needs (keys of :data:`CAPABILITIES`).

    Raises
    ------
    MissingCapability
        A capability the problem does not offer.
    InvalidInputError
        A name that is not a capability (a plug-in rule's typo).
    """
    have = offered(problem)
    for need in needs:
        if need not in CAPABILITIES:
            raise InvalidInputError(f"{rule} asks for an unknown capability {need!r}; known: "
                                    f"{', '.join(CAPABILITIES)}")
        if need not in have:
            others = ", ".join(sorted(cls.__name__ for cls in _problem_classes() if need in offered(cls)))
            raise MissingCapability(problem, need, rule, others)


def _problem_classes() -> list[type[Capabilities]]:
    """Every concrete problem class defined so far (the built-in ones and any imported plug-in)."""
    found: list[type[Capabilities]] = []
    stack = list(Capabilities.__subclasses__())
    while stack:
        cls = stack.pop()
        if not inspect.isabstract(cls):
            found.append(cls)
        stack.extend(cls.__subclasses__())
    return found
