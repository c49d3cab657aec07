"""Multi-agent best-arm identification: MF-TaS against uniform sampling and exact Track-and-Stop.

    python benchmarks/bench_multiagent_bai.py                 # about 9 minutes
    python benchmarks/bench_multiagent_bai.py --runs 100 --exact-runs 20

Every number is measured in this run. Sample complexities are in rounds (joint actions played, the
paper's tau; each round gives rho observations). They are set next to 2 T^MF log(1/delta) (the
mean-field bound MF-TaS provably attains as delta -> 0) and 2 T* log(1/delta) (the exact lower bound's
rate), both from optdesign at the true means. The threshold is the practical log((1 + log t)/delta),
and the stopping rule is checked on a 1 % geometric grid of rounds.

Tables:
1. covering sets A0: the paper's BUILD-A0 against the max-sum greedy cover;
2. mean rounds (+- s.e.) of MF-TaS, uniform product sampling and exact TaS on lines and rings;
3. large lines (N = 10 .. 1000, 3^N joint actions): one MF-TaS run each, its GLRT per check and
   at the final statistics (exact value, threshold test, conservative), and the MF solve and relabel;
4. one agent: Garivier–Kaufmann TaS (D/C tracking) against MF-TaS and uniform;
5. antenna tilts (App. I model, synthetic network);
6. the joint rules' cost per run (``--only-timing`` for this table alone): seconds per run of joint Frank-Wolfe
   sampling, joint Top-Two and joint LinGame (``--timing-rules``) on the planted line of ``--timing-agents`` agents
   (K = 3, gap 0.1, delta = 0.01) over ``--timing-seeds`` seeds, with their mean rounds and correct answers; each rule
   with the compiled max-sum, Pareto and sum-product passes and draws (default) and again with their numpy reference,
   on the same seeds ("same rounds": whether the two stopped at the same rounds; sum-product's passes agree to
   rounding, not bit for bit).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
from rich.console import Console
from rich.table import Table

import optdesign as od
from bandits.multiagent import (
    ExactTaS,
    FactoredGLRT,
    GKTrackAndStop,
    MFTaS,
    UniformSampling,
    build_a0,
    greedy_cover,
)
from bandits.multiagent import instances as inst
from bandits.multiagent.antenna import antenna_tilt
from bandits.multiagent.mab import gk_optimal_weights
from bandits.pure_exploration import PureExploration
from bandits.run import run
from optdesign import FactorGraph
from optdesign.factored import MeanFieldModel

CAPTURED: list = []


@dataclass(frozen=True)
class Captured(PureExploration):
    """A run that keeps its policy, to read its GLRT state and timers after the run."""

    def start(self, env, delta, rng):
        policy = super().start(env, delta, rng)
        CAPTURED.append(policy)
        return policy


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def mean_se(values) -> str:
    v = np.asarray(values, dtype=float)
    se = v.std(ddof=1) / np.sqrt(v.size) if v.size > 1 else 0.0
    return f"{v.mean():,.0f} ± {se:,.0f}"


def table_covers(console: Console) -> None:
    t = Table(title="Covering sets A0: paper's BUILD-A0 (lexicographic scan) vs max-sum greedy cover")
    for col in ("instance", "Abar", "max_e A_e (lower bound)", "|A0| build-a0", "|A0| greedy", "greedy (s)"):
        t.add_column(col, justify="right")
    cases = [("line N=6 K=3", FactorGraph.line(6, 3, seed=0)), ("line N=50 K=3", FactorGraph.line(50, 3, seed=0)),
             ("line N=1000 K=3", FactorGraph.line(1000, 3, seed=0)), ("ring N=5 K=3", FactorGraph.ring(5, 3, seed=0)),
             ("ring N=200 K=4", FactorGraph.ring(200, 4, seed=0)),
             ("grid 5x20 K=3", FactorGraph.grid(5, 20, 3, seed=0)), ("star N=8 K=3", FactorGraph.star(8, 3, seed=0)),
             ("antenna hex N=15 K=3", antenna_tilt(15, 3, 0, layout="hex"))]
    for name, fg in cases:
        greedy, secs = timed(greedy_cover, fg)
        t.add_row(name, str(fg.abar), str(max(x.size for x in fg.tables)), str(build_a0(fg).size), str(greedy.size),
                  f"{secs:.3f}")
    console.print(t)


def table_sample_complexity(console: Console, runs: int, exact_runs: int, delta: float) -> None:
    t = Table(title=f"Mean rounds ± s.e. at delta = {delta} ({runs} runs; exact TaS {exact_runs}); "
                    f"errors in brackets")
    for col in ("instance", "Delta_min", "2 T^MF log", "2 T* log", "MF-TaS", "uniform", "exact TaS",
                "MF / uniform", "MF / 2T^MF log", "MF / 2T* log", "TaS / 2T* log"):
        t.add_column(col, justify="right")
    cases = [inst.line(4, 3, seed=0, means="planted", gap=0.2), inst.line(6, 3, seed=0, means="planted", gap=0.2),
             inst.line(6, 2, seed=0, means="planted", gap=0.2), inst.ring(5, 3, seed=0, means="planted", gap=0.2),
             inst.line(4, 3, seed=0), inst.line(6, 3, seed=0), inst.ring(5, 3, seed=0), inst.ring(6, 2, seed=1)]
    scale = 2 * np.log(1 / delta)
    for env in cases:
        t_mf = od.mf_characteristic_time(env.fg).value
        t_star = od.characteristic_time(env.fg).value
        out = {}
        for name, algo, n in (("mf", MFTaS(), runs), ("uniform", UniformSampling(), runs),
                              ("tas", ExactTaS(), exact_runs)):
            results = [run(algo, env, delta, seed=s) for s in range(n)]
            out[name] = ([r.rounds for r in results], sum(not r.correct for r in results))
        mf = np.mean(out["mf"][0])
        t.add_row(env.name, f"{env.gap_min:.3g}", f"{scale * t_mf:,.0f}", f"{scale * t_star:,.0f}",
                  f"{mean_se(out['mf'][0])} [{out['mf'][1]}]", f"{mean_se(out['uniform'][0])} [{out['uniform'][1]}]",
                  f"{mean_se(out['tas'][0])} [{out['tas'][1]}]" if exact_runs else "-",
                  f"{mf / np.mean(out['uniform'][0]):.2f}", f"{mf / (scale * t_mf):.3f}",
                  f"{mf / (scale * t_star):.2f}",
                  f"{np.mean(out['tas'][0]) / (scale * t_star):.2f}" if exact_runs else "-")
    console.print(t)


def glrt_timings(policy):
    """Exact value and conservative statistic at the policy's final statistics, each on a fresh state."""
    theta, counts, problem = policy.mu, policy.counts, policy.problem
    exact, t_exact = timed(policy.problem.glrt(theta, counts).exact)
    cons, t_cons = timed(policy.problem.glrt(theta, counts).conservative)
    no_cuts = FactoredGLRT(problem.structure, problem.indexer, sigma=problem.sigma, max_cuts=0, max_enumerated=3000)
    plain = no_cuts(theta, counts).exact()
    return exact, t_exact, cons, t_cons, plain


def table_large(console: Console, sizes: list[int], delta: float) -> None:
    t = Table(title=f"MF-TaS on lines of N agents, K = 3 (planted, Delta_min = 0.5), delta = {delta}: one run "
                    "(seed 0); GLRT times per call")
    for col in ("N", "rounds", "correct", "wall (s)", "rounds/s", "solve share", "GLRT share", "batches",
                "/ 2T^MF log", "GLRT test / check (ms)",
                "exact value (ms)", "listed, cuts", "H_max only: listed, bound / exact", "conservative (ms)",
                "cons. / exact", "MF solve (s)",
                "relabel (µs)"):
        t.add_column(col, justify="right")
    for N in sizes:
        env = inst.line(N, 3, seed=0, means="planted", gap=0.5)
        CAPTURED.clear()
        result, wall = timed(run, Captured(MFTaS()), env, delta, seed=0)
        policy = CAPTURED[-1]
        exact, t_exact, cons, t_cons, plain = glrt_timings(policy)
        _, t_solve = timed(MeanFieldModel(env.structure).solve)
        reps = 200
        best = policy.statistic().state.best
        start = time.perf_counter()
        for _ in range(reps):
            policy.state.model.local_allocations(best)
        t_relabel = time.perf_counter() - start
        t_mf = od.mf_characteristic_time(env.fg).value
        t.add_row(str(N), f"{result.rounds:,}", str(result.correct), f"{wall:.2f}", f"{result.rounds / wall:,.0f}",
                  f"{result.solve_time / wall:.0%}", f"{policy.glrt_time / wall:.0%}", str(result.batches),
                  f"{result.rounds / (2 * t_mf * np.log(1 / delta)):.3f}",
                  f"{1000 * policy.glrt_time / result.batches:.2f}", f"{1000 * t_exact:.2f}",
                  f"{exact.enumerated}, {exact.cuts}", f"{plain.enumerated}, {plain.value / exact.value:.3f}",
                  f"{1000 * t_cons:.2f}", f"{cons / exact.value:.3f}",
                  f"{t_solve:.2f}", f"{1e6 * t_relabel / reps:.0f}")
    console.print(t)


def table_single_agent(console: Console, runs: int) -> None:
    t = Table(title=f"One agent, unit-variance Gaussian arms: mean rounds ± s.e. ({runs} runs)")
    for col in ("means", "delta", "T_GK log(1/delta)", "GK D-tracking", "GK C-tracking", "MF-TaS", "uniform",
                "D / T_GK log"):
        t.add_column(col, justify="right")
    for means in ("0.5/0.45/0.43/0.4", "0.3/0.21/0.2/0.19/0.18"):
        env = inst.mab(means)
        _, T = gk_optimal_weights(env.means)
        for delta in (0.1, 0.01):
            cells = []
            for algo in (GKTrackAndStop(), GKTrackAndStop(tracking="C"), MFTaS(), UniformSampling()):
                cells.append([run(algo, env, delta, seed=s).rounds for s in range(runs)])
            t.add_row(means, str(delta), f"{T * np.log(1 / delta):,.0f}", *[mean_se(c) for c in cells],
                      f"{np.mean(cells[0]) / (T * np.log(1 / delta)):.2f}")
    console.print(t)


def table_antenna(console: Console, runs: int, delta: float) -> None:
    t = Table(title=f"Antenna tilts (K = 3 tilts {{3, 6, 12}} deg, 1000 users, 2 interferers per cell), "
                    f"delta = {delta}, {runs} runs")
    for col in ("network", "joint actions", "Abar", "Delta_min", "2 T^MF log", "MF-TaS", "uniform", "exact TaS",
                "MF / 2T^MF log"):
        t.add_column(col, justify="right")
    for N, layout in ((6, "line"), (12, "hex"), (15, "hex")):
        env = inst.antenna(N=N, K=3, seed=0, layout=layout)
        t_mf = od.mf_characteristic_time(env.fg).value
        mf = [run(MFTaS(), env, delta, seed=s).rounds for s in range(runs)]
        uni = [run(UniformSampling(), env, delta, seed=s).rounds for s in range(runs)]
        exact = "-"
        if env.fg.n_joint_actions <= 20_000:
            exact = mean_se([run(ExactTaS(), env, delta, seed=s).rounds for s in range(max(2, runs // 4))])
        t.add_row(f"{layout} N={N}", f"{env.fg.n_joint_actions:,}", str(env.n_arms), f"{env.gap_min:.3g}",
                  f"{2 * t_mf * np.log(1 / delta):,.0f}", mean_se(mf), mean_se(uni), exact,
                  f"{np.mean(mf) / (2 * t_mf * np.log(1 / delta)):.3f}")
    console.print(t)


def _joint_runs(name: str, env, seeds: int) -> tuple[list[float], list[int], int]:
    from bandits.registry import make_algorithm

    seconds, rounds, correct = [], [], 0
    for seed in range(seeds):
        result, elapsed = timed(run, make_algorithm(name), env, 0.01, seed=seed)
        seconds.append(elapsed)
        rounds.append(result.rounds)
        correct += bool(result.correct)
    return seconds, rounds, correct


def table_joint_timing(console: Console, agents: int, seeds: int, rules: list[str]) -> None:
    """Each rule twice on the same seeds: the compiled max-sum, Pareto and sum-product passes (the default), then
    their numpy reference (a plan-size limit of 0 sends every pass there)."""
    from optdesign.factored.inference import flat_plan

    env = inst.line(agents, 3, seed=0, means="planted")
    t = Table(title=f"Joint rules on the planted line of {agents} agents (K = 3, delta = 0.01): seconds per run over "
                    f"{seeds} seeds, compiled passes and numpy passes")
    for col in ("rule", "s per run", "min", "max", "numpy passes", "ratio", "mean rounds", "same rounds", "correct"):
        t.add_column(col, justify="right")
    limit = flat_plan.COMPILED_MAX_ENTRIES
    for name in rules:
        seconds, rounds, correct = _joint_runs(name, env, seeds)
        flat_plan.COMPILED_MAX_ENTRIES = 0
        try:
            numpy_seconds, numpy_rounds, _ = _joint_runs(name, env, seeds)
        finally:
            flat_plan.COMPILED_MAX_ENTRIES = limit
        t.add_row(name, f"{np.mean(seconds):.2f}", f"{min(seconds):.2f}", f"{max(seconds):.2f}",
                  f"{np.mean(numpy_seconds):.2f}", f"{np.mean(numpy_seconds) / np.mean(seconds):.1f}x",
                  f"{np.mean(rounds):,.0f}", "yes" if rounds == numpy_rounds else "NO", f"{correct}/{seeds}")
    console.print(t)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--exact-runs", type=int, default=5)
    parser.add_argument("--delta", type=float, default=0.01)
    parser.add_argument("--sizes", default="10,50,200,1000", help="line lengths of table 3")
    parser.add_argument("--skip", default="", help="comma-separated table numbers to skip")
    parser.add_argument("--timing-agents", type=int, default=100, help="line length of table 6")
    parser.add_argument("--timing-seeds", type=int, default=4, help="seeds per rule of table 6")
    parser.add_argument("--only-timing", action="store_true", help="table 6 alone")
    parser.add_argument("--timing-rules", default="joint-fws,joint-top-two,joint-lingame", help="the rules of table 6")
    args = parser.parse_args()
    if args.only_timing:
        args.skip = "1,2,3,4,5"
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    console = Console(width=200)
    start = time.perf_counter()
    if "1" not in skip:
        table_covers(console)
    if "2" not in skip:
        table_sample_complexity(console, args.runs, args.exact_runs, args.delta)
    if "3" not in skip:
        table_large(console, [int(s) for s in args.sizes.split(",")], 0.05)
    if "4" not in skip:
        table_single_agent(console, args.runs)
    if "5" not in skip:
        table_antenna(console, max(2, args.runs // 2), 0.05)
    if "6" not in skip:
        table_joint_timing(console, args.timing_agents, args.timing_seeds, args.timing_rules.split(","))
    console.print(f"total {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
