"""Arms with rewards in [0, 1], nothing else known: the oracle's fast path against its cutting-plane program, and
the cost per sample of the nonparametric learner against the Bernoulli one on the same runs.

    python benchmarks/bench_bounded.py                  # 5 random instances of K = 10 arms on 5 levels, 20 runs
    python benchmarks/bench_bounded.py --arms 20 --levels 11 --instances 3 --runs 10
    python benchmarks/bench_bounded.py --questions 8      # part 3 only: top m's oracle and cost per sample
    PYTHONPATH=../other-checkout python benchmarks/bench_bounded.py --questions 8   # another revision (a worktree)

Part 1 solves T* with KL_inf of every instance (``bounded:K=K,seed=S,levels=L``) by the program
(``method="program"``, cvxpy and CLARABEL) and by Garivier & Kaufmann's equalisation (``method="equalise"``, the
runs' oracle) in the same process, and prints the median times, their ratio and the largest relative difference of
the two values. Part 2 runs EB-TCI under the practical threshold at delta = 0.01 on Garivier & Kaufmann's first
Bernoulli experiment, once as bounded arms on {0, 1} (KL_inf on empirical distributions) and once as Bernoulli arms
(the compiled K-armed path), on the same seeds: KL_inf is Bernoulli's kl there and the draws are the same while the
batches are small (numpy's multinomial and binomial realise large batches differently), so the runs are nearly all
the same run, and the ratio of the times per sample is the cost of the nonparametric statistic. Then
EB-TCI under the ``theory`` threshold on the first random instance.

Part 3 (``--questions N``) times top m: T* of the top 2 of binomial arms (means 0.8/0.6/0.4/0.2, 5 levels) by the
cutting planes at the runs' gap (1e-4) and a study's (1e-6), the median of five solves; then N seeded runs (practical
threshold, delta = 0.01) of EB-TCI and FWS asking the top 3 of RESULTS §31's bounded instance, EB-TCI asking the top 3
of its unequal-variance instance, and, as the baseline of the same run, EB-TCI asking the best of the bounded
instance, in us per sample.
"""

from __future__ import annotations

import argparse
import statistics
import time

import optdesign as od
from bandits.instances import parse_instance
from bandits.registry import make_algorithm
from bandits.run import run


def oracle_times(arms: int, levels: int, instances: int) -> None:
    """Part 1: program against equalisation."""
    slow, fast, diff = [], [], 0.0
    for seed in range(1, instances + 1):
        env = parse_instance(f"bounded:K={arms},seed={seed},levels={levels}")
        od.bounded_characteristic_time(env.probs, env.support, method="equalise")  # compile the kernels
        start = time.perf_counter()
        program = od.bounded_characteristic_time(env.probs, env.support)
        slow.append(time.perf_counter() - start)
        start = time.perf_counter()
        equal = od.bounded_characteristic_time(env.probs, env.support, method="equalise")
        fast.append(time.perf_counter() - start)
        diff = max(diff, abs(program.value - equal.value) / equal.value)
    a, b = statistics.median(slow), statistics.median(fast)
    print(f"T* with KL_inf, K = {arms}, {levels} levels: program {a * 1e3:.1f} ms, equalisation {b * 1e3:.2f} ms "
          f"({a / b:.0f}x); largest relative difference {diff:.1e}")


def timed_runs(rule: str, instance: str, runs: int) -> tuple[float, float, int]:
    """(mean samples, seconds per sample, wrong answers) of ``runs`` seeded runs at delta = 0.01."""
    algorithm, env = make_algorithm(rule), parse_instance(instance)
    run(algorithm, env, 0.01, seed=0)  # compile the kernels
    start, samples, wrong = time.perf_counter(), 0, 0
    for seed in range(runs):
        result = run(algorithm, env, 0.01, seed=seed)
        samples += result.samples
        wrong += not result.correct
    return samples / runs, (time.perf_counter() - start) / samples, wrong


def run_costs(arms: int, levels: int, runs: int) -> None:
    """Part 2: the same runs through either model, then the theory threshold on a random instance."""
    means = "0.5/0.45/0.43/0.4"
    bounded = timed_runs("top-two:challenger=tci", f"bounded:means={means},levels=2", runs)
    bernoulli = timed_runs("top-two:challenger=tci", f"bernoulli:means={means}", runs)
    same = sum(run(make_algorithm("top-two:challenger=tci"), parse_instance(f"bounded:means={means},levels=2"), 0.01,
                   seed=seed).samples
               == run(make_algorithm("top-two:challenger=tci"), parse_instance(f"bernoulli:means={means}"), 0.01,
                      seed=seed).samples for seed in range(runs))
    print(f"EB-TCI, practical, GK16 Bernoulli: bounded model {bounded[0]:.0f} samples, {bounded[1] * 1e6:.1f} us per "
          f"sample; Bernoulli model {bernoulli[0]:.0f} samples, {bernoulli[1] * 1e6:.2f} us per sample "
          f"({bounded[1] / bernoulli[1]:.0f}x); the same number of samples on {same} of {runs} seeds")
    mean, cost, wrong = timed_runs("top-two:challenger=tci,threshold=theory",
                                   f"bounded:K={arms},seed=1,levels={levels}", runs)
    print(f"EB-TCI, theory, bounded K = {arms}, {levels} levels: mean {mean:.0f} samples, {wrong} wrong in {runs}, "
          f"{cost * 1e6:.1f} us per sample")


def question_costs(runs: int) -> None:
    """Part 3: top m's oracle and cost per sample, beside best-arm identification's."""
    env = parse_instance("bounded:means=0.8/0.6/0.4/0.2,levels=5")
    for tol in (1e-4, 1e-6):
        times = []
        for _ in range(5):
            start = time.perf_counter()
            od.bounded_characteristic_time(env.probs, env.support, m=2, tol=tol)
            times.append(time.perf_counter() - start)
        print(f"T* of the top 2 by cutting planes, gap {tol:g}: {statistics.median(times) * 1e3:.1f} ms")
    bounded = "bounded:means=0.8/0.7/0.6/0.45/0.4/0.3,levels=5"
    unequal = "heteroscedastic:means=1/0.8/0.6/0.3/0.2/0,sigmas=0.5/1/1.5/1/0.7/1.2"
    for rule, instance in [("top-two:challenger=tci", bounded), ("top-two:challenger=tci,problem=top-m:m=3", bounded),
                           ("fws:problem=top-m:m=3", bounded), ("top-two:challenger=tci,problem=top-m:m=3", unequal)]:
        mean, cost, _ = timed_runs(rule, instance, runs)
        print(f"{rule} on {instance.partition(':')[0]}: mean {mean:.0f} samples, {cost * 1e6:.1f} us per sample")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arms", type=int, default=10)
    parser.add_argument("--levels", type=int, default=5)
    parser.add_argument("--instances", type=int, default=5)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--questions", type=int, default=0, help="part 3 only, with this many runs per rule")
    args = parser.parse_args()
    if args.questions:
        question_costs(args.questions)
        return
    oracle_times(args.arms, args.levels, args.instances)
    run_costs(args.arms, args.levels, args.runs)


if __name__ == "__main__":
    main()
