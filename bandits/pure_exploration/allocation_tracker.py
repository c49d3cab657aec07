"""How Track-and-Stop follows the plug-in optimal allocation over a problem's pulls (GK16 Sec. 3.1).

Track-and-Stop re-solves the oracle at the estimate on a geometric schedule and follows its allocation between
solves. What following means depends on what one pull is, so a problem offering the ``allocation_tracker``
capability gives a :class:`Tracker` per run. The default, :class:`ArmTracker`, is for problems whose pulls are single
arms: the target is the oracle's weights w*(mu_hat) (:meth:`bandits.pure_exploration.problem.Problem.oracle`),
followed pull by pull by C- or D-tracking (:mod:`bandits.core.tracking`). A factored problem's target is a law over
joint actions whose group marginals are the optimal allocation of T*
(:class:`bandits.multiagent.tracking.JointTracker`), or the mean-field allocation of T^MF, a product of per-agent
allocations drawn independently (``allocation="mean-field"``, MF-TaS:
:class:`bandits.multiagent.tracking.MeanFieldTracker`).

A tracker keeps its previous target when the oracle fails at the estimate (a tie for the best answer raises
:class:`optdesign.errors.InvalidInputError`, a solver may raise :class:`optdesign.errors.SolverError`); before its
first success it follows the uniform allocation.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Protocol

import numpy as np

from optdesign.errors import InvalidInputError, SolverError

from ..core.tracking import c_tracking, d_tracking, portion, project_floor, pull_by_pull, track
from ..core.validation import check_choice
from .oracle import Oracle
from .pieces import GLRStatistic

__all__ = ["ALLOCATIONS", "STEPS", "TRACKING", "ArmTracker", "OracleSource", "Tracker", "check_tol"]

#: the tracking rules of :class:`ArmTracker`
TRACKING = ("C", "D")
#: how :class:`ArmTracker` follows its target within a batch: one pull at a time, or the whole batch in one step
STEPS = ("pull", "batch")
#: the allocations a tracker may follow: the oracle's (T*), or the mean-field program's (T^MF, factored problems)
ALLOCATIONS = ("exact", "mean-field")


def check_tol(tol: float | None) -> float | None:
    """The certified relative gap an iterative oracle solves to (None: the problem's default).

    Parameters
    ----------
    tol : float or None
        A number in (0, 1), or None.

    Returns
    -------
    float or None
        ``tol``.

    Raises
    ------
    InvalidInputError
        Not None and not a number in (0, 1).
    """
    if tol is not None and not (isinstance(tol, (int, float)) and not isinstance(tol, bool) and 0 < tol < 1):
        raise InvalidInputError(f"tol must be a number in (0, 1), got {tol!r}")
    return tol


class Tracker(ABC):
    """One Track-and-Stop run's target and how its pulls follow it (module docstring)."""

    #: successful oracle solves, and those that failed at the estimate (the target kept)
    solves: int = 0
    failures: int = 0

    @abstractmethod
    def resolve(self, mu: np.ndarray) -> None:
        """Solve the oracle at the estimate and make its allocation the target (the previous one is kept when the
        oracle fails there).

        Parameters
        ----------
        mu : numpy.ndarray
            The estimate.
        """

    @abstractmethod
    def plan(self, counts: np.ndarray, n: int) -> np.ndarray:
        """The next ``n`` pulls, following the target.

        Parameters
        ----------
        counts : numpy.ndarray of int, shape (K,)
            Observations per arm at the batch's start.
        n : int
            Pulls (at least 1).

        Returns
        -------
        numpy.ndarray of int, shape (K,)
            Observations per arm.
        """

    def describe(self, statistic: GLRStatistic | None) -> dict[str, Any]:
        """The tracker's numbers for the run's trace (none by default).

        Parameters
        ----------
        statistic : GLRStatistic or None
            The policy's GLR statistic now.

        Returns
        -------
        dict
            Plain numbers.
        """
        return {}


class OracleSource(Protocol):
    """What :class:`ArmTracker` reads of its problem."""

    @property
    def n_arms(self) -> int:
        """K."""

    def oracle(self, mu: np.ndarray) -> Oracle:
        """w*(mu) and T*(mu) (:meth:`bandits.pure_exploration.problem.Problem.oracle`).

        Parameters
        ----------
        mu : numpy.ndarray
            The estimate at which the tracker re-solves.

        Raises
        ------
        InvalidInputError
            A tie for the best answer at ``mu`` (the tracker keeps its target).
        SolverError
            A design solver's failure (the same).

        Returns
        -------
        Oracle
            Its optimal weights over the arms (the tracker's new target).
        """


class ArmTracker(Tracker):
    """The oracle's weights over the arms, followed pull by pull, or batch by batch (GK16 Sec. 3.1).

    ``"D"``: if some N_k < sqrt(t) - K/2, the least-pulled arm (forced exploration), else argmax_k (t w_k - N_k).
    ``"C"``: argmax_k (sum_s w^{eps_s}_k - N_k), w^eps the projection of the target onto {w >= eps},
    eps_s = 1 / (2 sqrt(K^2 + s)) (the floor replaces forced exploration; the initial pulls count as on target).
    With ``steps="batch"`` a batch of n pulls is one step of the same rules (:func:`bandits.core.tracking.track`):
    D lifts the arms below sqrt(t + n) - K/2 to that level and tracks (t + n) w with the rest; C adds n w^eps at the
    batch's middle, s = t + n/2, to the cumulative target and tracks it.

    Parameters
    ----------
    problem : OracleSource
        The problem (its oracle and K).
    tracking : str
        ``"C"`` or ``"D"``.
    tol : None
        The oracle's tolerance: these oracles solve to their own accuracy and take none.
    allocation : str
        ``"exact"``: the oracle's (a mean-field allocation needs a factor graph).
    steps : str
        ``"pull"`` (the default) or ``"batch"``.

    Raises
    ------
    InvalidInputError
        An unknown tracking rule or steps, a tolerance given, or another allocation.
    """

    def __init__(self, problem: OracleSource, tracking: str, tol: float | None = None,
                 allocation: str = "exact", steps: str = "pull") -> None:
        if check_choice(allocation, "allocation", ALLOCATIONS) != "exact":
            raise InvalidInputError(f"allocation={allocation!r}: a mean-field allocation is a factored problem's "
                                    "(agents drawing independently); this problem tracks its oracle's, 'exact'")
        if check_tol(tol) is not None:
            raise InvalidInputError(f"tol={tol!r}: this problem's oracle solves to its own accuracy and takes no "
                                    "tolerance (leave tol unset)")
        self.problem, self.tracking = problem, check_choice(tracking, "tracking", TRACKING)
        self.steps = check_choice(steps, "steps", STEPS)
        self.target = np.full(problem.n_arms, 1.0 / problem.n_arms)
        self.cumulative: np.ndarray | None = None

    def resolve(self, mu: np.ndarray) -> None:
        try:
            w = np.clip(np.asarray(self.problem.oracle(mu).weights, dtype=float), 0.0, None)
        except (InvalidInputError, SolverError):
            self.failures += 1
            return
        if w.sum() > 0 and np.isfinite(w).all():
            self.target = w / w.sum()
            self.solves += 1
        else:
            self.failures += 1

    def plan(self, counts: np.ndarray, n: int) -> np.ndarray:
        if self.tracking == "D":
            if self.steps == "batch":
                level = np.sqrt(counts.sum() + n) - counts.size / 2
                if counts.min() >= level:
                    return track(counts, self.target, n)
                forced = portion(np.where(counts < level, np.ceil(level) - counts, 0), n)  # forced exploration
                return forced + track(counts + forced, self.target, n - int(forced.sum()))
            return pull_by_pull(lambda now: d_tracking(self.target, now), counts, n)
        if self.cumulative is None:  # the initial pulls count as on target
            self.cumulative = counts.astype(float)
        K = counts.size
        if self.steps == "batch":
            middle = 0.5 / np.sqrt(K * K + counts.sum() + n / 2)
            self.cumulative = self.cumulative + n * project_floor(self.target, middle)
            return track(counts, self.cumulative, n)
        # the cumulative targets before each of the n pulls: one projection per pull, eps_s at s = N_1 + ... + N_K
        floors = project_floor(self.target, 0.5 / np.sqrt(K * K + counts.sum() + np.arange(n)))
        cumulative = np.cumsum(np.vstack([self.cumulative, floors]), axis=0)[1:]
        self.cumulative = cumulative[-1]
        targets = iter(cumulative)
        return pull_by_pull(lambda now: c_tracking(next(targets), now), counts, n)
