"""The entry grammar: how a name with options (``name:key=value,...``) and a path to an object of a user's package
(``package.module:attribute``) are read wherever the toolkit takes them: algorithms, instances, stopping rules,
thresholds, problems, and the studies' lower bounds.

* ``name:key=value,key=value``: the options are numbers (int, float, ``pi``, ``pi/2``), ``true``/``false`` or text;
  a value in parentheses is text that may hold commas, an entry of its own options
  (``top-two:problem=(epsilon-good:epsilon=0.1,known=true)``);
* ``package.module:Class[:key=value,...]`` names a class to import, options after a second colon;
* ``package.module:name.attribute`` names any attribute (imported on first use).
"""

from __future__ import annotations

import importlib
import inspect
import typing
from collections.abc import Callable
from typing import Any

import numpy as np

from optdesign.errors import InvalidInputError

__all__ = ["check_options", "group", "load_object", "split_algorithm", "split_items", "split_options"]


def split_items(text: str) -> list[str]:
    """The comma-separated items of an option list, commas inside parentheses kept:
    ``"a=1,b=(x:c=2,d=3)"`` -> ``["a=1", "b=(x:c=2,d=3)"]`` (items stripped, empty ones dropped).

    Parameters
    ----------
    text : str
        The options after the name's colon.

    Returns
    -------
    list of str
        The items.

    Raises
    ------
    InvalidInputError
        Parentheses that do not balance.
    """
    items, depth, start = [], 0, 0
    for k, char in enumerate(text):
        depth += (char == "(") - (char == ")")
        if depth < 0:
            break
        if char == "," and depth == 0:
            items.append(text[start:k])
            start = k + 1
    if depth != 0:
        raise InvalidInputError(f"the parentheses of {text!r} do not balance")
    items.append(text[start:])
    return [item.strip() for item in items if item.strip()]


def group(value: object) -> str:
    """An option value as an entry's text writes it: booleans in lower case, text holding a comma in parentheses (so
    that :func:`split_options` reads it back as one value).

    Parameters
    ----------
    value : object
        The value.

    Returns
    -------
    str
        Its text.
    """
    text = str(value).lower() if isinstance(value, bool) else str(value)
    return f"({text})" if "," in text else text


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
        An option without ``=``, given twice, or parentheses that do not balance.
    """
    name, _, rest = str(text).partition(":")
    options: dict[str, Any] = {}
    for item in split_items(rest):
        key, eq, value = item.partition("=")
        if not eq:
            raise InvalidInputError(f"option {item!r} of {name.strip()!r} must read key=value")
        if key.strip() in options:
            raise InvalidInputError(f"option {key.strip()!r} of {name.strip()!r} is given twice")
        value = value.strip()
        options[key.strip()] = value[1:-1].strip() if _grouped(value) else _number(value)
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


def _grouped(value: str) -> bool:
    """Whether the whole value is one parenthesised group: "(a,b)", not "(a)-(b)"."""
    depth = 0
    for k, char in enumerate(value):
        depth += (char == "(") - (char == ")")
        if depth == 0:
            return k == len(value) - 1 and k > 0
    return False


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


def check_options(factory: Callable[..., Any], options: dict[str, Any], what: str) -> None:
    """Refuse option keys that ``factory`` does not take, naming the valid ones, and text for a number option.

    Parameters
    ----------
    factory : callable
        The class or function the options are for.
    options : dict
        The options given.
    what : str
        What they configure, for the message (``"algorithm fws"``).

    Raises
    ------
    InvalidInputError
        An unknown key, or text for an option annotated ``int`` or ``float``.
    """
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # no introspectable signature: the call itself reports
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return
    valid = [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
             and not p.name.startswith("_")]
    unknown = sorted(set(options) - set(valid))
    if unknown:
        raise InvalidInputError(f"{what}: unknown option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
                                f"valid options: {', '.join(valid) if valid else 'none'}")
    _check_numbers(factory, options, what)


def _check_numbers(factory: Callable[..., Any], options: dict[str, Any], what: str) -> None:
    """Refuse text given for an option the factory annotates as a number only (``int``, ``float``)."""
    try:
        hints = typing.get_type_hints(factory)  # a dataclass's fields, or a function's parameters
    except Exception:  # unresolvable annotations: the call itself reports
        return
    for key, value in options.items():
        hint = hints.get(key)
        if isinstance(value, str) and hint in (int, float):
            raise InvalidInputError(f"{what}: option {key} must be {'an integer' if hint is int else 'a number'}, "
                                    f"got {value!r}")
