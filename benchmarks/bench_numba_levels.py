"""Cost per sample of the compiled linear rules with numba at optimisation level 3 (its default) and 1.

    python benchmarks/bench_numba_levels.py                       # 3 alternating rounds, 20 seeds per rule
    python benchmarks/bench_numba_levels.py --rounds 5 --samplers lingame lingame-c

``NUMBA_OPT=1`` shortens a fresh installation's first run (numba compiles the run loops faster) and leaves the
samples unchanged; this measures what it costs afterwards. Each round runs every rule on Soare et al.'s instance
(d = 6, omega = 0.1) under the GLR stop at ``--delta``, over ``--seeds`` seeds, once per level, each level in its own
process with its own numba cache (numba's cache does not record the level, so one cache would serve both). A process
makes one untimed run of each rule first, so compiling (or loading the cache) is not counted. The table gives, per
rule, the best round's microseconds per sample at each level, their ratio, in how many rounds level 1 was the
slower (the rounds alternate the two levels so that a drift of the machine reaches both), and whether every process
drew the same samples.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bandits.pure_exploration.compiled.plan import RULES

LEVELS = (3, 1)


def worker(names: list[str], seeds: int, delta: float) -> dict[str, tuple[float, int]]:
    """Microseconds per sample and total samples of each rule over ``seeds`` runs, after one untimed run (this
    process's level)."""
    from threadpoolctl import threadpool_limits

    from bandits.instances import soare
    from bandits.registry import make_algorithm
    from bandits.run import run

    env = soare(d=6, omega=0.1)
    cost = {}
    with threadpool_limits(limits=1):
        for name in names:
            algorithm = make_algorithm(name)
            run(algorithm, env, delta, seed=10**6)  # compiles, or loads the cache
            samples, start = 0, time.perf_counter()
            for seed in range(seeds):
                samples += run(algorithm, env, delta, seed=seed).samples
            cost[name] = (1e6 * (time.perf_counter() - start) / samples, samples)
    return cost


def one_level(level: int, cache: Path, args: argparse.Namespace) -> dict[str, tuple[float, int]]:
    """Run :func:`worker` in a fresh process at numba optimisation ``level`` with its own cache folder."""
    env = {**os.environ, "NUMBA_OPT": str(level), "NUMBA_CACHE_DIR": str(cache / f"opt{level}")}
    command = [sys.executable, __file__, "--worker", "--seeds", str(args.seeds), "--delta", str(args.delta),
               "--samplers", *args.samplers]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the level-{level} process failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of the two levels")
    parser.add_argument("--seeds", type=int, default=20, help="timed runs per rule, level and round")
    parser.add_argument("--delta", type=float, default=0.01)
    parser.add_argument("--samplers", nargs="+", default=list(RULES), help="compiled rules (registry names)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    unknown = sorted(set(args.samplers) - set(RULES))
    if unknown or args.rounds < 1 or args.seeds < 1:
        parser.error(f"--rounds and --seeds must be at least 1; --samplers are among {', '.join(RULES)}"
                     + (f" (not {', '.join(unknown)})" if unknown else ""))
    if args.worker:
        print(json.dumps(worker(args.samplers, args.seeds, args.delta)))
        return
    console = Console(width=120)
    start = time.perf_counter()
    rounds: list[dict[int, dict[str, float]]] = []
    with tempfile.TemporaryDirectory() as caches:
        for _ in range(args.rounds):
            rounds.append({level: one_level(level, Path(caches), args) for level in LEVELS})
    table = Table(title=f"Soare (d = 6, omega = 0.1), delta = {args.delta}: microseconds per sample, best of "
                        f"{args.rounds} rounds of {args.seeds} runs")
    for column in ("rule", "level 3", "level 1", "level 1 / level 3", "rounds level 1 slower", "same samples"):
        table.add_column(column, justify="right")
    for name in args.samplers:
        best = {level: min(r[level][name][0] for r in rounds) for level in LEVELS}
        slower = sum(r[1][name][0] > r[3][name][0] for r in rounds)
        same = len({r[level][name][1] for r in rounds for level in LEVELS}) == 1
        table.add_row(name, f"{best[3]:.2f}", f"{best[1]:.2f}", f"{best[1] / best[3]:.2f}", f"{slower}/{args.rounds}",
                      "yes" if same else "no")
    console.print(table)
    console.print(f"total {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
