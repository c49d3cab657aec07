"""Sample complexity of linear best-arm identification on Soare et al.'s instance (their Fig. 4).

    python benchmarks/bench_linear_bai.py                  # d = 2..10, 5 runs each (about 1.5 minutes)
    python benchmarks/bench_linear_bai.py --runs 20 --dims 2,4,6 --algorithms xy-oracle lin-tas

Instance: arms e_1..e_d and (cos omega, sin omega, 0, ...), theta = 2 e_1, unit Gaussian noise,
delta = 0.05 (Delta_min = 2 (1 - cos omega), about 1e-4 at omega = 0.01). For each d the table
prints the mean number of samples (and its standard error) per algorithm, next to two reference
values computed by optdesign:

* N* = c^2 H_LB log(c' N*^2 K^2 / delta), c = 2 sqrt(2), c' = 6/pi^2: the oracle sample
  complexity of Soare et al. (eq. 7, fixed point in N*), in the constants their stopping rule uses;
* LB = 2 H_LB kl(delta, 1 - delta): the Gaussian lower bound on E[tau] (any delta-correct algorithm),

and every algorithm's mean as a ratio to N*. Stopping rules differ: the static designs and
``lin-tas:threshold=soare`` use the GLRT with Soare's eq. 11 threshold (the one N* assumes),
``lin-tas`` the practical threshold log((1 + log t)/delta), XY-Adaptive Soare's Lemma 4 discards,
RAGE and the fully adaptive variant their own confidence bounds (see their docstrings). The
stopping rule is checked on a 1 % geometric grid (overshoot <= 1 %).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from rich.console import Console
from rich.table import Table

import optdesign as od
from bandits.instances import soare
from bandits.registry import make_algorithm
from bandits.run import run
from optdesign.information import kl_delta

ALGORITHMS = ("g-static", "xy-static", "xy-adaptive", "xy-oracle", "lin-tas:threshold=soare", "lin-tas", "rage",
              "xy-fully-adaptive")


def oracle_sample_complexity(h_lb: float, n_arms: int, delta: float) -> float:
    """Fixed point N = 8 H_LB log(6/pi^2 N^2 K^2 / delta) (Soare et al. eq. 7 with c = 2 sqrt(2))."""
    n = 8 * h_lb
    for _ in range(100):
        n = 8 * h_lb * np.log(6 / np.pi**2 * n**2 * n_arms**2 / delta)
    return float(n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--omega", type=float, default=0.01)
    parser.add_argument("--delta", type=float, default=0.05)
    parser.add_argument("--dims", default="2,3,4,5,6,7,8,9,10")
    parser.add_argument("--algorithms", nargs="+", default=list(ALGORITHMS),
                        help="algorithm names with options, NAME[:key=value,...], separated by spaces")
    parser.add_argument("--max-samples", type=int, default=10**10)
    args = parser.parse_args()
    dims = [int(d) for d in args.dims.split(",")]
    names = args.algorithms
    console = Console(width=200)
    console.print(f"optdesign {od.__version__}; omega = {args.omega}, delta = {args.delta}, {args.runs} runs per cell")

    table = Table(title=f"Soare et al. instance, omega = {args.omega}: mean samples (ratio to N*)")
    for col in ("d", "H_LB", "N*", "LB", *names):
        table.add_column(col, justify="right")
    timing = Table(title="Wall time per run \\[s] (of which optdesign solves)")
    for col in ("d", *names):
        timing.add_column(col, justify="right")
    errors = 0
    for d in dims:
        env = soare(d, args.omega)
        h_lb = od.xy_oracle(env.X, env.theta).value
        n_star = oracle_sample_complexity(h_lb, env.n_arms, args.delta)
        lb = 2 * h_lb * kl_delta(args.delta)
        cells, times = [], []
        for name in names:
            algo = make_algorithm(name)
            samples, wall, solve = [], [], []
            for seed in range(args.runs):
                start = time.perf_counter()
                res = run(algo, env, args.delta, seed=seed, max_samples=args.max_samples)
                wall.append(time.perf_counter() - start)
                solve.append(res.solve_time)
                samples.append(res.samples if res.stopped_by != "budget" else np.nan)
                errors += int(not res.correct)
            mean = np.nanmean(samples)
            se = np.nanstd(samples) / np.sqrt(max(1, np.sum(np.isfinite(samples))))
            budget = "" if np.all(np.isfinite(samples)) else " (budget hit)"
            cells.append(f"{mean:.3g} ± {se:.1g} ({mean / n_star:.2f}){budget}")
            times.append(f"{np.mean(wall):.2f} ({np.mean(solve):.2f})")
        table.add_row(str(d), f"{h_lb:.4g}", f"{n_star:.3g}", f"{lb:.3g}", *cells)
        timing.add_row(str(d), *times)
    console.print(table)
    console.print(timing)
    console.print(f"wrong recommendations: {errors} of {len(dims) * len(names) * args.runs} runs")


if __name__ == "__main__":
    main()
