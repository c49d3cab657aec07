"""Standardised maximin D-optimal designs of GLMs (optdesign.glm): the certified fast path, on one core.

    python benchmarks/bench_maximin_design.py                      # 100 values on 10^4 candidates (about 30 s)
    python benchmarks/bench_maximin_design.py --values 300 --grid 50
    python benchmarks/bench_maximin_design.py --compare            # also the cvxpy model on small instances

Instances as in bench_bayesian_design.py: two factors on the grid [-1, 1]^2 (``--grid`` points a side, 100: 10^4
candidates), the models 1 + x1 + x2 + x1 x2 (p = 4) and the full quadratic (p = 6), parameter values
theta_s ~ N(mean, 0.5^2 I) (halved for the Poisson model); links logit, probit and log. Each row times the two parts
of ``od.maximin_d_optimal(X, thetas, link, tol=1e-6)`` separately: the S local D-optimal designs that standardise the
criterion (:func:`optdesign.glm.standardise.maximin_problem`, the input checks and the K x S weights included) and
the maximin solve (:func:`optdesign.glm.maximin.solve_maximin`, ``method="fast"``). Columns: seconds of each, the
certified gap, pricing passes, the support's size, the least efficiency and the number of values the least
favourable prior weighs (q_s > 1e-6).
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # one core, before numpy loads
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import optdesign as od  # noqa: E402
from optdesign.glm.maximin import solve_maximin  # noqa: E402
from optdesign.glm.standardise import maximin_problem  # noqa: E402

MEAN = np.array([0.5, 2.0, -1.5, 1.0, -1.0, 0.5])
CASES = (("logit", 4), ("logit", 6), ("probit", 4), ("probit", 6), ("log", 4), ("log", 6))


def instance(grid: int, p: int, values: int, link: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    g = np.linspace(-1.0, 1.0, grid)
    x1, x2 = (a.ravel() for a in np.meshgrid(g, g))
    columns = [np.ones_like(x1), x1, x2, x1 * x2, x1**2, x2**2][:p]
    scale = 0.5 if link == "log" else 1.0
    theta = scale * np.random.default_rng(seed).normal(MEAN[:p], 0.5, size=(values, p))
    return np.column_stack(columns), theta


def table_fast(console: Console, grid: int, values: int, tol: float) -> None:
    t = Table(title=f"Fast path, one core: {values:,} parameter values on {grid * grid:,} candidates, tol {tol:g}")
    for col in ("link", "p", "local [s]", "maximin [s]", "gap", "status", "rounds", "support", "efficiency",
                "binding"):
        t.add_column(col, justify="right")
    for link, p in CASES:
        X, theta = instance(grid, p, values, link)
        start = time.perf_counter()
        problem = maximin_problem(X, theta, link, tol=tol)
        middle = time.perf_counter()
        res = solve_maximin(problem, "fast", None, tol)
        end = time.perf_counter()
        t.add_row(link, str(p), f"{middle - start:.2f}", f"{end - middle:.2f}", f"{res.gap:.1e}", res.status,
                  str(res.iterations), str(res.support.size), f"{res.extras['efficiency']:.6f}",
                  str(int((res.extras["least_favourable"] > 1e-6).sum())))
    console.print(t)


def table_compare(console: Console) -> None:
    t = Table(title="Fast path (tol 1e-9) against the cvxpy model (CLARABEL), same instances")
    for col in ("link", "K x S", "fast [s]", "fast gap", "cvxpy [s]", "cvxpy gap", "values differ"):
        t.add_column(col, justify="right")
    for link, p in (("logit", 4), ("probit", 6), ("log", 4)):
        for grid, values in ((11, 10), (21, 20)):
            X, theta = instance(grid, p, values, link)
            start = time.perf_counter()
            fast = od.maximin_d_optimal(X, theta, link, method="fast", tol=1e-9)
            t_fast = time.perf_counter() - start
            start = time.perf_counter()
            model = od.maximin_d_optimal(X, theta, link, method="cvxpy")
            t_model = time.perf_counter() - start
            t.add_row(link, f"{X.shape[0]} x {values}", f"{t_fast:.3f}", f"{fast.gap:.1e}", f"{t_model:.2f}",
                      f"{model.gap:.1e}", f"{abs(fast.value / model.value - 1):.1e}")
    console.print(t)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", type=int, default=100, help="grid points a side (K = grid^2)")
    parser.add_argument("--values", type=int, default=100, help="parameter values S")
    parser.add_argument("--tol", type=float, default=1e-6)
    parser.add_argument("--compare", action="store_true", help="also the cvxpy model on small instances")
    args = parser.parse_args()
    console = Console()
    with threadpool_limits(1):
        table_fast(console, args.grid, args.values, args.tol)
        if args.compare:
            table_compare(console)


if __name__ == "__main__":
    main()
