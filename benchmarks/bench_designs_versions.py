"""Regression check of the small design instances between this checkout and another revision.

    python benchmarks/bench_designs_versions.py --against REV      # e.g. --against HEAD~5 (about 1 minute)

The same calls (G-optimal, XY-allocation, XY-oracle and pairs on the small instances of bench_designs.py) are
timed in two processes, one importing this checkout and one a temporary git worktree of REV; median of 5 (3 for
the pairs) on one BLAS thread. Prints each time, the ratio new / old and both certified gaps.
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

ROOT = Path(__file__).resolve().parents[1]


def measure() -> dict[str, tuple[float, float]]:
    """{case: (median seconds, certified gap)} for the version on the import path."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    import optdesign as od
    from bandits.instances import soare

    def median(fn, *args, reps: int = 5) -> tuple[float, float]:
        times = []
        for _ in range(reps):
            start = time.perf_counter()
            res = fn(*args)
            times.append(time.perf_counter() - start)
        return float(np.median(times)), float(res.gap)

    def gaussian(seed: int, n: int, d: int) -> np.ndarray:
        return np.random.default_rng(seed).standard_normal((n, d))

    cases: dict[str, tuple[float, float]] = {}
    with threadpool_limits(1):
        for K, d in [(20, 5), (500, 10), (2000, 20)]:
            cases[f"g_optimal {K}x{d}"] = median(od.g_optimal, gaussian(K + d, K, d))
        for K, d in [(20, 5), (40, 6), (100, 10)]:
            cases[f"xy_allocation {K}x{d}"] = median(od.xy_allocation, gaussian(K * d, K, d))
        for d in (5, 10):
            env = soare(d=d, omega=0.01)
            cases[f"xy_oracle soare d={d}"] = median(od.xy_oracle, env.X, env.theta)
        for n in (500, 1000):
            cases[f"xy_allocation pairs {n}x5"] = median(od.xy_allocation, gaussian(n, n, 5), reps=3)
    return cases


def run_version(path: Path) -> dict[str, list[float]]:
    env = {**os.environ, "PYTHONPATH": str(path)}
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child"], env=env, cwd=path,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", help="the revision to compare with (git rev)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure()))
        return
    if not args.against:
        parser.error("--against REV is required")
    with tempfile.TemporaryDirectory() as tmp:
        old_tree = Path(tmp) / "old"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(old_tree), args.against],
                       check=True)
        try:
            old, new = run_version(old_tree), run_version(ROOT)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old_tree)], check=True)
    print(f"{'case':28s} {'old [ms]':>10s} {'new [ms]':>10s} {'new/old':>8s} {'gap old':>9s} {'gap new':>9s}")
    for case, (t_new, g_new) in new.items():
        t_old, g_old = old[case]
        print(f"{case:28s} {t_old * 1e3:10.2f} {t_new * 1e3:10.2f} {t_new / t_old:8.2f} {g_old:9.1e} {g_new:9.1e}")


if __name__ == "__main__":
    main()
