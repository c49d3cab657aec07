"""Algorithms and thresholds from outside the package: ``package.module:Class`` paths and installed entry points.

Wherever an algorithm name is read (``bandits run``, a study's ``[[algorithms]]`` block,
:func:`bandits.registry.make_algorithm`), ``package.module:Class`` names a class to import: a
:class:`bandits.pure_exploration.Sampler` subclass runs under the GLR stopping rule (as the built-in sampling
rules do), an :class:`bandits.core.algorithm.Algorithm` subclass runs as it is. Options follow a second colon:
``mypkg.rules:MyRule:alpha=0.2,threshold=kk21``. The module must be importable (installed, or on ``sys.path``).

Installed distributions add names through the entry-point group ``bandits.samplers``; in a
``pyproject.toml``::

    [project.entry-points."bandits.samplers"]
    my-rule = "mypkg.rules:MyRule"

after which ``bandits run my-rule ...`` works and ``bandits list`` shows the name with the distribution it comes
from. A built-in name wins over an entry point of the same name.

Thresholds: ``threshold=package.module:Class`` names a :class:`bandits.core.stopping.Threshold` subclass (built
without arguments) or instance. Problems: ``problem=package.module:Class`` (an option of a sampling rule) names a
:class:`bandits.pure_exploration.Problem` subclass that the run builds with ``Class.of_environment(env)`` in place of
the instance's own problem, e.g. another estimator or statistic on the same instances.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata

from optdesign.errors import InvalidInputError

from .core.algorithm import Algorithm
from .core.entries import load_object

__all__ = ["ENTRY_POINT_GROUP", "INSTANCE_GROUP", "Plugin", "entry_point_plugins", "load_plugin"]

#: the entry-point group through which installed distributions add sampling rules and algorithms
ENTRY_POINT_GROUP = "bandits.samplers"
#: the entry-point group of instance families (a function of keyword options returning an environment)
INSTANCE_GROUP = "bandits.instances"


@dataclass(frozen=True)
class Plugin:
    """An algorithm class from outside the registry.

    Parameters
    ----------
    target : str
        ``"package.module:Class"``.
    cls : type
        The imported class (a Sampler or an Algorithm subclass).
    origin : str
        Where it comes from: ``"path"`` for a path given directly, else the distribution of the entry point.
    """

    target: str
    cls: type
    origin: str

    @property
    def sampler(self) -> bool:
        """The class is a sampling rule (it runs under the GLR stop of PureExploration)."""
        from .pure_exploration.sampler import Sampler

        return issubclass(self.cls, Sampler)

    @property
    def summary(self) -> str:
        """The first line of the class's docstring."""
        doc = (self.cls.__doc__ or "").strip()
        return doc.splitlines()[0] if doc else self.target


def load_plugin(path: str, origin: str = "path") -> Plugin:
    """The Sampler or Algorithm subclass a path names.

    Parameters
    ----------
    path : str
        ``"package.module:Class"``.
    origin : str
        Recorded on the result (``"path"`` or the entry point's distribution).

    Returns
    -------
    Plugin
        The class and where it came from.

    Raises
    ------
    InvalidInputError
        The path does not import, or names something other than a Sampler or Algorithm subclass.
    """
    from .pure_exploration.sampler import Sampler  # here: the sampling rules load scipy

    cls = load_object(path, "algorithm")
    if not (isinstance(cls, type) and issubclass(cls, (Sampler, Algorithm))):
        raise InvalidInputError(f"algorithm {path!r} is not a Sampler or Algorithm subclass "
                                f"(bandits.pure_exploration.Sampler, bandits.core.algorithm.Algorithm)")
    return Plugin(path, cls, origin)


def entry_point_plugins(group: str = ENTRY_POINT_GROUP) -> dict[str, tuple[str, str]]:
    """The names installed distributions add through an entry-point group (``bandits.samplers`` by default, or
    :data:`INSTANCE_GROUP`).

    Parameters
    ----------
    group : str
        The entry-point group.

    Returns
    -------
    dict
        name -> (``"package.module:Class"``, the distribution's name or ``"entry point"``), in name order; the
        classes are not imported.
    """
    found = {}
    for ep in metadata.entry_points(group=group):
        dist = getattr(ep, "dist", None)
        found[ep.name] = (ep.value, f"{dist.name} {dist.version}" if dist is not None else "entry point")
    return dict(sorted(found.items()))
