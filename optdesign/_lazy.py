"""Loading on first use: cvxpy as a lazy module ``cp`` (the standard library's ``importlib.util.LazyLoader``),
and the re-exports of a package's ``__init__`` through a module-level ``__getattr__`` (PEP 562).

Code that stays on the numpy fast paths (the certified barrier, Frank–Wolfe, the bandit loops and the
study workers that run them) then starts without cvxpy's import, about 0.7 s per process. ``import optdesign``
and the command lines' ``--help`` load none of cvxpy, scipy, networkx, pandas or matplotlib: each re-exported
name imports its module when it is first used (``benchmarks/bench_startup.py`` times the start-up).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .errors import InvalidInputError


def lazy_module(name: str) -> ModuleType:
    """``name`` as a module object whose code runs at the first attribute access."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ImportError(f"No module named {name!r}")
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def lazy_exports(package: str, exports: Mapping[str, Iterable[str]]) -> tuple[Callable[[str], Any],
                                                                                  Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` (PEP 562) that import each re-exported name on first access.

    Parameters
    ----------
    package : str
        The package's ``__name__``; its ``__init__`` must already be executing (it is in ``sys.modules``).
    exports : Mapping[str, Iterable[str]]
        Each submodule, relative to the package (``".linear"``), with the names it provides.

    Returns
    -------
    tuple
        ``(__getattr__, __dir__)``: the first imports the submodule that defines a name, stores the value in
        the package's namespace (later accesses skip it) and returns it; the name of a submodule not imported
        yet imports it (``od.runtime``, as when the package imported it eagerly); any other name raises
        ``AttributeError``. The second lists the namespace and every re-exported name.

    Raises
    ------
    InvalidInputError
        ``package`` is not in ``sys.modules`` (not a package whose ``__init__`` is running or has run).
    """
    if package not in sys.modules:
        raise InvalidInputError(f"lazy_exports({package!r}): no such package is being imported; call it from the "
                                "package's own __init__ with its __name__")
    source = {name: module for module, names in exports.items() for name in names}
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        if name in source:
            value = getattr(importlib.import_module(source[name], package), name)
        elif not name.startswith("__") and importlib.util.find_spec(f"{package}.{name}") is not None:
            value = importlib.import_module(f"{package}.{name}")  # ``od.runtime``: a submodule not imported yet
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(source))

    return __getattr__, __dir__


__all__ = ["cp", "lazy_exports", "lazy_module"]

if TYPE_CHECKING:  # type checkers read cvxpy's own annotations; at run time the import stays lazy
    import cvxpy as cp
else:
    def __getattr__(name):
        """``cp``: cvxpy as a lazy module, made at the first ``from optdesign._lazy import cp``."""
        if name == "cp":
            return lazy_module("cvxpy")
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
