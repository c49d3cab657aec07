"""bandits: thin best-arm-identification loops that ask :mod:`optdesign` for designs each round."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from optdesign import __version__ as __version__
else:
    def __getattr__(name):
        """``__version__``, read from the package metadata on first access (as ``optdesign.__version__``)."""
        if name == "__version__":
            from optdesign import __version__

            globals()["__version__"] = __version__
            return __version__
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

    def __dir__():
        return sorted({*globals(), "__version__"})


__all__ = ["__version__"]
