"""The mean-field characteristic time T^MF(m) of an instance (MF-TaS paper eqs. 2-3 and App. H), certified.

:func:`mf_characteristic_time` builds the program on action classes
(:class:`~optdesign.factored.mean_field.model.MeanFieldModel`, where the reductions and the certificate are described)
for the instance's a* and m best joint actions, solves it and reports T^MF(m) with its certified bracket and the product
allocation attaining it.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ...errors import InvalidInputError, TimeLimitReached
from ...result import CharTimeResult
from ...runtime import solvers
from ...runtime.deadline import as_time_limit, overtime, stop_reason, stop_requested, time_budget
from ...validation import as_tolerance, check_m_best
from ..exact.fallback import UNKNOWN, mf_bracket
from ..exact.fallback_results import char_time_result, merge_char_time
from ..graph.factor_graph import FactorGraph
from .model import DEFAULT_TOL, MeanFieldModel, _shared_doc

__all__ = ["mf_characteristic_time"]

# a RuntimeWarning when the certified gap is wider than this, whatever the solver's status
WARN_GAP = 1e-4


@_shared_doc
def mf_characteristic_time(fg: FactorGraph, m: int = 1, *, fcr: bool = True, reduce: bool = True,
                           order: str | Sequence[int] = "auto", solver: str | None = None, tol: float = DEFAULT_TOL,
                           symmetry: str | bool | Sequence[Sequence[int]] | None = "auto",
                           time_limit: float | None = None) -> CharTimeResult:
    """T^MF(m) (MF-TaS eqs. 2-3 and App. H) over product allocations, with a certified bracket.

    ``value`` (= ``upper``) is attained by the returned allocation; ``lower_bound`` <= T^MF(m) <= ``value``
    holds whatever the solver's accuracy, and ``gap`` = value / lower_bound - 1. ``reduce=False`` solves the
    full program (one class per action) instead of the symmetry-reduced one; ``fcr=False`` enumerates every class
    pattern instead of FCR (verification, small instances). ``tol`` is the certified relative gap at which an
    ``optimal_inaccurate`` solve is accepted without trying the next solver.

    ``symmetry`` (m = 1): ``"auto"`` ties the allocations of agents in one orbit of the structure's automorphisms
    (twins, the rotation of a cycle; :mod:`.symmetry`) and, with at most ``MAX_ORBITS`` orbits, solves by Kelley's
    cutting planes instead of the conic program (:mod:`.orbits`); a sequence of agent permutations
    gives the generators instead (each is checked); ``None`` always solves the conic program.

    ``time_limit`` bounds the whole call (a few seconds of slack, as for
    :func:`optdesign.factored.characteristic_time`): the conic solve gets the time left and returns the point it
    reached, the orbit search and the model's construction check it, and when it runs out the best certified
    bracket so far is returned with status ``"not_converged"``. Before any solve has bracketed T^MF(m) that is the
    closed-form bracket of :mod:`optdesign.factored.exact.fallback` (uniform local allocations, ``extras["fallback"]``).

    Parameters
    ----------
    fg : FactorGraph
        The instance; a* must be unique.
    m : int
        The m of T^MF(m): rows for the m joint actions after a* in gap order (App. H), T^MF(1) = T^MF.
%(options)s
    tol : float
        Certified relative gap at which an ``optimal_inaccurate`` solve is accepted.
%(symmetry)s
    time_limit : float, optional
        Seconds for the whole call; past them the best certified bracket is returned (status ``"not_converged"``).

    Returns
    -------
    CharTimeResult
        ``value`` (T^MF(m) >= T*, attained by ``local_allocations``; MF-TaS's rate is 2 T^MF kl(delta, 1 - delta)),
        certified ``lower_bound`` and ``gap``, factor ``marginals``, ``best_action``, the ``gaps`` used, and ``extras``
        (classes, order, orbits, cutting-plane passes).

    Raises
    ------
    InvalidInputError
        Not a FactorGraph, a tie for a*, m out of range, unknown solver, a symmetry that is not an automorphism, a
        time limit that is not a positive number.
%(too_large)s
    SolverError
        Every conic solver of the chain failed (the message names each status).

    Examples
    --------
    The mean-field time bounds the exact one from above, T* <= T^MF:

    >>> import optdesign as od
    >>> fg = od.FactorGraph.ring(5, 3, seed=0)
    >>> mf = od.mf_characteristic_time(fg)
    >>> print(mf.status, mf.lower_bound <= mf.value, od.characteristic_time(fg).value <= mf.value)
    optimal True True
    """
    if not isinstance(fg, FactorGraph):
        raise InvalidInputError("fg must be a FactorGraph")
    tol = as_tolerance(tol)
    if solver is not None:  # an unknown solver name is an error even when the orbit search needs none
        solvers.solver_chain(solver)
    m = check_m_best(m, fg.n_joint_actions)
    limit = as_time_limit(time_limit)
    start = time.perf_counter()
    with time_budget(limit):
        try:
            with overtime():  # every certified answer needs them (optdesign.factored.exact.fallback)
                ranked = fg.m_best(m + 1)  # raises if a* is not unique
        except TimeLimitReached:  # a* not found in time: nothing is known
            return char_time_result(fg, UNKNOWN, status=stop_reason(), start=start, extras={"stopped": "time"},
                                    method="mean-field", m=int(m), gaps=np.zeros(0))
        gaps = np.asarray([g for _, g in ranked[1:]])
        units = mf_bracket(fg, ranked)  # in units of Delta_m^2, the answer if no solve brackets T^MF(m) in time
        bracket = replace(units, upper=units.upper / gaps[-1] ** 2, lower=units.lower / gaps[-1] ** 2)
        try:
            res = _solve(fg, m, ranked, gaps, tol, fcr=fcr, reduce=reduce, order=order, solver=solver,
                         symmetry=symmetry)
        except TimeLimitReached:
            return char_time_result(fg, bracket, status=stop_reason(), start=start, method="mean-field", m=int(m),
                                    gaps=gaps, extras={"stopped": "interrupted" if stop_requested() else "time"})
    return merge_char_time(fg, res, bracket)


def _solve(fg: FactorGraph, m: int, ranked: list, gaps: np.ndarray, tol: float, **options: Any) -> CharTimeResult:
    """Build the model on action classes, solve it and report T^MF(m) (:func:`mf_characteristic_time`)."""
    best = ranked[0][0]
    start = time.perf_counter()
    model = MeanFieldModel(fg, m=m, ranked=ranked[1:], best_action=best, **options)
    build = time.perf_counter() - start
    out = model.solve(tol)
    if out.gap > WARN_GAP and out.info.status not in ("not_converged", "interrupted"):
        info = out.info  # the certificate, not the solver's status, says how good the value is
        warnings.warn(f"T^MF({m}): certified relative gap {out.gap:.2e} ({info.solver} status {info.status}); "
                      f"the value is attained, the lower bound is {out.lower / gaps[-1] ** 2:.6g}",
                      RuntimeWarning, stacklevel=3)
    with overtime():
        local = model.local_allocations(best)
        marginals = fg.split_tables(model.marginals_at(local))
    scale = gaps[-1] ** 2
    info = out.info
    return CharTimeResult(
        value=out.upper / scale, solver_value=out.t / scale, method="mean-field", m=int(m),
        best_action=best, gaps=gaps, marginals=marginals, local_allocations=local, global_allocation=None,
        n_constraints=model.n_constraints if out.cuts is None else out.cuts, n_variables=model.n_variables,
        width=model.plan.width if options["fcr"] else None, status=info.status, solver=info.solver,
        solve_time=info.solve_time, compile_time=out.compile_time,
        extras={"fcr": options["fcr"], "reduce": model.reduce, "n_classes": list(model.classes.n_classes),
                "build_time": build, "order": list(model.plan.order) if options["fcr"] else None,
                "orbits": None if model.orbits is None else int(model.orbits.max()) + 1,
                "passes": out.passes},
        lower_bound=out.lower / scale, gap=out.gap,
    )
