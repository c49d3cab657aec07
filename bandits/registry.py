"""Algorithms by name, with options given as ``NAME:key=value,...`` (the CLI's and study files' syntax).

Classes are imported on first use (``"module:Class"``), so listing names costs nothing. Besides the names of
:data:`ALGORITHMS`, an algorithm may be a ``package.module:Class`` path or a name an installed distribution adds
through the ``bandits.samplers`` entry points (:mod:`bandits.plugins`); :func:`algorithm_spec` finds all three.
The stopping rule is a separate choice (``stop``, :mod:`bandits.pure_exploration.with_stop`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from optdesign.errors import InvalidInputError

from .core.algorithm import Algorithm
from .core.entries import split_algorithm
from .plugins import entry_point_plugins, load_plugin

if TYPE_CHECKING:
    from .fixed_budget.rules import BudgetRule
    from .thresholding.algorithms import ThresholdingAlgorithm
from .instances import check_options, resolve
from .kinds import ARM_PULLS, OWN_STOPS, PURE_EXPLORATION, kind_of

__all__ = ["ALGORITHMS", "AlgorithmSpec", "algorithm_spec", "make_algorithm"]


@dataclass(frozen=True)
class AlgorithmSpec:
    """A named algorithm: where its class lives, what it runs on, and the options its name fixes.

    Parameters
    ----------
    target : str
        The class as ``"package.module:Class"``, imported on first use.
    kind : str or tuple of str
        The instance kind(s) it runs on, keys of :data:`bandits.kinds.KINDS`.
    summary : str
        One line for ``bandits list`` (the paper and the rule).
    defaults : dict
        Options the name fixes (e.g. ``{"design": "g"}`` for ``g-static``); options given by the user win.
    sampler : bool
        The target is a sampling rule (:class:`bandits.pure_exploration.Sampler`): it runs under the GLR
        stopping rule of :class:`bandits.pure_exploration.PureExploration`, which takes the options
        ``threshold`` and ``growth``; the other options go to the sampler.
    origin : str
        ``"built-in"``, ``"path"`` (a ``package.module:Class`` given directly) or the distribution of an entry
        point.
    budget : bool
        The target is a rule run to a budget T known in advance (:class:`bandits.fixed_budget.BudgetRule`): it runs
        in fixed-budget mode only (``bandits run --budget``, a study's ``mode = "fixed-budget"``).

    Raises
    ------
    InvalidInputError
        A kind that :data:`bandits.kinds.KINDS` does not know.
    """

    target: str
    kind: str | tuple[str, ...]
    summary: str
    defaults: dict[str, Any] = field(default_factory=dict)
    sampler: bool = False
    origin: str = "built-in"
    budget: bool = False

    def __post_init__(self) -> None:
        """Refuse a kind that :data:`bandits.kinds.KINDS` does not know."""
        for kind in self.kinds:
            kind_of(kind)

    @property
    def kinds(self) -> tuple[str, ...]:
        """The instance kinds the algorithm runs on."""
        return (self.kind,) if isinstance(self.kind, str) else tuple(self.kind)


#: options of a sampling rule's run that belong to the GLR stopping rule, the batches and the problem, not to the
#: sampler (``glrt``: the factored problem's GLR statistic, short for its ``problem`` option)
RUN_OPTIONS = ("threshold", "growth", "problem", "glrt")
#: the kinds whose arms have means a fixed-budget elimination rule ranks (:mod:`bandits.fixed_budget.rules`)
ARM_VALUES = ("karmed", "heteroscedastic", "bounded")

#: the named algorithms: each name's class, kinds, one-line description and default options
ALGORITHMS: dict[str, AlgorithmSpec] = {
    "g-static": AlgorithmSpec("bandits.linear.static:StaticAllocation", "linear",
                              "Soare et al.: G-optimal design, stop by eq. 11", {"design": "g"}),
    "xy-static": AlgorithmSpec("bandits.linear.static:StaticAllocation", "linear",
                               "Soare et al.: XY design on all pairwise differences", {"design": "xy"}),
    "xy-oracle": AlgorithmSpec("bandits.linear.static:StaticAllocation", "linear",
                               "Soare et al.: XY-oracle design at the true theta (H_LB)", {"design": "oracle"}),
    "xy-adaptive": AlgorithmSpec("bandits.linear.adaptive:XYAdaptive", "linear",
                                 "Soare et al.: phased XY with Lemma 4 discards"),
    "xy-fully-adaptive": AlgorithmSpec("bandits.linear.adaptive:FullyAdaptiveXY", "linear",
                                       "Soare et al. Prop. 2: regularised LS, adaptive bound"),
    "rage": AlgorithmSpec("bandits.linear.rage:RAGE", "linear", "Fiez et al.: randomised adaptive gap elimination"),
    "lingape": AlgorithmSpec("bandits.linear.lingape:LinGapE", "linear",
                             "Xu et al. 2018: gap-based exploration, ratio/greedy arm selection, stop at B(t) <= eps; "
                             "m > 1: m-LinGapE (Reda et al. 2021), the m best items"),
    "lingifa": AlgorithmSpec("bandits.linear.lingape:LinGIFA", "linear",
                             "Reda et al. 2021: UGapE indices of the m best items, greedy arm selection, stop at "
                             "max_J B_j(t) <= eps"),
    "alba": AlgorithmSpec("bandits.linear.alba:ALBA", "linear",
                          "Tao et al. 2018: G-design rounds halving the arms, Bernstein elimination"),
    "lin-tas": AlgorithmSpec("bandits.linear.track_and_stop:LinearTrackAndStop", "linear",
                             "Track-and-Stop on the plug-in XY-oracle design, GLRT stop"),
    "mf-tas": AlgorithmSpec("bandits.multiagent.algorithms:MFTaS", "factored",
                            "Vannella et al.: mean-field Track-and-Stop, FCR plug-in, factored GLRT (track-and-stop "
                            "with tracking=C, allocation=mean-field, resolve_growth=0 in the factored batches)",
                            sampler=True),
    "mf-tas-oracle": AlgorithmSpec("bandits.multiagent.algorithms:MFTaSOracle", "factored",
                                   "Vannella et al. §7.1 Oracle: MF-TaS tracking w^MF at the true theta, GLRT stop",
                                   sampler=True),
    "tas": AlgorithmSpec("bandits.multiagent.algorithms:ExactTaS", "factored",
                         "Track-and-Stop on the exact T* (re-solved by constraint generation): "
                         "track-and-stop:tracking=C in the factored batches", sampler=True),
    "uniform": AlgorithmSpec("bandits.multiagent.algorithms:UniformSampling", "factored",
                             "uniform product sampling, same factored GLRT", sampler=True),
    "joint-top-two": AlgorithmSpec("bandits.multiagent.top_two:JointTopTwo", "factored",
                                   "Top-Two over joint actions: leader (EB/TS), exact best response, IDS beta, "
                                   "factored GLRT", sampler=True),
    "joint-fws": AlgorithmSpec("bandits.multiagent.frank_wolfe:JointFrankWolfe", "factored",
                               "Frank-Wolfe sampling over joint actions: near-tied pieces by the Pareto elimination, "
                               "the direction game by column generation over max-sum, factored GLRT", sampler=True),
    "joint-lingame": AlgorithmSpec("bandits.multiagent.lingame:JointLinGame", "factored",
                                   "LinGame over joint actions: AdaHedge as a Gibbs distribution (sum-product) against "
                                   "the exact best response, optimistic gains, C-tracking, factored GLRT",
                                   sampler=True),
    "gk-tas": AlgorithmSpec("bandits.multiagent.mab:GKTrackAndStop", "factored",
                            "Garivier–Kaufmann Track-and-Stop, one agent: the core rule (D/C tracking) on its arms",
                            sampler=True),
    "round-robin": AlgorithmSpec("bandits.pure_exploration.samplers.uniform:RoundRobin", ARM_PULLS,
                                 "uniform sampling (fewest pulls first), GLR stop", sampler=True),
    "oracle-weights": AlgorithmSpec("bandits.pure_exploration.samplers.uniform:FixedWeights", ARM_PULLS,
                                    "tracks w*(mu) of the true parameter (oracle baseline), GLR stop", sampler=True),
    "track-and-stop": AlgorithmSpec("bandits.pure_exploration.samplers.track_and_stop:TrackAndStop", ARM_PULLS,
                                    "Garivier & Kaufmann 2016: C/D-tracking of w*(mu_hat), lazy re-solves, GLR stop; "
                                    "tracking=C also on factored instances, in the factored batches (the exact T* "
                                    "law over joint actions: tas; allocation=mean-field: MF-TaS's)",
                                    sampler=True),
    "top-two": AlgorithmSpec("bandits.pure_exploration.samplers.top_two:TopTwo", PURE_EXPLORATION,
                             "Top-Two (EB/TS/UCB leader, TC/TCI/TS challenger, fixed beta or IDS; on linear "
                             "problems one variance-greedy pull per pair), GLR stop",
                             sampler=True),
    "fws": AlgorithmSpec("bandits.pure_exploration.samplers.frank_wolfe:FrankWolfe", ARM_PULLS,
                         "Wang, Tzeng & Proutiere 2021: Frank-Wolfe sampling (r-subdifferential game), GLR stop; "
                         "steps=batch: lazy steps at N/t, factored instances too (joint-fws)",
                         sampler=True),
    "lingame": AlgorithmSpec("bandits.pure_exploration.samplers.lingame:LinGame", ("karmed", "linear", "factored"),
                             "Degenne et al. 2020: AdaHedge vs best response, optimistic gains, C-tracking, GLR stop",
                             sampler=True),
    "lazy-tas": AlgorithmSpec("bandits.pure_exploration.samplers.lazy_tas:LazyTrackAndStop", ARM_PULLS,
                              "Jedra & Proutiere 2020: Frank-Wolfe targets at powers of two, C-tracking, GLR stop",
                              sampler=True),
    "lingame-c": AlgorithmSpec("bandits.pure_exploration.samplers.lingame_c:LinGameC", ("karmed", "linear"),
                               "Degenne et al. 2020 LinGame-C: one AdaHedge over (answer, arm) pairs, best responses "
                               "for every answer, C-tracking of the pairs, GLR stop", sampler=True),
    "successive-rejects": AlgorithmSpec("bandits.fixed_budget.rules:SuccessiveRejects", ARM_VALUES,
                                        "Audibert, Bubeck & Munos 2010: K - 1 phases, reject the empirically worst "
                                        "arm after each, fixed budget", budget=True),
    "sequential-halving": AlgorithmSpec("bandits.fixed_budget.rules:SequentialHalving", ARM_VALUES,
                                        "Karnin, Koren & Somekh 2013: ceil(log2 K) rounds, keep the better half, "
                                        "fixed budget (reuse)", budget=True),
    "gbb-g-allocation": AlgorithmSpec("bandits.bilinear.algorithms:RandomizedGAllocation", "bilinear",
                                      "Rizk et al. Alg. 2: i.i.d. node arms from mu*, stop by (S1)"),
    "grapl": AlgorithmSpec("bandits.thresholding.algorithms:GrAPL", "thresholding",
                           "LeJeune et al.: graph-Laplacian APT index, fixed budget (gamma, lam, alpha)"),
    "apt": AlgorithmSpec("bandits.thresholding.apt:APT", "thresholding",
                         "Locatelli et al.: anytime parameter-free thresholding, fixed budget (init_pulls)"),
    "random-laplacian": AlgorithmSpec("bandits.thresholding.algorithms:RandomLaplacian", "thresholding",
                                      "uniform random pulls + Laplacian estimator, fixed budget (gamma, lam)"),
}


def algorithm_spec(name: str) -> AlgorithmSpec:
    """The spec of a registered name, of a ``package.module:Class`` path or of an entry-point name.

    Parameters
    ----------
    name : str
        The name (no options).

    Returns
    -------
    AlgorithmSpec
        For a plug-in: its class path, the kinds it runs on (a sampler: every pure-exploration kind, where its
        problem offers what the sampler needs; an Algorithm: its class attribute ``kinds``, every pure-exploration
        kind by default) and its origin.

    Raises
    ------
    InvalidInputError
        An unknown name, or a plug-in that does not import or is not a Sampler or Algorithm subclass.
    """
    if name in ALGORITHMS:
        return ALGORITHMS[name]
    plugins = {} if ":" in name else entry_point_plugins()
    if ":" not in name and name not in plugins:
        raise InvalidInputError(f"unknown algorithm {name!r}; valid names: {', '.join([*ALGORITHMS, *plugins])}, "
                                "or package.module:Class")
    target, origin = (name, "path") if ":" in name else plugins[name]
    plugin = load_plugin(target, origin)
    kinds = PURE_EXPLORATION if plugin.sampler else tuple(getattr(plugin.cls, "kinds", PURE_EXPLORATION))
    return AlgorithmSpec(target, kinds, plugin.summary, sampler=plugin.sampler, origin=origin)


def make_algorithm(text: str, stop: str | None = None) -> Algorithm[Any] | ThresholdingAlgorithm | BudgetRule:
    """An algorithm from ``NAME`` or ``NAME:key=value,...`` (e.g. ``xy-adaptive:alpha=0.2``).

    Parameters
    ----------
    text : str
        A name of :data:`ALGORITHMS` (``bandits list`` prints them), an entry-point name or a
        ``package.module:Class`` path, then options of its class as ``key=value`` pairs separated by commas;
        values are parsed as numbers, booleans or strings.
    stop : str, optional
        The stopping rule (:func:`bandits.pure_exploration.with_stop.parse_stop`): None or ``"own"`` keeps the
        algorithm's own, ``"glr[:threshold=NAME,growth=G]"`` runs it under the GLR stop.

    Returns
    -------
    Algorithm or ThresholdingAlgorithm or BudgetRule
        The configured (immutable) algorithm; ``start`` on an instance gives the policy of one run (a budget rule's
        runs: :func:`bandits.fixed_budget.run_fixed_budget`).

    Raises
    ------
    InvalidInputError
        An unknown name, an unknown option key (the message lists the valid ones), a value the class refuses, or
        a stop the algorithm cannot take (a budget rule takes none).

    Examples
    --------
    >>> from bandits.registry import make_algorithm
    >>> make_algorithm("xy-oracle:variant=fiez").name
    'xy-oracle'
    """
    from .pure_exploration.with_stop import parse_stop, with_stop

    name, options = split_algorithm(text)
    spec = algorithm_spec(name)
    choice = parse_stop(stop)
    factory = resolve(spec.target)
    run_options = {k: options.pop(k) for k in RUN_OPTIONS if spec.sampler and k in options}
    if "glrt" in run_options:
        if "problem" in run_options:
            raise InvalidInputError(f"algorithm {name}: give glrt= or problem=, not both (glrt=MODE is the factored "
                                    "problem's option)")
        run_options["problem"] = resolve("bandits.multiagent.sampling:glrt_problem")(run_options.pop("glrt"))
    check_options(factory, options, f"algorithm {name}" + (f" (also {', '.join(RUN_OPTIONS)})" if spec.sampler
                                                            else ""))
    try:
        algorithm: Algorithm[Any] | ThresholdingAlgorithm | BudgetRule = factory(**{**spec.defaults, **options})
    except TypeError as exc:
        raise InvalidInputError(f"algorithm {name}: {exc}") from None
    if spec.budget:
        if choice is not None:
            raise InvalidInputError(f"algorithm {name} runs to a budget T: it has no stopping rule to replace "
                                    "(--stop is for fixed-confidence runs)")
        return algorithm
    if choice is not None and not spec.sampler and not set(spec.kinds) & set(OWN_STOPS):
        raise InvalidInputError(f"algorithm {name} runs on {' or '.join(spec.kinds)} instances; the GLR stop "
                                f"(--stop glr) replaces the own stops of algorithms on {' and '.join(OWN_STOPS)} ones "
                                "(and takes the threshold of a sampling rule)")
    return with_stop(algorithm, name, choice, run_options if spec.sampler else None)
