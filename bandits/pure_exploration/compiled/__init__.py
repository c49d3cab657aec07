"""The compiled fast path of K-armed and linear runs: the reference policy's runs at a fraction of the cost per sample.

:func:`bandits.run.run` takes this path when the run qualifies (:func:`compiled_run_of`) and nothing asks for the
reference's per-batch hooks (a trace, a progress callback, an interruptible run); ``run(..., compiled=False)`` forces
the reference. The draws are the reference run's (the same generators, consumed in the same order, with numba's
generator methods, which reproduce numpy's), and the arithmetic repeats the reference's operations in the same order,
so a seed gives the same run on either path (tests compare them run by run). Two things can differ in the last bits:
Bernoulli divergences (within 1e-13, :mod:`bandits.pure_exploration.compiled.arithmetic`) and the linear loop's
matrix products (summed in another order than BLAS); where a rule can amplify them, tests compare the two paths in
distribution. Compiled code is cached on disk: a process compiles once per installation, later processes load it.

==========  ====================================================================================
plan        which runs qualify (fixed confidence, or an anytime rule read at budgets); imports no numba
arithmetic  divergences, GLR pieces and statistic, pair costs, pairwise sums, rounding, tracking
oracle      the Track-and-Stop target: w*(mu) by GK16's Theorem 5 (the reference oracle's weights)
game        the Frank-Wolfe sampling step: pieces, gradients, the game over the near-minimal ones
lazy        Lazy Track-and-Stop: Frank-Wolfe targets at powers of two, forced exploration, C-tracking
lingame     LinGame and LinGame-C: AdaHedge against the best response, optimistic gains, C-tracking
loop        one K-armed run: the rules' pulls, the draws, the GLR stop for every delta, the answers at budgets
interrupts  what the loops read while they run: the clock, and the signals (Ctrl-C ends a compiled run)
linear      one linear run: round robin, Track-and-Stop, FWS (its design inverse along the path), Lazy TaS, LinGame
==========  ====================================================================================
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .plan import CompiledRun, compiled_budget_run_of, compiled_run_of

__all__ = ["CompiledRun", "compiled_budget_run_of", "compiled_run_of", "run_compiled", "run_compiled_budget"]

#: how a delta stopped, by the loop's code
STOPPED_BY = ("stopping_rule", "budget")


def run_compiled(plan: CompiledRun, env_rng: np.random.Generator, rule_rng: np.random.Generator,
                 start: float) -> list[dict[str, Any]]:
    """Run the compiled loop and give, per delta, what the runner records when that delta stops.

    Parameters
    ----------
    plan : CompiledRun
        The run's arguments (:func:`compiled_run_of`).
    env_rng, rule_rng : numpy.random.Generator
        The run's two generators (the environment's noise, the rule's own draws), advanced by the run.
    start : float
        ``time.perf_counter()`` at the run's start.

    Returns
    -------
    list of dict
        Per delta: ``samples``, ``batches``, ``recommendation``, ``stopped_by``, ``solve_time``, ``elapsed``.

    Raises
    ------
    KeyboardInterrupt
        Ctrl-C during the run (the loops look at the signals every few batches).
    """
    from .interrupts import INTERRUPTED

    if plan.arms is not None:
        from .linear import linear_run

        samples, batches, recommendation, how, elapsed, solve, stop = linear_run(
            *plan.arms, plan.sigma, plan.means, plan.rule, plan.options, plan.growth, plan.forms, plan.max_samples,
            env_rng, start)
    else:
        from .loop import karmed_run

        samples, batches, recommendation, how, elapsed, solve, stop = karmed_run(
            plan.family, plan.sigma, plan.means, plan.rule, plan.options, plan.growth, plan.forms, plan.max_samples,
            env_rng, rule_rng, start, plan.shift)
    if stop[0] == INTERRUPTED:
        raise KeyboardInterrupt
    return [{"samples": int(samples[i]), "batches": int(batches[i]), "recommendation": int(recommendation[i]),
             "stopped_by": STOPPED_BY[int(how[i])], "solve_time": float(solve[i]), "elapsed": float(elapsed[i])}
            for i in range(samples.size)]


def run_compiled_budget(plan: CompiledRun, env_rng: np.random.Generator, rule_rng: np.random.Generator,
                        start: float, name: str = "the rule") -> tuple[np.ndarray, np.ndarray]:
    """Run the compiled K-armed loop of a fixed-budget plan (:func:`compiled_budget_run_of`) to its last budget, under
    the run-time rule of :mod:`bandits.core.run_time` (Ctrl-C raises KeyboardInterrupt within a batch's time).

    Parameters
    ----------
    plan : CompiledRun
        The run's arguments, with its checkpoints.
    env_rng, rule_rng : numpy.random.Generator
        The run's two generators, advanced by the run.
    start : float
        ``time.perf_counter()`` at the run's start.
    name : str
        The rule, named if the run-time rule refuses the run.

    Returns
    -------
    tuple of numpy.ndarray
        The answer (argmax of the estimate, first on a tie) at every checkpoint, and the seconds since ``start`` when
        each was reached.

    Raises
    ------
    InvalidInputError
        A plan without checkpoints or of a linear run, or a last budget the run would take more than a year to reach
        at the rate of its first seconds.
    KeyboardInterrupt
        Ctrl-C during the run.
    RuntimeError
        The loop refused the run where the run-time rule's own arithmetic does not (a bug).
    """
    from optdesign.errors import InvalidInputError

    if plan.checkpoints is None or plan.arms is not None:
        raise InvalidInputError("run_compiled_budget takes the plan of a K-armed fixed-budget run "
                                "(compiled_budget_run_of)")
    from ...core.run_time import MAX_RUN_SECONDS, check_rate
    from .interrupts import INTERRUPTED
    from .loop import karmed_checkpoints

    out = karmed_checkpoints(plan.family, plan.sigma, plan.means, plan.rule, plan.options, plan.growth, plan.forms,
                             plan.max_samples, env_rng, rule_rng, start, plan.checkpoints, plan.shift, MAX_RUN_SECONDS)
    t, seconds = out[8]
    if t == INTERRUPTED:
        raise KeyboardInterrupt
    if t >= 0:
        check_rate(plan.max_samples, int(t), float(seconds), name)
        raise RuntimeError(f"the compiled loop refused {name} at t = {int(t)}, where the run-time rule does not")
    return out[6], out[7]
