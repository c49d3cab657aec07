"""Fixed-budget and anytime best-arm identification: the probability of error after T pulls, for every T of a grid.

==========  ======================================================================================================
schedules   Successive Rejects' phase lengths, Sequential Halving's rounds (exact rationals), the check of a budget
            grid
rules       rules run to a budget known in advance: Successive Rejects, Sequential Halving (one run per budget)
runner      run_fixed_budget: an anytime sampling rule read at every budget of one trajectory, or a rule run to each
            budget; the recommendation scored by the question's ``correct`` and its simple regret
==========  ======================================================================================================

``bandits run NAME --instance I --budget T1,T2,...`` and a study's ``mode = "fixed-budget"`` with
``budgets = [...]`` (:mod:`bandits.studies.spec`) run them; the sampling rules' names run anytime there.
"""

from .rules import BudgetOutcome, BudgetRule, SequentialHalving, SuccessiveRejects
from .runner import BudgetResult, check_run_budgets, minimum_budget, question_of, run_fixed_budget
from .schedules import check_budgets, halving_rounds, log_bar, successive_rejects_lengths

__all__ = ["BudgetOutcome", "BudgetResult", "BudgetRule", "SequentialHalving", "SuccessiveRejects", "check_budgets",
           "check_run_budgets", "halving_rounds", "log_bar", "minimum_budget", "question_of", "run_fixed_budget",
           "successive_rejects_lengths"]
