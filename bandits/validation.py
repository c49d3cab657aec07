"""Option checks shared by every bandits module; each raises InvalidInputError naming the option."""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from optdesign.errors import InvalidInputError

_NUMBER = (int, float, np.integer, np.floating)


def check_choice(value, name: str, choices: Collection):
    """``value`` if it is one of ``choices``, else an error listing them."""
    if value not in choices:
        raise InvalidInputError(f"{name} must be one of {', '.join(map(str, choices))}; got {value!r}")
    return value


def _finite(value) -> bool:
    """A number that is finite as a float (a Python int too large for a float is not)."""
    try:
        return bool(np.isfinite(float(value)))
    except OverflowError:
        return False


def check_positive(value, name: str, meaning: str = "") -> float:
    """A finite number > 0 (``meaning`` is appended to the message, e.g. " (noise level)")."""
    if isinstance(value, bool) or not isinstance(value, _NUMBER) or not (_finite(value) and value > 0):
        raise InvalidInputError(f"{name} must be a positive number{meaning}, got {value!r}")
    return float(value)


def check_int(value, name: str, minimum: int) -> int:
    """An integer (or integral float) >= ``minimum`` and below 2**63 (numpy's int64)."""
    if (isinstance(value, bool) or not isinstance(value, _NUMBER) or not _finite(value) or int(value) != value
            or value < minimum):
        raise InvalidInputError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value >= 2**63:
        raise InvalidInputError(f"{name} must be an integer >= {minimum} and below 2**63, got {value!r}")
    return int(value)
