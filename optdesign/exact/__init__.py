"""Exact N-run designs: integer run counts on a candidate set, certified against the approximate optimum.

==========  ========================================================================================
design      public entry point ``exact_design(X, n, criterion, fixed=...)``: D, A, I; repeats allowed or not
result      ``ExactDesignResult``: counts, value, certified lower bound and efficiency
criteria    the criterion pieces of the exchange (value, swap gains by the determinant lemma and Woodbury)
exchange    Fedorov's exchange with rank-one (Sherman–Morrison) updates, every move priced at once
pair_moves  two runs moved at once (4 x 4 determinant lemma, Woodbury): the step out of a one-run local optimum
starts      starting designs: the rounded approximate optimum, random designs, made nonsingular (fixed runs kept)
augment     fixed runs (already made or forced): their checks, the augmented approximate optimum and its bound
bounds      the approximate optimum and its certified bound (Kiefer–Wolfowitz for D, duality for A/I)
==========  ========================================================================================
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .design import CRITERIA, exact_design
    from .result import ExactDesignResult

_EXPORTS = {
    ".design": ("CRITERIA", "exact_design"),
    ".result": ("ExactDesignResult",),
}
if not TYPE_CHECKING:  # type checkers see the imports above
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["CRITERIA", "ExactDesignResult", "exact_design"]
