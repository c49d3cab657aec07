"""Input checks of factor graphs: action counts, factor scopes and mean tables, generator arguments.

Every check raises :class:`~optdesign.errors.InvalidInputError` naming the argument and what was expected.
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidInputError
from ..validation import real_array

# larger means make characteristic times (about Abar / Delta_min^2) underflow in floating point
MAX_ABS_MEAN = 1e100


def check_count(n, name: str, minimum: int) -> None:
    if not isinstance(n, (int, np.integer)) or n < minimum:
        raise InvalidInputError(f"{name} must be an integer >= {minimum}, got {n!r}")


def broadcast_actions(K, n_agents: int) -> tuple[int, ...]:
    """K (one count for every agent, or one per agent) as N checked action counts (:func:`check_actions`)."""
    check_count(n_agents, "N", 1)
    message = f"K must be a positive integer or a sequence of N={n_agents} of them, got {K!r}"
    if isinstance(K, (int, np.integer)) and K >= 1:
        return check_actions((int(K),) * n_agents)
    if isinstance(K, (str, int, np.integer)):
        raise InvalidInputError(message)
    ks = nonempty_sequence(K, message)
    if len(ks) != n_agents:
        raise InvalidInputError(f"K must be an integer or a sequence of length N={n_agents}, got length {len(ks)}")
    return check_actions(ks)


def check_scope(scope, e: int, n: int) -> tuple[int, ...]:
    """Factor e's scope: a nonempty tuple of distinct agent indices (integers in 0..n-1)."""
    try:
        scope = tuple(scope)
    except TypeError:
        raise InvalidInputError(f"factor {e}: the scope must be a tuple of agent indices, got {scope!r}") from None
    if not scope:
        raise InvalidInputError(f"factor {e} has an empty scope")
    if any(not isinstance(i, (int, np.integer)) or not 0 <= i < n for i in scope):
        raise InvalidInputError(f"factor {e}: scope {scope} has agents outside 0..{n - 1}")
    if len(set(scope)) != len(scope):
        raise InvalidInputError(f"factor {e}: scope {scope} repeats an agent")
    return tuple(int(i) for i in scope)


def check_scopes(edges, n: int) -> list[tuple[int, ...]]:
    """A nonempty sequence of factor scopes over agents 0..n-1 (:func:`check_scope`)."""
    if isinstance(edges, str):
        raise InvalidInputError(f"edges must be a sequence of agent-index tuples, got {edges!r}")
    items = nonempty_sequence(edges, "edges must be a sequence of agent-index tuples")
    return [check_scope(scope, e, n) for e, scope in enumerate(items)]


def make_rng(seed) -> np.random.Generator:
    """``numpy.random.default_rng(seed)``; a seed numpy refuses (negative, fractional, text) is an input error."""
    try:
        return np.random.default_rng(seed)
    except (TypeError, ValueError):
        raise InvalidInputError(f"seed must be None or a nonnegative integer, got {seed!r}") from None


def check_metadata(metadata) -> dict:
    """Free-form metadata: None or a dict (copied)."""
    if metadata is not None and not isinstance(metadata, dict):
        raise InvalidInputError(f"metadata must be a dict, got {type(metadata).__name__}")
    return dict(metadata or {})


def check_gap(gap) -> float:
    """The planted Delta_min: a finite number > 0 (default 0.1)."""
    if gap is None:
        return 0.1
    number = isinstance(gap, (int, float, np.integer, np.floating)) and not isinstance(gap, bool)
    try:
        value = float(gap) if number else np.nan
    except OverflowError:  # an integer beyond the float range
        value = np.inf
    if not np.isfinite(value) or value <= 0:
        raise InvalidInputError(f"gap must be a positive number, got {gap!r}")
    return value


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
        scope = check_scope(scope, e, n)
        try:
            arr = np.array(real_array(table))
        except (TypeError, ValueError):
            raise InvalidInputError(f"factor {e}: means must be a numeric (real) table") from None
        expected = tuple(n_actions[i] for i in scope)
        if arr.shape != expected:
            raise InvalidInputError(
                f"factor {e}: means table has shape {arr.shape}, expected {expected} for scope {scope}"
            )
        if not np.all(np.isfinite(arr)):
            raise InvalidInputError(f"factor {e}: means contain NaN or infinite entries")
        largest = float(np.max(np.abs(arr))) if arr.size else 0.0
        if largest > MAX_ABS_MEAN:
            raise InvalidInputError(f"factor {e}: means must lie in [-{MAX_ABS_MEAN:g}, {MAX_ABS_MEAN:g}] (lower "
                                    f"bounds scale as 1 / Delta^2 and would underflow), got |mean| {largest:.3g}")
        covered[list(scope)] = True
        scopes.append(scope)
        tables.append(arr)
    if not covered.all():
        raise InvalidInputError(f"agents {np.flatnonzero(~covered).tolist()} appear in no factor")
    return tuple(scopes), tuple(tables)
