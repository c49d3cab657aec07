"""ExactDesignResult: an exact N-run design (integer counts), its criterion value and certified efficiency."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..design_result import CRITERION_UNITS

__all__ = ["ExactDesignResult"]


@dataclass(frozen=True)
class ExactDesignResult:
    """An exact design: ``counts[k]`` runs at candidate k, n in all, and what is known of its quality.

    Values are homogeneous and smaller is better, for the normalised information matrix
    M = sum_k (counts_k / n) x_k x_k^T: D: ``det(M)^(-1/d)``; A: ``tr(M^{-1})``; I: ``tr(B M^{-1})`` (the average
    variance of the fitted response over the region of moment matrix B). ``lower_bound`` is a certified lower
    bound on the optimal *approximate* value, which is at most the optimal exact one, so ``efficiency =
    lower_bound / value`` is a certified lower bound on the design's efficiency against the best n-run design
    (for D it is the D-efficiency (det M / det M*)^(1/d) bound, with M* bounded by Kiefer–Wolfowitz).

    The N-run pseudo-Bayesian designs of a GLM (:func:`optdesign.bayesian_exact_design`, ``criterion``
    ``"bayesian-d"``, ``"bayesian-a"`` or ``"bayesian-i"``) report the prior mean over the draws theta_s instead, of
    M_s = sum_k (counts_k / n) nu(x_k^T theta_s) x_k x_k^T: exp(-sum_s pi_s log det M_s / d) for D,
    sum_s pi_s tr(B_s M_s^{-1}) for A and I, with the same certified meaning of ``lower_bound`` and ``efficiency``.

    An augmented design (``fixed`` runs kept, ``n_new`` runs added) counts its fixed runs in ``counts`` and ``n``;
    its ``lower_bound`` bounds every design with those fixed runs and ``n_new`` more (the augmented approximate
    optimum), and ``extras['free_lower_bound']`` every ``n``-run design.
    """

    #: runs per candidate: nonnegative integers summing to ``n``
    counts: np.ndarray
    #: the number of runs (fixed ones included: ``n_fixed + n_new``)
    n: int
    #: ``"D"``, ``"A"`` or ``"I"``; ``"bayesian-d"``, ``"bayesian-a"`` or ``"bayesian-i"`` for a pseudo-Bayesian
    #: design of a GLM
    criterion: str
    #: the criterion at the design (smaller is better)
    value: float
    #: certified lower bound on the optimal approximate value (hence on every n-run design's value)
    lower_bound: float
    #: the approximate design behind the bound and the first start: weights over the candidates
    approximate_weights: np.ndarray
    #: the criterion at ``approximate_weights``
    approximate_value: float
    #: starts of the exchange (the rounded approximate design first, then random ones)
    starts: int
    #: runs moved by the exchange, over all starts
    moves: int
    #: seconds spent in all (approximate design included)
    solve_time: float
    #: ``replicates=False``: at most one run per candidate
    replicates: bool = True
    #: anything else (the start that won, the value of each start)
    extras: dict = field(default_factory=dict)
    #: runs kept whatever the criterion (included in ``counts``), per candidate; None: no fixed runs
    fixed: np.ndarray | None = None
    #: the link of a GLM design (``"logit"``, ``"probit"``, ``"cloglog"``, ``"log"``); None for a linear model
    link: str | None = None

    @property
    def units(self) -> str:
        """What ``value`` measures (:data:`optdesign.design_result.CRITERION_UNITS`, M the normalised information)."""
        label = {"D": "d-optimal", "A": "a-optimal", "I": "i-optimal"}.get(self.criterion, self.criterion)
        return CRITERION_UNITS.get(label, self.criterion)

    @property
    def efficiency(self) -> float:
        """Certified efficiency lower bound ``lower_bound / value`` (at most 1)."""
        return self.lower_bound / self.value

    @property
    def n_fixed(self) -> int:
        """The fixed runs (0 without any)."""
        return 0 if self.fixed is None else int(self.fixed.sum())

    @property
    def n_new(self) -> int:
        """The runs chosen: ``n - n_fixed``."""
        return self.n - self.n_fixed

    @property
    def weights(self) -> np.ndarray:
        """The design as weights ``counts / n``."""
        return self.counts / self.n

    @property
    def support(self) -> np.ndarray:
        """Indices of the candidates with at least one run."""
        return np.flatnonzero(self.counts)

    def to_dict(self) -> dict:
        """JSON-ready dictionary (arrays as lists).

        Returns
        -------
        dict
            The fields (arrays as lists), ``units``, ``efficiency`` and ``support``; with fixed runs also ``fixed``,
            ``n_fixed`` and ``n_new``.
        """
        return {
            "criterion": self.criterion,
            "units": self.units,
            "link": self.link,
            "n": self.n,
            "value": self.value,
            "lower_bound": self.lower_bound,
            "efficiency": self.efficiency,
            "approximate_value": self.approximate_value,
            "starts": self.starts,
            "moves": self.moves,
            "solve_time": self.solve_time,
            "replicates": self.replicates,
            "counts": self.counts.tolist(),
            "support": self.support.tolist(),
            "approximate_weights": self.approximate_weights.tolist(),
            **({} if self.fixed is None else {"fixed": self.fixed.tolist(), "n_fixed": self.n_fixed,
                                                "n_new": self.n_new}),
            **{k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in self.extras.items()},
        }
