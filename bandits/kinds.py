"""Instance kinds: the one table that says, for each kind of instance, how a run on it goes and is reported.

Every named instance (:data:`bandits.instances.INSTANCES`) and every environment has a kind, and every
algorithm (:data:`bandits.registry.ALGORITHMS`) names the kinds it runs on. The kind decides:

* the run: fixed confidence (:func:`bandits.run.run`, stopped at a confidence level delta) or fixed budget
  (:func:`bandits.thresholding.run_thresholding`, T pulls); K-armed and linear instances also take the fixed-budget
  mode of :func:`bandits.fixed_budget.run_fixed_budget` (the recommendation read at a grid of budgets);
* the pure-exploration problem (:mod:`bandits.pure_exploration`): how it is built from an environment, and whether
  the generic sampling rules and the GLR stop run on it (each rule where the problem offers the capabilities it
  needs: on factored instances a pull is a joint action, so the rules that pick arms do not run there);
* whether ``--stop glr`` can replace the stopping rules of its algorithms that are not sampling rules (every
  factored rule is a sampling rule under the GLR stop already);
* the lower bound a study reports, and the unit it counts in: the problem's own
  (:meth:`bandits.pure_exploration.Problem.lower_bound`), so a kind without a problem reports none;
* the caption of ``bandits run``'s table (what samples and rounds mean).

Importing this module costs nothing: the problems are built on first use
(:func:`bandits.pure_exploration.policy.problem_of`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from optdesign.errors import InvalidInputError

__all__ = ["ARM_PULLS", "KINDS", "OWN_STOPS", "PURE_EXPLORATION", "Kind", "kind_of"]


@dataclass(frozen=True)
class Kind:
    """One kind of instance and the parts that run and report it.

    Parameters
    ----------
    name : str
        The kind's name (``"linear"``, ``"karmed"``, ``"bilinear"``, ``"factored"``, ``"thresholding"``).
    summary : str
        One line: what an instance of the kind is.
    budgeted : bool
        Runs have a fixed budget T (thresholding) instead of a confidence level delta.
    problem : bool
        The kind has a pure-exploration problem (:func:`bandits.pure_exploration.problem_of` builds it).
    samplers : bool
        The generic sampling rules run on the kind under the GLR stop (those whose capabilities its problem offers).
    own_stops : bool
        Its algorithms have stopping rules of their own, which ``--stop glr`` may replace by the GLR stop.
    caption : str or None
        The caption of ``bandits run``'s table: what samples and rounds count (None: they coincide).
    problem_class : str
        ``package.module:Class`` of its problem (pure-exploration kinds): a rule whose options need less than its
        defaults runs on every kind whose problem offers what it needs (:meth:`offers`).
    """

    name: str
    summary: str
    budgeted: bool = False
    problem: bool = False
    samplers: bool = False
    own_stops: bool = False
    caption: str | None = None
    problem_class: str = ""

    @property
    def pure_exploration(self) -> bool:
        """The generic sampling rules and the GLR stop run on the kind."""
        return self.samplers and self.problem

    def offers(self, needs: Iterable[str]) -> bool:
        """Whether the kind's problem offers every capability named (False for a kind without a problem class).

        Parameters
        ----------
        needs : iterable of str
            Capabilities (:data:`bandits.pure_exploration.capabilities.CAPABILITIES`).

        Returns
        -------
        bool
            True when a rule needing them runs on the kind.
        """
        if not self.problem_class:
            return False
        from .core.entries import load_object  # on first use: the problems load scipy
        from .pure_exploration.capabilities import offered

        return set(needs) <= offered(load_object(self.problem_class, "problem class"))

    def characteristic_time(self, env: Any) -> dict[str, Any] | None:
        """The characteristic time of an environment of this kind at its true parameter, as its problem gives it
        (:meth:`bandits.pure_exploration.Problem.lower_bound`), or None for a kind without a problem.

        Parameters
        ----------
        env : object
            An environment of this kind.

        Returns
        -------
        dict or None
            ``{"kind", "value", "unit"}`` as :func:`bandits.studies.bounds.characteristic_time` documents.
        """
        if not self.problem:
            return None
        from .pure_exploration.policy import problem_of  # on first use: the problems load scipy

        problem = problem_of(env)
        return dict(problem.lower_bound(problem.true_parameter(env)))


#: the package of the built-in problems
_PE = "bandits.pure_exploration"

#: every kind of instance by name: how its runs go and are reported
KINDS: dict[str, Kind] = {
    "karmed": Kind("karmed", "K arms of one exponential family (Gaussian, Bernoulli, Poisson, exponential): "
                   "the best arm, the top m, ...",
                   problem=True, samplers=True, own_stops=True, problem_class=f"{_PE}.karmed:KArmedProblem"),
    "linear": Kind("linear", "linear and transductive bandits: pull x in X, identify the best z in Z",
                   problem=True, samplers=True, own_stops=True, problem_class=f"{_PE}.linear:LinearProblem"),
    "heteroscedastic": Kind("heteroscedastic", "Gaussian arms of unequal variances, known to the learner or not: "
                            "the best arm", problem=True, samplers=True,
                            problem_class=f"{_PE}.heteroscedastic:HeteroscedasticProblem"),
    "bounded": Kind("bounded", "arms with rewards in [0, 1], nothing else known to the learner (KL_inf): the best arm",
                    problem=True, samplers=True, problem_class=f"{_PE}.bounded:BoundedProblem"),
    "bilinear": Kind("bilinear", "graphical bilinear bandits: node arms, edge rewards x^T M x'",
                     caption="samples: edge observations; rounds: graph rounds"),
    "factored": Kind("factored", "multi-agent bandits on a factor graph: joint actions, factor rewards",
                     problem=True, samplers=True, problem_class="bandits.multiagent.problem:FactoredProblem",
                     caption="samples: observations (rho per round); rounds: joint actions played"),
    "thresholding": Kind("thresholding", "graph thresholding: classify every node's mean against a threshold",
                         budgeted=True),
}

#: the kinds the generic sampling rules and the GLR stop run on
PURE_EXPLORATION: tuple[str, ...] = tuple(name for name, kind in KINDS.items() if kind.pure_exploration)
#: the kinds whose picking rules (one arm per pull) run there: every pure-exploration kind but the factored one
ARM_PULLS: tuple[str, ...] = ("karmed", "linear", "heteroscedastic", "bounded")
#: the kinds where ``--stop glr`` replaces an algorithm's own stopping rule
OWN_STOPS: tuple[str, ...] = tuple(name for name, kind in KINDS.items() if kind.own_stops)


def kind_of(name: str) -> Kind:
    """The kind of that name.

    Parameters
    ----------
    name : str
        A key of :data:`KINDS`.

    Returns
    -------
    Kind
        Its entry.

    Raises
    ------
    InvalidInputError
        An unknown kind (the message lists the valid ones).
    """
    if name not in KINDS:
        raise InvalidInputError(f"unknown instance kind {name!r}; valid kinds: {', '.join(KINDS)}")
    return KINDS[name]
