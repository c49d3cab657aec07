"""MF-TaS Tables 1-3 (Vannella, Proutiere, Jeong, ICML 2023, §7): the scale M, the rates, the ratio tables.

    python benchmarks/bench_mftas_tables.py scale            # M of mftas_table1/2.toml, scale of mftas_antenna.toml
    python benchmarks/bench_mftas_tables.py rates [--runs R] [INSTANCE ...]   # allocations' characteristic times
    python benchmarks/bench_mftas_tables.py cpu [INSTANCE ...]                # seconds to solve T^MF and T*
    python benchmarks/bench_mftas_tables.py table results/mftas-table1 results/mftas-table2 results/mftas-antenna

``rates`` takes seconds on the table instances but about 36 min on ring:N=5,K=10,seed=0 (M = 1): the exact GLR
enumerates many near-ties there.

``scale``: the paper draws theta_e(b) ~ U(0, M) "for some M > 0" and prints T^MF log(1/delta) per row. For m = 1
the MF program depends on theta only through a* and Delta_min, so T^MF(theta) = t*(structure) / Delta_min^2 and
T^MF scales as 1/M^2: M = sqrt(T^MF(M = 1) log(1/delta) / target). Printed: the spread of T^MF(M = 1) over the
seeds 0..99 (why the tables use one instance per N) and M for seed 0 at each row's target; for Table 3 the
antenna family's ``scale`` (hex layout, K = 3), which also multiplies Delta_min.

``rates``: on each instance, the characteristic time of an allocation w at the true theta,
T(w; theta) = max_{a != a*} sum_{e: a_e != a*_e} (1/wbar_{e,a*_e} + 1/wbar_{e,a_e}) / Delta(a)^2 (eq. 1 at fixed w),
computed as 1 / (2 Lambda) with the exact factored GLR Lambda at (theta, counts = wbar); the GLRT stops near
2 T(w; theta) log(1/delta). For w^MF (the product of the MF local allocations at a*) and the uniform product,
next to T^MF and the uniform bound 2 Abar / Delta_min^2; and t_5 = min{t : t >= T^MF beta(delta, t)}, the round
at which the paper's stopping rule (eq. 5, t / T^MF_theta_hat >= beta) fires when theta_hat = theta.

``cpu``: seconds to solve T^MF (MF program with FCR) and the certified exact T* (Table 1's and 3's last columns).

``table``: mean +- std of the rounds per algorithm from the studies' runs.csv, the three ratios of the paper
(MF-TaS / (T^MF log 1/delta), MF-TaS / Random, MF-TaS / Oracle) beside the paper's, and the error counts.
"""

from __future__ import annotations

import argparse
import functools
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd

import optdesign as od
from bandits.instances import parse_instance
from bandits.multiagent import FactoredGLRT, MFTaS, MFTaSOracle, UniformSampling
from bandits.multiagent import instances as inst
from bandits.multiagent.tracking import uniform_local
from bandits.run import run
from optdesign.factored import MeanFieldModel

K = 10
#: Table 1 (delta = 0.01): N -> (T^MF log 1/delta, Oracle, (MF-TaS mean, std), (Random mean, std))
TABLE1 = {3: (158.3, 223, (299.6, 107.5), (644.7, 140.2)),
          5: (270.5, 385, (356.8, 150.0), (708.3, 132.9)),
          10: (305.9, 533, (411.1, 193.5), (800.4, 177.9))}
#: Table 2 (N = 3): delta -> the same columns
TABLE2 = {0.1: (79.1, 154, (223.5, 82.4), (635.5, 135.5)),
          0.01: (158.3, 223, (317.5, 133.2), (649.4, 142.6)),
          0.001: (237.4, 303, (397.6, 129.0), (668.2, 131.5)),
          0.0001: (316.5, 384, (493.9, 153.8), (695.5, 141.4)),
          1e-05: (395.7, 464, (535.4, 154.2), (793.4, 190.8))}
#: Table 3 (antenna tilts, K = 3 tilts; delta not restated, 0.01 assumed as in §7.1): N -> the same columns, no std
#: (no standard deviations are printed; columns read in header order: N | |A| | Abar | T^MF log 1/delta | Oracle |
#: MF-TaS | Random | CPU)
TABLE3 = {6: (129.2, 203, (286.4, None), (341.1, None)),
          12: (472.1, 524, (623.5, None), (813.9, None)),
          15: (568.9, 729, (913.7, None), (1262.1, None))}
#: Table 1's column 2 Abar / Delta_min^2 log(1/delta) (its header prints a factor 4)
UNIFORM_BOUND = {3: 209.0, 5: 358.0, 10: 405.0}
#: the instances of mftas_table1.toml (one per N; M from the ``scale`` command, 4 significant digits)
SCALES = {3: 104.2, 5: 666.9, 10: 208.8}
LABELS = ("Oracle", "MF-TaS", "Random")
DELTAS = (0.1, 0.01, 0.001, 0.0001, 1e-05)


def t_mf(env) -> float:
    """T^MF(theta) = t* / Delta_min^2 (the m = 1 MF program solved once per structure)."""
    return MeanFieldModel.for_structure(env.structure).solve().t / env.gap_min**2


def product_marginals(env, local: list[np.ndarray]) -> np.ndarray:
    """wbar_{e,b} = prod_{i in S_e} v_{i,b_i}, flat in the layout of ``env.means``."""
    return np.concatenate([functools.reduce(np.multiply.outer, [local[i] for i in scope]).ravel()
                           for scope in env.structure.scopes])


def allocation_time(env, wbar: np.ndarray) -> tuple[float, bool]:
    """(T(w; theta), exact): 1 / (2 Lambda) of the exact factored GLR at (theta, counts = wbar), sigma = 1."""
    value = FactoredGLRT(env.structure, env.indexer, sigma=1.0)(env.means, wbar).exact()
    return 1.0 / (2.0 * value.value), value.exact


def paper_stop(T: float, delta: float) -> int:
    """min{t >= 1 integer : t >= T log((log t + 1) / delta)} (eq. 5 with theta_hat = theta)."""
    t = 1
    while t < T * math.log((math.log(t) + 1.0) / delta):
        t += 1
    return t


def glrt_stop(T: float, delta: float) -> int:
    """min{t >= 1 : t >= 2 T log((log t + 1) / delta)}: the GLRT's stop when Lambda_t = t / (2 T(w; theta))."""
    return paper_stop(2 * T, delta)


def scale_command(args) -> None:
    print("T^MF at M = 1 (ring, K = 10, seeds 0..99): spread across instances")
    for N in (3, 5, 10):
        values = np.array([t_mf(inst.ring(N, K, seed=s)) for s in range(100)])
        print(f"  N = {N:2d}: mean {values.mean():.4g}, median {np.median(values):.4g}, max {values.max():.4g}, "
              f"max / median {values.max() / np.median(values):.3g}; seed 0: {values[0]:.4g}")
    print("t* / (2 Abar) = T^MF / (2 Abar / Delta_min^2), for every theta of the structure, against Table 1's "
          "T^MF log(1/delta) / (2 Abar / Delta_min^2 log(1/delta))")
    for N in (3, 5, 10):
        env = inst.ring(N, K, seed=0)
        ours = MeanFieldModel.for_structure(env.structure).solve().t / (2 * env.n_arms)
        print(f"  N = {N:2d}: ours {ours:.4f}, paper {TABLE1[N][0]} / {UNIFORM_BOUND[N]} = "
              f"{TABLE1[N][0] / UNIFORM_BOUND[N]:.4f}")
    print("M for seed 0: M = sqrt(T^MF(M=1) log(1/delta) / target); check: T^MF log(1/delta) at M rounded")
    rows = [("Table 1", N, 0.01, TABLE1[N][0]) for N in TABLE1] + [("Table 2", 3, d, v[0]) for d, v in TABLE2.items()]
    rows += [("Table 3 (antenna, hex, K = 3)", N, 0.01, TABLE3[N][0]) for N in TABLE3]
    for table, N, delta, target in rows:
        make = functools.partial(inst.antenna, N, 3, seed=0, layout="hex") if "antenna" in table else \
            functools.partial(inst.ring, N, K, seed=0)
        base = t_mf(make())
        M = math.sqrt(base * math.log(1 / delta) / target)
        M4 = float(f"{M:.4g}")
        check = t_mf(make(scale=M4)) * math.log(1 / delta)
        print(f"  {table} N = {N:2d} delta = {delta:g}: target {target}, M = {M:.6g} -> {M4}, "
              f"T^MF log(1/delta) = {check:.1f}")


def rates_command(args) -> None:
    texts = args.instances or [f"ring:N={N},K={K},seed=0,scale={M}" for N, M in SCALES.items()] + \
        ["ring:N=5,K=10,seed=0"]
    for text in texts:
        env = parse_instance(text)
        start = time.perf_counter()
        tmf = t_mf(env)
        model = MeanFieldModel.for_structure(env.structure)
        w_mf = product_marginals(env, model.local_allocations(env.best_action))
        w_unif = product_marginals(env, uniform_local(env.structure.n_actions))
        t_w, ex1 = allocation_time(env, w_mf)
        t_u, ex2 = allocation_time(env, w_unif)
        uniform_bound = 2 * env.n_arms / env.gap_min**2
        print(f"{text}: Delta_min {env.gap_min:.4g}, Abar {env.n_arms}; T^MF {tmf:.4g}, 2 Abar/Delta_min^2 "
              f"{uniform_bound:.4g}; T(w^MF) {t_w:.4g}, T(uniform) {t_u:.4g} (exact {ex1 and ex2}); "
              f"T(uniform)/T(w^MF) {t_u / t_w:.3f}; T(w^MF)/T^MF {t_w / tmf:.3f}; "
              f"t_5 at delta = 1e-1 .. 1e-5: {[paper_stop(tmf, d) for d in DELTAS]}; GLRT stop (same deltas): "
              f"w^MF {[glrt_stop(t_w, d) for d in DELTAS]}, uniform {[glrt_stop(t_u, d) for d in DELTAS]}; "
              f"2 T(w) log 10: w^MF {2 * t_w * math.log(10):.1f}, uniform {2 * t_u * math.log(10):.1f} "
              f"({time.perf_counter() - start:.1f} s)")
        if args.runs:
            for algo in (MFTaSOracle(), MFTaS(), UniformSampling()):
                results = [run(algo, env, 0.01, seed=s, trace=True) for s in range(args.runs)]
                rounds = np.array([r.rounds for r in results])
                forced = np.array([r.trace[-1].get("forced_rounds", 0) for r in results])
                print(f"    {algo.name:14s} delta = 0.01, {args.runs} runs: rounds {rounds.mean():.4g} "
                      f"+- {rounds.std(ddof=1):.3g}, forced-exploration rounds {forced.mean():.4g}, "
                      f"A0 pass {_cover_size(env)} rounds, errors {sum(not r.correct for r in results)}, "
                      f"cut by the default cap of 1e9 observations: {sum(r.stopped_by == 'budget' for r in results)}")


def cpu_command(args) -> None:
    """Seconds to solve T^MF (the MF program with FCR) and T* (certified constraint generation) on each instance."""
    texts = args.instances or [f"ring:N={N},K={K},seed=0,scale={M}" for N, M in SCALES.items()]
    warm = inst.ring(3, 2, seed=0).fg  # first solves pay for imports and compilation: not timed
    od.mf_characteristic_time(warm, solver="CLARABEL"), od.characteristic_time(warm, solver="CLARABEL")
    for text in texts:
        env = parse_instance(text)
        start = time.perf_counter()
        mf = od.mf_characteristic_time(env.fg, solver="CLARABEL")
        mid = time.perf_counter()
        exact = od.characteristic_time(env.fg, solver="CLARABEL", time_limit=args.time_limit)
        end = time.perf_counter()
        print(f"{text}: {env.fg.n_joint_actions:.3g} joint actions; T^MF {mf.value:.4g} in {mid - start:.2f} s; "
              f"T* {exact.value:.4g} ({exact.status}, {exact.extras.get('formulation')}) in {end - mid:.1f} s; "
              f"T^MF / T* = {mf.value / exact.value:.1f}")


def _cover_size(env) -> int:
    from bandits.multiagent import greedy_cover

    return greedy_cover(env.structure).size


def _summary(frame: pd.DataFrame) -> dict:
    out = {}
    for label in LABELS:
        rounds = frame.loc[frame["label"] == label, "rounds"].to_numpy(float)
        errors = int((~frame.loc[frame["label"] == label, "correct"].astype(bool)).sum())
        out[label] = (rounds.mean(), rounds.std(ddof=1), rounds.size, errors) if rounds.size else None
    return out


def _row(key: str, target_ours: float, ours: dict, paper) -> str:
    tmf_p, oracle_p, (mf_p, mf_sd), (rand_p, rand_sd) = paper
    o, m, r = (ours[label] for label in LABELS)
    fmt = lambda s: f"{s[0]:.4g} ± {s[1]:.3g}" if s else "—"  # noqa: E731
    sd = lambda x: "" if x is None else f" ± {x}"  # noqa: E731
    ratio = lambda a, b: f"{a / b:.2f}" if a and b else "—"  # noqa: E731
    ours_r = [ratio(m and m[0], target_ours), ratio(m and m[0], r and r[0]), ratio(m and m[0], o and o[0])]
    paper_r = [f"{mf_p / tmf_p:.2f}", f"{mf_p / rand_p:.2f}", f"{mf_p / oracle_p:.2f}"]
    errors = "/".join(str(s[3]) if s else "—" for s in (o, m, r))
    runs = m[2] if m else 0
    return (f"| {key} | {target_ours:.1f} ({tmf_p}) | {fmt(o)} ({oracle_p}) | {fmt(m)} ({mf_p}{sd(mf_sd)}) | "
            f"{fmt(r)} ({rand_p}{sd(rand_sd)}) | {runs} | {errors} | " +
            " | ".join(f"{a} ({b})" for a, b in zip(ours_r, paper_r, strict=True)) + " |")


def table_command(args) -> None:
    head = ("| {} | T^MF log 1/δ (paper) | Oracle (paper) | MF-TaS (paper) | Random (paper) | runs | errors O/M/R | "
            "MF-TaS / T^MF log 1/δ (paper) | MF-TaS / Random (paper) | MF-TaS / Oracle (paper) |")
    for directory in args.dirs:
        frame = pd.read_csv(Path(directory) / "runs.csv")
        by_delta = frame["delta"].nunique() > 1
        print(f"\n{directory}: mean ± std rounds")
        print(head.format("δ" if by_delta else "N"))
        print("|" + "---|" * 11)
        envs = {instance: parse_instance(instance) for instance in frame["instance"].unique()}
        for instance in sorted(envs, key=lambda i: envs[i].n_agents):
            env, group = envs[instance], frame[frame["instance"] == instance]
            tmf = t_mf(env)
            for delta, cell in sorted(group.groupby("delta"), key=lambda item: -item[0]):
                key = f"{delta:g}" if by_delta else str(env.n_agents)
                table = TABLE3 if instance.startswith("antenna") else TABLE1
                paper = TABLE2[delta] if by_delta else table[env.n_agents]
                print(_row(key, tmf * math.log(1 / delta), _summary(cell), paper))
            if by_delta:  # the rounds added per decade of 1/delta, ours (paper)
                for i, label in enumerate(LABELS):
                    means = [group[(group["delta"] == d) & (group["label"] == label)]["rounds"].mean() for d in DELTAS]
                    paper = [TABLE2[d][1] if i == 0 else TABLE2[d][i + 1][0] for d in DELTAS]
                    pairs = zip(means[:-1], means[1:], paper[:-1], paper[1:], strict=True)
                    steps = [f"{b - a:.0f} ({q - p:.0f})" for a, b, p, q in pairs]
                    print(f"{label}: rounds added per decade of 1/delta: {', '.join(steps)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("scale")
    rates = sub.add_parser("rates")
    rates.add_argument("instances", nargs="*", help="instance texts (default: the table instances and N = 5, M = 1)")
    rates.add_argument("--runs", type=int, default=0, help="also run the three algorithms (delta = 0.01)")
    cpu = sub.add_parser("cpu")
    cpu.add_argument("instances", nargs="*", help="instance texts (default: the Table 1 instances)")
    cpu.add_argument("--time-limit", type=float, default=3600.0, help="seconds allowed for each exact T*")
    table = sub.add_parser("table")
    table.add_argument("dirs", nargs="+", help="results directories of bandits study")
    args = parser.parse_args()
    commands = {"scale": scale_command, "rates": rates_command, "cpu": cpu_command, "table": table_command}
    commands[args.command](args)


if __name__ == "__main__":
    main()
