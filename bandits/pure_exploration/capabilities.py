"""Capabilities: the optional problem methods a sampling rule may ask for, beyond the pieces every problem gives.

A sampling rule names what it needs (:meth:`bandits.pure_exploration.sampler.Sampler.requires`); a problem offers
a capability when its class defines the method of that name (:class:`Capabilities`, a base of every
:class:`bandits.pure_exploration.problem.Problem`, declares each one and refuses by default). So a rule never tests
a problem's class: it runs on every problem that offers what it needs, and a problem that lacks one is refused
before the run in one message naming both (:func:`bandits.pure_exploration.requirements.require`).

What a problem can derive from its pieces needs no capability: the best response, the transportation costs of
the estimate's answer, the arms of forced exploration (:meth:`~bandits.pure_exploration.Problem.exploration_arms`,
every arm by default).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import numpy as np

from optdesign import shared_doc
from optdesign.errors import InvalidInputError

from .allocation_tracker import ArmTracker, OracleSource, Tracker
from .fw_directions import ArmDirections, Directions
from .optimism import Optimism

if TYPE_CHECKING:
    from optdesign import FactorGraph

    from .design_inverse import DesignInverse

__all__ = ["CAPABILITIES", "DERIVED", "Capabilities", "MissingCapability", "Optimism", "offered"]

#: every capability a rule may ask for: the problem method's name and what it gives
CAPABILITIES: dict[str, str] = {
    "arm_pull": "a pull of every arm alone (K-armed and linear problems; a factored pull is a joint action)",
    "optimism": "optimistic gains of a best response over a confidence region (LinGame's learner)",
    "pair_costs": "answers that are arms, as on K-armed problems only so far, and a leader's transportation costs",
    "challenger": "the transportation-cost challenger of a leader answer (from pair_costs when offered)",
    "penalised_challenger": "the challenger of least transportation cost plus the log of its piece's effective count "
                            "(TCI; from pair_costs when offered)",
    "pair_share": "the leader's share of the information of a leader-challenger pair (information-directed beta)",
    "posterior_draws": "draws of the parameter from a posterior (Thompson-sampling leaders and challengers)",
    "upper_indices": "upper confidence indices of the arms (UCB leaders)",
    "design_inverse": "an incremental design inverse along a Frank-Wolfe path, on linear problems only so far",
    "fw_directions": "the Frank-Wolfe directions of batched FWS over the pulls (from arm_pull: the game over the arms)",
    "allocation_tracker": "Track-and-Stop's target and how pulls follow it (from arm_pull: the oracle's weights, "
                          "C- or D-tracked over the arms)",
    "factor_graph": "a factor graph of joint actions (the covering set, forced exploration and joint draws of the "
                    "factored rules)",
}

#: capabilities whose default is derived from another one the problem offers
DERIVED = {"challenger": "pair_costs", "penalised_challenger": "pair_costs", "fw_directions": "arm_pull",
           "allocation_tracker": "arm_pull"}


#: the parameters, result and refusal of the two challenger capabilities (their docstrings share them)
_challenger_doc = shared_doc({"challenger": """Parameters
        ----------
        mu : numpy.ndarray
            The estimate.
        counts : numpy.ndarray
            Pulls per arm.
        leader : int
            The leader answer B.

        Returns
        -------
        int or None
            The challenger (None when B has no alternative).

        Raises
        ------
        MissingCapability
            The problem offers neither this nor ``pair_costs`` (the refusal names ``pair_costs``)."""})


#: the refusal of a capability whose default is derived from ``arm_pull`` (their docstrings share it)
_from_arm_pull_doc = shared_doc({"from_arm_pull": """Raises
        ------
        MissingCapability
            The problem offers neither this nor ``arm_pull`` (the refusal names ``arm_pull``)."""})


class MissingCapability(InvalidInputError):
    """A problem asked for a capability it does not offer.

    Parameters
    ----------
    problem : object
        The problem.
    capability : str
        A key of :data:`CAPABILITIES`.
    rule : str, optional
        The sampling rule that needs it (named first in the message).
    others : str, optional
        The problem classes that offer it (named last).
    """

    def __init__(self, problem: object, capability: str, rule: str = "", others: str = "") -> None:
        what = f"{capability} ({CAPABILITIES[capability]})"
        head = f"{rule} needs {what}, which {type(problem).__name__} does not offer" if rule else \
            f"{type(problem).__name__} does not offer {what}"
        super().__init__(head + (f" (offered by {others})" if others else ""))


class Capabilities:
    """The optional methods of a problem, one per key of :data:`CAPABILITIES`; each refuses by default."""

    def withheld(self) -> frozenset[str]:
        """Capabilities the class defines that this instance cannot give (e.g. its family has no posterior).

        Returns
        -------
        frozenset of str
            Keys of :data:`CAPABILITIES` (none by default).
        """
        return frozenset()

    def arm_pull(self, arm: int) -> int:
        """Capability ``arm_pull``: the pull that observes ``arm`` alone (rules that pick arms need it).

        Parameters
        ----------
        arm : int
            An arm.

        Returns
        -------
        int
            The pull (the arm itself).

        Raises
        ------
        MissingCapability
            The problem's pulls observe several arms at once.
        """
        raise MissingCapability(self, "arm_pull")

    def optimism(self, mu: np.ndarray, counts: np.ndarray, c: float) -> Optimism:
        """Capability ``optimism``: LinGame's optimistic gains at the estimate, for confidence level c = c_t.

        Parameters
        ----------
        mu : numpy.ndarray
            The estimate.
        counts : numpy.ndarray
            Pulls per arm (the confidence region's sizes).
        c : float
            The exploration level c_t (log t in LinGame's code).

        Returns
        -------
        Optimism
            Gains of the best response to a play, and at the estimate.

        Raises
        ------
        MissingCapability
            The problem does not offer it.
        """
        raise MissingCapability(self, "optimism")

    def pair_costs(self, mu: np.ndarray, counts: np.ndarray, leader: int) -> np.ndarray:
        """Capability ``pair_costs``: W_B,j, the GLR of "the leader arm B beats arm j" at the counts, for every arm.

        Parameters
        ----------
        mu : numpy.ndarray
            The estimate.
        counts : numpy.ndarray
            Pulls (or weights) per arm.
        leader : int
            The arm B.

        Returns
        -------
        numpy.ndarray, shape (K,)
            The costs, inf at the leader.

        Raises
        ------
        MissingCapability
            The problem does not offer it.
        """
        raise MissingCapability(self, "pair_costs")

    @_challenger_doc
    def challenger(self, mu: np.ndarray, counts: np.ndarray, leader: int) -> int | None:
        """Capability ``challenger``: the answer C != B of least transportation cost from the leader B at the counts,
        argmin_j W_B,j (by default from :meth:`pair_costs`; a problem whose answers are not arms gives its own).

        %(challenger)s
        """
        return int(np.argmin(self.pair_costs(mu, counts, leader)))

    @_challenger_doc
    def penalised_challenger(self, mu: np.ndarray, counts: np.ndarray, leader: int) -> int | None:
        """Capability ``penalised_challenger``: argmin_j W_B,j + log n_j, the transportation cost plus the log of the
        piece's effective count (EB-TCI, Jourdan et al. 2022: n_j = N_j, by default from :meth:`pair_costs`; on other
        questions the information the piece's direction has received), so that a piece whose arms are pulled less
        is tested in time.

        %(challenger)s
        """
        with np.errstate(divide="ignore"):
            return int(np.argmin(self.pair_costs(mu, counts, leader) + np.log(counts)))

    def pair_share(self, mu: np.ndarray, counts: np.ndarray, leader: int, challenger: int) -> float:
        """Capability ``pair_share``: the leader's share of the pair's information, N_B d(mu_B, m) / W_B,C.

        Parameters
        ----------
        mu : numpy.ndarray
            The estimate.
        counts : numpy.ndarray
            Pulls per arm.
        leader, challenger : int
            The arms B and C.

        Returns
        -------
        float
            A number in [0, 1] (1/2 when the pair carries no information).

        Raises
        ------
        MissingCapability
            The problem does not offer it.
        """
        raise MissingCapability(self, "pair_share")

    def posterior_draws(self, mu: np.ndarray, counts: np.ndarray, sums: np.ndarray, size: int,
                        rng: np.random.Generator) -> np.ndarray:
        """Capability ``posterior_draws``: draws of the parameter from its posterior given the statistics.

        Parameters
        ----------
        mu : numpy.ndarray
            The estimate.
        counts, sums : numpy.ndarray
            Pulls and reward sums per arm.
        size : int
            Number of draws.
        rng : numpy.random.Generator
            The rule's randomness.

        Returns
        -------
        numpy.ndarray, shape (size, dim)
            One parameter per row.

        Raises
        ------
        MissingCapability
            The problem does not offer it.
        """
        raise MissingCapability(self, "posterior_draws")

    def upper_indices(self, mu: np.ndarray, counts: np.ndarray, level: float) -> np.ndarray:
        """Capability ``upper_indices``: U_k = max{q >= mu_k : N_k d(mu_k, q) <= level} for every arm.

        Parameters
        ----------
        mu : numpy.ndarray
            The estimate.
        counts : numpy.ndarray
            Pulls per arm.
        level : float
            The exploration level (log t for TTUCB).

        Returns
        -------
        numpy.ndarray, shape (K,)
            The indices.

        Raises
        ------
        MissingCapability
            The problem does not offer it.
        """
        raise MissingCapability(self, "upper_indices")

    def design_inverse(self, x: np.ndarray, *, published: bool, refresh: int) -> DesignInverse:
        """Capability ``design_inverse``: the pieces along a Frank–Wolfe path by an incremental design inverse.

        Parameters
        ----------
        x : numpy.ndarray, shape (K,)
            The path's starting iterate.
        published : bool
            Follow the published FWS code's update (reproductions only).
        refresh : int
            Steps between exact recomputations.

        Returns
        -------
        DesignInverse
            The path's inverse (:mod:`bandits.pure_exploration.design_inverse`).

        Raises
        ------
        MissingCapability
            The problem does not offer it.
        """
        raise MissingCapability(self, "design_inverse")

    @_from_arm_pull_doc
    def fw_directions(self, *, slack: float, limit: int, search_growth: float, game: str) -> Directions:
        """Capability ``fw_directions``: the Frank–Wolfe directions of one batched FWS run (by default, on a problem
        offering ``arm_pull``, the pieces listed at w = N / t and the game over the arms).

        Parameters
        ----------
        slack, limit : float, int
            The near-tied pieces: at most ``limit`` (>= 1) with f_i <= (1 + slack) F (slack >= 0).
        search_growth, game : float, str
            The growth of t between full searches where pieces are searched; the game's solver.

        Returns
        -------
        Directions
            The run's directions (:mod:`bandits.pure_exploration.fw_directions`).

        %(from_arm_pull)s
        """
        self._derive_from_arm_pull()
        return ArmDirections(slack, limit, game)

    @_from_arm_pull_doc
    def allocation_tracker(self, *, tracking: str, tol: float | None, rng: np.random.Generator,
                           allocation: str = "exact") -> Tracker:
        """Capability ``allocation_tracker``: the target of one Track-and-Stop run and how its pulls follow it (by
        default, on a problem offering ``arm_pull``, the oracle's weights C- or D-tracked over the arms).

        Parameters
        ----------
        tracking, tol : str, float or None
            The tracking rule (``"C"`` or ``"D"``); the oracle's certified relative gap (None: its default).
        allocation : str
            ``"exact"`` (the oracle's) or ``"mean-field"`` (a factored problem's T^MF program).
        rng : numpy.random.Generator
            The run's randomness (for a tracker that draws its pulls).

        Returns
        -------
        Tracker
            The run's tracker (:mod:`bandits.pure_exploration.allocation_tracker`).

        %(from_arm_pull)s
        """
        self._derive_from_arm_pull()
        return ArmTracker(cast(OracleSource, self), tracking, tol, allocation)

    def _derive_from_arm_pull(self) -> None:
        """Refuse a default derived from ``arm_pull`` on a problem that does not offer it."""
        if "arm_pull" not in offered(self):
            raise MissingCapability(self, "arm_pull")

    def factor_graph(self) -> FactorGraph:
        """Capability ``factor_graph``: the agents, action counts and scopes of a factored problem's joint actions.

        Returns
        -------
        optdesign.FactorGraph
            The structure (its mean tables are not read).

        Raises
        ------
        MissingCapability
            The problem's pulls are not joint actions.
        """
        raise MissingCapability(self, "factor_graph")


def offered(problem: Capabilities | type[Capabilities]) -> frozenset[str]:
    """The capabilities a problem offers: those whose method its class defines (and, for a family-dependent one,
    whose family supports it: :meth:`Capabilities.withheld`), and those :data:`DERIVED` from one of them.

    Parameters
    ----------
    problem : Problem
        The problem (an instance or its class).

    Returns
    -------
    frozenset of str
        Keys of :data:`CAPABILITIES`.
    """
    cls = problem if isinstance(problem, type) else type(problem)
    names = {name for name in CAPABILITIES if getattr(cls, name) is not getattr(Capabilities, name)}
    if not isinstance(problem, type):
        names -= problem.withheld()
    return frozenset(names | {name for name, source in DERIVED.items() if source in names})
