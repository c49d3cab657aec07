"""Reading the command line's inputs: arrays (CSV or .npy), factor-graph JSON, integer ranges, factors of a
formula (``--factor``), vectors (``--c``, ``--effects``), linear constraints (``--constraints``: .npz, JSON or TOML)
and the runs already made (``--fixed``: counts, rows of the candidates, or factor settings)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np

from ..errors import InstanceTooLargeError, InvalidInputError
from ..validation import check_input_file, real_array

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, as the tomli package
    import tomli as tomllib

if TYPE_CHECKING:
    import pandas as pd

    from ..factored.graph.factor_graph import FactorGraph
    from ..linear.classical.constraints import LinearConstraints


def load_array(path: Path, name: str, *, ndim: int) -> np.ndarray:
    """Read a .npy file or a comma/whitespace separated text file (CSV) as a float array (a regular file of at most
    2 GiB: :func:`optdesign.validation.check_input_file`)."""
    check_input_file(path, f"--{name}")
    arr: np.ndarray
    try:
        if path.suffix == ".npy":
            arr = np.load(path, allow_pickle=False)
        else:
            text = path.read_text()
            if not any(line.split("#", 1)[0].strip() for line in text.splitlines()):
                raise InvalidInputError(f"--{name}: {path} holds no numbers (every line is blank or a # comment)")
            delimiter = "," if "," in text else None
            arr = np.loadtxt(path, delimiter=delimiter, ndmin=2, comments="#")
        arr = real_array(arr)
    except InvalidInputError:
        raise
    except (TypeError, ValueError, OSError) as exc:
        raise InvalidInputError(f"--{name}: cannot read {path}: {exc}") from None
    if ndim == 1 and arr.ndim == 2 and 1 in arr.shape:
        arr = arr.ravel()
    if arr.ndim != ndim:
        raise InvalidInputError(f"--{name}: expected a {ndim}-D array in {path}, got shape {arr.shape}")
    return arr


def load_instance(path: Path) -> FactorGraph:
    """Read a factor-graph JSON document (written by ``FactorGraph.save``)."""
    from ..factored.graph.factor_graph import FactorGraph

    check_input_file(path, "--instance")
    return FactorGraph.load(path)


#: values an 'A:B' range may list (each is a point of a sweep)
MAX_RANGE_VALUES = 10_000


def parse_int_range(text: str, name: str, minimum: int) -> list[int]:
    """``"3:8"`` (inclusive), ``"5"`` or ``"3,5,7"`` as a sorted list of distinct integers >= minimum."""
    try:
        if ":" in text:
            lo, hi = (int(part) for part in text.split(":"))
            if hi - lo + 1 > MAX_RANGE_VALUES:
                raise InstanceTooLargeError(f"--{name}: the range {text!r} has {hi - lo + 1:,} values, above the "
                                            f"limit of {MAX_RANGE_VALUES:,}; give a shorter range or a list")
            values = list(range(lo, hi + 1))
        else:
            values = [int(part) for part in text.split(",")]
    except ValueError:
        raise InvalidInputError(f"--{name}: expected 'A:B' (inclusive), 'N' or 'N1,N2,...', got {text!r}") from None
    if not values:
        raise InvalidInputError(f"--{name}: empty range {text!r}")
    if min(values) < minimum:
        raise InvalidInputError(f"--{name}: values must be >= {minimum}, got {text!r}")
    return sorted(set(values))


def parse_factor(text: str) -> tuple[str, tuple[float, float, int] | list]:
    """``NAME=LOW:HIGH:POINTS`` (a range of equally spaced levels) or ``NAME=L1,L2,...`` (levels: numbers, else
    labels of a categorical factor) as (name, spec) for :func:`optdesign.formulas.factor_grid`."""
    name, sep, spec = text.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier() or not spec.strip():
        raise InvalidInputError(f"--factor: expected NAME=LOW:HIGH:POINTS or NAME=L1,L2,..., got {text!r}")
    if ":" in spec:
        parts = spec.split(":")
        try:
            low, high, points = float(parts[0]), float(parts[1]), int(parts[2])
            if len(parts) != 3:
                raise ValueError
        except (ValueError, IndexError):
            raise InvalidInputError(f"--factor {name}: a range is LOW:HIGH:POINTS (POINTS an integer), got {spec!r}")\
                from None
        return name, (low, high, points)
    levels = [part.strip() for part in spec.split(",")]
    try:
        return name, [float(level) for level in levels]
    except ValueError:
        return name, levels


def parse_factors(texts: list[str]) -> dict[str, tuple[float, float, int] | list]:
    """Every ``--factor`` option as a mapping of factor names to ranges or levels; a name given twice is refused."""
    factors: dict[str, tuple[float, float, int] | list] = {}
    for text in texts:
        name, spec = parse_factor(text)
        if name in factors:
            raise InvalidInputError(f"--factor: the factor {name!r} is given twice")
        factors[name] = spec
    return factors


def parse_vector(text: str, name: str) -> np.ndarray:
    """A comma-separated list of numbers (``"0,1,0"``), or else a file of them (CSV or .npy), as a 1-D array."""
    path = Path(text)
    if "," in text or not path.suffix:
        try:
            return real_array([float(part) for part in text.split(",")])
        except (TypeError, ValueError):
            if "," in text:
                raise InvalidInputError(f"--{name}: expected numbers separated by commas or a file, got {text!r}")\
                    from None
    return load_array(path, name, ndim=1)


def load_constraints(path: Path, n: int) -> LinearConstraints:
    """Linear constraints A w <= b on n candidates from a file: ``.npz`` with arrays ``A`` (m x n) and ``b`` (m), or
    ``.json`` / ``.toml`` naming the helpers (:data:`CONSTRAINT_KEYS`):

    ``budget = {cost = [...], total = B}`` (a list of such tables for several budgets), ``caps = [...]`` (or one
    number for every candidate), ``augment = [...]``, ``group_totals = {groups = [...], lo = ..., hi = ...}``
    (a list for several) and ``linear = {A = [[...]], b = [...]}``.
    """
    from ..linear.classical.constraints import as_constraints

    check_input_file(path, "--constraints")
    if path.suffix == ".npz":
        try:
            with np.load(path, allow_pickle=False) as data:
                if set(data.files) != {"A", "b"}:
                    raise InvalidInputError(f"--constraints: {path} must hold exactly the arrays A and b (A w <= b), "
                                            f"got {', '.join(data.files) or 'none'}")
                pair = (real_array(data["A"]), real_array(data["b"]))
        except (TypeError, ValueError, OSError) as exc:
            raise InvalidInputError(f"--constraints: cannot read {path}: {exc}") from None
        return _prefixed(lambda: as_constraints(pair, n))
    if path.suffix not in (".json", ".toml"):
        raise InvalidInputError(f"--constraints: {path} must be .npz (arrays A, b), .json or .toml (named helpers)")
    return _prefixed(lambda: _named_constraints(_read_document(path), n))


def _read_document(path: Path) -> dict:
    """A JSON or TOML document whose top level is a table."""
    try:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".json":
            doc = json.loads(text)
        else:
            doc = tomllib.loads(text)
    except (ValueError, UnicodeDecodeError, RecursionError, OSError) as exc:  # JSON and TOML errors are ValueErrors
        raise InvalidInputError(f"--constraints: cannot read {path}: {str(exc).splitlines()[0]}") from None
    if not isinstance(doc, dict) or not doc:
        raise InvalidInputError(f"--constraints: {path} must be a table of constraints ({', '.join(CONSTRAINT_KEYS)})")
    return doc


#: the entries of a JSON/TOML constraints file and the helper each calls
CONSTRAINT_KEYS = ("budget", "caps", "augment", "group_totals", "linear")


def _named_constraints(doc: dict, n: int) -> LinearConstraints:
    """The sum of the helpers a constraints document names (keys of CONSTRAINT_KEYS)."""
    from ..linear.classical.constraints import as_constraints

    unknown = sorted(set(doc) - set(CONSTRAINT_KEYS))
    if unknown:
        raise InvalidInputError(f"unknown entry {unknown[0]!r} (expected {', '.join(CONSTRAINT_KEYS)})")
    parts = []
    for key, entry in doc.items():
        for table in entry if key in ("budget", "group_totals") and isinstance(entry, list) else [entry]:
            parts.append(_helper(key, table, n))
    return cast("LinearConstraints", as_constraints(parts, n))


def _helper(key: str, entry: object, n: int) -> LinearConstraints:
    """One entry of a constraints document through its helper."""
    from ..linear.classical.constraints import as_constraints, augment, budget, caps, group_totals

    fields = {"budget": ("cost", "total"), "group_totals": ("groups", "lo", "hi"), "linear": ("A", "b")}.get(key)
    if fields is not None:
        if not isinstance(entry, dict) or not set(entry) <= set(fields):
            raise InvalidInputError(f"{key} must be a table with the entries {', '.join(fields)}, got {entry!r}")
        if key == "budget":
            return budget(entry.get("cost", []), entry.get("total", np.nan))
        if key == "group_totals":
            return group_totals(entry.get("groups", []), entry.get("lo"), entry.get("hi"))
        return cast("LinearConstraints", as_constraints((entry.get("A", []), entry.get("b", [])), n))
    if key == "caps" and isinstance(entry, (int, float)) and not isinstance(entry, bool):
        entry = [float(entry)] * n
    if not isinstance(entry, list):
        raise InvalidInputError(f"{key} must be a list of numbers, one per candidate, got {entry!r}")
    return caps(entry) if key == "caps" else augment(entry)


def _prefixed(build: Callable[[], LinearConstraints | None]) -> LinearConstraints:
    """``build()``, its errors prefixed with ``--constraints:`` (also a numeric entry of the wrong type)."""
    try:
        out = build()
    except InvalidInputError as exc:
        message = str(exc)
        raise InvalidInputError(message if message.startswith("--constraints") else f"--constraints: {message}") \
            from None
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"--constraints: {exc}") from None
    return cast("LinearConstraints", out)


def parse_effects(text: str) -> float | np.ndarray:
    """``--effects``: one number (given to every coefficient but the intercept's), or the coefficients as numbers
    separated by commas or a file (CSV, .npy)."""
    try:
        value = float(text)
    except ValueError:
        return parse_vector(text, "effects")
    if not np.isfinite(value):
        raise InvalidInputError(f"--effects must be finite numbers, got {text!r}")
    return value


#: a run of --fixed matches a candidate whose entries agree to this, relative to the candidates' largest entry
FIXED_MATCH_RTOL = 1e-9


def load_fixed(path: Path, X: np.ndarray, points: pd.DataFrame | None) -> np.ndarray:
    """``--fixed``: the runs already made, as counts per candidate. The file holds either one count per candidate (a
    single row or column of K whole numbers), or one run per row: a candidate's row of ``--arms`` (d columns), or
    with ``--formula`` its factor settings in a CSV whose header names the factors."""
    K, d = X.shape
    if points is not None and path.suffix != ".npy" and _header(path, list(points.columns)):
        return _settings_counts(path, points)
    arr = load_array(path, "fixed", ndim=2)
    if points is None and arr.shape[1] == d:
        scale = float(np.abs(X).max()) or 1.0
        counts = np.zeros(K, dtype=np.int64)
        for i, run in enumerate(arr):
            match = np.flatnonzero(np.max(np.abs(X - run), axis=1) <= FIXED_MATCH_RTOL * scale)
            if not match.size:
                raise InvalidInputError(f"--fixed: run {i + 1} ({', '.join(f'{v:g}' for v in run)}) is not a "
                                        "candidate (a row of --arms)")
            counts[match[0]] += 1
        return counts
    if 1 in arr.shape and arr.size == K:
        return arr.ravel()
    what = "a CSV whose header names the factors, one setting per row" if points is not None else \
        f"one run per row ({d} columns, rows of --arms)"
    raise InvalidInputError(f"--fixed: {path} has shape {arr.shape}; expected one count per candidate (a row or "
                            f"column of K = {K} numbers) or {what}")


def _header(path: Path, factors: list[str]) -> bool:
    """Whether the first line of ``path`` that is not blank or a comment names the factors (in any order)."""
    check_input_file(path, "--fixed")
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            text = line.split("#", 1)[0].strip()
            if text:
                return sorted(field.strip().strip('"') for field in text.split(",")) == sorted(factors)
    return False


def _settings_counts(path: Path, points: pd.DataFrame) -> np.ndarray:
    """Counts per candidate of the factor settings in a CSV with a header (numbers within FIXED_MATCH_RTOL, labels
    as text)."""
    import pandas as pd

    try:
        runs = pd.read_csv(path, comment="#", skipinitialspace=True)
    except (ValueError, OSError) as exc:
        raise InvalidInputError(f"--fixed: cannot read {path}: {str(exc).splitlines()[0]}") from None
    matches = np.ones((len(runs), len(points)), dtype=bool)
    for name in points.columns:
        have, want = runs[name].to_numpy(), points[name].to_numpy()
        if pd.api.types.is_numeric_dtype(points[name]) and pd.api.types.is_numeric_dtype(runs[name]):
            scale = float(np.abs(want.astype(float)).max()) or 1.0
            matches &= np.abs(have.astype(float)[:, None] - want.astype(float)[None, :]) <= FIXED_MATCH_RTOL * scale
        else:
            matches &= have.astype(str)[:, None] == want.astype(str)[None, :]
    missing = np.flatnonzero(~matches.any(axis=1))
    if missing.size:
        row = runs.iloc[int(missing[0])].to_dict()
        raise InvalidInputError(f"--fixed: run {int(missing[0]) + 1} ({', '.join(f'{k}={v}' for k, v in row.items())}) "
                                "is not a setting of the candidates (levels of --factor)")
    return np.bincount(np.argmax(matches, axis=1), minlength=len(points))
