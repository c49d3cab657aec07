"""The entry grammar: how a name with options (``name:key=value,...``) and a path to an object of a user's package
(``package.module:attribute``) are read wherever the toolkit takes them: algorithms, instances, stopping rules,
thresholds, problems, and the studies' lower bounds.

* ``name:key=value,key=value``: the options are numbers (int, float, ``pi``, ``pi/2``), ``true``/``false`` or text;
* ``package.module:Class[:key=value,...]`` names a class to import, options after a second colon;
* ``package.module:name.attribute`` names any attribute (imported on first use).
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from optdesign.errors import InvalidInputError

__all__ = ["load_object", "split_algorithm", "split_options"]


def split_options(text: str) -> tuple[str, dict[str, Any]]:
    """``"name:key=value,key=value"`` -> (name, {key: number, true/false, or string}).

    Parameters
    ----------
    text : str
        The text (a name alone has no options).

    Returns
    -------
    tuple
        ``(name, options)``.

    Raises
    ------
    InvalidInputError
        An option without ``=``, or given twice.
    """
    name, _, rest = str(text).partition(":")
    options: dict[str, Any] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq:
            raise InvalidInputError(f"option {item!r} of {name.strip()!r} must read key=value")
        if key.strip() in options:
            raise InvalidInputError(f"option {key.strip()!r} of {name.strip()!r} is given twice")
        options[key.strip()] = _number(value.strip())
    return name.strip(), options


def split_algorithm(text: str) -> tuple[str, dict[str, Any]]:
    """``NAME[:options]`` or ``package.module:Class[:options]`` -> (name or path, options).

    A path is recognised by its second part: ``a:b=1`` is the name ``a`` with option ``b``, ``a:B`` the class
    ``B`` of module ``a`` (options then follow a second colon).

    Parameters
    ----------
    text : str
        The algorithm text.

    Returns
    -------
    tuple
        ``(name, options)`` with the options parsed as :func:`split_options` does.

    Raises
    ------
    InvalidInputError
        An option without ``=``.
    """
    head, colon, rest = str(text).partition(":")
    attr, _, options = rest.partition(":")
    if colon and attr.strip() and "=" not in attr and "," not in attr:
        name = f"{head.strip()}:{attr.strip()}"
        return name, split_options(f"{head.strip()}:{options}")[1] if options else {}
    return split_options(text)


def load_object(path: str, what: str) -> Any:
    """The attribute a ``"package.module:attribute"`` path names, imported; one clear error line otherwise.

    Parameters
    ----------
    path : str
        ``module:attribute`` (dotted module, attribute possibly dotted).
    what : str
        What the path should name, for the messages (e.g. ``"sampler"``).

    Returns
    -------
    object
        The attribute.

    Raises
    ------
    InvalidInputError
        A path not of that form, a module that does not import, or no such attribute.
    """
    module, colon, attr = str(path).partition(":")
    if not colon or not module or not attr:
        raise InvalidInputError(f"{what} {path!r} must read package.module:Name")
    try:
        found: Any = importlib.import_module(module)
    except Exception as exc:  # any failure while importing a user's module is reported the same way
        raise InvalidInputError(f"{what} {path!r}: module {module!r} does not import "
                                f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})") from None
    for part in attr.split("."):
        if not hasattr(found, part):
            raise InvalidInputError(f"{what} {path!r}: module {module!r} has no attribute {attr!r}")
        found = getattr(found, part)
    return found


def _number(text: str) -> int | float | bool | str:
    """An option value: an int, a float, pi or pi/2, true/false, else the text itself."""
    cast: type[int] | type[float]
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    if text.lower() in ("pi/2", "pi"):
        return np.pi / 2 if text.lower() == "pi/2" else np.pi
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text
