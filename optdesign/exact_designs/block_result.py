"""BlockedDesignResult: a design whose runs fall in blocks or whole plots, its criterion values and certified bound."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["BlockedDesignResult"]


@dataclass(frozen=True)
class BlockedDesignResult:
    """A blocked, split-plot, split-split-plot or strip-plot design: the candidate of every run, group after group,
    and what is known of it.

    Values are homogeneous and smaller is better, as for :class:`optdesign.exact_designs.result.ExactDesignResult`, of
    the normalised information M / N of the parameters (``parameters``), M = sum_g X_g^T (I - c_g 1 1^T) X_g
    (:func:`optdesign.exact_designs.block_information.blocked_information`): D: ``det(M/N)^(-1/p)``; A:
    ``tr((M/N)^{-1})``; I: ``tr(B (M/N)^{-1})``. ``lower_bound``, when not None, is certified: no design of the same
    class (the same block or whole-plot sizes, effects and eta) has a smaller value, so ``efficiency = lower_bound /
    value`` is a certified lower bound on the design's efficiency within its class (``extras['bound']`` says which bound
    it is). It is None when no certified bound could be computed (``extras['no_bound']`` says why): never an estimate.
    Designs of several groupings (whole plots and sub-plots, rows and columns) have an M of the GLS form of
    :mod:`optdesign.exact_designs.group_structure`; ``block_sizes``, ``eta`` and ``blocks`` are those of their first
    grouping, ``groupings`` gives every run's group in each.
    """

    #: the candidate (row of X) of every run, the runs of group 0 first, then those of group 1, ...
    rows: np.ndarray
    #: runs per group (block or whole plot; the first grouping's: whole plot, row)
    block_sizes: np.ndarray
    #: ``"D"``, ``"A"`` or ``"I"``
    criterion: str
    #: the criterion at the design (smaller is better)
    value: float
    #: certified lower bound on the value of every design of the class, or None (class docstring)
    lower_bound: float | None
    #: the D, A and I values of the design (I over the region of the search, or the candidates uniformly)
    values: dict[str, float]
    #: the information matrix M of the parameters (unnormalised)
    information: np.ndarray
    #: the columns of X that are the model's parameters (fixed block effects leave out the intercept)
    parameters: np.ndarray
    #: ``"fixed"`` or ``"random"`` block effects (``"random"`` for split-plot designs, the whole plots' effects)
    block_effects: str
    #: the variance ratio sigma_group^2 / sigma^2 of random effects (None for fixed ones; the first grouping's, with
    #: ``extras['etas']`` giving every grouping's)
    eta: float | None
    #: starts of the search
    starts: int
    #: moves made over all starts
    moves: int
    #: seconds spent in all (bound included)
    solve_time: float
    #: ``replicates=False``: at most one run per candidate over the whole design
    replicates: bool = True
    #: the factor settings of every candidate (split-plot designs, or as given), one row per candidate
    points: Any = None
    #: the names of the parameters' columns, when known
    columns: list[str] | None = None
    #: ``"blocked"``, ``"split-plot"``, ``"split-split-plot"`` or ``"strip-plot"``
    kind: str = "blocked"
    #: designs with hard-to-change factors: the group of every run (0, 1, ... within each grouping) by grouping
    #: (``"whole_plot"``, ``"subplot"``; ``"row"``, ``"column"``), None for blocked designs
    groupings: dict[str, np.ndarray] | None = None
    #: anything else: the bound's kind, the loss of each start, each kind's factors and each group's setting
    extras: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        """The number of runs N."""
        return int(self.rows.size)

    @property
    def blocks(self) -> np.ndarray:
        """The group (block or whole plot) of every run."""
        return np.repeat(np.arange(self.block_sizes.size), self.block_sizes)

    @property
    def units(self) -> str:
        """What ``value`` measures, M / N the normalised information of the parameters (class docstring)."""
        return {"D": "det(M/N)^(-1/p)", "A": "tr((M/N)^{-1})", "I": "tr(B (M/N)^{-1}), B the region's moment matrix"
                }.get(self.criterion, self.criterion)

    @property
    def efficiency(self) -> float | None:
        """Certified efficiency lower bound ``lower_bound / value`` within the class (None without a bound)."""
        return None if self.lower_bound is None else self.lower_bound / self.value

    def counts(self, n_candidates: int) -> np.ndarray:
        """Runs per candidate over all groups.

        Parameters
        ----------
        n_candidates : int
            The number K of candidates (rows of X).

        Returns
        -------
        numpy.ndarray
            K run counts summing to N.
        """
        return np.bincount(self.rows, minlength=n_candidates)

    def table(self, points: Any = None) -> Any:
        """The design run by run: its group, its candidate and, with factor settings, those of the candidate.

        Parameters
        ----------
        points : pandas.DataFrame, optional
            The factor settings of the candidates, one row per candidate (``candidates(...).points``); default:
            ``self.points`` (split-plot designs), else only the candidates' indices.

        Returns
        -------
        pandas.DataFrame
            One row per run: its group in each grouping (``block``; ``whole_plot``, ``subplot``; ``row``,
            ``column``), ``candidate`` and the factors.
        """
        import pandas as pd

        points = self.points if points is None else points
        groups = {"block": self.blocks} if self.groupings is None else self.groupings
        out = pd.DataFrame({**groups, "candidate": self.rows})
        if points is not None:
            out = pd.concat([out, points.iloc[self.rows].reset_index(drop=True)], axis=1)
        return out

    def to_dict(self) -> dict:
        """JSON-ready dictionary (arrays as lists).

        Returns
        -------
        dict
            The fields (arrays as lists, ``points`` left out), ``units``, ``n`` and ``efficiency``.
        """
        return {
            "kind": self.kind, "criterion": self.criterion, "units": self.units, "n": self.n, "value": self.value,
            "lower_bound": self.lower_bound, "efficiency": self.efficiency, "values": dict(self.values),
            "block_effects": self.block_effects, "eta": self.eta, "starts": self.starts, "moves": self.moves,
            "solve_time": self.solve_time, "replicates": self.replicates, "rows": self.rows.tolist(),
            "block_sizes": self.block_sizes.tolist(), "parameters": self.parameters.tolist(),
            "information": self.information.tolist(), "columns": self.columns,
            **({} if self.groupings is None else {"groupings": {k: v.tolist() for k, v in self.groupings.items()}}),
            **{k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in self.extras.items()},
        }
