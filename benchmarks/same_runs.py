"""The Track-and-Stop family's runs, printed record by record, to compare two checkouts of the toolkit.

    PYTHONPATH=/path/to/other/checkout python benchmarks/same_runs.py > before.txt
    python benchmarks/same_runs.py > after.txt
    diff before.txt after.txt        # no output: the same runs

Each line is one seeded run (samples, rounds, recommendation, correctness, what stopped it) and the last record of its
trace (the rule's counters: forced rounds, t_mf_hat, t_mf, GLR values); the wall time of each group goes to stderr.
The groups: exact TaS and the core Track-and-Stop on the reference path (``tas`` with several options on three
factored instances; ``track-and-stop`` with D- and C-tracking on Gaussian, Bernoulli and linear instances), exact TaS
past the joint actions it tracks (ancestral draws), the MF-TaS family (``mf-tas``, ``mf-tas-oracle``, ``uniform``),
six ``mf-tas`` runs on the planted line N = 50, K = 3 (its structure's mean-field model solved first, untimed), and
GK16's Track-and-Stop on one agent (``gk-tas``, D- and C-tracking, on three ``mab`` instances).
"""

from __future__ import annotations

import sys
import time

from bandits.instances import parse_instance
from bandits.registry import make_algorithm
from bandits.run import run

SEEDS = range(4)
GROUPS = {
    "tas and track-and-stop": [
        ("tas", "line:N=4,K=3", 0.05), ("tas", "ring:N=5,K=3", 0.05), ("tas", "ring:N=3,K=2,scale=4", 0.05),
        ("tas:resolve_growth=0", "line:N=4,K=3", 0.05), ("tas:resolve_growth=0.3,tol=0.05", "ring:N=5,K=3", 0.01),
        ("tas:exploration=dtracking", "line:N=4,K=3", 0.05),
        ("track-and-stop", "gaussian:means=1/0.8/0.5/0.2", 0.01),
        ("track-and-stop:tracking=C", "gaussian:means=1/0.8/0.5/0.2", 0.01),
        ("track-and-stop:tracking=C,resolve_growth=0", "bernoulli", 0.1),
        ("track-and-stop", "soare:d=2,omega=0.3", 0.05), ("track-and-stop:tracking=C", "soare:d=2,omega=0.3", 0.05),
    ],
    "tas past the tracked size": [
        ("tas", "line:N=16,K=2,means=planted,gap=0.5", 0.05), ("tas", "ring:N=15,K=2,means=planted,gap=0.5", 0.05),
    ],
    "mf-tas family": [
        ("mf-tas", "line:N=4,K=3", 0.05), ("mf-tas", "ring:N=5,K=3", 0.05), ("mf-tas", "ring:N=3,K=2,scale=4", 0.05),
        ("mf-tas", "line:N=20,K=3,means=planted,gap=0.5", 0.05), ("mf-tas:exploration=dtracking", "ring:N=5,K=3", 0.05),
        ("mf-tas:cover=build-a0", "line:N=4,K=3", 0.05), ("mf-tas-oracle", "line:N=4,K=3", 0.05),
        ("mf-tas-oracle", "ring:N=5,K=3", 0.05), ("mf-tas-oracle", "line:N=20,K=3,means=planted,gap=0.5", 0.05),
        ("uniform", "ring:N=5,K=3", 0.05), ("tas", "ring:N=5,K=3", 0.05),
    ],
    "mf-tas on line N = 50": [("mf-tas", "line:N=50,K=3,means=planted,gap=0.5", 0.05)],
    "gk-tas": [(rule, instance, 0.05) for rule in ("gk-tas", "gk-tas:tracking=C")
               for instance in ("mab", "mab:means=1/0.5/0.2/0", "mab:means=0.3/0.21/0.2/0.19/0.18")],
}


def record(text: str, instance: str, delta: float, seed: int) -> str:
    """One run on the reference path and its last trace record, as a line."""
    result = run(make_algorithm(text), parse_instance(instance), delta, seed=seed, trace=True, compiled=False)
    last = sorted((k, round(v, 9) if isinstance(v, float) else v) for k, v in result.trace[-1].items()
                  if k != "elapsed")
    return (f"{text} {instance} {seed} {result.samples} {result.rounds} {result.recommendation} {result.correct} "
            f"{result.stopped_by} {last}")


def main() -> None:
    run(make_algorithm("mf-tas"), parse_instance(GROUPS["mf-tas on line N = 50"][0][1]), 0.05, seed=99)  # warm-up
    for group, cases in GROUPS.items():
        start = time.perf_counter()
        seeds = range(6) if group == "mf-tas on line N = 50" else range(3) if "past" in group else SEEDS
        count = 0
        for text, instance, delta in cases:
            for seed in seeds:
                print(record(text, instance, delta, seed), flush=True)
                count += 1
        print(f"{group}: {count} runs in {time.perf_counter() - start:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
