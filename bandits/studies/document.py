"""The checks and expansions of a study document's TOML values (:mod:`bandits.studies.spec` builds the runs).

Each check raises InvalidInputError with the file's name in front of the message.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import Any

from optdesign.errors import InvalidInputError
from optdesign.validation import as_count

from ..core.entries import group
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
    return f"{name}:" + ",".join(f"{k}={group(v)}" for k, v in options.items())


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


def _study_name(name: object, where: str) -> str:
    """A study name that is a plain directory name (the default results directory is ``results/NAME``): letters,
    digits, ``.``, ``_`` and ``-``, starting with a letter or digit, at most 100 characters; so no separator,
    no ``..`` and never empty."""
    text = str(name)
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", text) or ".." in text:
        raise InvalidInputError(f"{where}: the study name {text!r} must be a plain directory name (letters, digits, "
                                "'.', '_' and '-', starting with a letter or digit, no '..'); set [study] name")
    return text


def _stop(table: dict[str, Any], name: str, where: str) -> str | None:
    """The ``stop`` key of a table (None when absent), checked to be a string."""
    stop = table.get("stop")
    if stop is not None and not isinstance(stop, str):
        raise InvalidInputError(f"{where}: stop of {name} must be a string such as \"glr:threshold=practical\", "
                                f"got {stop!r}")
    return stop


#: the modes of a study and the [study] keys that belong to the other mode (one clear error each)
MODES = ("fixed-confidence", "fixed-budget")
CONFIDENCE_ONLY = ("delta", "max_samples", "stop", "budget")


def _mode(study: dict[str, Any], where: str) -> tuple[tuple[float, ...], int | None, tuple[int, ...]]:
    """The [study] table's mode as (deltas, thresholding budget, fixed-budget budgets): ``mode = "fixed-budget"``
    takes ``budgets`` (increasing integers) and none of :data:`CONFIDENCE_ONLY`; otherwise ``budgets`` is refused, and
    ``delta`` (0.05 by default) or a graph-thresholding ``budget`` is read."""
    from ..fixed_budget.schedules import check_budgets

    mode = study.get("mode", "fixed-confidence")
    if mode not in MODES:
        raise InvalidInputError(f"{where}: mode must be one of {', '.join(MODES)}; got {mode!r}")
    if mode == "fixed-budget":
        wrong = [key for key in CONFIDENCE_ONLY if key in study]
        if wrong:
            raise InvalidInputError(f"{where}: {', '.join(wrong)} in [study]: option(s) of fixed-confidence studies "
                                    "(or of a graph-thresholding budget); a fixed-budget study takes budgets = [...]")
        if "budgets" not in study:
            raise InvalidInputError(f"{where}: a fixed-budget study needs budgets = [T1, T2, ...] in [study]")
        try:
            return (), None, check_budgets(study["budgets"])
        except InvalidInputError as exc:
            raise InvalidInputError(f"{where}: {exc}") from None
    if "budgets" in study:
        raise InvalidInputError(f"{where}: budgets is an option of fixed-budget studies; set mode = \"fixed-budget\" "
                                "in [study] (or give delta for fixed confidence)")
    budget = study.get("budget")
    budget = None if budget is None else _integer(budget, "budget", where, 1)
    delta = study.get("delta", 0.05 if budget is None else None)
    return (() if delta is None else _deltas(delta, where)), budget, ()
