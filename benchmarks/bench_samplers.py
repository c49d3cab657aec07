"""Cost per sample of the pure-exploration sampling rules on a random linear instance (and of the K-armed-only
rules on as many Gaussian arms).

    python benchmarks/bench_samplers.py                         # K = 50, d = 20, delta = 0.01, 1 run each
    python benchmarks/bench_samplers.py --runs 3 --samplers fws lingame
    python benchmarks/bench_samplers.py --soare 100             # mean samples on Soare et al. (d = 6, omega = 0.1)

Instance: K arms with i.i.d. N(0, 1) coordinates in R^d, Z = X, unit Gaussian noise, theta a random Gaussian
direction scaled so that T*(theta) beta = ``--target`` samples (10^5 by default), beta = log((1 + log 10^5)
/ delta) the practical threshold there: the oracle's sample complexity is about the target, and a rule
needs a few times more. Every rule runs under the same GLR stopping rule (practical threshold) with batches
of ceil(0.01 t) pulls (the estimate is refreshed and the stop checked once per batch; a sequential rule
still picks its arms one at a time inside a batch). The table prints samples, seconds, milliseconds per
sample and the ratio of the latter to round robin's in the same run. The rules are round robin and every
rule of the registry marked ``sampler=True`` (oracle baselines excluded) unless ``--samplers`` names them; the
rules that run on K-armed instances only (none today) get a second table on K unit-variance Gaussian arms with
random means scaled the same way.
BLAS runs single-threaded (``--blas-threads``), so every rule gets the same hardware.

``--soare N``: also the mean samples over N seeds at delta = 0.1 and 1e-4 on Soare et al.'s instance
(d = 6, omega = 0.1), beside the Frank–Wolfe sampling paper's Table 1 (Wang, Tzeng & Proutiere 2021) and
the lower bound T* kl(delta, 1 - delta).

``--paths N``: the K-armed rules on ``--path-arms`` Gaussian arms (10 by default, means scaled as above) with the GLR
checked after every sample (growth = 0), N seeds each, on the compiled path and on the reference path in the same
run (:mod:`bandits.pure_exploration.compiled`; "same runs": the samples agree run by run), beside the per-sample
floor: the compiled loop pulling in a fixed cycle, which pays the draws, the statistics and the stop alone; then
round robin, FWS, Lazy TaS, LinGame, LinGame-C, Track-and-Stop and Top-Two (EB-TC, EB-TCI) on the random linear
instance above, growth 0.01.

``--epsilon-paths N``: the same Gaussian arms asked the additive epsilon-good question (epsilon 1.5 times the gap of
the two best arms, so both are correct), growth 0, both paths (the compiled loop reads best-arm pieces at shifted
means).

``--no-speed --published-oracle 10000``: the FWS iterate run at the true theta of that instance for 10,000 steps,
with the exact inverse of V(x) and with the published code's update, and the characteristic time each reports
(1 / F(x)) beside the certified one: the published update explains the paper's lower bound being 1.088x small.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table
from threadpoolctl import threadpool_limits

from bandits.core.environments import LinearBandit
from bandits.instances import soare
from bandits.pure_exploration import KArmedBandit, KArmedProblem, LinearProblem, Observations
from bandits.pure_exploration.samplers.frank_wolfe import INVERSE_UPDATES, FrankWolfe
from bandits.registry import ALGORITHMS, make_algorithm
from bandits.run import run
from optdesign import kl_delta

#: Table 1 of the FWS paper on Soare's instance (d = 6, omega = 0.1): delta = 0.1 and 1e-4
PAPER = {"fws": (1030, 2839), "lingame": (2319, 5120), "lingame-c": (2498, 5118), "lazy-tas": (7651, 9575),
         "round-robin": (5451, 15314), "their lower bound": (359, 1881)}
#: registry rules not benchmarked by default (they read the true parameter)
ORACLES = ("oracle-weights",)


def random_instance(K: int, d: int, delta: float, target: float, seed: int) -> LinearBandit:
    """Gaussian arms, Z = X, theta scaled so that T*(theta) log((1 + log target) / delta) = target."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(K, d))
    theta = rng.normal(size=d)
    T = LinearProblem(X).oracle(theta).T
    beta = np.log((1 + np.log(target)) / delta)
    theta = theta * np.sqrt(T * beta / target)  # T* scales as 1 / |theta|^2
    return LinearBandit(X, theta, name=f"random(K={K},d={d})")


def random_karmed(K: int, delta: float, target: float, seed: int) -> KArmedBandit:
    """K unit-variance Gaussian arms with uniform random means, scaled so that T*(mu) log((1 + log target) / delta)
    = target (T* scales as 1 / |mu|^2)."""
    means = np.random.default_rng(seed).uniform(size=K)
    T = KArmedProblem(K).oracle(means).T
    means = means * np.sqrt(T * np.log((1 + np.log(target)) / delta) / target)
    return KArmedBandit(means, name=f"gaussian(K={K})")


def default_samplers(kind: str) -> list[str]:
    """Round robin first, then every registered sampling rule of that instance kind but the oracle baselines."""
    names = [n for n, spec in ALGORITHMS.items()
             if spec.sampler and kind in spec.kinds and n not in ORACLES and n != "round-robin"]
    return ["round-robin", *names]


def speed(args: argparse.Namespace, console: Console) -> None:
    """The cost-per-sample tables: the linear rules on the random linear instance, then the K-armed-only rules on
    as many Gaussian arms."""
    linear = random_instance(args.arms, args.dim, args.delta, args.target, args.instance_seed)
    karmed = random_karmed(args.arms, args.delta, args.target, args.instance_seed)
    karmed_only = [n for n in default_samplers("karmed") if "linear" not in ALGORITHMS[n].kinds]
    for env, problem, theta, names in (
            (linear, LinearProblem(linear.X), linear.theta, args.samplers or default_samplers("linear")),
            (karmed, KArmedProblem(args.arms), karmed.means,
             ["round-robin", *karmed_only] if karmed_only and not args.samplers else [])):
        if names:
            speed_table(env, problem.oracle(theta).sample_complexity(args.delta), names, args, console)


def speed_table(env: Any, bound: float, names: list[str], args: argparse.Namespace, console: Console) -> None:
    """Samples, seconds and milliseconds per sample of each rule on one instance, against round robin's."""
    console.print(f"{env.name}, delta = {args.delta}: T* kl(delta) = {bound:.0f}, growth = 0.01, "
                  f"{args.runs} run(s) per rule")
    table = Table(title=f"Cost per sample on {env.name} (mean over runs)")
    for col in ("sampler", "samples", "seconds", "ms/sample", "ratio to round-robin", "correct"):
        table.add_column(col, justify="right")
    base = None
    for name in names:
        algo = make_algorithm(name)
        results = [run(algo, env, args.delta, seed=s, max_samples=args.max_samples) for s in range(args.runs)]
        samples = float(np.mean([r.samples for r in results]))
        seconds = float(np.mean([r.solve_time + r.other_time for r in results]))
        per = 1e3 * seconds / samples
        base = per if base is None else base
        table.add_row(name, f"{samples:,.0f}", f"{seconds:.2f}", f"{per:.4f}", f"{per / base:.1f}",
                      f"{sum(r.correct for r in results)}/{len(results)}")
    console.print(table)


def paths_table(args: argparse.Namespace, console: Console) -> None:
    """Microseconds per sample of the K-armed rules at growth = 0, compiled and reference, beside the floor."""
    from bandits.core.seeds import split_seed
    from bandits.pure_exploration.compiled.loop import karmed_run
    from bandits.pure_exploration.compiled.plan import FLOOR

    env = random_karmed(args.path_arms, args.delta, args.target, args.instance_seed)
    forms = np.array([[-np.log(args.delta), 1.0, 1.0, 1.0, 1.0]])  # the practical threshold
    karmed_run(0, 1.0, env.means, FLOOR, np.zeros(1), 0.0, forms, 10**9, *split_seed(0), 0.0, 0.0)  # compile or load
    floor_samples, start = 0, time.perf_counter()
    for seed in range(args.paths):
        floor_samples += int(karmed_run(0, 1.0, env.means, FLOOR, np.zeros(1), 0.0, forms, 10**9, *split_seed(seed),
                                        0.0, 0.0)[0][0])
    floor = 1e6 * (time.perf_counter() - start) / floor_samples
    rules = ("round-robin", "track-and-stop", "track-and-stop:tracking=C", "top-two", "top-two:leader=ts",
             "top-two:challenger=tci,beta=ids", "fws", "lazy-tas", "lingame", "lingame-c")
    paths_rows(env, [f"{name}{',' if ':' in name else ':'}growth=0" for name in rules], f"{floor:.2f}",
               f"{env.name}, GLR after every sample (growth = 0)", args, console)
    linear = random_instance(args.arms, args.dim, args.delta, args.target, args.instance_seed)
    paths_rows(linear, ["round-robin", "fws", "lazy-tas", "lingame", "lingame-c", "track-and-stop", "top-two",
                        "top-two:challenger=tci"], "",
               f"{linear.name}, GLR on the default grid (growth = 0.01)", args, console)


def paths_rows(env: Any, names: list[str], floor: str, title: str, args: argparse.Namespace,
               console: Console) -> None:
    """One table of the compiled and the reference path: samples, microseconds per sample, same runs."""
    table = Table(title=f"{title}, delta = {args.delta}: microseconds per sample over {args.paths} seed(s), one core")
    for col in ("rule", "samples", "compiled", "reference", "reference / compiled", "floor", "same runs"):
        table.add_column(col, justify="right")
    for name in names:
        algo = make_algorithm(name)
        run(algo, env, args.delta, seed=0, max_samples=env.n_arms + 10)  # compile or load
        cells, samples = [], []
        for compiled in (True, False):
            start = time.perf_counter()
            results = [run(algo, env, args.delta, seed=s, compiled=compiled) for s in range(args.paths)]
            samples.append([r.samples for r in results])
            cells.append(1e6 * (time.perf_counter() - start) / sum(samples[-1]))
        table.add_row(name, f"{np.mean(samples[0]):,.0f}", f"{cells[0]:.2f}", f"{cells[1]:.2f}",
                      f"{cells[1] / cells[0]:.0f}x", floor, str(samples[0] == samples[1]))
    console.print(table)


def epsilon_paths_table(args: argparse.Namespace, console: Console) -> None:
    """The additive epsilon-good question on the Gaussian arms of :func:`paths_table`, compiled and reference, with
    epsilon 1.5 times the gap of the two best arms (both are correct answers)."""
    env = random_karmed(args.path_arms, args.delta, args.target, args.instance_seed)
    top = np.sort(env.means)
    epsilon = float(f"{1.5 * (top[-1] - top[-2]):.3g}")
    rules = ("round-robin", "track-and-stop", "track-and-stop:tracking=C", "top-two", "top-two:challenger=tci,beta=ids",
             "fws", "lazy-tas")
    seeds = argparse.Namespace(**{**vars(args), "paths": args.epsilon_paths})
    paths_rows(env, [f"{name}{',' if ':' in name else ':'}growth=0,problem=epsilon-good:epsilon={epsilon}"
                     for name in rules], "", f"{env.name}, {epsilon}-good, GLR after every sample (growth = 0)", seeds,
               console)


def soare_table(args: argparse.Namespace, console: Console) -> None:
    """Mean samples on Soare's instance beside the FWS paper's Table 1."""
    env = soare(d=6, omega=0.1)
    oracle = LinearProblem(env.X, env.Z, env.sigma).oracle(env.theta)
    deltas = [0.1, 1e-4]
    table = Table(title=f"Soare et al., d = 6, omega = 0.1: mean samples over {args.soare} seeds (paper's Table 1)")
    for col in ("sampler", *[f"delta = {d:g}" for d in deltas], *[f"paper {d:g}" for d in deltas], "errors"):
        table.add_column(col, justify="right")
    rules = ("fws", "fws:inverse_update=as-published", "lingame", "lingame-c", "lazy-tas", "round-robin")
    for name in rules:
        results = [run(make_algorithm(name), env, deltas, seed=s) for s in range(args.soare)]
        means = [np.mean([r[i].samples for r in results]) for i in range(len(deltas))]
        sems = [np.std([r[i].samples for r in results], ddof=1) / np.sqrt(len(results)) for i in range(len(deltas))]
        paper = PAPER.get(name.split(":")[0], ("", ""))
        errors = sum(not r[i].correct for r in results for i in range(len(deltas)))
        cells = [f"{m:,.0f} ± {s:,.0f}" for m, s in zip(means, sems, strict=True)]
        table.add_row(name, *cells, *[f"{p:,}" for p in paper], str(errors))
    table.add_row("lower bound T* kl(delta)", *[f"{oracle.T * kl_delta(d):,.0f}" for d in deltas],
                  *[f"{p:,}" for p in PAPER["their lower bound"]], "")
    console.print(table)


def published_oracle(args: argparse.Namespace, console: Console) -> None:
    """The FWS iterate run at the true theta of Soare's instance (d = 6, omega = 0.1), one step at a time, with the
    exact inverse and with the published code's update: 1 / F(x) as each evaluates it, against the certified T*."""
    env = soare(d=6, omega=0.1)
    problem = LinearProblem(env.X, env.Z, env.sigma)
    certified = problem.oracle(env.theta)
    table = Table(title=f"FWS oracle at the true theta, {args.published_oracle:,} steps (Soare d = 6, omega = 0.1)")
    for col in ("inverse update", "T* (1 / F(x))", "T* kl(0.1)", "T* kl(1e-4)", "paper"):
        table.add_column(col, justify="right")
    for update in INVERSE_UPDATES:
        state = FrankWolfe(inverse_update=update).start(problem, env, np.random.default_rng(0))
        counts = np.ones(problem.n_arms, dtype=np.int64)
        obs = Observations(problem, counts, np.zeros(problem.n_arms), env.theta)
        while counts.sum() < args.published_oracle:
            obs = Observations(problem, counts, np.zeros(problem.n_arms), env.theta)
            counts = counts + state.plan(obs, 1)
        T = 1.0 / state.objective(obs)
        paper = " / ".join(f"{p:,}" for p in PAPER["their lower bound"]) if update == "as-published" else ""
        table.add_row(update, f"{T:.1f}", f"{T * kl_delta(0.1):,.0f}", f"{T * kl_delta(1e-4):,.0f}", paper)
    table.add_row("certified (optdesign.transductive)", f"{certified.T:.2f}", f"{certified.T * kl_delta(0.1):,.0f}",
                  f"{certified.T * kl_delta(1e-4):,.0f}", "")
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arms", type=int, default=50)
    parser.add_argument("--dim", type=int, default=20)
    parser.add_argument("--delta", type=float, default=0.01)
    parser.add_argument("--target", type=float, default=1e5, help="T* beta of the random instance")
    parser.add_argument("--instance-seed", type=int, default=0)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--max-samples", type=int, default=10**7)
    parser.add_argument("--samplers", nargs="+", default=None, help="rule names with options, NAME[:key=value,...]")
    parser.add_argument("--soare", type=int, default=0, help="seeds of the Soare table (0: skip it)")
    parser.add_argument("--paths", type=int, default=0, help="seeds of the compiled-vs-reference table (0: skip it)")
    parser.add_argument("--path-arms", type=int, default=10, help="Gaussian arms of the compiled-vs-reference table")
    parser.add_argument("--epsilon-paths", type=int, default=0,
                        help="seeds of the compiled-vs-reference table of the epsilon-good question (0: skip it)")
    parser.add_argument("--blas-threads", type=int, default=1)
    parser.add_argument("--no-speed", action="store_true", help="skip the cost-per-sample table")
    parser.add_argument("--published-oracle", type=int, default=0,
                        help="steps of the FWS oracle at the true theta, exact vs published inverse (0: skip it)")
    args = parser.parse_args()
    console = Console(width=160)
    start = time.perf_counter()
    with threadpool_limits(limits=args.blas_threads):
        if not args.no_speed:
            speed(args, console)
        if args.paths:
            paths_table(args, console)
        if args.epsilon_paths:
            epsilon_paths_table(args, console)
        if args.soare:
            soare_table(args, console)
        if args.published_oracle:
            published_oracle(args, console)
    console.print(f"total {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
