"""cvxpy, loaded on first use (the standard library's ``importlib.util.LazyLoader``).

Code that stays on the numpy fast paths (the certified barrier, Frank–Wolfe, the bandit loops and the
study workers that run them) then starts without cvxpy's import, about 0.7 s per process.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType
from typing import TYPE_CHECKING


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


if TYPE_CHECKING:  # type checkers read cvxpy's own annotations; at run time the import stays lazy
    import cvxpy as cp
else:
    cp = lazy_module("cvxpy")
