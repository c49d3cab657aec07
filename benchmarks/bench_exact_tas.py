"""Exact Track-and-Stop (``tas``) per run: this checkout against a baseline checkout, on the same seeds.

    python benchmarks/bench_exact_tas.py --baseline DIR              # DIR: a checkout of the code to compare with
    python benchmarks/bench_exact_tas.py --baseline DIR --runs 5 --cells line:N=4,K=3,means=uniform,seed=0
    python benchmarks/bench_exact_tas.py                             # this checkout only
    python benchmarks/bench_exact_tas.py --baseline DIR --profile line:N=4,K=3,means=uniform,seed=0 --runs 3

Cells: the eleven of ``benchmarks/studies/mftas_synthetic.toml`` (lines K = 3, N = 3..6 and K = 4, N = 3..5,
rings K = 3, N = 3..6, uniform means drawn with seed 0) and the planted lines N = 10 and 20 (Delta_min = 0.5),
delta = 0.01, seeds 0..runs-1 (``bandits.run.run(ExactTaS(), env, 0.01, seed=s)``).

Every cell runs in a fresh worker process per checkout (``PYTHONPATH`` = that checkout, one BLAS thread), which
first does one untimed run (seed 10**6: imports, caches), then the timed runs. The two checkouts alternate cell by
cell, so both see the same load on a shared machine. Per run: wall seconds of ``run``, the policy's seconds in
its re-solves (``solve_time``), re-solves, rounds and whether the recommendation is correct.

The table gives seconds per run before and after and their ratio, seconds per re-solve, and the mean rounds
± s.e. of each with Welch's t of the difference: the same seeds do not give the same sample paths (the
allocation of each re-solve is certified to tol = 1e-2, not bit for bit the baseline's, and one different
draw changes every later estimate), so the stopping times are compared as distributions.

``--profile CELL`` runs the cell under cProfile instead (same worker, same seeds) and splits the time of the runs
into the re-solves and their parts (cumulative seconds of the named functions; cProfile inflates Python-heavy code,
so the parts are shares, not timings).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DELTA = 0.01
SYNTHETIC = ([f"line:N={n},K=3,means=uniform,seed=0" for n in (3, 4, 5, 6)]
             + [f"line:N={n},K=4,means=uniform,seed=0" for n in (3, 4, 5)]
             + [f"ring:N={n},K=3,means=uniform,seed=0" for n in (3, 4, 5, 6)])
PLANTED = [f"line:N={n},K=3,means=planted,gap=0.5,seed=0" for n in (10, 20)]


def worker(cell: str, runs: int, profiler: Any = None) -> None:
    """Time ``runs`` seeded runs of exact TaS on ``cell`` with the code on the path; one JSON line per run
    (``profiler``, a cProfile.Profile, is on during the timed runs only)."""
    from threadpoolctl import threadpool_limits

    from bandits.instances import parse_instance
    from bandits.multiagent import ExactTaS
    from bandits.run import run

    policies: list = []

    class Captured(ExactTaS):
        def start(self, problem, env, rng):  # type: ignore[no-untyped-def]
            policies.append(super().start(problem, env, rng))
            return policies[-1]

    env = parse_instance(cell)
    with threadpool_limits(1):
        run(Captured(), env, DELTA, seed=10**6)
        if profiler is not None:
            profiler.enable()
        for seed in range(runs):
            start = time.perf_counter()
            result = run(Captured(), env, DELTA, seed=seed)
            wall = time.perf_counter() - start
            policy = policies[-1]
            print(json.dumps({"seed": seed, "wall": wall, "solve": policy.solve_time, "solves": policy.solves,
                              "rounds": int(result.rounds), "correct": bool(result.correct)}), flush=True)
        if profiler is not None:
            profiler.disable()


# parts of a run under cProfile: (label, file suffix or suffixes, function name); cumulative seconds summed over matches
PARTS = [("whole runs", "bandits/run.py", "run"), ("re-solves", "multiagent/algorithms.py", "_resolve"),
         ("  master solves", "exact/generated.py", "solve"),
         ("  cvxpy compilation", "cvxpy/problems/problem.py", "get_problem_data"),
         ("  cvxpy's solver probing", "reductions/solvers/defines.py", "installed_solvers"),
         ("  CLARABEL (every conic solve)", "~", "<method 'solve' of 'builtins.DefaultSolver' objects>"),
         ("  separation (Pareto)", "exact/separation.py", "most_violated"),
         ("  separation (enumeration)", "exact/enumerated_separation.py", "separate"),
         ("  initial working set", ("exact/constraint_generation.py", "exact/working_set.py"), "initial_working_set"),
         ("stopping rule (GLRT)", "pure_exploration/policy.py", "stopped"),
         ("sampling joint actions", "inference/marginals.py", "sample_joint_actions"),
         ("law of the joint actions", "inference/marginals.py", "joint_action_probabilities"),
         ("tracking the joint actions", "core/tracking.py", "track")]


def profile_worker(cell: str, runs: int) -> None:
    """The worker's runs under cProfile; one JSON line of seconds per part of :data:`PARTS`."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    worker(cell, runs, profiler)
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    out = {label: sum(row[3] for (path, _, name), row in stats.items() if path.endswith(suffix) and name == func)
           for label, suffix, func in PARTS}
    print(json.dumps(out), flush=True)


def measure(checkout: Path, cell: str, runs: int, mode: str = "--worker") -> list[dict]:
    """The worker's runs on ``cell`` with ``checkout`` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), mode, cell, "--runs", str(runs)],
                         env=env, capture_output=True, text=True, check=True, cwd=checkout)
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def summary(rows: list[dict]) -> dict:
    """Mean seconds per run and per re-solve, mean rounds with its s.e., errors."""
    rounds = np.asarray([r["rounds"] for r in rows], dtype=float)
    return {"wall": float(np.mean([r["wall"] for r in rows])), "solve": float(np.mean([r["solve"] for r in rows])),
            "per_solve": sum(r["solve"] for r in rows) / max(1, sum(r["solves"] for r in rows)),
            "rounds": float(rounds.mean()), "se": float(rounds.std(ddof=1) / np.sqrt(rounds.size)) if rounds.size > 1
            else 0.0, "errors": sum(not r["correct"] for r in rows), "n": len(rows)}


def welch(a: dict, b: dict) -> float:
    """Welch's t of the difference of two mean rounds (0 when both s.e. vanish)."""
    se = np.hypot(a["se"], b["se"])
    return float((b["rounds"] - a["rounds"]) / se) if se > 0 else 0.0


def report(results: list[tuple[str, dict, dict | None]]) -> None:
    """A markdown table: one row per cell, then the totals over the cells."""
    head = "| cell | s/run after | ms/re-solve after | rounds after | errors |"
    if results and results[0][2] is not None:
        head = ("| cell | s/run before | s/run after | ratio | ms/re-solve before | ms/re-solve after "
                "| rounds before | rounds after | Welch t | errors before / after |")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for cell, after, before in results:
        name = cell.replace(",seed=0", "").replace(",means=uniform", "").replace(",means=planted,gap=0.5", " planted")
        if before is None:
            print(f"| {name} | {after['wall']:.3f} | {1e3 * after['per_solve']:.1f} | "
                  f"{after['rounds']:,.0f} ± {after['se']:,.0f} | {after['errors']} |")
            continue
        print(f"| {name} | {before['wall']:.3f} | {after['wall']:.3f} | {before['wall'] / after['wall']:.2f} | "
              f"{1e3 * before['per_solve']:.1f} | {1e3 * after['per_solve']:.1f} | "
              f"{before['rounds']:,.0f} ± {before['se']:,.0f} | {after['rounds']:,.0f} ± {after['se']:,.0f} | "
              f"{welch(before, after):+.2f} | {before['errors']} / {after['errors']} |")
    if results and results[0][2] is not None:
        total_before = sum(b["wall"] * b["n"] for _, _, b in results if b is not None)
        total_after = sum(a["wall"] * a["n"] for _, a, _ in results)
        print(f"\ntotal seconds over every run: before {total_before:.1f}, after {total_after:.1f}, "
              f"ratio {total_before / total_after:.2f}")


def report_profile(cell: str, runs: int, baseline: Path | None) -> None:
    """A markdown table of the parts of ``runs`` runs of ``cell`` under cProfile, per checkout."""
    checkouts = ([("before", baseline.resolve())] if baseline else []) + [("after", ROOT)]
    parts = {name: measure(path, cell, runs, "--worker-profile")[-1] for name, path in checkouts}
    print(f"{cell}, {runs} runs under cProfile: seconds (share of the whole runs)\n")
    print("| part | " + " | ".join(parts) + " |")
    print("|---|" + "---|" * len(parts))
    for label, _, _ in PARTS:
        print(f"| {label} | " + " | ".join(f"{p[label]:.2f} ({p[label] / p['whole runs']:.0%})" for p in parts.values())
              + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", type=Path, help="a checkout of the code to compare with (its repository root)")
    parser.add_argument("--runs", type=int, default=20, help="seeded runs per cell (default 20)")
    parser.add_argument("--cells", default=None, help="comma-free list of instance texts separated by ';' "
                        "(default: the mftas_synthetic cells and the planted lines N = 10, 20)")
    parser.add_argument("--no-planted", action="store_true", help="only the mftas_synthetic cells")
    parser.add_argument("--profile", metavar="CELL", help="split the time of CELL's runs under cProfile")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--worker-profile", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker or args.worker_profile:
        (worker if args.worker else profile_worker)(args.worker or args.worker_profile, args.runs)
        return
    if args.profile:
        report_profile(args.profile, args.runs, args.baseline)
        return
    cells = args.cells.split(";") if args.cells else SYNTHETIC + ([] if args.no_planted else PLANTED)
    results = []
    start = time.perf_counter()
    for cell in cells:
        before = summary(measure(args.baseline.resolve(), cell, args.runs)) if args.baseline else None
        after = summary(measure(ROOT, cell, args.runs))
        results.append((cell, after, before))
        print(f"# {cell}: after {after['wall']:.3f} s/run" + (f", before {before['wall']:.3f}" if before else "")
              + f" ({time.perf_counter() - start:.0f} s so far)", file=sys.stderr, flush=True)
    report(results)


if __name__ == "__main__":
    main()
