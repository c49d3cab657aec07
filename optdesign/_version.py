"""The installed distribution's version, read on first access of ``optdesign.__version__`` (reading package
metadata imports ``importlib.metadata``, which ``import optdesign`` need not pay for)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("optdesign-bandits")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"
