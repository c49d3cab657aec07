"""The problems ``optdesign solve`` knows, and the families of options each one takes."""

from __future__ import annotations

from enum import Enum

__all__ = [
    "CLASSICAL_PROBLEMS",
    "EXACT_CRITERIA",
    "FACTOR_GRAPH_PROBLEMS",
    "STANDALONE_PROBLEMS",
    "RegretMethod",
    "SolveProblem",
]


class SolveProblem(str, Enum):
    g_optimal = "g-optimal"
    d_optimal = "d-optimal"
    a_optimal = "a-optimal"
    i_optimal = "i-optimal"
    c_optimal = "c-optimal"
    e_optimal = "e-optimal"
    ds_optimal = "ds-optimal"
    xy = "xy"
    xy_oracle = "xy-oracle"
    transductive = "transductive"
    bilinear = "bilinear"
    char_time = "char-time"
    mf_char_time = "mf-char-time"
    regret = "regret"


class RegretMethod(str, Enum):
    exact = "exact"
    mf = "mf"


#: the multi-agent lower bounds: a factor graph (--instance)
FACTOR_GRAPH_PROBLEMS = (SolveProblem.char_time, SolveProblem.mf_char_time, SolveProblem.regret)
#: the classical criteria of optdesign.linear.classical beside G and D
CLASSICAL_PROBLEMS = (
    SolveProblem.a_optimal, SolveProblem.i_optimal, SolveProblem.c_optimal,
    SolveProblem.e_optimal, SolveProblem.ds_optimal,
)
#: designs on candidates alone: arms or a formula, linear constraints, diagnostics, an FDS plot
STANDALONE_PROBLEMS = (SolveProblem.g_optimal, SolveProblem.d_optimal, *CLASSICAL_PROBLEMS)
#: the problems an exact N-run design (--runs) exists for, and its criterion
EXACT_CRITERIA = {SolveProblem.d_optimal: "D", SolveProblem.a_optimal: "A", SolveProblem.i_optimal: "I"}
