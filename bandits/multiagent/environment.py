"""Multi-agent bandits with a factored mean reward and semi-bandit Gaussian feedback (MF-TaS §3).

N agents, factor e with scope S_e and mean table theta_e (an :class:`optdesign.FactorGraph`). Playing the
joint action a = (a_1..a_N) returns one observation r_e ~ N(theta_e(a_e), sigma^2) for EVERY factor e,
independent across factors and rounds; the global mean is theta(a) = sum_e theta_e(a_e).

Batch interface (what :func:`bandits.run.run` drives). The runner's "arms" are the Abar group actions
(e, b), flattened in :attr:`optdesign.FactorGraph.means` order (factor by factor, each table in C order
over its scope), as the bilinear environment's arms are edge arms:

* a policy turns the joint actions of a batch into group counts N_{e,b} with
  :meth:`~bandits.multiagent.joint_actions.GroupIndexer.counts` (one vectorised gather and one ``np.bincount``);
* ``pull(counts, rng)`` returns, for every (e, b), the sum of its ``counts[e, b]`` observations in one
  Gaussian draw, counts * theta_e(b) + sigma sqrt(counts) xi. This is exact in law: the observations of
  (e, b) are i.i.d. N(theta_e(b), sigma^2) whatever joint actions produced them, and distinct (e, b) are
  independent. A batch of n plays of one joint action adds n to N_{e, a_e} for every e.

One round therefore yields rho observations: the runner's ``samples`` counts observations, and the
policies report ``rounds`` (joint actions played, the paper's tau). ``best_item`` is the best joint
action a* (unique: ties raise InvalidInputError from optdesign) encoded as a Python ``int`` in mixed
radix (agent 0 most significant, as ``np.ravel_multi_index`` in C order; exact for any N, e.g. 3^50),
so the runner can compare it with a policy's recommendation; :meth:`FactoredBandit.decode` turns a
code back into the joint action.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from optdesign import FactorGraph
from optdesign.errors import InvalidInputError
from optdesign.validation import count_text

from ..core.environments import as_counts, check_sigma, gaussian_sums
from .joint_actions import GroupIndexer, decode, encode_joint
from .problem import FactoredProblem

__all__ = ["FactoredBandit"]


def structure_of(fg: FactorGraph) -> FactorGraph:
    """The learner's view of ``fg``: same agents, actions and scopes, all-zero mean tables."""
    return FactorGraph(fg.n_actions, [(s, np.zeros(t.shape)) for s, t in zip(fg.scopes, fg.tables, strict=True)],
                       metadata={"structure_of": fg.metadata.get("generator", "factor graph")})


@dataclass(frozen=True, eq=False)
class FactoredBandit:
    """Multi-agent bandit with semi-bandit Gaussian feedback per factor (see the module docstring).

    A learner may read ``structure`` (agents, actions, scopes; zero tables), ``indexer``, ``sigma``,
    ``n_agents``/``n_factors``/``n_arms``; only oracle algorithms read ``fg`` (the true means).

    Raises
    ------
    InvalidInputError
        ``fg`` is not a FactorGraph, its best joint action is not unique, or sigma is not positive.
    """

    #: the instance: agents, action counts, scopes and the true mean tables theta_e
    fg: FactorGraph
    #: standard deviation of the Gaussian noise of every factor observation
    sigma: float = 1.0
    #: label in result tables
    name: str = "factored"
    #: the instance kind (:data:`bandits.kinds.KINDS`)
    kind: ClassVar[str] = "factored"
    #: a*, the best joint action (N,)
    best_action: np.ndarray = field(init=False)
    #: the code of a* (:func:`~bandits.multiagent.joint_actions.encode_joint`)
    best_item: int = field(init=False)
    #: Delta_min, the gap between a* and the second-best joint action
    gap_min: float = field(init=False)
    #: the learner's view: ``fg`` with all-zero tables
    structure: FactorGraph = field(init=False)
    #: the batch indexer of the group actions
    indexer: GroupIndexer = field(init=False)

    def __post_init__(self) -> None:
        if not isinstance(self.fg, FactorGraph):
            raise InvalidInputError(f"fg must be an optdesign FactorGraph, got {type(self.fg).__name__}")
        gap = self.fg.gap_min()  # raises InvalidInputError when the best joint action is not unique
        best = self.fg.best_action()
        object.__setattr__(self, "sigma", check_sigma(self.sigma))
        object.__setattr__(self, "best_action", best)
        object.__setattr__(self, "best_item", encode_joint(best, self.fg.n_actions))
        object.__setattr__(self, "gap_min", float(gap))
        object.__setattr__(self, "structure", structure_of(self.fg))
        object.__setattr__(self, "indexer", GroupIndexer(self.fg))

    @property
    def n_arms(self) -> int:
        """Abar, the number of group actions (the length of ``pull``'s counts)."""
        return self.fg.abar

    @property
    def n_agents(self) -> int:
        """N, the number of agents."""
        return self.fg.n_agents

    @property
    def n_factors(self) -> int:
        """rho: observations per round."""
        return self.fg.n_factors

    @property
    def means(self) -> np.ndarray:
        """theta_e(b) for every group action, flat (the arms of ``pull``)."""
        return self.fg.means

    def problem(self) -> FactoredProblem:
        """The pure-exploration problem a learner faces here: the structure and the noise level (not the tables).

        Returns
        -------
        FactoredProblem
            :meth:`bandits.multiagent.problem.FactoredProblem.of_environment`.
        """
        return FactoredProblem.of_environment(self)

    def encode(self, action: npt.ArrayLike) -> int:
        """The code of a joint action (:func:`.joint_actions.encode_joint`), after checking it.

        Parameters
        ----------
        action : array_like of int, shape (N,)
            The joint action.

        Returns
        -------
        int
            Its index among all joint actions in C order (comparable with ``best_item``).

        Raises
        ------
        InvalidInputError
            Wrong shape, non-integer entries or an action out of range.
        """
        return encode_joint(self.indexer.check(action)[0], self.fg.n_actions)

    def decode(self, code: int) -> npt.NDArray[np.int64]:
        """The joint action of a code, e.g. of a run's recommendation (:func:`.joint_actions.decode`).

        Parameters
        ----------
        code : int
            Index of a joint action in C order.

        Returns
        -------
        ndarray of int64, shape (N,)
            The joint action.

        Raises
        ------
        InvalidInputError
            ``code`` out of range.
        """
        return decode(code, self.fg.n_actions)

    def group_counts(self, actions: npt.ArrayLike, reps: npt.ArrayLike | None = None) -> npt.NDArray[np.int64]:
        """Counts N_{e,b} of the joint actions ``actions`` (R x N), row r played ``reps[r]`` times.

        Parameters
        ----------
        actions : array_like of int, shape (R, N) or (N,)
            Joint actions.
        reps : array_like of int, shape (R,), optional
            Nonnegative plays of every row; None plays each once.

        Returns
        -------
        ndarray of int64, shape (Abar,)
            The counts ``pull`` takes.

        Raises
        ------
        InvalidInputError
            Bad actions, or reps of the wrong shape, negative or not integers.
        """
        a = self.indexer.check(actions)
        if reps is not None:
            reps = as_counts(reps, a.shape[0])
        return self.indexer.counts(a, reps)

    def pull(self, counts: npt.ArrayLike, rng: np.random.Generator) -> npt.NDArray[np.float64]:
        """Observation sums of a batch of group counts, one Gaussian draw per (e, b) (module docstring).

        Parameters
        ----------
        counts : array_like of int, shape (Abar,)
            Observations N_{e,b} of every group action in the batch (:meth:`group_counts`).
        rng : numpy.random.Generator
            Source of the noise.

        Returns
        -------
        ndarray, shape (Abar,)
            Sum of the observations of every group action (0 where its count is 0).

        Raises
        ------
        InvalidInputError
            Counts of the wrong shape, negative or not integers.
        """
        return gaussian_sums(self.means, as_counts(counts, self.n_arms), self.sigma, rng)

    def play(self, actions: npt.ArrayLike, rng: np.random.Generator) -> npt.NDArray[np.float64]:
        """Per-round, per-factor noisy rewards (R x rho) of the joint actions (R x N): the plain
        simulator, one Gaussian per observation (for checks and small runs).

        Parameters
        ----------
        actions : array_like of int, shape (R, N) or (N,)
            Joint actions, one per round.
        rng : numpy.random.Generator
            Source of the noise.

        Returns
        -------
        ndarray, shape (R, rho)
            Entry (r, e) is theta_e(a_{r, S_e}) + sigma xi.

        Raises
        ------
        InvalidInputError
            Wrong shape, non-integer entries or an action out of range.
        """
        a = self.indexer.check(actions)
        mean = self.means[self.indexer.flat(a)]
        return mean + self.sigma * rng.standard_normal(mean.shape)

    def describe(self) -> dict[str, Any]:
        """The instance's summary for result tables (name, N, factors, Abar, joint actions, sigma, gap_min).

        Returns
        -------
        dict
            JSON-ready values keyed by those names (the joint-action count as text).
        """
        return {"name": self.name, "N": self.n_agents, "factors": self.n_factors, "Abar": self.n_arms,
                "joint_actions": count_text(self.fg.n_joint_actions), "sigma": self.sigma, "gap_min": self.gap_min}
