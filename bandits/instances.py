"""Named benchmark instances, and the ``NAME:key=value,...`` strings the CLI accepts.

Every family keeps its factories beside its algorithms (the linear ones in :mod:`bandits.linear.instances`:
``soare``, ``many-arms``, ``sphere``, ``factorial``, ``transductive``); this table names them all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from optdesign.errors import InvalidInputError
from optdesign.validation import as_count

from .core.algorithm import Environment
from .core.entries import check_options, load_object, split_algorithm, split_options
from .kinds import kind_of
from .plugins import INSTANCE_GROUP, entry_point_plugins

__all__ = ["INSTANCES", "InstanceSpec", "instance_factory", "instance_kind", "parse_instance", "register"]

@dataclass(frozen=True)
class InstanceSpec:
    """A named instance: its factory (a callable, or ``"module:function"`` imported on first use,
    which keeps optional families out of the import graph), its kind and a one-line summary.

    Parameters
    ----------
    factory : callable or str
        The instance family: a function of keyword options returning an environment, or its
        ``"package.module:function"`` path.
    kind : str
        A key of :data:`bandits.kinds.KINDS` (``"linear"``, ``"karmed"``, ``"bilinear"``, ``"factored"``,
        ``"thresholding"``): which algorithms apply, how a run goes and what it reports.
    summary : str
        One line for ``bandits list`` (the paper and the options).

    Raises
    ------
    InvalidInputError
        An unknown kind.
    """

    factory: Callable[..., Any] | str
    kind: str
    summary: str

    def __post_init__(self) -> None:
        """Refuse a kind that :data:`bandits.kinds.KINDS` does not know."""
        kind_of(self.kind)

    def build(self, **kwargs: Any) -> Any:
        """Call the factory (imported on first use) with the instance's options.

        Parameters
        ----------
        **kwargs : object
            The family's options (e.g. ``d=5, omega=0.1``).

        Returns
        -------
        environment
            The instance the factory builds.
        """
        return resolve(self.factory)(**kwargs)


def resolve(target: Callable[..., Any] | str) -> Callable[..., Any]:
    """A callable given directly or as ``"package.module:attribute"`` (:func:`bandits.core.entries.load_object`).

    Parameters
    ----------
    target : callable or str
        The callable, or its path.

    Returns
    -------
    callable
        The callable.
    """
    if callable(target):
        return target
    found: Callable[..., Any] = load_object(target, "factory")
    return found


#: the named instances: each name's factory, kind and one-line description
INSTANCES: dict[str, InstanceSpec] = {
    "soare": InstanceSpec("bandits.linear.instances:soare", "linear",
                           "Soare et al.: d+1 arms, angle omega (d, omega, sigma)"),
    "many-arms": InstanceSpec("bandits.linear.instances:many_arms", "linear",
                               "Fiez et al. exp. 2: n arms in R^2 (n, seed)"),
    "sphere": InstanceSpec("bandits.linear.instances:sphere", "linear",
                            "Fiez et al. exp. 3: n arms on the sphere of R^d (n, d, seed)"),
    "factorial": InstanceSpec("bandits.linear.instances:factorial", "linear",
                               "Fiez et al. exp. 4: 2^D factorial, interactions (D, seed)"),
    "top-m-classic": InstanceSpec("bandits.linear.instances:top_m_classic", "linear",
                                   "Reda et al. 2021: K items of R^(K-1), the top m tie at 1, one at angle omega "
                                   "(K, m, omega, sigma)"),
    "top-m-random": InstanceSpec("bandits.linear.instances:top_m_random", "linear",
                                  "Tirinzoni & Degenne 2022: e_1..e_(d/2) and K - d/2 random unit arms of values "
                                  "<= 0.5, the best d/4 canonical (K, d, seed, sigma)"),
    "transductive": InstanceSpec("bandits.linear.instances:transductive", "linear",
                                  "Fiez et al. exp. 5: X = I_2d, Z tilted (d, omega)"),
    "gbb": InstanceSpec("bandits.bilinear.instances:gbb", "bilinear",
                        "Rizk et al. Sec. 7: soare arms, M = 2 e1 e1^T on a "
                        "graph (d, omega, graph=star|complete|circle|matching, m directed edges)"),
}


_FACTORED = {  # MF-TaS instances (bandits.multiagent.instances), imported on first use
    "line": "MF-TaS: line of N agents, K actions, pairwise factors (N, K, seed, means, gap)",
    "ring": "MF-TaS Sec. 7.1: ring of N agents (N, K, seed, means=uniform|planted, gap)",
    "star": "star of N agents around agent 0 (N, K, seed, means, gap)",
    "grid": "rows x cols lattice of agents (rows, cols, K, seed, means, gap)",
    "antenna": "MF-TaS Sec. 7.2: antenna tilts of N cells, K tilts (N, K, seed, users, layout, interferers)",
    "factor-graph": "a FactorGraph JSON file (path)",
    "mab": "one agent, Gaussian arms (means=0.5/0.45/0.43/0.4) for gk-tas",
}
for _name, _summary in _FACTORED.items():
    INSTANCES[_name] = InstanceSpec(f"bandits.multiagent.instances:{_name.replace('-', '_')}", "factored", _summary)


INSTANCES["gaussian"] = InstanceSpec("bandits.pure_exploration.instances:gaussian", "karmed",
                                     "K Gaussian arms (means=0.5/0.45/0.43/0.4, sigma)")
INSTANCES["bernoulli"] = InstanceSpec("bandits.pure_exploration.instances:bernoulli", "karmed",
                                      "K Bernoulli arms (means=0.5/0.45/0.43/0.4)")
INSTANCES["poisson"] = InstanceSpec("bandits.pure_exploration.instances:poisson", "karmed",
                                    "K Poisson arms (means=2/1.5/1)")
INSTANCES["exponential"] = InstanceSpec("bandits.pure_exploration.instances:exponential", "karmed",
                                        "K arms with exponential rewards (means=2/1.5/1)")
INSTANCES["heteroscedastic"] = InstanceSpec("bandits.pure_exploration.instances:heteroscedastic", "heteroscedastic",
                                            "K Gaussian arms of unequal variances (means, sigmas; or K, seed, gap)")
INSTANCES["bounded"] = InstanceSpec("bandits.pure_exploration.instances:bounded", "bounded",
                                    "K arms with rewards in [0, 1] on a grid (means, levels; or K, seed, levels, gap)")
INSTANCES["sbm"] = InstanceSpec("bandits.thresholding.instances:sbm", "thresholding",
                                "LeJeune et al. 4.1: two-block SBM, mu = +-1, sigma 2 (n, blocks, sigma, seed)")
INSTANCES["nws"] = InstanceSpec("bandits.thresholding.instances:nws", "thresholding",
                                "LeJeune et al. 4.2: Newman–Watts–Strogatz, smooth Bernoulli means (n, k, p, seed)")


#: the linear factories, importable from here as before (:mod:`bandits.linear.instances`, loaded on first use)
_LINEAR_FACTORIES = ("factorial", "many_arms", "soare", "sphere", "top_m_classic", "top_m_random", "transductive")


def __getattr__(name: str) -> Any:
    """A linear factory of :mod:`bandits.linear.instances` (imported on first use, so ``--help`` stays light)."""
    if name in _LINEAR_FACTORIES:
        from .linear import instances

        return getattr(instances, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def register(name: str, factory: Callable[..., Any] | str, kind: str, summary: str) -> None:
    """Add a named instance (used by the bilinear and multi-agent modules).

    Parameters
    ----------
    name : str
        The ``NAME`` of ``NAME:key=value,...`` (replaces an instance of that name).
    factory : callable or str
        The family, or its ``"package.module:function"`` path (see :class:`InstanceSpec`).
    kind : str
        A key of :data:`bandits.kinds.KINDS`.
    summary : str
        One line for ``bandits list``.

    Raises
    ------
    InvalidInputError
        An unknown kind.
    """
    INSTANCES[name] = InstanceSpec(factory, kind, summary)


def instance_factory(name: str) -> Callable[..., Any]:
    """The family a name stands for: a name of :data:`INSTANCES`, else an installed distribution's entry point in
    the group ``bandits.instances``, else a ``package.module:function`` path.

    Parameters
    ----------
    name : str
        The name or path.

    Returns
    -------
    callable
        The family (keyword options -> environment).

    Raises
    ------
    InvalidInputError
        An unknown name, or a path that does not import or names no callable.
    """
    if name in INSTANCES:
        return resolve(INSTANCES[name].factory)
    plugins = {} if ":" in name else entry_point_plugins(INSTANCE_GROUP)
    if ":" not in name and name not in plugins:
        raise InvalidInputError(f"unknown instance {name!r}; valid names: {', '.join(sorted({*INSTANCES, *plugins}))}"
                                ", or a package.module:function path")
    factory = load_object(plugins[name][0] if name in plugins else name, "instance family")
    if not callable(factory):
        raise InvalidInputError(f"instance {name!r} names no function of keyword options")
    return cast(Callable[..., Any], factory)


def instance_kind(text: str) -> str:
    """The kind of the instance a text names (a key of :data:`bandits.kinds.KINDS`): a named family's own, or that
    of the environment a plug-in family builds.

    Parameters
    ----------
    text : str
        The instance text, as :func:`parse_instance` takes it.

    Returns
    -------
    str
        The kind.

    Raises
    ------
    InvalidInputError
        What :func:`parse_instance` refuses (a plug-in family is built to read its kind).
    """
    name = _split_instance(text)[0]
    if name in INSTANCES:
        return INSTANCES[name].kind
    return str(parse_instance(text).kind)


def _split_instance(text: str) -> tuple[str, dict[str, Any]]:
    """(name or path, options): a named or published family's options follow its first colon, a path's its second
    (``soare:d`` is the family soare with a malformed option, not the function d of a module soare)."""
    head = str(text).partition(":")[0].strip()
    if head in INSTANCES or head in entry_point_plugins(INSTANCE_GROUP):
        return split_options(text)
    return split_algorithm(text)


def parse_instance(text: str) -> Environment:
    """Build an environment from ``NAME`` or ``NAME:key=value,key=value``.

    Parameters
    ----------
    text : str
        A name of :data:`INSTANCES` (``bandits list`` prints them), an entry point of the group
        ``bandits.instances`` or a ``package.module:function`` path (options then follow a second colon), then the
        keyword options of its family as ``key=value`` pairs separated by commas (numbers, ``true``/``false``,
        ``pi``, ``pi/2`` or strings), e.g. ``"soare:d=5,omega=0.01"``. A plug-in family returns an environment
        whose ``kind`` is a key of :data:`bandits.kinds.KINDS`.

    Returns
    -------
    Environment
        The instance (a :class:`bandits.core.environments.LinearBandit` for the linear families).

    Raises
    ------
    InvalidInputError
        An unknown name, an option the family does not take (the message lists the valid ones), a
        negative seed, a value the family refuses, or a plug-in family whose environment has no known kind.
    """
    name, kwargs = _split_instance(text)
    factory = instance_factory(name)
    check_options(factory, kwargs, f"instance {name}")
    if "seed" in kwargs:  # every family's seed feeds numpy's SeedSequence, which refuses negative integers
        kwargs["seed"] = as_count(kwargs["seed"], "seed", minimum=0, floats=True)
    try:
        env: Environment = factory(**kwargs)
    except TypeError as exc:
        raise InvalidInputError(f"instance {name}: {exc}") from None
    if name not in INSTANCES:
        kind_of(getattr(env, "kind", f"<none: {type(env).__name__} has no kind>"))
    return env
