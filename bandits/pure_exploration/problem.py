"""The pure-exploration problem interface: what every sampling and stopping rule asks of a structure.

A problem fixes the arms one may pull, the answers one may give (the best item) and the model of the means.
For weights (or counts) w over the arms and a parameter mu, the *alternatives* to the answer i*(mu) split
into pieces, one per other answer j, each with its closest alternative lambda_j. The value of piece j is the
information w collects against it,

    f_j(w) = sum_k w_k d(mu_k, lambda_j,k)        (the envelope theorem: linear in w at fixed lambda_j),

so F(w) = min_j f_j(w) is the characteristic function of the problem: its maximum over the simplex is
1 / T*(mu) (Garivier & Kaufmann 2016, Thm 1: E[tau] >= T*(mu) kl(delta, 1 - delta)), its value at the
counts N is the generalized likelihood ratio (GLR) statistic of the stopping rule, and the gradients
(d(mu_k, lambda_j,k))_k of the near-minimal pieces are what Frank–Wolfe sampling (Wang, Tzeng & Proutiere,
NeurIPS 2021) and LinGame (Degenne, Ménard, Shang & Valko, ICML 2020) follow. The piece attaining the
minimum is the *best response* (the challenger of the Top-Two rules).

Implementations: :class:`bandits.pure_exploration.karmed.KArmedProblem` (one-parameter exponential
families) and :class:`bandits.pure_exploration.linear.LinearProblem` (linear and transductive).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

import numpy as np

from optdesign.errors import InvalidInputError

from .capabilities import Capabilities
from .clock import Clock
from .oracle import Oracle
from .pieces import GLRStatistic, Pieces
from .pulls import Pulls
from .values import Values

if TYPE_CHECKING:
    from ..core.thresholds import ThresholdContext
    from .families import ExponentialFamily

__all__ = ["Problem"]


class Problem(Pulls, Capabilities, Clock, Values, ABC):
    """A pure-exploration problem: arms, answers, the estimate, the pieces of the alternative, the oracle.

    Counts and reward sums per arm are the sufficient statistics every problem here estimates from. The optional
    methods sampling rules may ask for are :class:`bandits.pure_exploration.capabilities.Capabilities`; how its runs
    are timed, :class:`bandits.pure_exploration.clock.Clock`; what a pull observes,
    :class:`bandits.pure_exploration.pulls.Pulls`; the value of an answer (the simple regret),
    :class:`bandits.pure_exploration.values.Values`.
    """

    #: the instance kind the problem is for (a key of :data:`bandits.kinds.KINDS`: ``karmed``, ``linear``)
    kind: str = ""
    #: the arms' one-parameter exponential family (None when the arms are not one family's, e.g. linear arms)
    family: ExponentialFamily | None = None
    #: reward moments a batch reports per arm: 1, the sums (shape (K,)); 2, the sums and sums of squares (shape (K, 2))
    moments: int = 1
    #: whether the challenger, the best response and the optimistic gains are optdesign searches over the answers
    #: (a factored problem's eliminations over joint actions), whose time the rules that call them count as solve time
    searches_solve: bool = False

    @classmethod
    def of_environment(cls, env: Any) -> Problem:
        """The problem a learner faces on an instance: what it may know of it (never its true parameter).

        The built-in problems and any plug-in problem (``problem=package.module:Class`` of a sampling rule)
        are built from the environment this way.

        Parameters
        ----------
        env : object
            An environment of the problem's kind.

        Returns
        -------
        Problem
            The problem.

        Raises
        ------
        InvalidInputError
            The class does not say how to build itself from an environment.
        """
        raise InvalidInputError(f"{cls.__name__} does not define of_environment(env), so it cannot be built from "
                                "an instance")

    @property
    @abstractmethod
    def n_arms(self) -> int:
        """Number K of arms one can pull."""

    @property
    @abstractmethod
    def n_answers(self) -> int:
        """Number of possible answers (items)."""

    @abstractmethod
    def estimate(self, counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
        """The maximum-likelihood parameter from counts and reward sums.

        Parameters
        ----------
        counts : numpy.ndarray of int, shape (K,)
            Pulls per arm (enough to identify the parameter: every arm, or arms spanning the space).
        sums : numpy.ndarray, shape (K,)
            Reward sums per arm.

        Returns
        -------
        numpy.ndarray
            The estimate mu_hat (means per arm, or theta_hat for a linear problem).
        """

    @abstractmethod
    def answer(self, mu: np.ndarray) -> int:
        """The correct answer i*(mu) (the best item; the first one on a tie).

        Parameters
        ----------
        mu : numpy.ndarray
            A parameter.

        Returns
        -------
        int
            Index of the answer.
        """

    def correct(self, answer: int, mu: np.ndarray) -> bool:
        """Whether ``answer`` is correct at ``mu`` (the runner and studies score a recommendation with it): here, the
        answer :meth:`answer` gives; a problem with several correct answers overrides it.

        Parameters
        ----------
        answer : int
            A recommended answer.
        mu : numpy.ndarray
            The true parameter.

        Returns
        -------
        bool
            True when ``answer`` is a correct answer at ``mu``.
        """
        return int(answer) == int(self.answer(mu))

    def describe_answer(self, answer: int) -> str:
        """An answer as a user reads it in tables (here its index).

        Parameters
        ----------
        answer : int
            An answer.

        Returns
        -------
        str
            Its text.
        """
        return str(int(answer))

    @abstractmethod
    def pieces(self, mu: np.ndarray, w: np.ndarray, *, gradients: bool = True) -> Pieces:
        """The alternative pieces at (mu, w): each other answer's closest alternative and its information.

        Parameters
        ----------
        mu : numpy.ndarray
            A parameter (its answer is :meth:`answer`).
        w : numpy.ndarray, shape (K,)
            Weights or counts over the arms (nonnegative; the values are homogeneous of degree one in w).
        gradients : bool
            Also return the per-arm divergences (the pieces' gradients in w).

        Returns
        -------
        Pieces
            Values, answers and (optionally) gradients of the pieces.

        Raises
        ------
        InvalidInputError
            A parameter or weights of the wrong shape (checked by shape only, for speed).
        """

    @abstractmethod
    def oracle(self, mu: np.ndarray) -> Oracle:
        """T*(mu) and w*(mu): the characteristic time and the optimal proportions.

        Parameters
        ----------
        mu : numpy.ndarray
            A parameter with a unique answer.

        Returns
        -------
        Oracle
            The characteristic time in Garivier & Kaufmann's convention and the optimal weights.

        Raises
        ------
        InvalidInputError
            A parameter of the wrong length, with NaN or infinite entries, outside the family's mean space, or
            with a tie for the best answer.
        """

    def true_parameter(self, env: Any) -> np.ndarray:
        """The parameter mu of an environment this problem models, read to score a run and report its lower bound
        (a sampling rule never sees it).

        Parameters
        ----------
        env : object
            An environment of the problem's kind.

        Returns
        -------
        numpy.ndarray
            Its parameter, checked (:meth:`check_parameter`).

        Raises
        ------
        InvalidInputError
            The problem does not say where an environment keeps its parameter, or the environment has none.
        """
        raise InvalidInputError(f"{type(self).__name__} does not say where an environment keeps its true parameter "
                                f"(override true_parameter)")

    def lower_bound(self, mu: np.ndarray) -> dict[str, Any]:
        """The constant c of the sample-complexity lower bound E[tau] >= c kl(delta, 1 - delta) at ``mu``, as a
        study reports it: by default the oracle's T*(mu) in samples (Garivier & Kaufmann 2016, Thm 1).

        Parameters
        ----------
        mu : numpy.ndarray
            The true parameter.

        Returns
        -------
        dict
            ``{"kind": how c was obtained (e.g. "T*"), "value": c, "unit": "samples" or "rounds"}``.
        """
        return {"kind": "T*", "value": float(self.oracle(mu).T), "unit": "samples"}

    @property
    def dim(self) -> int:
        """Length of a parameter: the number of arms (K-armed) or the dimension d (linear)."""
        return self.n_arms

    def check_parameter(self, mu: np.ndarray) -> np.ndarray:
        """A parameter, checked: finite, of length :attr:`dim` (what :meth:`oracle` is given).

        Parameters
        ----------
        mu : array_like
            The parameter.

        Returns
        -------
        numpy.ndarray
            It as a float vector.

        Raises
        ------
        InvalidInputError
            A wrong length or a NaN or infinite entry.
        """
        arr = np.asarray(mu, dtype=float)
        if arr.shape != (self.dim,):
            raise InvalidInputError(f"the parameter must have length {self.dim}, got shape {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise InvalidInputError("the parameter has NaN or infinite entries")
        return arr

    def check_weights(self, w: np.ndarray) -> np.ndarray:
        """Weights over the arms, checked cheaply (the shape only: :meth:`pieces` runs at every step).

        Parameters
        ----------
        w : array_like
            Weights or counts, one per arm.

        Returns
        -------
        numpy.ndarray
            They as an array.

        Raises
        ------
        InvalidInputError
            Not one weight per arm.
        """
        arr = np.asarray(w)
        if arr.shape != (self.n_arms,):
            raise InvalidInputError(f"the weights must have shape ({self.n_arms},), got {arr.shape}")
        return arr

    def check_shapes(self, mu: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A parameter and weights for :meth:`pieces`, checked by shape only (it runs at every step).

        Parameters
        ----------
        mu : array_like
            The parameter (length :attr:`dim`).
        w : array_like
            Weights or counts, one per arm.

        Returns
        -------
        tuple of numpy.ndarray
            ``(mu, w)`` as arrays.

        Raises
        ------
        InvalidInputError
            A parameter of the wrong length, or not one weight per arm.
        """
        arr = np.asarray(mu)
        if arr.shape != (self.dim,):
            raise InvalidInputError(f"the parameter must have length {self.dim}, got shape {arr.shape}")
        return arr, self.check_weights(w)

    def information(self, counts: np.ndarray) -> np.ndarray | None:
        """The information matrix at the counts, for thresholds that read it (None for unstructured problems).

        Parameters
        ----------
        counts : numpy.ndarray of int, shape (K,)
            Pulls per arm.

        Returns
        -------
        numpy.ndarray or None
            A d x d matrix for linear problems, None otherwise.
        """
        return None

    def glr(self, mu: np.ndarray, counts: np.ndarray) -> GLRStatistic:
        """The GLR statistic at the estimate and the counts (by default the minimum of :meth:`pieces`).

        Parameters
        ----------
        mu : numpy.ndarray
            The estimate.
        counts : numpy.ndarray of int, shape (K,)
            Pulls per arm.

        Returns
        -------
        GLRStatistic
            The answer it is for and the test against a threshold.
        """
        return GLRStatistic(self.pieces(mu, counts, gradients=False))

    def threshold_context(self, counts: np.ndarray) -> ThresholdContext:
        """What the problem offers the threshold factories after the initial pulls (its answers, arms, A_0, family).

        Parameters
        ----------
        counts : numpy.ndarray of int
            The pulls made before the sampling rule runs.

        Returns
        -------
        ThresholdContext
            The context.
        """
        from ..core.thresholds import ThresholdContext

        family = self.family
        return ThresholdContext(n_items=self.n_answers, information=self.information(counts), n_arms=self.n_arms,
                                family=None if family is None else str(family.name))

    def threshold_argument(self, counts: np.ndarray, information: np.ndarray | None) -> np.ndarray | None:
        """The third argument of a threshold call beta(t, delta, A).

        Parameters
        ----------
        counts : numpy.ndarray of int
            Pulls per arm now.
        information : numpy.ndarray or None
            :meth:`information` at them, computed once per time by the policy.

        Returns
        -------
        numpy.ndarray or None
            What the problem's thresholds read: ``information`` by default.
        """
        return information
