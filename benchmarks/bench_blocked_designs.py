"""Blocked and split-plot exact designs (optdesign.blocked_design, optdesign.split_plot_design): times, values and
certified efficiencies on the documented examples of R's AlgDesign and skpr, and on larger response surfaces.

    python benchmarks/bench_blocked_designs.py              # 5 seeds a case (about 30 s)
    python benchmarks/bench_blocked_designs.py --seeds 2

Cases (no R needed: our numbers only; the same examples side by side with AlgDesign, skpr and pyoptex, their
designs scored by one function, are ``python benchmarks/bench_designs_vs_r.py --only blocked``):

* ``bib``: AlgDesign's ``optBlock`` help example, 7 treatments in 7 fixed blocks of 3 (``optBlock(~., withinData =
  factor(1:7), blocksizes = rep(3, 7))``); the D-optimal design is a balanced incomplete block design (every pair of
  treatments together once), certified optimal (the unblocked bound alone gives 7/9, its efficiency factor);
* ``2^3``: the 2^3 factorial, main effects, in two fixed blocks of 4 (slopes' information 8 I, efficiency 1);
* ``coffee``: skpr's split-plot example of ``gen_design``/``eval_design``: caffeine (two levels) hard to change, 12
  whole plots of 3 runs; cost (1, 2, coded -1, 1 as skpr normalises it), type (4 levels) and size (3 levels) easy
  to change; model ``~ caffeine + cost + size + type`` with sum contrasts (skpr's default), variance ratio 1;
* ``rsm-blocked``: full quadratic model in 4 factors on the 3^4 grid (p = 15), 8 blocks of 6, fixed or random
  (eta = 1) block effects;
* ``rsm-split``: full quadratic model in 2 hard-to-change and 2 easy-to-change factors on 3 levels (p = 15), 12
  whole plots of 4, eta = 1.

Columns: seconds per design (median over the seeds, 21 starts each, one BLAS thread), the criterion value
det(M/N)^(-1/p) (best and worst seed), skpr's D = 100 det(M)^(1/p) / N (= 100 / value, M = X^T V^{-1} X, of the
best seed), and the certified efficiency lower bound (of the best seed). skpr's D (and AlgDesign's) depend on the
coding of the model matrix; values are comparable only with the same coding.
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # one core, before numpy loads
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import itertools  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Literal  # noqa: E402

import numpy as np  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

import optdesign as od  # noqa: E402

QUADRATIC = "~ (a + b + c + d)**2 + I(a**2) + I(b**2) + I(c**2) + I(d**2)"


def bib(seed: int) -> od.BlockedDesignResult:
    X, _, _ = od.candidates("~ C(t)", {"t": [str(i) for i in range(1, 8)]})
    return od.blocked_design(X, [3] * 7, seed=seed)


def factorial(seed: int) -> od.BlockedDesignResult:
    F = np.array(list(itertools.product([-1.0, 1.0], repeat=3)))
    return od.blocked_design(np.column_stack([np.ones(8), F]), [4, 4], replicates=False, seed=seed)


def coffee(seed: int) -> od.BlockedDesignResult:
    easy = {"cost": [-1, 1], "type": ["Kona", "Colombian", "Ethiopian", "Sumatra"],
            "size": ["Short", "Grande", "Venti"]}
    return od.split_plot_design("~ caffeine + cost + C(size, contr.sum) + C(type, contr.sum)", {"caffeine": [-1, 1]},
                                easy, [3] * 12, eta=1.0, seed=seed)


def rsm_blocked(effects: Literal["fixed", "random"]) -> Callable[[int], od.BlockedDesignResult]:
    X, _, _ = od.candidates(QUADRATIC, od.cube(["a", "b", "c", "d"]))
    eta = None if effects == "fixed" else 1.0
    return lambda seed: od.blocked_design(X, [6] * 8, block_effects=effects, eta=eta, seed=seed)


def rsm_split(seed: int) -> od.BlockedDesignResult:
    return od.split_plot_design(QUADRATIC, {"a": (-1, 1, 3), "b": (-1, 1, 3)}, {"c": (-1, 1, 3), "d": (-1, 1, 3)},
                                [4] * 12, eta=1.0, seed=seed)


def is_bib(res: od.BlockedDesignResult) -> str:
    incidence = np.zeros((7, 7))
    incidence[res.blocks, res.rows] = 1
    concurrence = incidence.T @ incidence
    return "BIBD" if np.all(concurrence[~np.eye(7, dtype=bool)] == 1) else "not a BIBD"


CASES: list[tuple[str, str, Callable[[int], od.BlockedDesignResult], Callable[[od.BlockedDesignResult], str]]] = [
    ("bib", "fixed", bib, is_bib),
    ("2^3", "fixed", factorial, lambda res: f"M = {np.diag(res.information).round(6).tolist()}"),
    ("coffee", "split, eta 1", coffee, lambda res: f"{res.extras['whole_plot_settings'].tolist().count(0)}/12 at -1"),
    ("rsm-blocked", "fixed", rsm_blocked("fixed"), lambda res: ""),
    ("rsm-blocked", "random, eta 1", rsm_blocked("random"), lambda res: ""),
    ("rsm-split", "split, eta 1", rsm_split, lambda res: ""),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5, help="seeds per case")
    args = parser.parse_args()
    table = Table(title=f"Blocked and split-plot D-optimal designs ({args.seeds} seeds a case, 21 starts a seed)")
    for col in ("case", "effects", "N", "p", "s / design", "value best", "value worst", "skpr D", "cert. eff",
                "check"):
        table.add_column(col, justify="right")
    for name, effects, make, check in CASES:
        results, times = [], []
        for seed in range(args.seeds):
            begin = time.perf_counter()
            results.append(make(seed))
            times.append(time.perf_counter() - begin)
        best = min(results, key=lambda res: res.value)
        worst = max(res.value for res in results)
        efficiency = "none" if best.efficiency is None else f"{best.efficiency:.4f}"
        table.add_row(name, effects, str(best.n), str(best.information.shape[0]), f"{np.median(times):.2f}",
                      f"{best.value:.6f}", f"{worst:.6f}", f"{100 / best.value:.3f}", efficiency, check(best))
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
