"""bandits: thin best-arm-identification loops that ask :mod:`optdesign` for designs each round."""

from optdesign import __version__

__all__ = ["__version__"]
