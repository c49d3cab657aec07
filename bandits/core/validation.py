"""Option checks shared by every bandits module; each raises InvalidInputError naming the option.

Counts, sizes and seeds go through :func:`optdesign.validation.as_count` (with ``floats=True`` where the value may
come from a TOML file or a command line).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import SupportsFloat, TypeGuard, TypeVar

import numpy as np

from optdesign.errors import InvalidInputError
from optdesign.validation import check_array_size

__all__: list[str] = []  # option checks for the package's own modules

_T = TypeVar("_T")


def check_choice(value: _T, name: str, choices: Collection[object]) -> _T:
    """``value`` if it is one of ``choices``, else an error listing them."""
    if value not in choices:
        raise InvalidInputError(f"{name} must be one of {', '.join(map(str, choices))}; got {value!r}")
    return value


def check_top_two_beta(beta: object) -> None:
    """A Top-Two leader proportion: a number in (0, 1) or ``"ids"`` (information-directed selection)."""
    if beta != "ids" and not (is_number(beta) and 0 < beta < 1):
        raise InvalidInputError(f"beta must be a number in (0, 1) or 'ids', got {beta!r}")


def _finite(value: SupportsFloat) -> bool:
    """A number that is finite as a float (a Python int too large for a float is not)."""
    try:
        return bool(np.isfinite(float(value)))
    except OverflowError:
        return False


def is_number(value: object) -> TypeGuard[float]:
    """Whether ``value`` is a finite real number (a bool, a string or an array is not)."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) and _finite(value)


def check_positive(value: object, name: str, meaning: str = "") -> float:
    """A finite number > 0 (``meaning`` is appended to the message, e.g. " (noise level)")."""
    if not (is_number(value) and value > 0):
        raise InvalidInputError(f"{name} must be a positive number{meaning}, got {value!r}")
    return float(value)


#: memory of a networkx graph (measured with tracemalloc), in float64 entries: per node and per undirected edge
GRAPH_NODE_ENTRIES, GRAPH_EDGE_ENTRIES = 32, 24


def check_graph_size(nodes: float, edges: float, what: str) -> None:
    """Refuse, before generating, a networkx graph whose nodes and edges exceed the array limit
    (:func:`optdesign.validation.check_array_size`)."""
    check_array_size(GRAPH_NODE_ENTRIES * float(nodes) + GRAPH_EDGE_ENTRIES * float(edges),
                     f"{what} with {float(nodes):.3g} nodes and about {float(edges):.3g} edges",
                     instead="use a smaller graph")


def check_growth(growth: object, name: str = "growth", *, refuse_zero: str = "") -> float:
    """The relative step of a grid of checks t -> max(t + 1, ceil(t (1 + growth))): a number in [0, 1].

    0 means a check after every pull (:func:`bandits.core.tracking.next_checkpoint` gives t + 1), 0.01 checks 1 % apart.

    Parameters
    ----------
    growth : float
        The option's value.
    name : str
        The option's name in messages (``growth``, ``replan_growth``, ...).
    refuse_zero : str
        When not empty, the caller does not offer a check after every pull, and this says why (0 is refused).

    Returns
    -------
    float
        ``growth`` as a float.

    Raises
    ------
    InvalidInputError
        Not a number in [0, 1], or 0 when ``refuse_zero`` is given.
    """
    if not (is_number(growth) and 0 <= growth <= 1):
        raise InvalidInputError(f"{name} (relative step of the grid of checks; 0: after every pull) must be a number "
                                f"in [0, 1], got {growth!r}")
    if growth == 0 and refuse_zero:
        raise InvalidInputError(f"{name} = 0 (a check after every pull) is not offered here: {refuse_zero}")
    return float(growth)
