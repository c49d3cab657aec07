"""The questions asked of instances by name (``problem=NAME:options``): their problem classes per instance kind, as
``package.module:Class`` paths imported on first use, so ``bandits list`` shows them without loading any."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["PROBLEMS", "QUESTIONS", "Question"]


@dataclass(frozen=True)
class Question:
    """A question asked of instances in place of their own (``problem=NAME:options``).

    Parameters
    ----------
    classes : dict
        The problem class per instance kind, as ``"package.module:Class"`` (imported on first use).
    summary : str
        What the question asks, with its options (``bandits list``).
    preset : dict
        Options the name sets itself (the name's own choice of a class option).
    """

    classes: dict[str, str]
    summary: str
    preset: dict[str, Any] = field(default_factory=dict)


_PE = "bandits.pure_exploration"
_EPSILON_GOOD = {"karmed": f"{_PE}.epsilon_good:EpsilonGoodProblem",
                 "linear": f"{_PE}.linear_epsilon_good:LinearEpsilonGoodProblem",
                 "heteroscedastic": f"{_PE}.arm_epsilon_good:HeteroscedasticEpsilonGoodProblem",
                 "bounded": f"{_PE}.arm_epsilon_good:BoundedEpsilonGoodProblem"}
_VARIANCES = {"heteroscedastic": f"{_PE}.heteroscedastic:HeteroscedasticProblem"}
#: the questions by name, with their classes per kind (:func:`bandits.pure_exploration.algorithm.load_problem`)
QUESTIONS: dict[str, Question] = {
    "top-m": Question({"karmed": f"{_PE}.top_m:TopMProblem", "linear": f"{_PE}.linear_sets:LinearTopMProblem",
                       "heteroscedastic": f"{_PE}.arm_top_m:HeteroscedasticTopMProblem",
                       "bounded": f"{_PE}.arm_top_m:BoundedTopMProblem"},
                      "the m arms (items) of largest means (m; on unequal variances also known, statistic)"),
    "epsilon-good": Question(_EPSILON_GOOD, "an arm (item) within epsilon of the best mean (epsilon)"),
    # linear items' values may be negative: the fraction of the best is asked of arms only
    "multiplicative-epsilon-good": Question({kind: path for kind, path in _EPSILON_GOOD.items() if kind != "linear"},
                                            "an arm of mean at least (1 - epsilon) times the best (epsilon)",
                                            {"kind": "multiplicative"}),
    "threshold": Question({"karmed": f"{_PE}.threshold:ThresholdProblem",
                           "linear": f"{_PE}.linear_sets:LinearThresholdProblem",
                           "heteroscedastic": f"{_PE}.arm_levels:HeteroscedasticLevelsProblem",
                           "bounded": f"{_PE}.arm_levels:BoundedLevelsProblem"},
                          "every arm (item) whose mean is above a level, at the confidence delta (level)"),
    "unknown-variances": Question(_VARIANCES, "the best arm, the variances estimated (statistic: ev or plugin)"),
    "known-variances": Question(_VARIANCES, "the best arm, the variances known (the baseline)", {"known": True}),
}
#: the questions' classes by name and instance kind
PROBLEMS: dict[str, dict[str, str]] = {name: question.classes for name, question in QUESTIONS.items()}
