"""Shared numpydoc entries: a family of functions that take the same parameters documents them once.

A docstring holds ``%(name)s`` placeholders; :func:`shared_doc` fills them from one mapping of texts, so every
member of the family renders the full Parameters/Returns/Raises sections without a pasted copy.

It is re-exported at the top level (``optdesign.shared_doc``): code built on the toolkit (``bandits``) documents
its own families of functions the same way and imports only the public surface of optdesign.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

__all__ = ["shared_doc"]

T = TypeVar("T")


def shared_doc(texts: Mapping[str, str]) -> Callable[[T], T]:
    """A decorator that fills the ``%(name)s`` placeholders of a function's or class's docstring from ``texts``.

    Parameters
    ----------
    texts : mapping of str to str
        The shared entries, each already indented as the docstrings that use it.

    Returns
    -------
    callable
        The decorator; it returns the object it decorates, with its docstring filled in.

    Raises
    ------
    KeyError
        At import time, when a docstring names a placeholder that ``texts`` lacks.
    """

    def fill(obj: T) -> T:
        obj.__doc__ = (obj.__doc__ or "") % texts
        return obj

    return fill
