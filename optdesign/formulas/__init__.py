"""Candidate sets from model formulas: design regions as factor settings, model matrices, designs as tables.

=========  ==========================================================================================
regions    ``factor_grid`` (levels or ranges per factor, full factorial), ``cube`` (k factors on [-1, 1]^k),
           ``simplex_lattice`` (the {q, m} lattice of mixtures, Scheffé 1958)
formula    ``candidates(formula, factors)``: the model matrix X of a Wilkinson formula (``formulaic``) at
           every point; ``model_terms``: the columns of each term; ``design_table``: a design's support in
           factor settings, with runs or weights
=========  ==========================================================================================
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .formula import CandidateSet, candidates, design_table, model_terms
    from .regions import cube, factor_grid, simplex_lattice

# pandas and formulaic load on first use of a name
_EXPORTS = {
    ".formula": ("CandidateSet", "candidates", "design_table", "model_terms"),
    ".regions": ("cube", "factor_grid", "simplex_lattice"),
}
if not TYPE_CHECKING:  # type checkers see the imports above
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["CandidateSet", "candidates", "cube", "design_table", "factor_grid", "model_terms", "simplex_lattice"]
