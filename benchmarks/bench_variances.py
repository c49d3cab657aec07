"""Gaussian arms of unequal variances: the oracle's fast path against its cutting-plane program, and the cost per
sample of a run with unknown variances against the same run told them.

    python benchmarks/bench_variances.py                  # 5 random instances of K = 10 arms, 20 runs per model
    python benchmarks/bench_variances.py --arms 30 --instances 3 --runs 10

Part 1 solves T* of every instance (``heteroscedastic:K=K,seed=S``) for both models by the program
(``method="program"``, cvxpy and CLARABEL) and by Garivier & Kaufmann's equalisation (``method="equalise"``, the
runs' oracle), in the same process, and prints the median times, their ratio and the largest relative difference of
the two values. Part 2 runs EB-TCI under the delta-correct ``theory`` threshold at delta = 0.01 on the first
instance, with the EV-GLR and with the variances known, on the same seeds, and prints the mean samples and the
microseconds per sample of each.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import optdesign as od
from bandits.instances import parse_instance
from bandits.registry import make_algorithm
from bandits.run import run


def oracle_times(arms: int, instances: int) -> None:
    """Part 1: program against equalisation, both models."""
    for known in (True, False):
        slow, fast, diff = [], [], 0.0
        for seed in range(1, instances + 1):
            env = parse_instance(f"heteroscedastic:K={arms},seed={seed}")
            od.heteroscedastic_characteristic_time(env.means, env.sigmas, known_variances=known, method="equalise")
            start = time.perf_counter()
            program = od.heteroscedastic_characteristic_time(env.means, env.sigmas, known_variances=known)
            slow.append(time.perf_counter() - start)
            start = time.perf_counter()
            equal = od.heteroscedastic_characteristic_time(env.means, env.sigmas, known_variances=known,
                                                           method="equalise")
            fast.append(time.perf_counter() - start)
            diff = max(diff, abs(program.value - equal.value) / equal.value)
        a, b = statistics.median(slow), statistics.median(fast)
        label = "known" if known else "unknown"
        print(f"T*, {label} variances, K = {arms}: program {a * 1e3:.1f} ms, equalisation {b * 1e3:.2f} ms "
              f"({a / b:.0f}x); largest relative difference {diff:.1e}")


def run_costs(arms: int, runs: int) -> None:
    """Part 2: EB-TCI with the EV-GLR and with the variances known, theory threshold, same seeds."""
    env = parse_instance(f"heteroscedastic:K={arms},seed=1")
    for question in ("", ",problem=known-variances"):
        algorithm = make_algorithm(f"top-two:challenger=tci,threshold=theory{question}")
        run(algorithm, env, 0.01, seed=0)  # compile the kernels
        start, samples, wrong = time.perf_counter(), [], 0
        for seed in range(runs):
            result = run(algorithm, env, 0.01, seed=seed)
            samples.append(result.samples)
            wrong += not result.correct
        wall = time.perf_counter() - start
        label = "known variances" if question else "EV-GLR"
        print(f"EB-TCI, theory, {label}: mean {np.mean(samples):.0f} samples, {wrong} wrong in {runs}, "
              f"{wall / sum(samples) * 1e6:.1f} us per sample")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arms", type=int, default=10)
    parser.add_argument("--instances", type=int, default=5)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    oracle_times(args.arms, args.instances)
    run_costs(args.arms, args.runs)


if __name__ == "__main__":
    main()
