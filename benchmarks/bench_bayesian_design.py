"""Pseudo-Bayesian D-optimal designs of GLMs (optdesign.glm): the certified fast path at the target size, on one core.

    python benchmarks/bench_bayesian_design.py                     # the targets and N-run designs (about 60 s)
    python benchmarks/bench_bayesian_design.py --draws 2000 --grid 150 --repeats 1
    python benchmarks/bench_bayesian_design.py --compare           # also the cvxpy model on small instances
    python benchmarks/bench_bayesian_design.py --exact-runs 0      # without the N-run designs

Target: 1,000 prior draws on 10^4 candidates (p = 4 to 6) solved and certified to gap <= 1e-6 in under 10 s on one
core. Instances: two factors on the grid [-1, 1]^2 (``--grid`` points a side, 100: 10^4 candidates), the models
1 + x1 + x2 + x1 x2 (p = 4) and the full quadratic (p = 6), draws theta_s ~ N(mean, 0.5^2 I) with
mean = (0.5, 2, -1.5, 1, -1, 0.5) cut to p; links logit, probit and log (Poisson, its draws halved so that the counts
stay moderate). Each row is one call of ``od.bayesian_d_optimal(X, draws, link, tol=1e-6)`` (the input checks and
the K x S weights included), the best of ``--repeats``, with BLAS limited to one thread before numpy loads
(threadpoolctl as well). Columns: seconds, the certified gap max_i d_i / p - 1, pricing passes (rounds of the active
set), the support's size, and the peak resident memory of the process so far.

N-run designs (``od.bayesian_exact_design(X, draws, link, N, restarts=R)``, the second table; ``--exact-runs N``,
12 by default, ``--exact-restarts R``, 4 by default): the same instances, the exchange over every draw from the
rounded approximate optimum and R other starts. Columns: seconds for the whole call (the approximate design behind
the bound included, then the exchange), the value exp(-Phi(n / N) / p), the certified efficiency lower_bound /
value, the starts, the runs moved over all of them, and the candidates used.
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # one core, before numpy loads
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import resource  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import optdesign as od  # noqa: E402

MEAN = np.array([0.5, 2.0, -1.5, 1.0, -1.0, 0.5])
CASES = (("logit", 4), ("logit", 6), ("probit", 4), ("probit", 6), ("log", 4), ("log", 6))


def instance(grid: int, p: int, draws: int, link: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    g = np.linspace(-1.0, 1.0, grid)
    x1, x2 = (a.ravel() for a in np.meshgrid(g, g))
    columns = [np.ones_like(x1), x1, x2, x1 * x2, x1**2, x2**2][:p]
    scale = 0.5 if link == "log" else 1.0
    theta = scale * np.random.default_rng(seed).normal(MEAN[:p], 0.5, size=(draws, p))
    return np.column_stack(columns), theta


def table_targets(console: Console, grid: int, draws: int, tol: float, repeats: int) -> None:
    t = Table(title=f"Fast path, one core: {draws:,} draws on {grid * grid:,} candidates, tol {tol:g} (target < 10 s)")
    for col in ("link", "p", "seconds", "gap", "status", "rounds", "support", "log det", "peak RSS [GiB]"):
        t.add_column(col, justify="right")
    for link, p in CASES:
        X, theta = instance(grid, p, draws, link)
        best, res = np.inf, None
        for _ in range(repeats):
            start = time.perf_counter()
            res = od.bayesian_d_optimal(X, theta, link, method="fast", tol=tol)
            best = min(best, time.perf_counter() - start)
        assert res is not None
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        t.add_row(link, str(p), f"{best:.2f}", f"{res.gap:.1e}", res.status, str(res.iterations),
                  str(res.support.size), f"{res.extras['log_det']:.6f}", f"{rss:.2f}")
    console.print(t)


def table_exact(console: Console, grid: int, draws: int, runs: int, restarts: int) -> None:
    t = Table(title=f"N = {runs} runs, one core: {draws:,} draws on {grid * grid:,} candidates, "
                    f"{restarts + 1} starts")
    for col in ("link", "p", "seconds", "value", "certified eff.", "starts", "moves", "support"):
        t.add_column(col, justify="right")
    for link, p in CASES:
        X, theta = instance(grid, p, draws, link)
        start = time.perf_counter()
        res = od.bayesian_exact_design(X, theta, link, runs, restarts=restarts)
        seconds = time.perf_counter() - start
        t.add_row(link, str(p), f"{seconds:.2f}", f"{res.value:.6g}", f"{res.efficiency:.4f}", str(res.starts),
                  str(res.moves), str(res.support.size))
    console.print(t)


def table_compare(console: Console) -> None:
    t = Table(title="Fast path (tol 1e-9) against the cvxpy model (CLARABEL), same instances")
    for col in ("link", "K x S", "fast [s]", "fast gap", "cvxpy [s]", "cvxpy gap", "values differ"):
        t.add_column(col, justify="right")
    for link, p in (("logit", 4), ("probit", 6), ("log", 4)):
        for grid, draws in ((11, 10), (21, 20)):
            X, theta = instance(grid, p, draws, link)
            start = time.perf_counter()
            fast = od.bayesian_d_optimal(X, theta, link, method="fast", tol=1e-9)
            t_fast = time.perf_counter() - start
            start = time.perf_counter()
            model = od.bayesian_d_optimal(X, theta, link, method="cvxpy")
            t_model = time.perf_counter() - start
            t.add_row(link, f"{X.shape[0]} x {draws}", f"{t_fast:.3f}", f"{fast.gap:.1e}", f"{t_model:.2f}",
                      f"{model.gap:.1e}", f"{abs(fast.value / model.value - 1):.1e}")
    console.print(t)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--grid", type=int, default=100, help="grid points a side (candidates: grid^2)")
    parser.add_argument("--draws", type=int, default=1000, help="prior draws S")
    parser.add_argument("--tol", type=float, default=1e-6, help="certified relative gap")
    parser.add_argument("--repeats", type=int, default=3, help="calls per case; the best time is reported")
    parser.add_argument("--compare", action="store_true", help="also the fast path against the cvxpy model")
    parser.add_argument("--exact-runs", type=int, default=12, help="runs N of the N-run designs (0: none)")
    parser.add_argument("--exact-restarts", type=int, default=4, help="starts after the first of the N-run designs")
    args = parser.parse_args()
    console = Console(width=140)
    with threadpool_limits(1):
        od.bayesian_d_optimal(*instance(5, 4, 3, "logit"), "logit")  # imports and first calls off the clock
        table_targets(console, args.grid, args.draws, args.tol, args.repeats)
        if args.exact_runs > 0:
            table_exact(console, args.grid, args.draws, args.exact_runs, args.exact_restarts)
        if args.compare:
            table_compare(console)


if __name__ == "__main__":
    main()
