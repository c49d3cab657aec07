"""A package's re-exports loaded on first use (PEP 562): the ``__getattr__`` and ``__dir__`` that optdesign's
packages use, for any package whose ``import`` must stay light (``bandits.pure_exploration``)."""

from __future__ import annotations

from .._lazy import lazy_exports

__all__ = ["lazy_exports"]
