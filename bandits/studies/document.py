"""The checks and expansions of a study document's TOML values (:mod:`bandits.studies.spec` builds the runs).

Each check raises InvalidInputError with the file's name in front of the message.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from optdesign.errors import InvalidInputError
from optdesign.validation import as_count

from ..core.stopping import check_delta

__all__: list[str] = []  # used by bandits.studies.spec only


def _expand(block: dict[str, Any], where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """An [[instances]] block -> (family, params) for every point of its sweep (product of list values)."""
    if "family" not in block:
        raise InvalidInputError(f"{where}: an [[instances]] block has no 'family' (e.g. family = \"soare\")")
    family = block["family"]
    params = {k: v for k, v in block.items() if k != "family"}
    keys = list(params)
    values = [v if isinstance(v, list) else [v] for v in params.values()]
    for k, v in zip(keys, values, strict=True):
        if not v:
            raise InvalidInputError(f"{where}: instance parameter {k} of {family} is an empty list")
    for combo in itertools.product(*values):
        yield family, dict(zip(keys, combo, strict=True))


def _text(name: str, options: dict[str, Any]) -> str:
    """``name:key=value,...`` as the CLI writes it (str of a float is its shortest round-trip form)."""
    if not options:
        return str(name)
    return f"{name}:" + ",".join(f"{k}={_value(v)}" for k, v in options.items())


def _value(v: object) -> str:
    """A TOML value as the CLI writes it (booleans in lower case)."""
    return str(v).lower() if isinstance(v, bool) else str(v)


def _label(algo: dict[str, Any]) -> str:
    """The label of an [[algorithms]] block: its ``label``, else its ``name``."""
    return str(algo.get("label", algo.get("name", "?")))


def _blocks(value: object, name: str, where: str) -> list[dict[str, Any]]:
    """The [[name]] blocks, checked to be present and an array of tables (algorithms: each with a ``name``)."""
    if value is None:
        raise InvalidInputError(f"{where}: no [[{name}]] blocks")
    if not isinstance(value, list) or not all(isinstance(b, dict) for b in value):
        raise InvalidInputError(f"{where}: '{name}' must be an array of tables ([[{name}]])")
    if name == "algorithms" and not all("name" in b for b in value):
        raise InvalidInputError(f"{where}: an [[algorithms]] block has no 'name'")
    return value


def _table(value: object, name: str, where: str) -> dict[str, Any]:
    """``value``, checked to be a table."""
    if not isinstance(value, dict):
        raise InvalidInputError(f"{where}: {name} must be a table")
    return value


def _no_unknown(table: dict[str, Any], allowed: set[str], name: str, where: str) -> None:
    """Refuse keys of ``table`` outside ``allowed``."""
    unknown = set(table) - allowed
    if unknown:
        raise InvalidInputError(f"{where}: unknown key(s) {sorted(unknown)} in {name}; allowed: {sorted(allowed)}")


def _deltas(delta: float | list[float], where: str) -> tuple[float, ...]:
    """``delta``: one confidence level or a list of them, each checked by :func:`check_delta`."""
    try:
        return tuple(check_delta(d) for d in (delta if isinstance(delta, list) else [delta]))
    except InvalidInputError as exc:
        raise InvalidInputError(f"{where}: {exc}") from None


def _integer(value: object, name: str, where: str, low: int) -> int:
    """:func:`optdesign.validation.as_count` (integral floats such as 1e9 allowed), its error prefixed with the
    file."""
    try:
        return as_count(value, name, minimum=low, floats=True)
    except InvalidInputError as exc:
        raise InvalidInputError(f"{where}: {exc}") from None
