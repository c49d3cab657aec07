"""One experiment written as text: ``(algorithm, instance, delta(s) or budget T, seed)`` -> flat result records.

This is the unit both ``bandits run`` and a study (:mod:`bandits.studies`) execute. :meth:`Experiment.check`
builds the algorithm and checks that it runs on the instance's kind, so a study reports a bad cell before
any run starts; :meth:`Experiment.execute` builds the instance, runs, and returns one record (a dict of
plain numbers and strings, the row of a results table) per delta for fixed-confidence algorithms, one record for a
fixed-budget thresholding run (its ``delta`` is None), or one record per budget of a fixed-budget run
(``budgets``: :mod:`bandits.fixed_budget`).

Fixed-confidence records: samples (observations), rounds (the problem's own time: joint plays for
factored and bilinear instances, samples otherwise), recommendation, correct, stopped_by, solve and other
time. Thresholding records: T, samples (T plus a free warm-up), error E(T), loss L_T, |S_hat| and the E(t)
curve. Fixed-budget records (``mode: "fixed-budget"``): T, samples (pulls made by T), recommendation, best, correct,
the simple regret (None where an answer is not one arm or item) and the wall time to T.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from optdesign.errors import InvalidInputError
from optdesign.validation import as_count

from .core.algorithm import Algorithm
from .core.entries import split_algorithm
from .core.stopping import check_delta
from .instances import instance_kind, parse_instance
from .kinds import kind_of
from .registry import AlgorithmSpec, algorithm_spec, make_algorithm
from .run import DEFAULT_MAX_SAMPLES, run

if TYPE_CHECKING:
    from .fixed_budget.rules import BudgetRule
    from .pure_exploration.algorithm import PureExploration
    from .thresholding.algorithms import ThresholdingAlgorithm
    from .thresholding.environment import GraphThresholdingBandit

__all__ = ["Experiment"]

@dataclass(frozen=True)
class Experiment:
    """``algorithm`` and ``instance`` are ``NAME[:key=value,...]`` strings (see ``bandits list``). Fixed-
    confidence algorithms need ``deltas``; thresholding ones need the ``budget`` T (``free_warmup`` gives
    APT's initial pulls before t = 0). ``seed`` is an int or a ``numpy.random.SeedSequence``.

    Parameters
    ----------
    algorithm : str
        ``NAME`` or ``NAME:key=value,...`` of :data:`bandits.registry.ALGORITHMS`.
    instance : str
        ``NAME`` or ``NAME:key=value,...`` of :data:`bandits.instances.INSTANCES`.
    deltas : tuple of float
        Confidence levels in (0, 1) of a fixed-confidence run (several only for a delta-independent
        algorithm); empty for a thresholding run.
    budget : int or None
        The fixed budget T of a thresholding run; None for fixed confidence.
    budgets : tuple of int
        The budgets T_1 < T_2 < ... of a fixed-budget run on K-armed or linear instances (a sampling rule run
        anytime, or a rule run to each budget: :func:`bandits.fixed_budget.run_fixed_budget`); empty otherwise.
    seed : int, numpy.random.SeedSequence or None
        Seeds the environment's noise and the algorithm's randomness (:func:`bandits.run.run`).
    max_samples : int
        Observation cap of a fixed-confidence run (``stopped_by == "budget"`` when reached).
    free_warmup : bool
        Thresholding only: the initial pulls come before t = 0 instead of counting in T.
    stop : str or None
        The stopping rule of a fixed-confidence run: None or ``"own"`` (the algorithm's), or
        ``"glr[:threshold=NAME,growth=G]"`` (:mod:`bandits.pure_exploration.with_stop`).
    compiled : bool
        Let a run that qualifies take numba's compiled loop (:mod:`bandits.pure_exploration.compiled`: the same law,
        compiled once per installation); False keeps every run on the reference path.
    """

    algorithm: str
    instance: str
    deltas: tuple[float, ...] = ()
    budget: int | None = None
    seed: int | np.random.SeedSequence | None = 0
    max_samples: int = DEFAULT_MAX_SAMPLES
    free_warmup: bool = False
    stop: str | None = None
    budgets: tuple[int, ...] = ()
    compiled: bool = True

    @property
    def kind(self) -> str:
        """The kind of instance the run is on (a key of :data:`bandits.kinds.KINDS`): the instance's own when the
        algorithm runs on several kinds; InvalidInputError if the algorithm is unknown."""
        kinds = algorithm_spec(split_algorithm(self.algorithm)[0]).kinds
        try:
            got = instance_kind(self.instance)
        except InvalidInputError:
            return kinds[0]
        return got if got in kinds else kinds[0]

    def check(self) -> Algorithm[Any] | ThresholdingAlgorithm | BudgetRule:
        """Validate everything that can be checked without building the instance; returns the algorithm.

        Returns
        -------
        Algorithm or ThresholdingAlgorithm or BudgetRule
            The configured algorithm (a sampling rule in fixed-budget mode: re-planning after every pull unless its
            ``growth`` is given).

        Raises
        ------
        InvalidInputError
            An unknown algorithm or instance name, bad options, an algorithm that does not run on the
            instance's kind, a missing budget or delta, a budget for a fixed-confidence algorithm or a delta for a
            fixed-budget one, ``compiled`` not a bool, a budget no algorithm could pull within a run's time limit
            (:func:`bandits.core.run_time.check_run_time`; the measured rule applies when it runs), a negative
            seed, a delta outside (0, 1), several deltas for an algorithm that samples differently for each, or a stop
            the algorithm or instance cannot take; in fixed-budget mode (``budgets``) budgets that are not increasing
            integers, an option of fixed-confidence runs (delta, stop, max_samples, a sampler's threshold), or an
            algorithm that is neither a sampling rule nor a rule run to a budget (and such a rule without budgets).
        """
        algo = make_algorithm(self.algorithm, stop=self.stop)
        spec = algorithm_spec(split_algorithm(self.algorithm)[0])
        kinds, got = spec.kinds, instance_kind(self.instance)
        sampler = getattr(algo, "sampler", None) if spec.sampler else None  # options may need less than defaults
        if got not in kinds and not (sampler is not None and kind_of(got).offers(sampler.requires())):
            needs = f" (with these options it needs {', '.join(sampler.requires())})" if sampler is not None else ""
            raise InvalidInputError(f"algorithm {algo.name} runs on {' or '.join(kinds)} instances{needs}; "
                                    f"{self.instance!r} is {got}")
        for part in (getattr(algo, "stop", None), algo):  # the GLR stop's threshold, a sampler's problem option
            check_kind = getattr(part, "check_kind", None)
            if check_kind is not None:
                check_kind(got)
        if not (self.seed is None or isinstance(self.seed, np.random.SeedSequence)):
            as_count(self.seed, "seed", minimum=0)
        if not isinstance(self.compiled, bool):
            raise InvalidInputError(f"compiled must be true or false, got {self.compiled!r}")
        if self.budgets or spec.budget:
            return self._check_fixed_budget(algo, got, spec)
        if kind_of(got).budgeted:
            if self.budget is None:
                raise InvalidInputError(f"{algo.name} is a fixed-budget algorithm: give the budget T")
            if self.deltas:
                raise InvalidInputError(f"{algo.name} is a fixed-budget algorithm: it takes a budget T, not delta")
            from .core.run_time import check_run_time

            check_run_time(as_count(self.budget, "budget T", minimum=1, floats=True))
        else:
            if self.budget is not None:
                raise InvalidInputError(f"{algo.name} is a fixed-confidence algorithm: it takes delta, not a budget T")
            if not self.deltas:
                raise InvalidInputError(f"{algo.name} is a fixed-confidence algorithm: give delta")
            for d in self.deltas:
                check_delta(d)
            if len(self.deltas) > 1 and not cast(Algorithm, algo).delta_independent:  # not thresholding here
                raise InvalidInputError(f"{algo.name} samples differently for each delta: give one delta per run")
        return algo

    def _check_fixed_budget(self, algo: Any, kind: str, spec: AlgorithmSpec) -> PureExploration | BudgetRule:
        """The checks of fixed-budget mode (:meth:`check`); a sampling rule comes back with growth 0 unless given."""
        from .fixed_budget.schedules import check_budgets

        name = algo.name
        if not self.budgets:
            raise InvalidInputError(f"{name} runs to a budget T known in advance: give budgets (bandits run --budget "
                                    "T1,T2,...; in a study, mode = \"fixed-budget\" and budgets = [...])")
        budgeted = kind_of(kind).budgeted  # a graph-thresholding rule: anytime, one trajectory read at every budget
        given = [key for key, on in (("delta", bool(self.deltas)), ("budget", self.budget is not None),
                                     ("stop", self.stop is not None),
                                     ("free_warmup", self.free_warmup and not budgeted),
                                     ("max_samples", self.max_samples != DEFAULT_MAX_SAMPLES)) if on]
        if given:
            raise InvalidInputError(f"{', '.join(given)}: option(s) of fixed-confidence (or graph thresholding) runs; "
                                    "a fixed-budget run takes budgets only")
        check_budgets(self.budgets)
        if budgeted:
            from .core.run_time import check_run_time

            check_run_time(self.budgets[-1])
            return algo
        options = split_algorithm(self.algorithm)[1]
        if spec.sampler:
            if "threshold" in options:
                raise InvalidInputError(f"{name}: threshold is an option of the GLR stop, and a fixed-budget run "
                                        "never stops")
            return cast("PureExploration", algo if "growth" in options else replace(algo, growth=0.0))
        if not spec.budget:
            raise InvalidInputError(f"{name} is a fixed-confidence algorithm (it stops by its own rule); fixed-budget "
                                    "runs take the sampling rules (run anytime) and successive-rejects, "
                                    "sequential-halving")
        return cast("BudgetRule", algo)

    def _execute_fixed_budget(self, algo: PureExploration | BudgetRule, env: Any) -> list[dict]:
        """One record per budget (:func:`bandits.fixed_budget.run_fixed_budget`), answers as the question shows
        them."""
        from .fixed_budget import question_of, run_fixed_budget

        if kind_of(self.kind).budgeted:
            return self._execute_thresholding_budgets(algo, env)
        results = run_fixed_budget(algo, env, self.budgets, self.seed, compiled=self.compiled)
        describe = question_of(algo, env).describe_answer
        return [{"algorithm": r.algorithm, "instance": r.instance, "mode": "fixed-budget", "delta": None, "T": r.T,
                 "samples": r.samples, "recommendation": describe(r.recommendation), "best": describe(r.best),
                 "correct": r.correct, "simple_regret": r.simple_regret, "wall_time": r.wall_time,
                 "config": r.config} for r in results]

    def _execute_thresholding_budgets(self, algo: Any, env: Any) -> list[dict]:
        """One record per budget of one graph-thresholding trajectory read at every budget (the rules are anytime):
        the answer is S_hat, correct when no judged arm is misclassified (L_T = 0); E(T) beside it."""
        from .thresholding import run_thresholding

        res = run_thresholding(algo, env, self.budgets[-1], self.seed, record=list(self.budgets),
                               count_warmup=not self.free_warmup)
        true_size = int(np.count_nonzero(env.means >= env.tau))
        free = res.samples - res.T  # a free warm-up, before t = 0
        return [{"algorithm": res.algorithm, "instance": res.instance, "mode": "fixed-budget", "delta": None,
                 "T": int(t), "samples": int(t) + free, "recommendation": f"|S|={int(size)}",
                 "best": f"|S|={true_size}", "correct": not bool(loss), "simple_regret": None, "error": float(e),
                 "wall_time": float(sec), "config": res.config}
                for t, size, loss, e, sec in zip(res.times, res.superlevel_sizes, res.losses, res.errors, res.elapsed,
                                                 strict=True) if int(t) in self.budgets]

    def execute(self, *, progress: Callable[[int, int], None] | None = None,
                interruptible: bool = False) -> list[dict]:
        """Run it; one record per delta (fixed confidence), one record (thresholding) or one record per budget
        (fixed-budget mode). ``progress`` and ``interruptible`` are passed to :func:`bandits.run.run` (fixed
        confidence) and :func:`bandits.thresholding.run_thresholding`; a fixed-budget run takes neither.

        Parameters
        ----------
        progress : callable, optional
            ``progress(samples, batches)`` after every batch of the run.
        interruptible : bool
            Ctrl-C ends a fixed-confidence run with ``stopped_by == "interrupted"`` instead of raising.

        Returns
        -------
        list of dict
            Flat records (plain numbers and strings): see the module docstring for their keys.
        """
        algo = self.check()
        env = parse_instance(self.instance)
        if self.budgets:
            return self._execute_fixed_budget(cast("PureExploration | BudgetRule", algo), env)
        seed = self.seed
        if kind_of(self.kind).budgeted:
            from .thresholding import run_thresholding

            res = run_thresholding(cast("ThresholdingAlgorithm", algo), cast("GraphThresholdingBandit", env),
                                   int(cast(int, self.budget)), seed, count_warmup=not self.free_warmup,
                                   progress=progress)
            return [{"algorithm": res.algorithm, "instance": res.instance, "delta": None, "T": res.T,
                     "samples": res.samples, "rounds": res.samples, "error": res.error, "loss": bool(res.loss),
                     "superlevel_size": int(res.superlevel.size), "correct": not res.loss,
                     "wall_time": res.wall_time, "config": res.config,
                     "error_curve": [[int(t), float(e)] for t, e in zip(res.times, res.errors, strict=True)]}]
        results = run(cast("Algorithm[Any]", algo), env, list(self.deltas), seed=seed, max_samples=self.max_samples,
                      progress=progress, interruptible=interruptible, compiled=self.compiled)
        asks = getattr(algo, "question", None)  # a sampling rule may ask another question of the instance
        question = asks(env) if callable(asks) else None
        describe = (lambda item: describe_item(env, item)) if question is None else question.describe_answer
        records = []
        for r in results:
            records.append({
                "algorithm": r.algorithm, "instance": r.instance, "delta": r.delta, "samples": r.samples,
                "rounds": r.rounds, "batches": r.batches, "recommendation": describe(r.recommendation),
                "best": describe(r.best), "correct": r.correct, "stopped_by": r.stopped_by,
                "solve_time": r.solve_time, "other_time": r.other_time, "wall_time": r.solve_time + r.other_time,
                "config": r.config,
            })
        return records


def describe_item(env: Any, item: int) -> str:
    """An item index as the user reads it: the decoded joint action (a0, a1, ...) for factored instances."""
    decode = getattr(env, "decode", None)
    if decode is None:
        return str(int(item))
    from .multiagent.joint_actions import show_joint

    return show_joint(decode(item))
