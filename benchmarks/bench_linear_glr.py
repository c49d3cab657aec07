"""Cost of the linear GLR statistic at the counts: the shared implementation against the two it replaced.

    python benchmarks/bench_linear_glr.py                      # 20 count vectors, 200 timed calls each
    python benchmarks/bench_linear_glr.py --blas-threads 2     # the BLAS threads of an ordinary run

Instances: Soare et al.'s (d = 6, omega = 0.1, Z = X) and a random one (K = 50 Gaussian arms in R^20, 1,000
Gaussian items). At random counts (1 to 100 pulls per arm) and reward sums drawn from the model, each row times
one evaluation as a run makes it, before (the former code, copied compactly below) and now:

* ``algorithms``: the linear algorithms' stop check, ``LinearStatistics.glr`` (value and empirical best);
* ``GLR stop``: the pure-exploration stop check, the estimate then ``LinearProblem.pieces`` without gradients;
* ``pieces + gradients``: ``LinearProblem.pieces`` with the gradients (samplers, certified brackets);
* ``LinGame gains``: LinGame's best response at weights and its |x_k^T (theta_hat - lambda)|.

Times are medians over the calls (old and new interleaved, so a load change affects both alike); the ratio is
new / old. The values agree to round-off (the largest relative difference is printed).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
from rich.console import Console
from rich.table import Table
from scipy.linalg import cho_factor, cho_solve, solve_triangular
from threadpoolctl import threadpool_limits

from bandits.core.alternatives import Directions
from bandits.core.environments import LinearBandit
from bandits.core.statistics import LinearStatistics
from bandits.instances import soare
from bandits.pure_exploration import LinearProblem


def old_statistics_glr(stats: LinearStatistics, Z: np.ndarray, sigma: float) -> tuple[int, float]:
    """The former ``LinearStatistics.glr``: Cholesky, whitened items by triangular solves."""
    fac = cho_factor(stats.A, lower=True, check_finite=False)
    scores = Z @ cho_solve(fac, stats.b, check_finite=False)
    j = int(np.argmax(scores))
    whitened = solve_triangular(fac[0], Z.T, lower=True, check_finite=False)
    diff = whitened - whitened[:, j : j + 1]
    gaps = scores[j] - scores
    ratio = gaps**2 / (2.0 * sigma**2 * np.maximum(np.einsum("ij,ij->j", diff, diff), 1e-300))
    ratio[j] = gaps[j] = np.inf
    return j, 0.0 if np.min(gaps) <= 0 else float(np.min(ratio))


def old_pieces(problem: LinearProblem, mu: np.ndarray, w: np.ndarray, gradients: bool) -> tuple[int, np.ndarray]:
    """The former ``LinearProblem.pieces``: explicit inverse of A(w), differences y_j, then A^{-1} y_j."""
    X, Z, A = problem.X, problem.Z, problem.information_weights(w)
    M = np.linalg.inv(A)
    best = int(np.argmax(Z @ mu))
    Y = Z[best] - Z[np.delete(np.arange(Z.shape[0]), best)]
    MY = Y @ M
    norms = np.maximum(np.einsum("jd,jd->j", Y, MY), 1e-300)
    gaps = Y @ mu
    two_var = 2.0 * problem.sigma**2
    values = np.where(gaps > 0, gaps**2 / (two_var * norms), 0.0)
    if gradients:
        _ = (np.where(gaps > 0, gaps / norms, 0.0)[:, None] * (MY @ X.T)) ** 2 / two_var
    return best, values


def old_estimate(problem: LinearProblem, counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """The former ``LinearProblem.estimate``."""
    return np.linalg.solve(problem.information(counts), problem.X.T @ sums)


def old_lingame(problem: LinearProblem, mu: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """The former LinGame best response at weights w; the answers' differences were kept per batch (not timed)."""
    best = int(np.argmax(problem.Z @ mu))
    Y = problem.Z[best] - np.delete(problem.Z, best, axis=0)
    gaps = Y @ mu

    def gains(w: np.ndarray) -> np.ndarray:
        HY = Y @ np.linalg.inv(problem.X.T @ (problem.X * w[:, None]))
        q = np.maximum(np.einsum("jd,jd->j", HY, Y), 1e-300)
        j = int(np.argmin(np.where(gaps > 0, gaps, 0.0) ** 2 / q))
        return np.abs(problem.X @ HY[j]) * (max(gaps[j], 0.0) / q[j])

    return gains


def new_lingame(problem: LinearProblem, mu: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """LinGame's best response now; the directions are formed per batch (not timed)."""
    directions = Directions(problem.Z, mu)

    def gains(w: np.ndarray) -> np.ndarray:
        alternatives = problem.alternatives(mu, w, directions=directions)
        return np.abs(problem.X @ alternatives.displacement(int(np.argmin(alternatives.values))))

    return gains


def cases(env: LinearBandit, counts: np.ndarray, sums: np.ndarray) -> dict[str, tuple[Callable[[], float], ...]]:
    """Per row: the old call and the new one, each returning a number (compared to check the two agree)."""
    problem = LinearProblem(env.X, env.Z, env.sigma)
    Z = problem.Z
    stats = LinearStatistics(env.X)
    stats.add(counts, sums)
    mu = problem.estimate(counts, sums)
    w = counts / counts.sum()
    lingame, lingame_now = old_lingame(problem, mu), new_lingame(problem, mu)
    return {
        "algorithms": (lambda: old_statistics_glr(stats, Z, env.sigma)[1], lambda: stats.glr(Z, env.sigma).value),
        "GLR stop": (lambda: float(old_pieces(problem, old_estimate(problem, counts, sums), counts, False)[1].min()),
                     lambda: problem.pieces(problem.estimate(counts, sums), counts, gradients=False).value),
        "pieces + gradients": (lambda: float(old_pieces(problem, mu, w, True)[1].min()),
                               lambda: problem.pieces(mu, w).value),
        "LinGame gains": (lambda: float(lingame(w).sum()),
                          lambda: float(lingame_now(w).sum())),
    }


def measure(env: LinearBandit, vectors: int, calls: int, seed: int) -> dict[str, tuple[float, float, float]]:
    """Median seconds per call, old and new, and the largest relative difference of the values."""
    rng = np.random.default_rng(seed)
    times: dict[str, tuple[list[float], list[float]]] = {}
    worst: dict[str, float] = {}
    for _ in range(vectors):
        counts = np.asarray(rng.integers(1, 101, size=env.X.shape[0]))
        sums = env.pull(counts, rng)
        for name, (old, new) in cases(env, counts, sums).items():
            a, b = old(), new()
            worst[name] = max(worst.get(name, 0.0), abs(a - b) / max(abs(a), 1e-300))
            slots = times.setdefault(name, ([], []))
            for _ in range(calls):
                for slot, f in zip(slots, (old, new), strict=True):
                    start = time.perf_counter()
                    f()
                    slot.append(time.perf_counter() - start)
    return {name: (float(np.median(o)), float(np.median(n)), worst[name]) for name, (o, n) in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vectors", type=int, default=20, help="random count vectors per instance")
    parser.add_argument("--calls", type=int, default=200, help="timed calls per vector and implementation")
    parser.add_argument("--blas-threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    X = rng.normal(size=(50, 20))
    instances = [soare(d=6, omega=0.1),
                 LinearBandit(X, rng.normal(size=20), Z=rng.normal(size=(1000, 20)), name="random(K=50,d=20,|Z|=1000)")]
    table = Table(title=f"Linear GLR at the counts: median microseconds per call, BLAS threads = {args.blas_threads}")
    for col in ("instance", "evaluation", "old (us)", "new (us)", "new / old", "max rel. difference"):
        table.add_column(col, justify="right")
    with threadpool_limits(limits=args.blas_threads):
        for env in instances:
            for name, (old, new, worst) in measure(env, args.vectors, args.calls, args.seed).items():
                table.add_row(env.name, name, f"{1e6 * old:.1f}", f"{1e6 * new:.1f}", f"{new / old:.2f}",
                              f"{worst:.1e}")
    Console(width=140).print(table)


if __name__ == "__main__":
    main()
