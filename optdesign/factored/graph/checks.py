"""Input checks of factor graphs: action counts, factor scopes and mean tables, generator arguments.

Every check raises :class:`~optdesign.errors.InvalidInputError` naming the argument and what was expected. These
are the package's own helpers (the constructors and generators of FactorGraph call them). The one public name,
:func:`factor_graph_entries` (exported by :mod:`optdesign.factored`), lets code that generates its own instances
(bandits' antenna networks) count a FactorGraph in its size check before building it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from ...errors import InvalidInputError
from ...validation import as_count, check_array_size, real_array

__all__ = ["factor_graph_entries"]

#: (action counts, scopes): what instances that differ only in their means share (:func:`structure_key`)
Structure = tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]

# what a generated instance holds per factor (scope tuple, table view: 34 float64 entries measured with tracemalloc
# on rings, rounded up) and per agent, beyond the tables; counted by the generators' size check. The elimination plan
# built on first use is checked on its own (optdesign.factored.inference.elimination.PLAN_AGENT_ENTRIES)
FACTOR_OVERHEAD_ENTRIES = 64
AGENT_OVERHEAD_ENTRIES = 4
# larger means make characteristic times (about Abar / Delta_min^2) underflow in floating point
MAX_ABS_MEAN = 1e100


def broadcast_actions(K: object, n_agents: int) -> tuple[int, ...]:
    """K (one count for every agent, or one per agent) as N checked action counts (:func:`check_actions`)."""
    as_count(n_agents, "N")
    message = f"K must be a positive integer or a sequence of N={n_agents} of them, got {K!r}"
    if isinstance(K, (int, np.integer)) and K >= 1:
        return check_actions((int(K),) * n_agents)
    if isinstance(K, (str, int, np.integer)):
        raise InvalidInputError(message)
    ks = nonempty_sequence(K, message)
    if len(ks) != n_agents:
        raise InvalidInputError(f"K must be an integer or a sequence of length N={n_agents}, got length {len(ks)}")
    return check_actions(ks)


def check_scope(scope: Any, e: int, n: int) -> tuple[int, ...]:
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


def check_scopes(edges: object, n: int) -> list[tuple[int, ...]]:
    """A nonempty sequence of factor scopes over agents 0..n-1 (:func:`check_scope`)."""
    if isinstance(edges, str):
        raise InvalidInputError(f"edges must be a sequence of agent-index tuples, got {edges!r}")
    items = nonempty_sequence(edges, "edges must be a sequence of agent-index tuples")
    return [check_scope(scope, e, n) for e, scope in enumerate(items)]


def make_rng(seed: Any) -> np.random.Generator:
    """``numpy.random.default_rng(seed)``; a seed numpy refuses (negative, fractional, text) is an input error."""
    try:
        return np.random.default_rng(seed)
    except (TypeError, ValueError):
        raise InvalidInputError(f"seed must be None or a nonnegative integer, got {seed!r}") from None


def check_metadata(metadata: object) -> dict[str, Any]:
    """Free-form metadata: None or a dict (copied)."""
    if metadata is not None and not isinstance(metadata, dict):
        raise InvalidInputError(f"metadata must be a dict, got {type(metadata).__name__}")
    return dict(metadata or {})


def check_gap(gap: object) -> float:
    """The planted Delta_min: a finite number > 0 (default 0.1)."""
    if gap is None:
        return 0.1
    value = np.nan
    if isinstance(gap, (int, float, np.integer, np.floating)) and not isinstance(gap, bool):
        try:
            value = float(gap)
        except OverflowError:  # an integer beyond the float range
            value = np.inf
    if not np.isfinite(value) or value <= 0:
        raise InvalidInputError(f"gap must be a positive number, got {gap!r}")
    return value


def nonempty_sequence(value: Any, message: str) -> tuple[Any, ...]:
    """``value`` as a nonempty tuple; anything not iterable, or empty, is refused with ``message``."""
    try:
        items = tuple(value)
    except TypeError:
        raise InvalidInputError(message) from None
    if not items:
        raise InvalidInputError(f"{message} (got an empty one)")
    return items


def check_actions(n_actions: object) -> tuple[int, ...]:
    """The action counts K_i: positive integers, one per agent, not all 1."""
    ks = nonempty_sequence(n_actions, "n_actions must be a sequence of action counts K_i, one per agent")
    for i, k in enumerate(ks):
        if not isinstance(k, (int, np.integer)) or k < 1:
            raise InvalidInputError(f"n_actions[{i}] must be a positive integer, got {k!r}")
    if all(k == 1 for k in ks):
        raise InvalidInputError("every agent has a single action: there is nothing to identify")
    return tuple(int(k) for k in ks)


def check_factors(n_actions: Sequence[int],
                  factors: object) -> tuple[tuple[tuple[int, ...], ...], tuple[np.ndarray, ...]]:
    """The (scope, means) pairs as checked scopes and finite real tables of their shapes, covering every agent."""
    n = len(n_actions)
    scopes, raw = [], []
    items = nonempty_sequence(factors, "factors must be a sequence of (scope, means) pairs")
    for e, item in enumerate(items):
        try:
            scope, table = item
            scope = tuple(scope)
        except (TypeError, ValueError):
            raise InvalidInputError(f"factor {e} must be a (scope tuple, means table) pair") from None
        scopes.append(check_scope(scope, e, n))
        raw.append(table)
    covered = np.zeros(n, dtype=bool)
    covered[[i for scope in scopes for i in scope]] = True
    if not covered.all():
        raise InvalidInputError(f"agents {np.flatnonzero(~covered).tolist()} appear in no factor")
    shapes = [tuple(n_actions[i] for i in scope) for scope in scopes]
    by_shape: dict[tuple[int, ...], list[int]] = {}
    for e, shape in enumerate(shapes):
        by_shape.setdefault(shape, []).append(e)
    tables: list[np.ndarray | None] = [None] * len(scopes)
    for shape, members in by_shape.items():  # one conversion and one check per table shape (10^5 factors: 1 s)
        for e, table in zip(members, _tables_of_shape(shape, [raw[e] for e in members]), strict=True):
            tables[e] = table
    if any(t is None for t in tables):  # a group that failed its batch check: find and name the first bad factor
        for e, (scope, table) in enumerate(zip(scopes, raw, strict=True)):
            tables[e] = _checked_table(e, scope, table, shapes[e])
    return tuple(scopes), tuple(cast(np.ndarray, t) for t in tables)


def _tables_of_shape(shape: tuple[int, ...], raw: list[Any]) -> list[np.ndarray | None]:
    """The tables expected to have ``shape``, converted and checked at once; Nones if any one fails (the caller
    then checks them one by one for the message)."""
    try:
        block = np.array(real_array(raw))
    except (TypeError, ValueError):
        return [None] * len(raw)
    if block.shape != (len(raw), *shape) or not np.all(np.isfinite(block)) or \
            (block.size and float(np.max(np.abs(block))) > MAX_ABS_MEAN):
        return [None] * len(raw)
    return list(block)


def _checked_table(e: int, scope: tuple[int, ...], table: Any, expected: tuple[int, ...]) -> np.ndarray:
    """Factor e's means as a finite real array of shape ``expected``, or InvalidInputError saying what is wrong."""
    try:
        arr = np.array(real_array(table))
    except (TypeError, ValueError):
        raise InvalidInputError(f"factor {e}: means must be a numeric (real) table") from None
    if arr.shape != expected:
        raise InvalidInputError(f"factor {e}: means table has shape {arr.shape}, expected {expected} for scope {scope}")
    if not np.all(np.isfinite(arr)):
        raise InvalidInputError(f"factor {e}: means contain NaN or infinite entries")
    largest = float(np.max(np.abs(arr))) if arr.size else 0.0
    if largest > MAX_ABS_MEAN:
        raise InvalidInputError(f"factor {e}: means must lie in [-{MAX_ABS_MEAN:g}, {MAX_ABS_MEAN:g}] (lower "
                                f"bounds scale as 1 / Delta^2 and would underflow), got |mean| {largest:.3g}")
    return arr


def table_bound(K: object) -> float:
    """Entries of a pairwise table: K^2 for one action count K; 1 when K is a sequence (its tables are counted
    exactly once drawn) or not a count (refused later)."""
    if isinstance(K, (int, np.integer)) and not isinstance(K, bool) and K >= 1:
        return as_size(K) ** 2
    return 1.0


def as_size(count: float | np.integer) -> float:
    """An integer count as a float for size estimates, capped at 1e150 (its square still fits in a float)."""
    return float(count) if count < 1e150 else 1e150


def scope_arrays(scopes: Sequence[Sequence[int]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The scopes grouped by arity: (factor indices, (n, arity) array of their agents) per arity."""
    arity = np.fromiter(map(len, scopes), dtype=np.int64, count=len(scopes))
    groups = []
    for r in np.unique(arity):
        factors = np.flatnonzero(arity == r)
        agents = np.array([scopes[e] for e in factors.tolist()], dtype=np.int64).reshape(len(factors), int(r))
        groups.append((factors, agents))
    return groups


def factor_graph_entries(n_agents: float, n_factors: float, abar: float) -> float:
    """The float64 entries a FactorGraph of this size holds: its tables twice, plus per-factor and per-agent overhead.

    The tables are held twice (the tables and their flat copy :attr:`~optdesign.FactorGraph.means`); each factor adds
    FACTOR_OVERHEAD_ENTRIES (its scope and table view, measured) and each agent AGENT_OVERHEAD_ENTRIES. The
    elimination plan, built on first use, is checked on its own. Counts beyond 1e150 are capped there, so the
    estimate stays finite for :func:`optdesign.validation.check_array_size`.

    Parameters
    ----------
    n_agents : float
        Number of agents N.
    n_factors : float
        Number of factors.
    abar : float
        Total number of mean-table entries (group actions) over all factors.

    Returns
    -------
    float
        The estimated number of float64 entries.

    Examples
    --------
    >>> from optdesign.factored import factor_graph_entries
    >>> factor_graph_entries(4, 4, 16)
    304.0
    """
    n_agents, n_factors, abar = as_size(n_agents), as_size(n_factors), as_size(abar)
    return 2.0 * abar + FACTOR_OVERHEAD_ENTRIES * n_factors + AGENT_OVERHEAD_ENTRIES * n_agents


def structure_key(n_actions: Sequence[int], scopes: Sequence[Sequence[int]]) -> Structure:
    """The structure of an instance as a hashable key: its action counts and factor scopes, as Python ints.

    Instances with equal keys differ only in their mean tables: they share the mean-field model (m = 1) and a
    constraint-generation working set is a valid warm start from one to the other.
    """
    return tuple(int(k) for k in n_actions), tuple(tuple(int(i) for i in s) for s in scopes)


def check_generated_size(n_agents: float, n_factors: float, abar: float, what: str) -> None:
    """Refuse, before allocating, a generated instance whose tables and bookkeeping (:func:`factor_graph_entries`)
    exceed the array limit (:func:`optdesign.validation.check_array_size`)."""
    entries = factor_graph_entries(n_agents, n_factors, abar)
    n_agents, n_factors, abar = as_size(n_agents), as_size(n_factors), as_size(abar)
    check_array_size(entries, f"{what} (N = {n_agents:.3g} agents, {n_factors:.3g} factors, "
                              f"A-bar = {abar:.3g} group actions)", instead="use fewer agents or actions")


def _brief(action: np.ndarray, shown: int = 20) -> str:
    """A joint action for a message: its first ``shown`` entries, and how many more there are."""
    head = action[:shown].tolist()
    return str(head) if action.size <= shown else f"{str(head)[:-1]}, ... ({action.size - shown} more)]"
