"""Min-max designs over very many directions by constraint generation, certified on all of them.

The min-max family minimises F(w) = max_{y in Y} ||y||^2_{A(w)^{-1}}. Two facts let a solver see only a few
directions:

* for fixed w, F(w) over every direction is one pricing pass (whiten by A(w) = L L^T, take norms), chunked so that
  memory stays bounded whatever |Y|: an upper bound on F*;
* the dual certificate F* >= f_p(w)^2 / max_k h_k(w) of :mod:`optdesign.linear.criteria` holds for any
  distribution p over directions, in particular one supported on a working subset: the working set's certified
  lower bound is a lower bound of the full problem.

:func:`generate_directions` solves on a working set, prices every direction at the returned weights, adds the
directions above the working-set value, and stops when the two bounds meet ``tol``. A *pricer* supplies the
directions: :class:`RowPricer` for an explicit list (XY-oracle and transductive designs with many items), and
:class:`optdesign.linear.pairs.PairPricer` for all pairwise differences of many items (never listed).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Protocol, cast

import numpy as np

from ..errors import InvalidInputError, SolverError
from ..result import DesignResult, relative_gap
from ..runtime.deadline import Deadline, stop_reason
from ..runtime.progress import listening, report
from .criteria import cholesky_factor, whiten

__all__ = ["Pricer", "RowPricer", "generate_directions"]

MAX_ROUNDS = 60
TIE_RTOL = 1e-9
ROW_CHUNK = 1_000_000  # directions whitened at once by the row pricer (d numbers each)


class Pricer(Protocol):
    """A direction set priced at a design: keys name directions, ``rows`` turns keys into vectors.

    The interface :func:`generate_directions` needs (a structural Protocol: any class with these members fits);
    :class:`RowPricer` and :class:`optdesign.linear.pairs.PairPricer` derive from it.

    Attributes
    ----------
    count : int
        Number of directions in the set.
    """

    count: int

    def price(self, L: np.ndarray, k: int, floor: float = -np.inf) -> tuple[float, np.ndarray]:
        """max over all directions of ||L^{-1} y||^2 and up to k keys (largest first) of directions above floor.

        Parameters
        ----------
        L : numpy.ndarray, shape (d, d)
            Lower-triangular factor of A(w) = L L^T at the current design.
        k : int
            Most keys to return (0: only the maximum).
        floor : float
            Only directions with ||L^{-1} y||^2 > floor are returned.

        Returns
        -------
        max_value : float
            F(w) = max_y y^T A(w)^{-1} y over the whole set (exact).
        keys : numpy.ndarray
            Up to ``k`` keys of the largest directions above ``floor``, largest first (indices or index rows).
        """

    def rows(self, keys: np.ndarray) -> np.ndarray:
        """The directions named by ``keys`` (one row each).

        Parameters
        ----------
        keys : numpy.ndarray
            Keys returned by :meth:`price`.

        Returns
        -------
        numpy.ndarray, shape (len(keys), d)
            The directions, in the order of ``keys``.
        """


class RowPricer(Pricer):
    """An explicit list of directions Y (rows), priced in chunks of ROW_CHUNK.

    Parameters
    ----------
    Y : numpy.ndarray, shape (m, d)
        The directions, one per row; keys are row indices.
    """

    def __init__(self, Y: np.ndarray):
        self.Y = Y
        self.count = Y.shape[0]

    def price(self, L: np.ndarray, k: int, floor: float = -np.inf) -> tuple[float, np.ndarray]:
        """Whiten ROW_CHUNK rows at a time; keys are row indices of Y."""
        best, keys, values = -np.inf, [], []
        for a in range(0, self.count, ROW_CHUNK):
            Z = whiten(L, self.Y[a : a + ROW_CHUNK])
            v = np.einsum("ij,ij->j", Z, Z)
            best = max(best, float(v.max()))
            idx = np.flatnonzero(v > floor)
            if idx.size > k:
                idx = idx[np.argpartition(v[idx], idx.size - k)[idx.size - k :]]
            keys.append(a + idx)
            values.append(v[idx])
        keys_a, values_a = np.concatenate(keys), np.concatenate(values)
        return best, keys_a[np.argsort(-values_a)[:k]]

    def rows(self, keys: np.ndarray) -> np.ndarray:
        """The rows ``Y[keys]``."""
        return self.Y[keys]


def _hashable(keys: np.ndarray) -> list:
    """Keys as hashable values: row indices, or (i, j) tuples for pairs."""
    return [tuple(k) for k in keys.tolist()] if keys.ndim > 1 else keys.tolist()


def generate_directions(
    X: np.ndarray,
    pricer: Pricer,
    solve: Callable[[np.ndarray, np.ndarray | None, float], DesignResult],
    *,
    tol: float,
    batch: int,
    time_limit: float = 600.0,
    explicit: Callable[[], DesignResult] | None = None,
    nothing: str = "there is nothing to identify",
) -> DesignResult:
    """Design minimising max over the pricer's directions of ||y||^2_{A(w)^{-1}}, by constraint generation.

    ``solve(Y, w0, tol)`` solves the min-max design on an explicit direction set (warm-started at w0). The
    result's ``value`` is F(w) over all directions and ``lower_bound`` a certificate of the full problem;
    ``extras`` records the number of directions, the working-set size and the rounds. ``explicit()``, when
    given, solves on the full list instead when a whole batch of directions ties at the uniform design
    (symmetric sets: a working set would grow to most of them).

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms (validated by the caller: finite, spanning R^d).
    pricer : Pricer
        The direction set.
    solve : callable
        ``solve(Y, w0, tol)`` -> DesignResult with a certified ``lower_bound``; ``w0`` is None at first.
    tol : float
        Certified relative gap over all directions at which to stop (inner solves get ``tol / 2``).
    batch : int
        Directions in the first working set and most added per round.
    time_limit : float
        Seconds for the whole loop, capped by the enclosing time budget (the inner solves have their own).
    explicit : callable, optional
        ``explicit()`` -> DesignResult on the full list, for tied sets (above).
    nothing : str
        Error message when every direction is zero.

    Returns
    -------
    DesignResult
        The inner result of smallest F(w) over all directions, with ``value`` that F(w), the best certified
        ``lower_bound`` and its ``gap``, ``status`` ``"optimal"`` or why it stopped, and ``extras``
        ``directions``, ``working_directions`` and ``rounds``.

    Raises
    ------
    InvalidInputError
        Every direction is zero (message ``nothing``).
    SolverError
        A(w) of the uniform design, or of every design on the working set, is numerically singular.
    """
    start = time.perf_counter()
    deadline = Deadline(time_limit)
    w = np.full(X.shape[0], 1.0 / X.shape[0])
    L = cholesky_factor(X, w)
    if L is None:
        raise SolverError("A(w) of the uniform design is numerically singular")
    upper, working = pricer.price(L, batch)
    if upper <= 0:
        raise InvalidInputError(nothing)
    if explicit is not None and len(working) == batch:
        tail = whiten(L, pricer.rows(working[-1:]))
        if float(np.sum(tail**2)) >= (1 - TIE_RTOL) * upper:
            return explicit()
    best: DesignResult | None = None
    best_upper, best_lower = np.inf, 0.0
    rounds = 0
    known = set(_hashable(working))
    while rounds < MAX_ROUNDS:
        rounds += 1
        inner = solve(pricer.rows(working), None if best is None else best.weights, tol / 2)
        L = cholesky_factor(X, inner.weights)
        if L is None:  # a singular design has an infinite value: keep the previous one
            break
        upper, violators = pricer.price(L, batch, floor=inner.value * (1 + tol / 4))
        # the inner solves are certified; p on a subset of directions certifies all of them
        best_lower = max(best_lower, cast(float, inner.lower_bound))
        if upper < best_upper:
            best, best_upper = inner, upper
        fresh = np.array([key not in known for key in _hashable(violators)], dtype=bool)
        if listening():
            report(f"working set: round {rounds}, {len(working):,} of {pricer.count:,} directions, "
                   f"certified gap {relative_gap(best_upper, best_lower):.1e}")
        if relative_gap(best_upper, best_lower) <= tol or not fresh.any() or deadline.expired():
            break
        working = np.concatenate([working, violators[fresh]])
        known.update(_hashable(violators[fresh]))
    if best is None:
        raise SolverError("the design on the working set of directions has a singular information matrix")
    gap = relative_gap(best_upper, best_lower)
    extras = {**best.extras, "directions": pricer.count, "working_directions": len(working), "rounds": rounds}
    return replace(
        best, value=best_upper, lower_bound=best_lower, gap=gap, solve_time=time.perf_counter() - start,
        status="optimal" if gap <= tol else stop_reason(), extras=extras,
    )
