"""Exact N-run designs: integer run counts on a candidate set, certified against the approximate optimum.

=================  ========================================================================================
design             public entry point ``exact_design(X, n, criterion, fixed=...)``: D, A, I; repeats allowed or not
result             ``ExactDesignResult``: counts, value, certified lower bound and efficiency
criteria           the criterion pieces of the exchange (value, swap gains by the determinant lemma and Woodbury)
exchange           Fedorov's exchange with rank-one (Sherman–Morrison) updates, every move priced at once
pair_moves         two runs moved at once (4 x 4 determinant lemma, Woodbury): the step out of a one-run local optimum
starts             starting designs: the rounded approximate optimum, random designs, made nonsingular (fixed runs kept)
augment            fixed runs (already made or forced): their checks, the augmented approximate optimum and its bound
bounds             the approximate optimum and its certified bound (Kiefer–Wolfowitz for D, duality for A/I)
blocked            ``blocked_design(X, block_sizes, ...)``: runs in blocks, fixed or random block effects; its bound
split_plot         ``split_plot_design(formula, whole, sub, sizes, ...)``: hard-to-change factors per whole plot
split_split_plot   ``split_split_plot_design``: very hard-to-change factors per whole plot, hard ones per sub-plot
strip_plot         ``strip_plot_design``: hard-to-change factors per row and per column of a grid of cells
restricted         the search and report of the three designs with hard-to-change factors, and their bounds
plot_layout        their candidates: every combination of the settings of each kind of factor (mixed radix)
group_structure    V = I + sum_l eta_l Z_l Z_l^T of one or two groupings: Gamma of V^{-1} = I - Z Gamma Z^T, changes
block_information  ``blocked_information``: X^T V^{-1} X of grouped runs (fixed: within-block centred), move prices
block_search       the exchange of grouped runs: runs moved, exchanged between blocks, groups given new settings
block_state        the exchange's arrays: the plan a problem fixes for all its starts, the state of one start
block_passes       the exchange's passes, compiled (numba): groups given new settings, runs moved, runs exchanged
block_kernels      the exchange's state (M, its factor, M^{-1}, X M^{-1}) and the price of each move, compiled
block_algebra      small dense linear algebra of the exchange, compiled: Cholesky, LU, the low-rank price
block_result       ``BlockedDesignResult``: the runs group by group, D/A/I values, certified bound, ``table()``
block_bounds       the certified bound of grouped designs: the equivalence theorem over mixtures of groups
group_relaxation   the bound's relaxation over the simplex, compiled: pairwise Frank–Wolfe with exact line search
=================  ========================================================================================
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .block_information import blocked_information
    from .block_result import BlockedDesignResult
    from .blocked import blocked_design
    from .design import CRITERIA, exact_design
    from .result import ExactDesignResult
    from .split_plot import split_plot_design
    from .split_split_plot import split_split_plot_design
    from .strip_plot import strip_plot_design

_EXPORTS = {
    ".design": ("CRITERIA", "exact_design"),
    ".result": ("ExactDesignResult",),
    ".blocked": ("blocked_design",),
    ".split_plot": ("split_plot_design",),
    ".split_split_plot": ("split_split_plot_design",),
    ".strip_plot": ("strip_plot_design",),
    ".block_information": ("blocked_information",),
    ".block_result": ("BlockedDesignResult",),
}
if not TYPE_CHECKING:  # type checkers see the imports above
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["CRITERIA", "BlockedDesignResult", "ExactDesignResult", "blocked_design", "blocked_information",
           "exact_design", "split_plot_design", "split_split_plot_design", "strip_plot_design"]
