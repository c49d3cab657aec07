"""A problem's pulls: the arms one pull observes, the first pass, a learner over the pulls and the pull that best
follows a target.

On K-armed and linear problems a pull is one arm. On a factored problem it is a joint action that observes one group
action per factor (:class:`bandits.multiagent.problem.FactoredProblem`): a learner over the joint actions plays the
marginals of its distribution over the arms, the pull that best follows a target is a max-sum, and an answer (a
joint action) is itself a pull. A rule written with these methods (LinGame, Top-Two) runs on both.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .adahedge import AdaHedge

__all__ = ["Pulls"]


class Pulls:
    """One arm per pull (the defaults); a problem whose pulls observe several arms overrides them (and refuses the
    ``arm_pull`` capability, which comes first in a problem's bases so that it is offered by default)."""

    #: distinct pulls of Top-Two's two sides: 2 (the leader's and the challenger's), 1 where one pull tests the pair
    duel_sides = 2

    @property
    def n_arms(self) -> int:
        """Number K of arms (the problem's)."""
        raise NotImplementedError

    def initial_arms(self) -> np.ndarray:
        """Arms pulled once each before any sampling rule runs (every arm by default).

        Returns
        -------
        numpy.ndarray of int
            Arm indices.
        """
        return np.arange(self.n_arms)

    def initial_pulls(self) -> np.ndarray:
        """Observations per arm of the first pass, before any sampling rule runs: one of every initial arm.

        Returns
        -------
        numpy.ndarray of int, shape (K,)
            Observations per arm.
        """
        pulls = np.zeros(self.n_arms, dtype=np.int64)
        pulls[self.initial_arms()] = 1
        return pulls

    def arm_pull(self, arm: int) -> int:
        """Capability ``arm_pull``: every arm is a pull of its own (a problem whose pulls observe several arms
        refuses it).

        Parameters
        ----------
        arm : int
            An arm.

        Returns
        -------
        int
            The arm.
        """
        return arm

    def exploration_arms(self) -> np.ndarray:
        """Arms whose information identifies the parameter, for forced exploration (every initial arm by default).

        Returns
        -------
        numpy.ndarray of int
            Sorted arm indices.
        """
        return np.sort(self.initial_arms())

    def exploration_pulls(self) -> np.ndarray:
        """The pulls of forced exploration as the arms each observes (one exploration arm each by default).

        Returns
        -------
        numpy.ndarray of int, shape (P, m)
            Row p: the arms pull p observes.
        """
        return self.exploration_arms()[:, None]

    def tracking_batches(self, state: Any) -> Any:  # a SamplerState (sampler.py builds on this module)
        """The batches Track-and-Stop's tracking runs in: here its state itself, since the floor of C-tracking over
        the arms (D-tracking's forced exploration) explores every arm; a problem whose tracked law ranges over pulls
        that observe several arms adds the forced exploration that law lacks.

        Parameters
        ----------
        state : SamplerState
            Track-and-Stop's state on the problem's tracker
            (:meth:`bandits.pure_exploration.samplers.track_and_stop.TrackAndStop.tracked`).

        Returns
        -------
        SamplerState
            ``state``.
        """
        return state

    def learner(self) -> AdaHedge:
        """AdaHedge over the pulls; its ``weights()`` are the marginals of its play over the arms.

        Returns
        -------
        AdaHedge
            A fresh learner over the K arms.
        """
        return AdaHedge(self.n_arms)

    def best_pull(self, scores: np.ndarray) -> int | np.ndarray:
        """The arms observed by the pull of largest total score, argmax over pulls of the sum of its arms' scores.

        Parameters
        ----------
        scores : numpy.ndarray, shape (K,)
            A score per arm (e.g. the cumulative target minus the counts, for C-tracking).

        Returns
        -------
        int or numpy.ndarray of int
            The arm pulled (here: the first argmax), or the distinct arms one pull observes.
        """
        return int(np.argmax(scores))

    def answer_pull(self, answer: int) -> int | np.ndarray:
        """The arms observed by playing an answer (Top-Two plays its leader and challenger): here the arm itself.

        Parameters
        ----------
        answer : int
            An answer of the problem.

        Returns
        -------
        int or numpy.ndarray of int
            The arm, or the distinct arms of the answer's pull.
        """
        return answer

    def duel_pulls(self, leader: int, challenger: int) -> tuple[int | np.ndarray, int | np.ndarray]:
        """The pulls of Top-Two's two sides: the leader's and the challenger's answers (:meth:`answer_pull`); set
        answers pull the arms where the two differ.

        Parameters
        ----------
        leader, challenger : int
            Two answers.

        Returns
        -------
        tuple
            The leader's pull and the challenger's.
        """
        return self.answer_pull(leader), self.answer_pull(challenger)

    def top_two_pulls(self, leader: int, challenger: int,
                      counts: np.ndarray) -> tuple[int | np.ndarray, int | np.ndarray]:
        """The pulls of Top-Two's two sides at the counts: :meth:`duel_pulls` (they do not depend on the counts); a
        problem whose answers are not pulls (linear items) gives one pull that tests the pair, for both sides.

        Parameters
        ----------
        leader, challenger : int
            Two answers.
        counts : numpy.ndarray, shape (K,)
            Observations per arm so far.

        Returns
        -------
        tuple
            The leader's pull and the challenger's.
        """
        return self.duel_pulls(leader, challenger)

    def draw_pulls(self, learner: AdaHedge, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` pulls drawn independently from the learner's distribution, as observations per arm.

        Parameters
        ----------
        learner : AdaHedge
            A learner from :meth:`learner`.
        rng : numpy.random.Generator
            The rule's randomness.
        n : int
            Number of pulls.

        Returns
        -------
        numpy.ndarray of int, shape (K,)
            Observations per arm (expectation n times the learner's marginals).
        """
        return rng.multinomial(n, learner.weights())
