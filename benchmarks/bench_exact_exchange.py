"""The exchange of exact designs (optdesign.exact_designs) from one start at a time: how often a local search ends at
the best design found, by kind of start and with or without pair moves, on the response surfaces of RESULTS §15.

    python benchmarks/bench_exact_exchange.py                  # 300 starts a kind, four cases (about 10 s)
    python benchmarks/bench_exact_exchange.py --starts 100

For each case (the full quadratic model in k factors on the 3^k grid, N runs, criterion D, A or I) the same starts
are searched with single moves only (``local_optimum(..., pairs=False)``) and with pair moves (the default).
Starts: ``extreme`` (``optdesign.exact_designs.starts.extreme_start``, the kind exact_design restarts from) and
``uniform`` (N runs drawn uniformly over the candidates, made spanning: the baseline). Columns: the share of searches
that end at the best value found in the case (any kind, either search), the best efficiency reached (against the
certified approximate bound), and milliseconds per search (one BLAS thread).
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # one core, before numpy loads
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from bench_designs_vs_r import response_surface  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

import optdesign as od  # noqa: E402
from optdesign.exact_designs.criteria import ExactCriterion, ExactDCriterion, ExactLinearCriterion  # noqa: E402
from optdesign.exact_designs.design import _moments  # noqa: E402
from optdesign.exact_designs.exchange import Exchange, local_optimum  # noqa: E402
from optdesign.exact_designs.starts import extreme_start, spanning  # noqa: E402

CASES = [(3, "A", 21), (4, "D", 29), (4, "A", 36), (4, "I", 25)]


def uniform_start(X: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """The baseline: n runs drawn uniformly over the candidates, made spanning."""
    return spanning(X, np.bincount(rng.integers(0, X.shape[0], n), minlength=X.shape[0]))


def searches(X: np.ndarray, n: int, rule: ExactCriterion, starts: list[np.ndarray], pairs: bool
             ) -> tuple[np.ndarray, float]:
    """(criterion value of each local optimum, seconds per search)."""
    values, begin = [], time.perf_counter()
    for counts in starts:
        found, _, _ = local_optimum(X, counts, rule, True, pairs=pairs)
        values.append(rule.value(Exchange(X, found, rule, True).factor(), n))
    return np.array(values), (time.perf_counter() - begin) / len(starts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=300, help="starts of each kind per case")
    args = parser.parse_args()
    table = Table(title=f"Local searches ending at the best design found ({args.starts} starts a kind)")
    for col in ("k", "crit", "N", "start", "pairs", "share at best", "best eff", "ms / search"):
        table.add_column(col, justify="right")
    for k, criterion, n in CASES:
        X = response_surface(k)
        B = _moments(None, X, criterion)
        rule: ExactCriterion = ExactDCriterion() if B is None else ExactLinearCriterion(B, criterion)
        bound = od.exact_design(X, n, criterion, restarts=0).lower_bound
        rng = np.random.default_rng(0)
        starts = {"uniform": [uniform_start(X, n, rng) for _ in range(args.starts)],
                  "extreme": [extreme_start(X, n, True, rng) for _ in range(args.starts)]}
        rows = {(kind, pairs): searches(X, n, rule, found, pairs)
                for kind, found in starts.items() for pairs in (False, True)}
        best = min(values.min() for values, _ in rows.values())
        for (kind, pairs), (values, seconds) in rows.items():
            table.add_row(str(k), criterion, str(n), kind, "yes" if pairs else "no",
                          f"{np.mean(values <= best * (1 + 1e-9)):.3f}", f"{bound / values.min():.5f}",
                          f"{1e3 * seconds:.2f}")
    Console(width=120).print(table)


if __name__ == "__main__":
    main()
