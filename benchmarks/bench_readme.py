"""The numbers the README's set-up section quotes, measured: the main job's wall time and ratios, and the test
command's test count and wall time.

    python benchmarks/bench_readme.py                 # both (the test command takes several minutes)
    python benchmarks/bench_readme.py --only main     # the main job alone (under a minute)
    python benchmarks/bench_readme.py --only main --first-run   # a fresh installation's first run, then the next
    python benchmarks/bench_readme.py --only tests

Run it in the environment the README's commands make (``pip install ".[test]"``), on an otherwise idle machine
when the README's wording is at stake: the load average before and after each command is printed beside it.

* main job: ``bandits study benchmarks/studies/fws_table1.toml --quick`` (its output folder is a temporary one),
  wall time, then per rule and delta the mean samples and the ratio to the lower bound T* kl(delta, 1 - delta),
  read from the study's ``summary.csv``; with ``--first-run``, twice: from an empty numba cache (a fresh
  installation's first run, which compiles the run loops) and from the cache that run left;
* tests: ``pytest -n auto`` as the README gives it, wall time and the counts pytest prints (passed, skipped, ...).
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAIN_JOB = ["study", "benchmarks/studies/fws_table1.toml", "--quick"]
TEST_COMMAND = ["-m", "pytest", "-n", "auto", "-q", "-p", "no:cacheprovider"]


def load() -> str:
    """The 1-minute load average against the core count."""
    return f"load {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"


def timed(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Wall time of one command run from the repository's root (in ``env``, or this process's environment), and its
    completed process."""
    print(f"$ {' '.join(argv)}   ({load()})", flush=True)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    print(f"  {seconds:.1f} s, exit status {done.returncode}   ({load()})")
    return seconds, done


def bandits_command() -> list[str]:
    """The ``bandits`` console script next to this interpreter, or its entry point by ``python -c``."""
    script = Path(sys.executable).parent / "bandits"
    return [str(script)] if script.exists() else [sys.executable, "-c", "from bandits.cli import main; main()"]


def main_job(env: dict[str, str] | None = None) -> None:
    """The README's first command after the install: wall time and the summary's ratios."""
    with tempfile.TemporaryDirectory() as out:
        _, done = timed([*bandits_command(), *MAIN_JOB, "--out", out], env)
        if done.returncode:
            sys.exit(done.stderr.strip())
        with open(Path(out) / "summary.csv", newline="") as handle:
            rows = list(csv.DictReader(line for line in handle if not line.startswith("#")))
    print(f"  {'rule':<28} {'delta':>7} {'runs':>5} {'mean samples':>13} {'ratio to T* kl':>15}")
    for row in sorted(rows, key=lambda r: (r["algorithm"], -float(r["delta"]))):
        print(f"  {row['algorithm']:<28} {float(row['delta']):>7g} {row['runs']:>5} {float(row['mean']):>13,.0f} "
              f"{float(row['ratio']):>15.2f}")


def tests() -> None:
    """The README's test command: wall time and pytest's final counts."""
    _, done = timed([sys.executable, *TEST_COMMAND])
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip()
    counts = dict((name, int(n)) for n, name in re.findall(r"(\d+) (passed|failed|skipped|errors?|xfailed)", last))
    print(f"  {last}")
    print(f"  tests run: {counts.get('passed', 0) + counts.get('failed', 0):,} "
          f"(skipped: {counts.get('skipped', 0)}, the slow ones: pytest -n auto --runslow)")
    if done.returncode:
        sys.exit("the test command failed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=["main", "tests"], help="measure one of the two commands")
    parser.add_argument("--first-run", action="store_true",
                        help="run the main job from an empty numba cache, then again from the cache it left")
    args = parser.parse_args()
    if args.only in (None, "main") and args.first_run:
        with tempfile.TemporaryDirectory() as cache:
            for label in ("empty numba cache (a fresh installation)", "the cache the first run left"):
                print(f"main job, {label}:")
                main_job({**os.environ, "NUMBA_CACHE_DIR": cache})
    elif args.only in (None, "main"):
        main_job()
    if args.only in (None, "tests"):
        tests()


if __name__ == "__main__":
    main()
