"""The JSON format of factor graphs: :class:`~optdesign.factored.FactorGraph` to and from a document.

The format (``FORMAT``, version ``FORMAT_VERSION``)::

    {"format": "optdesign.factorgraph", "version": 1,
     "n_actions": [K_0, ..., K_{N-1}],
     "factors": [{"scope": [i, j, ...], "means": nested list of shape (K_i, K_j, ...)}, ...],
     "metadata": {...free-form: generator, seed, ...}}

FactorGraph inherits these methods from :class:`FactorGraphJSON`; a document read back goes through the
constructor's checks, so a hand-edited file is validated like any other input.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import InvalidInputError
from ...validation.files import check_input_file

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["FactorGraphJSON"]

FORMAT = "optdesign.factorgraph"
FORMAT_VERSION = 1


class FactorGraphJSON:
    """JSON conversion of :class:`~optdesign.factored.FactorGraph` (a base class: call the methods
    on a FactorGraph, e.g. ``fg.save("ring.json")`` and ``FactorGraph.load("ring.json")``)."""

    # set by FactorGraph
    n_actions: tuple[int, ...]
    scopes: tuple[tuple[int, ...], ...]
    tables: tuple[np.ndarray, ...]
    metadata: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """The instance as a JSON-ready document (lists, numbers and the metadata, shared, not copied).

        Returns
        -------
        dict
            ``format``, ``version``, ``n_actions``, ``factors`` (``scope`` and nested-list ``means`` per factor)
            and ``metadata``, as in the module docstring.
        """
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "n_actions": list(self.n_actions),
            "factors": [{"scope": list(s), "means": t.tolist()} for s, t in zip(self.scopes, self.tables, strict=True)],
            "metadata": self.metadata,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """The instance a :meth:`to_dict` document describes, checked like the constructor's arguments.

        Parameters
        ----------
        data : dict
            A document of this format; ``metadata`` is optional.

        Returns
        -------
        FactorGraph
            The instance (its tables as float arrays).

        Raises
        ------
        InvalidInputError
            Not a factor-graph document, another format version, a missing or malformed field, or contents the
            constructor refuses.
        """
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InvalidInputError(f"not a factor-graph document (expected format {FORMAT!r})")
        if data.get("version") != FORMAT_VERSION:
            raise InvalidInputError(f"unsupported factor-graph format version {data.get('version')!r}")
        try:
            factors = [(f["scope"], f["means"]) for f in data["factors"]]  # checked by the constructor
            # cls is FactorGraph (this class is its base), whose constructor takes these arguments
            return cls(data["n_actions"], factors, metadata=data.get("metadata"))  # type: ignore[call-arg]
        except (KeyError, TypeError) as exc:
            raise InvalidInputError(f"malformed factor-graph document: missing or bad field {exc}") from None

    def save(self, path: str | Path) -> None:
        """Write :meth:`to_dict` as JSON to ``path`` (overwritten).

        Parameters
        ----------
        path : str or Path
            The file to write; the metadata must be JSON-serialisable.
        """
        Path(path).write_text(json.dumps(self.to_dict()))

    @classmethod
    def load(cls, path: str | Path) -> Self:
        """Read an instance written by :meth:`save` (:meth:`from_dict` checks it).

        Parameters
        ----------
        path : str or Path
            A JSON file of this format.

        Returns
        -------
        FactorGraph
            The instance.

        Raises
        ------
        InvalidInputError
            The file cannot be read, is not a regular file, or is not valid JSON (or nested too deeply), or
            :meth:`from_dict` refuses the document.
        InstanceTooLargeError
            The file is above 2 GiB.
        """
        check_input_file(path, "factor graph")
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InvalidInputError(f"cannot read factor graph from {path}: {exc}") from None
        except RecursionError:
            raise InvalidInputError(f"cannot read factor graph from {path}: its JSON is nested too deeply") from None
        return cls.from_dict(data)
