"""Reading the command line's inputs: arrays (CSV or .npy), factor-graph JSON, integer ranges."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InstanceTooLargeError, InvalidInputError
from ..validation import check_input_file, real_array

if TYPE_CHECKING:
    from ..factored.graph.factor_graph import FactorGraph


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
            delimiter = "," if "," in text else None
            arr = np.loadtxt(path, delimiter=delimiter, ndmin=2, comments="#")
        arr = real_array(arr)
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
