"""The K-armed oracle (GK16, Thm 5: KArmedProblem.oracle) against the algorithm it replaced, copied here as the
baseline and run in the same process:

    python benchmarks/bench_karmed_oracle.py                 # GK16's two Bernoulli instances, random K = 50
    python benchmarks/bench_karmed_oracle.py --repeat 200

* ``baseline_oracle``: the inner inverses x_a(y) by 60 vectorised bisection steps on u = x / (1 + x), inside
  scipy's brentq on the outer equation, then the certificate by the linear program of ``certified_bracket``;
* the new oracle: safeguarded Newton at both levels, certified with the optimal multipliers (no LP).

Both use the families' current kl (the log1p form, which itself made every kl call about 1.8x cheaper: the
baseline here is faster than the code it copies). Times are the median over ``--repeat`` calls of each (one BLAS
thread); the columns split them into the root finding and the certificate, and give the new/old ratio, the
relative difference of T* and the largest difference of w*.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
from rich.console import Console
from rich.table import Table
from scipy.optimize import brentq
from threadpoolctl import threadpool_limits

from bandits.pure_exploration import Bernoulli, ExponentialFamily, Gaussian, KArmedProblem, certified_bracket
from bandits.pure_exploration.karmed import _equalise

BISECTION_STEPS = 60


def baseline_weights(family: ExponentialFamily, mu: np.ndarray) -> np.ndarray:
    """w*(mu) by the replaced nested root finding (bisections on u inside brentq on y)."""
    b = int(np.argmax(mu))
    others = np.delete(np.arange(mu.size), b)
    mb, ma = mu[b], mu[others]
    top = float(family.kl(mb, ma).min())

    def inverses(y: float) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = np.zeros(ma.size), np.ones(ma.size)
        for _ in range(BISECTION_STEPS):
            u = 0.5 * (lo + hi)
            m = (1 - u) * mb + u * ma
            below = ((1 - u) * family.kl(mb, m) + u * family.kl(ma, m)) / (1 - u) < y
            lo, hi = np.where(below, u, lo), np.where(below, hi, u)
        u = 0.5 * (lo + hi)
        return u / (1 - u), (1 - u) * mb + u * ma

    def balance(y: float) -> float:
        _, m = inverses(y)
        return float(np.sum(family.kl(mb, m) / np.maximum(family.kl(ma, m), 1e-300)) - 1.0)

    x, _ = inverses(brentq(balance, top * 1e-12, top * (1 - 1e-12), xtol=1e-15 * top, rtol=1e-13))
    w = np.empty(mu.size)
    w[b] = 1.0 / (1.0 + x.sum())
    w[others] = x * w[b]
    return w


def baseline_oracle(problem: KArmedProblem, mu: np.ndarray) -> tuple[float, np.ndarray]:
    """T* (certified upper end) and w* as the replaced oracle computed them."""
    w = baseline_weights(problem.family, mu)
    _, upper = certified_bracket(problem, mu, w)
    return upper, w


def new_weights(family: ExponentialFamily, mu: np.ndarray) -> np.ndarray:
    """The new root finding alone (what KArmedProblem.oracle does before certifying)."""
    b = int(np.argmax(mu))
    others = np.delete(np.arange(mu.size), b)
    u, _ = _equalise(family, mu[b], mu[others], family.kl(mu[b], mu[others]))
    return u


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    """Median wall time of ``repeat`` calls, in milliseconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * float(np.median(times))


def instances(seed: int) -> list[tuple[str, ExponentialFamily, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [("GK16 mu1 (Bernoulli)", Bernoulli(), np.array([0.5, 0.45, 0.43, 0.4])),
            ("GK16 mu2 (Bernoulli)", Bernoulli(), np.array([0.3, 0.21, 0.2, 0.19, 0.18])),
            ("random Bernoulli", Bernoulli(), rng.uniform(0.05, 0.95, size=50)),
            ("random Gaussian", Gaussian(1.0), rng.normal(size=50))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=50, help="calls of each oracle per instance")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random K = 50 instances")
    args = parser.parse_args()
    console = Console(width=160)
    table = Table(title=f"K-armed oracle, median of {args.repeat} calls (ms): old = bisection in brentq + LP "
                        "certificate, new = Newton + multiplier certificate")
    for col in ("instance", "K", "old", "old roots", "new", "new roots", "old / new", "|dT| / T", "max |dw|"):
        table.add_column(col, justify="right")
    with threadpool_limits(limits=1):
        for name, family, mu in instances(args.seed):
            problem = KArmedProblem(mu.size, family)
            T_old, w_old = baseline_oracle(problem, mu)
            oracle = problem.oracle(mu)
            old = median_ms(lambda p=problem, m=mu: baseline_oracle(p, m), args.repeat)
            old_roots = median_ms(lambda f=family, m=mu: baseline_weights(f, m), args.repeat)
            new = median_ms(lambda p=problem, m=mu: p.oracle(m), args.repeat)
            new_roots = median_ms(lambda f=family, m=mu: new_weights(f, m), args.repeat)
            table.add_row(name, str(mu.size), f"{old:.2f}", f"{old_roots:.2f}", f"{new:.3f}", f"{new_roots:.3f}",
                          f"{old / new:.1f}x", f"{abs(oracle.T / T_old - 1):.1e}",
                          f"{np.abs(oracle.weights - w_old).max():.1e}")
    console.print(table)


if __name__ == "__main__":
    main()
