"""Input checks of factor graphs: action counts, factor scopes and mean tables, generator arguments.

Every check raises :class:`~optdesign.errors.InvalidInputError` naming the argument and what was expected.
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidInputError


def check_count(n, name: str, minimum: int) -> None:
    if not isinstance(n, (int, np.integer)) or n < minimum:
        raise InvalidInputError(f"{name} must be an integer >= {minimum}, got {n!r}")


def broadcast_actions(K, n_agents: int) -> tuple[int, ...]:
    if isinstance(K, (int, np.integer)):
        return (int(K),) * n_agents
    ks = tuple(K)
    if len(ks) != n_agents:
        raise InvalidInputError(f"K must be an integer or a sequence of length N={n_agents}, got length {len(ks)}")
    return ks


def nonempty_sequence(value, message: str) -> tuple:
    try:
        items = tuple(value)
    except TypeError:
        raise InvalidInputError(message) from None
    if not items:
        raise InvalidInputError(f"{message} (got an empty one)")
    return items


def check_actions(n_actions) -> tuple[int, ...]:
    ks = nonempty_sequence(n_actions, "n_actions must be a sequence of action counts K_i, one per agent")
    for i, k in enumerate(ks):
        if not isinstance(k, (int, np.integer)) or k < 1:
            raise InvalidInputError(f"n_actions[{i}] must be a positive integer, got {k!r}")
    if all(k == 1 for k in ks):
        raise InvalidInputError("every agent has a single action: there is nothing to identify")
    return tuple(int(k) for k in ks)


def check_factors(n_actions, factors) -> tuple[tuple[tuple[int, ...], ...], tuple[np.ndarray, ...]]:
    n = len(n_actions)
    scopes, tables = [], []
    covered = np.zeros(n, dtype=bool)
    items = nonempty_sequence(factors, "factors must be a sequence of (scope, means) pairs")
    for e, item in enumerate(items):
        try:
            scope, table = item
            scope = tuple(scope)
        except (TypeError, ValueError):
            raise InvalidInputError(f"factor {e} must be a (scope tuple, means table) pair") from None
        if not scope:
            raise InvalidInputError(f"factor {e} has an empty scope")
        if any(not isinstance(i, (int, np.integer)) or not 0 <= i < n for i in scope):
            raise InvalidInputError(f"factor {e}: scope {scope} has agents outside 0..{n - 1}")
        if len(set(scope)) != len(scope):
            raise InvalidInputError(f"factor {e}: scope {scope} repeats an agent")
        scope = tuple(int(i) for i in scope)
        try:
            arr = np.array(table, dtype=float)
        except (TypeError, ValueError):
            raise InvalidInputError(f"factor {e}: means must be a numeric table") from None
        expected = tuple(n_actions[i] for i in scope)
        if arr.shape != expected:
            raise InvalidInputError(
                f"factor {e}: means table has shape {arr.shape}, expected {expected} for scope {scope}"
            )
        if not np.all(np.isfinite(arr)):
            raise InvalidInputError(f"factor {e}: means contain NaN or infinite entries")
        covered[list(scope)] = True
        scopes.append(scope)
        tables.append(arr)
    if not covered.all():
        raise InvalidInputError(f"agents {np.flatnonzero(~covered).tolist()} appear in no factor")
    return tuple(scopes), tuple(tables)
