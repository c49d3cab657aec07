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


def check_positive(value, name: str, meaning: str = "") -> float:
    """A finite number > 0 (``meaning`` is appended to the message, e.g. " (noise level)")."""
    if isinstance(value, bool) or not isinstance(value, _NUMBER) or not (np.isfinite(value) and value > 0):
        raise InvalidInputError(f"{name} must be a positive number{meaning}, got {value!r}")
    return float(value)


def check_int(value, name: str, minimum: int) -> int:
    """An integer (or integral float) >= ``minimum``."""
    if (isinstance(value, bool) or not isinstance(value, _NUMBER) or not np.isfinite(value)
            or int(value) != value or value < minimum):
        raise InvalidInputError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)
