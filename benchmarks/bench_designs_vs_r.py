"""Side by side with R's OptimalDesign (Harman & Filová, 1.0.3): approximate designs against od_REX (Harman, Filová &
Richtárik 2020), exact designs against od_KL, both called through Rscript in the same run; and with R's AlgDesign
(Wheeler) and skpr (Morgan-Wall & Khoury) and the Python package pyoptex (Born) on their documented examples of
blocked, split-plot and augmented designs and of power, and with OptimalDesign's GLM example.

    python benchmarks/bench_designs_vs_r.py --only exact,exact-scale,approximate   # OptimalDesign (tens of minutes)
    python benchmarks/bench_designs_vs_r.py --only approximate --max-n 100000
    python benchmarks/bench_designs_vs_r.py --only exact --exact-criteria D
    python benchmarks/bench_designs_vs_r.py --only exact-scale --exact-criteria D,A --seeds 3
    python benchmarks/bench_designs_vs_r.py --only blocked,power,glm,augment --pyoptex-python PYOPTEX_VENV/bin/python

R and the package: ``apt-get install r-base-core r-cran-matrix r-cran-matrixstats r-cran-matrixcalc r-cran-plyr
r-cran-quadprog r-cran-lpsolve r-cran-rgl``, then ``install.packages("OptimalDesign")`` or ``R CMD INSTALL`` of its
source. AlgDesign needs nothing more (``R CMD INSTALL`` of its source). skpr: ``apt-get install r-base-dev
r-cran-rcpp r-cran-rcppeigen r-cran-lme4 r-cran-lmertest r-cran-car r-cran-foreach r-cran-iterators
r-cran-doparallel r-cran-dorng r-cran-future r-cran-future.apply r-cran-globals r-cran-progress r-cran-progressr
r-cran-viridis r-cran-magrittr r-cran-geometry r-cran-digest r-cran-survival``, then ``R CMD INSTALL`` of doFuture
(a release that accepts the packaged future: 0.12.2 with Debian 12's future 1.31) and of skpr's source. pyoptex:
``python -m venv PYOPTEX_VENV && PYOPTEX_VENV/bin/pip install pyoptex`` (never into optdesign's environment). Without
Rscript the script says so and exits 0; a table whose package does not load is skipped with a message.

Tables (one BLAS thread on both sides: OPENBLAS/OMP/MKL_NUM_THREADS=1 in every child; R's reference BLAS is serial):

1. approximate: random Gaussian candidates (n x d, n in {10^4, 10^5, 10^6}, d in {10, 20, 50}) written once to a
   binary file that both sides read, each side in its own child process. Both solve to efficiency 1 - 1e-6 (our
   certified gap tol = 1e-6; od_REX's eff = 0.999999). Time is the solve alone (the data loaded, the libraries
   warm), peak memory the child's maximum resident set (data included). Both designs' efficiencies are
   recomputed here by the same certificate (``efficiency``: Kiefer–Wolfowitz for D, duality for A and I). CRITERIA maps
   each criterion to our function and R's crit name: a row whose function optdesign lacks is skipped with a
   message (A and I turn on once ``od.a_optimal`` / ``od.i_optimal`` exist).
2. exact: the full quadratic model in k = 2, 3, 4 factors on the 3^k grid (p = 6, 10, 15 parameters),
   N = p .. 3p runs, D, A and I: ``od.exact_design`` against od_KL. od_KL restarts until its time limit t.max
   (--budget, 0.5 s); ours runs twice: with its defaults (30 restarts) and restarting until the same time limit.
   Both searches are random, so each case runs with --seeds seeds on every side (ours: ``seed=s``; od_KL:
   ``set.seed``); the table gives the mean over the seeds and the tallies compare the means per case and the
   runs seed by seed. All efficiencies are taken against our certified approximate bound (one bound for all the
   designs of a case); time is wall time of the whole call (approximate design included on both sides: od_KL
   computes od_REX first).
3. exact-scale: Gaussian candidates (K, d) in {(10^4, 10), (10^4, 20), (10^5, 20)}, n = 2d runs, both sides
   restarting until --scale-budget seconds (5 s), --seeds seeds a side, efficiencies against our certified bound.

The other peers, each on its own documented examples (``--only blocked,power,glm,augment``; R's AlgDesign and skpr
from their CRAN sources, their dependencies from Debian's ``r-cran-*`` packages; pyoptex from PyPI in a virtual
environment of its own, given by ``--pyoptex-python``, never installed beside optdesign). A table whose R package
does not load is skipped with a message, and so is the pyoptex side without ``--pyoptex-python``:

4. blocked: blocked and split-plot D-optimal designs, --seeds seeds a side (R: ``set.seed(s)``; pyoptex:
   ``set_seed(s)``; ours: ``seed=s``), every side with its defaults. AlgDesign ``optBlock`` help examples (fixed
   block effects, ``od.blocked_design``): the quadratic model on the 3^3 grid in two blocks of 7, the BIB (7
   treatments in 7 blocks of 3), the PBIB (9 in 9 blocks of 3), the 2^4 main effects in two blocks of 8. skpr
   ``gen_design`` help examples (variance ratio 1): ``~a + b + c`` in 21 runs, blocks of 3 and blocks of 4, 3, 2,
   3, 3, 3, 3 (random block effects, eta = 1); the Altitude/Range/Power split plot in 11 whole plots of 3 and of
   4, 2, 3, ...; the coffee split plot (caffeine hard to change) in 12 whole plots of 3. pyoptex quickstart
   split plot (3-level categorical A hard to change, B and C easy to change on 3 levels, partial response surface
   model, 5 whole plots of 4, ratio 0.1, ``n_tries = 10``), by its split^k-plot and its fixed-structure
   algorithm. Every design, ours and theirs, is scored here by one function on our model matrix: D = det(M)^(1/p)
   / N, M = X^T V^{-1} X (V = I + eta Z Z^T) with random blocks, the within-block centred X^T X without the
   intercept with fixed blocks (skpr's D is 100 times this; optBlock reports a D of its own, which is not this
   determinant; a change of coding multiplies every design's D of a case by one constant, so the ratios are coding
   free). Times: median wall
   time of one design (skpr: both stages of a split plot; pyoptex: after a warm-up run, its numba and Cython
   code compiled and loaded; ours: after a warm-up call). Ours runs twice a seed: with its defaults, and restarting
   until the peer's median time (``time_limit``; the first start always runs).
5. power: skpr ``eval_design`` help examples (the 11-run 2^3 design, the 29-run coffee design, the 36-run coffee
   split plot and its 12 whole plots, the designs skpr generates there) against ``od.design_power`` on the same
   runs, the same contrasts (``contr.sum`` with skpr's level order) and skpr's anticipated coefficients: every
   effect and parameter power. skpr's blocked evaluations (``blocking = TRUE``: the whole plots from the row names,
   the 12-run design's ``Block1`` column) go through ``od.design_power(..., groups=..., eta=...,
   df_method="skpr")``: the GLS information with V = I + eta Z Z^T and skpr's degrees of freedom per stratum.
6. glm: OptimalDesign ``Fx_glm`` help example (logistic, full quadratic in x1, x2 on the 21 x 21 grid, theta0 =
   (1, 2, 2, -1, -1.5, 1.5)): ``od_REX(Fx)`` with its defaults (efficiency 0.999999) against ``od.glm_design(X,
   theta0, "logit", tol=1e-6)`` and against ``od.d_optimal`` with ``method="exchange"`` on
   ``od.glm_model_matrix``; median of --glm-reps calls, efficiencies by the same certificate; and the help page's
   Poisson example (``od_KL(Fx, 50, bin = TRUE, t.max = 5)``, t.max from --glm-budget) against
   ``od.exact_design(F, 50, replicates=False)`` with its defaults and restarting until the same time.
7. augment: AlgDesign ``optFederov`` help examples of augmentation, over --augment-seeds seeds (each seed gives R's
   starting design): the 14-run D-optimal quadratic design on the 3^3 grid augmented to 25 runs, the 8-run
   main-effects design on the 2^4 grid augmented to 10 runs for the model with A:B. Ours augments the same
   fixed runs (``od.exact_design(X, n, fixed=..., replicates=False)``: optFederov takes no candidate twice);
   D = det(X^T X / N)^(1/p) for both.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from rich.console import Console
from rich.table import Table

import optdesign as od
from optdesign.runtime.blas import single_threaded_blas

#: criterion -> (our function in optdesign, R's crit name)
CRITERIA = {"D": ("d_optimal", "D"), "A": ("a_optimal", "A"), "I": ("i_optimal", "I")}
SERIAL = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
EFFICIENCY = 1 - 1e-6
R_REPS = 10  # calls timed together when one R call takes milliseconds (AlgDesign)
console = Console(width=180)

OURS_CHILD = """
import json, sys, time
import numpy as np
import optdesign as od
path, n, d, fn, tol = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
X = np.fromfile(path, dtype="<f8").reshape(n, d)
getattr(od, fn)(np.random.default_rng(0).standard_normal((4 * d, d)), tol=tol)  # warm: imports, caches
start = time.perf_counter()
res = getattr(od, fn)(X, tol=tol)
seconds = time.perf_counter() - start
res.weights.astype("<f8").tofile(path + ".ours")
hwm = [line for line in open("/proc/self/status") if line.startswith("VmHWM:")]
print(json.dumps({"seconds": seconds, "method": res.method, "peak_kib": int(hwm[0].split()[1]) if hwm else None}))
"""

R_APPROX = """
suppressMessages(library(OptimalDesign))
a <- commandArgs(trailingOnly = TRUE)
n <- as.integer(a[2]); d <- as.integer(a[3])
con <- file(a[1], "rb"); Fx <- matrix(readBin(con, "double", n * d, endian = "little"), n, d, byrow = TRUE); close(con)
start <- proc.time()[3]
res <- od_REX(Fx, crit = a[4], eff = as.numeric(a[5]), t.max = as.numeric(a[6]), echo = FALSE, track = FALSE)
seconds <- proc.time()[3] - start
con <- file(paste0(a[1], ".r"), "wb"); writeBin(as.double(res$w.best), con, endian = "little"); close(con)
hwm <- grep("^VmHWM:", readLines("/proc/self/status"), value = TRUE)
peak <- if (length(hwm)) as.numeric(strsplit(trimws(sub("VmHWM:", "", hwm)), " +")[[1]][1]) else -1
cat(sprintf('{"seconds": %.6f, "peak_kib": %.0f}\\n', seconds, peak))
"""

R_EXACT = """
suppressMessages(library(OptimalDesign))
a <- commandArgs(trailingOnly = TRUE)
tasks <- read.csv(a[1], stringsAsFactors = FALSE)
out <- file(a[2], "w")
for (t in seq_len(nrow(tasks))) {
  con <- file(tasks$matrix[t], "rb")
  Fx <- matrix(readBin(con, "double", tasks$K[t] * tasks$p[t], endian = "little"), tasks$K[t], tasks$p[t],
               byrow = TRUE)
  close(con)
  set.seed(tasks$seed[t])
  start <- proc.time()[3]
  res <- od_KL(Fx, tasks$N[t], crit = tasks$crit[t], t.max = tasks$tmax[t], echo = FALSE, track = FALSE)
  seconds <- proc.time()[3] - start
  writeLines(paste(t, seconds, paste(res$w.best, collapse = " ")), out)
}
close(out)
"""


def r_ready() -> str | None:
    """None when Rscript and OptimalDesign load, else why not."""
    if shutil.which("Rscript") is None:
        return "Rscript is not installed (apt-get install r-base-core)"
    probe = subprocess.run(["Rscript", "-e", "suppressMessages(library(OptimalDesign))"], capture_output=True,
                           text=True)
    if probe.returncode != 0:
        first = (probe.stderr.strip().splitlines() or ["no message"])[0]
        return f"R's OptimalDesign package does not load ({first})"
    return None


def run_child(cmd: list[str]) -> tuple[dict, float]:
    """Run a child with one BLAS thread: (its JSON line, its peak resident memory in MiB).

    The peak is the child's own VmHWM (``/proc/self/status``, the high-water mark of the address space it built
    after exec) when it reports one: the ``ru_maxrss`` of wait4 also counts the pages it shared with this process
    between fork and exec, so after a large row every later child seemed as large."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **SERIAL})
    _, status, usage = os.wait4(proc.pid, 0)
    out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{cmd[0]} failed: {err.strip()[-500:]}")
    report = json.loads(out.strip().splitlines()[-1])
    peak = report.get("peak_kib")
    return report, (peak if peak is not None and peak > 0 else usage.ru_maxrss) / 1024


def efficiency(X: np.ndarray, w: np.ndarray, criterion: str) -> float:
    """Certified efficiency lower bound of the design w, the same computation for both sides' designs.

    D (Kiefer–Wolfowitz): d / max_k h_k with h_k = x_k^T M(w)^{-1} x_k. A and I (B = I, or X^T X / n for the
    candidates uniformly, R's Fx_ItoA): phi(w) / max_k b_k with phi = tr(B M^{-1}), b_k = x_k^T M^{-1} B M^{-1} x_k
    (the bound phi^2 / max_k b_k on the optimum, divided by phi).
    """
    n, d = X.shape
    L = np.linalg.cholesky((X * w[:, None]).T @ X)
    B = None if criterion == "D" else np.eye(d) if criterion == "A" else X.T @ X / n
    C = None if B is None else np.linalg.solve(L, np.linalg.solve(L, B).T)  # L^{-1} B L^{-T}
    phi = 0.0 if C is None else float(np.trace(C))
    top = 0.0
    for a in range(0, n, 100_000):
        Z = np.linalg.solve(L, X[a:a + 100_000].T)  # L^{-1} x_k: h_k = |z_k|^2, b_k = z_k^T C z_k
        scores = np.einsum("ij,ij->j", Z, Z if C is None else C @ Z)
        top = max(top, float(scores.max()))
    return d / top if C is None else phi / top


def approximate_row(criterion: str, n: int, d: int, folder: Path, r_limit: float) -> list[str] | None:
    fn, r_crit = CRITERIA[criterion]
    if not hasattr(od, fn):
        console.print(f"[yellow]skipped {criterion} at n = {n}, d = {d}: optdesign has no {fn} yet[/]")
        return None
    path = folder / f"X_{n}_{d}.bin"
    if not path.exists():
        np.random.default_rng(n + d).standard_normal((n, d)).astype("<f8").tofile(path)
    X = np.fromfile(path, dtype="<f8").reshape(n, d)
    tol = 1 / EFFICIENCY - 1
    ours, ours_mem = run_child([sys.executable, "-c", OURS_CHILD, str(path), str(n), str(d), fn, repr(tol)])
    r, r_mem = run_child(["Rscript", "-e", R_APPROX, str(path), str(n), str(d), r_crit, repr(EFFICIENCY),
                          repr(r_limit)])
    w_ours = np.fromfile(str(path) + ".ours", dtype="<f8")
    w_r = np.fromfile(str(path) + ".r", dtype="<f8")
    with single_threaded_blas():
        eff_ours, eff_r = efficiency(X, w_ours, criterion), efficiency(X, w_r, criterion)
    capped = r["seconds"] >= r_limit
    ratio = r["seconds"] / ours["seconds"]
    r_seconds = f"{r['seconds']:.2f}" + (" (limit)" if capped else "")
    limit = ">" if capped else ""
    return [criterion, f"{n:.0e}", str(d), f"{ours['seconds']:.3f}", r_seconds, f"{limit}{ratio:.1f}x",
            f"{eff_ours:.8f}", f"{eff_r:.8f}", f"{ours_mem:.0f}", f"{r_mem:.0f}", f"{n * d * 8 / 2**20:.0f}"]


def approximate_table(args: argparse.Namespace, folder: Path) -> None:
    table = Table(title="Approximate designs to efficiency 1 - 1e-6: optdesign vs od_REX (one BLAS thread)")
    for col in ("crit", "n", "d", "ours s", "od_REX s", "ratio", "eff ours", "eff R", "ours MiB", "R MiB",
                "X MiB"):
        table.add_column(col, justify="right")
    for criterion in args.criteria.split(","):
        for n, d in itertools.product((10_000, 100_000, 1_000_000), (10, 20, 50)):
            if n > args.max_n:
                continue
            row = approximate_row(criterion, n, d, folder, args.r_time_limit)
            if row is not None:
                table.add_row(*row)
                console.print(" ".join(row))
    console.print(table)


def response_surface(k: int) -> np.ndarray:
    """The full quadratic model in k factors on the 3^k grid: 1, x_i, x_i x_j (i <= j)."""
    formula = "~ " + " + ".join([f"x{i}" for i in range(k)] + [f"I(x{i}*x{j})" for i in range(k)
                                                                for j in range(i, k)])
    return od.candidates(formula, od.cube([f"x{i}" for i in range(k)])).X


def r_exact(tasks: list[dict], folder: Path) -> dict[int, tuple[float, np.ndarray]]:
    """od_KL on every task in one Rscript: task number -> (seconds, counts)."""
    csv = folder / "tasks.csv"
    keys = ("matrix", "K", "p", "N", "crit", "tmax", "seed")
    csv.write_text(",".join(keys) + "\n" + "".join(",".join(str(t[k]) for k in keys) + "\n" for t in tasks))
    out = folder / "kl.txt"
    proc = subprocess.run(["Rscript", "-e", R_EXACT, str(csv), str(out)], capture_output=True, text=True,
                          env={**os.environ, **SERIAL})
    if proc.returncode != 0:
        raise RuntimeError("od_KL failed: " + proc.stderr.strip()[-500:])
    found = {}
    for line in out.read_text().splitlines():
        parts = line.split()
        found[int(parts[0])] = (float(parts[1]), np.array([int(float(v)) for v in parts[2:]]))
    return found


def exact_value(X: np.ndarray, counts: np.ndarray, criterion: str) -> float:
    """The value exact_design reports: det(M)^(-1/p), tr(M^{-1}) or tr(B M^{-1}), B = X^T X / K."""
    M = (X * (counts / counts.sum())[:, None]).T @ X
    sign, logdet = np.linalg.slogdet(M)
    if sign <= 0:
        return np.inf
    if criterion == "D":
        return float(np.exp(-logdet / X.shape[1]))
    B = np.eye(X.shape[1]) if criterion == "A" else X.T @ X / X.shape[0]
    return float(np.trace(B @ np.linalg.inv(M)))


def _our_runs(X: np.ndarray, N: int, criterion: str, budget: float, seeds: int) -> list[list[tuple]]:
    """Our exact designs of one case: [default runs, time-limited runs], each a list of (result, seconds) per seed."""
    od.exact_design(X, N, criterion, restarts=0)  # warm: imports, caches
    runs: list[list[tuple]] = [[], []]
    for seed in range(seeds):
        for slot, kwargs in enumerate(({}, {"restarts": 10**9, "time_limit": budget})):
            start = time.perf_counter()
            res = od.exact_design(X, N, criterion, seed=seed, **kwargs)
            runs[slot].append((res, time.perf_counter() - start))
    return runs


def exact_table(args: argparse.Namespace, folder: Path) -> None:
    cases, tasks = [], []
    budget, seeds = args.budget, args.seeds
    for k in (2, 3, 4):
        X = response_surface(k)
        path = folder / f"rs{k}.bin"
        X.astype("<f8").tofile(path)
        p = X.shape[1]
        for criterion in args.exact_criteria.split(","):
            for N in range(p, 3 * p + 1):
                cases.append((k, criterion, N, X, _our_runs(X, N, criterion, budget, seeds)))
                tasks += [{"matrix": path, "K": X.shape[0], "p": p, "N": N, "crit": criterion, "tmax": budget,
                           "seed": 1000 * len(cases) + s} for s in range(seeds)]
    found = r_exact(tasks, folder)
    table = Table(title=f"Exact designs, quadratic models on 3^k grids: exact_design (default; {budget:g} s) vs "
                        f"od_KL (t.max = {budget:g} s); mean efficiencies over {seeds} seeds against one certified "
                        "approximate bound")
    for col in ("k", "crit", "N", "eff ours", "s", f"eff ours {budget:g}s", "s", "eff od_KL", "s"):
        table.add_column(col, justify="right")
    tally = {"default": [0, 0, 0], "budget": [0, 0, 0]}  # cases with mean >= od_KL's mean, runs >= the same seed's
    for c, (k, criterion, N, X, runs) in enumerate(cases):
        bound = runs[0][0][0].lower_bound
        kl = [found[c * seeds + s + 1] for s in range(seeds)]
        eff_kl = np.array([bound / exact_value(X, counts, criterion) for _, counts in kl])
        for key, slot in zip(tally, runs, strict=True):
            eff = np.array([res.efficiency for res, _ in slot])
            tally[key][0] += eff.mean() >= eff_kl.mean() * (1 - 1e-9)
            tally[key][1] += int(np.sum(eff >= eff_kl * (1 - 1e-9)))
            tally[key][2] += seeds
        table.add_row(str(k), criterion, str(N), *(f"{v:.4f}" if i % 2 == 0 else f"{v:.3f}" for i, v in enumerate(
            [np.mean([r.efficiency for r, _ in runs[0]]), np.median([t for _, t in runs[0]]),
             np.mean([r.efficiency for r, _ in runs[1]]), np.median([t for _, t in runs[1]]),
             eff_kl.mean(), np.median([t for t, _ in kl])])))
    console.print(table)
    for key, (cases_won, runs_won, runs) in tally.items():
        console.print(f"exact_design ({key}): mean efficiency at least od_KL's ({budget:g} s) on {cases_won} of "
                      f"{len(cases)} cases; at least od_KL's run with the same seed index on {runs_won} of {runs}")


def exact_scale_table(args: argparse.Namespace, folder: Path) -> None:
    """Exact designs on large random candidate sets (Gaussian, K x d, n = 2d runs): ours against od_KL, both
    restarting until the same time limit (--scale-budget), --seeds seeds a side."""
    budget, seeds = args.scale_budget, args.seeds
    cases, tasks = [], []
    for K, d in ((10_000, 10), (10_000, 20), (100_000, 20)):
        path = folder / f"gauss_{K}_{d}.bin"
        X = np.random.default_rng(K + d).standard_normal((K, d))
        X.astype("<f8").tofile(path)
        for criterion in args.exact_criteria.split(","):
            od.exact_design(X, 2 * d, criterion, restarts=0)  # warm: imports, caches
            runs = []
            for seed in range(seeds):
                start = time.perf_counter()
                res = od.exact_design(X, 2 * d, criterion, restarts=10**9, time_limit=budget, seed=seed)
                runs.append((res, time.perf_counter() - start))
            cases.append((K, d, criterion, X, runs))
            tasks += [{"matrix": path, "K": K, "p": d, "N": 2 * d, "crit": criterion, "tmax": budget,
                       "seed": 1000 * len(cases) + s} for s in range(seeds)]
    found = r_exact(tasks, folder)
    table = Table(title=f"Exact designs on Gaussian candidates, n = 2d runs: exact_design and od_KL restarting until "
                        f"{budget:g} s; mean efficiency (min) over {seeds} seeds against one certified bound")
    for col in ("K", "d", "crit", "eff ours", "starts", "s", "eff od_KL", "s"):
        table.add_column(col, justify="right")
    for c, (K, d, criterion, X, runs) in enumerate(cases):
        bound = runs[0][0].lower_bound
        kl = [found[c * seeds + s + 1] for s in range(seeds)]
        eff_kl = np.array([bound / exact_value(X, counts, criterion) for _, counts in kl])
        eff = np.array([res.efficiency for res, _ in runs])
        table.add_row(f"{K:.0e}", str(d), criterion, f"{eff.mean():.4f} ({eff.min():.4f})",
                      f"{np.mean([r.starts for r, _ in runs]):.0f}", f"{np.median([t for _, t in runs]):.2f}",
                      f"{eff_kl.mean():.4f} ({eff_kl.min():.4f})", f"{np.median([t for t, _ in kl]):.2f}")
    console.print(table)


# --------------------------------------------------------------------------------------------------------------------
# AlgDesign, skpr, OptimalDesign's GLM example and pyoptex

R_OPTBLOCK = """
suppressMessages(library(AlgDesign))
a <- commandArgs(trailingOnly = TRUE)
out <- a[1]; seeds <- as.integer(a[2]); reps <- as.integer(a[3])
rsm <- gen.factorial(3, 3, varNames = c("A", "B", "C"))
two4 <- gen.factorial(2, 4)
write.csv(rsm, file.path(out, "alg_rsm.csv"), row.names = FALSE)
write.csv(two4, file.path(out, "alg_two4.csv"), row.names = FALSE)
cases <- list(rsm = function() optBlock(~quad(.), rsm, c(7, 7)),
              bib = function() optBlock(~., withinData = factor(1:7), blocksizes = rep(3, 7)),
              pbib = function() optBlock(~., withinData = factor(1:9), blocksizes = rep(3, 9)),
              two4 = function() optBlock(~., two4, c(8, 8)))
con <- file(file.path(out, "optblock.txt"), "w")
for (name in names(cases)) for (s in seq_len(seeds)) {
  set.seed(s)
  res <- cases[[name]]()
  start <- proc.time()[3]
  for (r in seq_len(reps)) cases[[name]]()  # timed over reps calls: a call takes a few ms
  seconds <- (proc.time()[3] - start) / reps
  writeLines(paste(name, s, seconds, paste(res$rows, collapse = ","), res$D), con)
}
close(con)
cat(as.character(packageVersion("AlgDesign")), "\\n")
"""

R_AUGMENT = """
suppressMessages(library(AlgDesign))
a <- commandArgs(trailingOnly = TRUE)
out <- a[1]; seeds <- as.integer(a[2]); reps <- as.integer(a[3])
rsm <- gen.factorial(levels = 3, nVars = 3, varNames = c("A", "B", "C"))
half <- gen.factorial(levels = 2, nVars = 4, varNames = c("A", "B", "C", "D"))
write.csv(rsm, file.path(out, "aug_rsm.csv"), row.names = FALSE)
write.csv(half, file.path(out, "aug_half.csv"), row.names = FALSE)
con <- file(file.path(out, "augment.txt"), "w")
for (s in seq_len(seeds)) {
  set.seed(s)
  desD <- optFederov(~quad(A, B, C), rsm, nTrials = 14, eval = TRUE)
  desA <- optFederov(~quad(.), rsm, nTrials = 25, augment = TRUE, rows = desD$rows)
  desH <- optFederov(~., half, 8)
  desH2 <- optFederov(~A + B + C + D + I(A * B), half, 10, aug = TRUE, rows = desH$rows)
  start <- proc.time()[3]  # each augmentation timed over reps calls: a call takes a millisecond or so
  for (r in seq_len(reps)) optFederov(~quad(.), rsm, nTrials = 25, augment = TRUE, rows = desD$rows)
  seconds <- (proc.time()[3] - start) / reps
  writeLines(paste("quadratic", s, seconds, paste(desD$rows, collapse = ","), paste(desA$rows, collapse = ",")), con)
  start <- proc.time()[3]
  for (r in seq_len(reps)) optFederov(~A + B + C + D + I(A * B), half, 10, aug = TRUE, rows = desH$rows)
  seconds <- (proc.time()[3] - start) / reps
  writeLines(paste("half", s, seconds, paste(desH$rows, collapse = ","), paste(desH2$rows, collapse = ",")), con)
}
close(con)
cat(as.character(packageVersion("AlgDesign")), "\\n")
"""

R_SKPR_DESIGNS = """
suppressMessages(library(skpr))
a <- commandArgs(trailingOnly = TRUE)
out <- a[1]; seeds <- as.integer(a[2])
quad <- expand.grid(a = c(1, 0, -1), b = c(-1, 0, 1), c = c("A", "B", "C"))
alt <- expand.grid(Altitude = c(-1, 1), Range = as.factor(c("Close", "Medium", "Far")), Power = c(1, -1))
cof <- expand.grid(caffeine = c(1, -1), cost = c(1, 2),
                   type = as.factor(c("Kona", "Colombian", "Ethiopian", "Sumatra")),
                   size = as.factor(c("Short", "Grande", "Venti")))
split_alt <- function(sizes) {
  htc <- gen_design(alt, ~Altitude, trials = 11, repeats = 10, progress = FALSE)
  gen_design(alt, ~Altitude + Range + Power, trials = 33, splitplotdesign = htc, blocksizes = sizes, repeats = 10,
             progress = FALSE)
}
# add_blocking_columns = TRUE: the row-name encoding of a blocked (not split-plot) design fails under R 4.2
cases <- list(
  blocks3 = function() gen_design(quad, ~a + b + c, 21, blocksizes = 3, add_blocking_columns = TRUE, progress = FALSE),
  blocks_uneven = function() gen_design(quad, ~a + b + c, 21, blocksizes = c(4, 3, 2, 3, 3, 3, 3),
                                        add_blocking_columns = TRUE, progress = FALSE),
  altitude = function() split_alt(NULL),
  altitude_manual = function() split_alt(c(4, 2, 3, 4, 2, 3, 4, 2, 3, 4, 2)),
  coffee = function() {
    wp <- gen_design(cof, ~caffeine, trials = 12, progress = FALSE)
    gen_design(cof, ~caffeine + cost + size + type, trials = 36, splitplotdesign = wp, blocksizes = 3, progress = FALSE)
  })
con <- file(file.path(out, "skpr_times.txt"), "w")
for (name in names(cases)) for (s in seq_len(seeds)) {
  set.seed(s)
  start <- proc.time()[3]
  d <- cases[[name]]()
  seconds <- proc.time()[3] - start
  group <- if ("Block1" %in% names(d)) d$Block1 else as.integer(sub("[.].*$", "", rownames(d)))
  d <- as.data.frame(lapply(d[, setdiff(names(d), "Block1"), drop = FALSE], as.character))
  write.csv(cbind(group = group, d), file.path(out, sprintf("skpr_%s_%d.csv", name, s)), row.names = FALSE)
  writeLines(paste(name, s, seconds), con)
}
close(con)
cat(as.character(packageVersion("skpr")), "\\n")
"""

R_SKPR_POWER = """
suppressMessages(library(skpr))
a <- commandArgs(trailingOnly = TRUE)
out <- a[1]
set.seed(as.integer(a[2]))
factorial <- expand.grid(A = c(1, -1), B = c(1, -1), C = c(1, -1))
fac11 <- gen_design(candidateset = factorial, model = ~A + B + C, trials = 11, optimality = "D", repeats = 100,
                    progress = FALSE)
coffee <- expand.grid(cost = c(1, 2), type = as.factor(c("Kona", "Colombian", "Ethiopian", "Sumatra")),
                      size = as.factor(c("Short", "Grande", "Venti")))
coffee29 <- gen_design(coffee, ~cost + size + type, trials = 29, optimality = "D", repeats = 100, progress = FALSE)
split <- expand.grid(caffeine = c(1, -1), cost = c(1, 2),
                     type = as.factor(c("Kona", "Colombian", "Ethiopian", "Sumatra")),
                   size = as.factor(c("Short", "Grande", "Venti")))
wp12 <- gen_design(split, ~caffeine, trials = 12, progress = FALSE)
coffee36 <- gen_design(split, model = ~caffeine + cost + size + type, trials = 36, splitplotdesign = wp12,
                       blocksizes = 3, progress = FALSE)
wp12$Block1 <- c(1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4)
designs <- list(fac11 = fac11, coffee29 = coffee29, coffee36 = coffee36, wp12 = wp12)
for (name in names(designs)) {
  d <- designs[[name]]
  group <- if ("Block1" %in% names(d)) d$Block1 else sub("[.].*$", "", rownames(d))
  write.csv(data.frame(group = group), file.path(out, sprintf("groups_%s.csv", name)), row.names = FALSE)
  d <- d[, setdiff(names(d), "Block1"), drop = FALSE]
  write.csv(as.data.frame(lapply(d, as.character)), file.path(out, sprintf("power_%s.csv", name)), row.names = FALSE)
  lv <- sapply(names(d), function(f) if (is.factor(d[[f]])) paste(levels(d[[f]]), collapse = "|") else "")
  write.csv(data.frame(factor = names(d), levels = lv), file.path(out, sprintf("levels_%s.csv", name)),
            row.names = FALSE)
}
evals <- list(
  e1 = eval_design(fac11, model = ~A + B + C, alpha = 0.2),
  e2 = eval_design(fac11, model = ~A + C, alpha = 0.2),
  e3 = eval_design(fac11),
  e4 = eval_design(fac11, model = ~A + B + C, alpha = 0.2, effectsize = 1),
  e5 = eval_design(coffee29),
  e6 = eval_design(coffee29, conservative = TRUE),
  e7 = eval_design(coffee29, anticoef = c(1, 1, 1, 0, 0, 1, 0)),
  e8 = eval_design(coffee29, model = ~cost + size + type + cost * type),
  e9 = eval_design(coffee36, 0.2, blocking = TRUE),
  e10 = eval_design(coffee36, 0.2, blocking = FALSE),
  e11 = eval_design(coffee36, 0.2, varianceratios = 2),
  e12 = eval_design(wp12, blocking = TRUE))
rows <- do.call(rbind, lapply(names(evals), function(e) {
  r <- evals[[e]]
  data.frame(eval = e, parameter = r$parameter, type = r$type, power = sprintf("%.17g", r$power),
             anticoef = paste(sprintf("%.17g", attr(r, "anticoef")), collapse = " "))
}))
write.csv(rows, file.path(out, "power_skpr.csv"), row.names = FALSE)
cat(as.character(packageVersion("skpr")), "\\n")
"""

R_GLM = """
suppressMessages(library(OptimalDesign))
a <- commandArgs(trailingOnly = TRUE)
out <- a[1]; reps <- as.integer(a[2]); tmax <- as.numeric(a[3])
save <- function(x, name) {
  con <- file(file.path(out, name), "wb"); writeBin(as.double(x), con, endian = "little"); close(con)
}
form.quad <- ~ x1 + x2 + I(x1*x2) + I(x1^2) + I(x2^2)
invisible(capture.output(Fx <- Fx_glm(form.quad, c(1, 2, 2, -1, -1.5, 1.5), glm.model = "bin-logit",
                                      n.levels = c(21, 21))))
times <- numeric(reps)
for (r in seq_len(reps)) {
  start <- proc.time()[3]
  res <- od_REX(Fx, echo = FALSE, track = FALSE)
  times[r] <- proc.time()[3] - start
}
save(t(Fx), "logit_F.bin"); save(res$w.best, "logit_w.bin"); save(times, "logit_times.bin")
invisible(capture.output(Fp <- Fx_glm(~x1 + x2, c(0, 2, 2), glm.model = "Poisson-log", n.levels = c(21, 21))))
set.seed(1)
start <- proc.time()[3]
kl <- od_KL(Fp, 50, bin = TRUE, t.max = tmax, echo = FALSE, track = FALSE)
save(t(Fp), "poisson_F.bin"); save(kl$w.best, "poisson_w.bin"); save(proc.time()[3] - start, "poisson_time.bin")
cat(as.character(packageVersion("OptimalDesign")), "\\n")
"""

PYOPTEX_CHILD = """
import json, sys, time
from importlib.metadata import version
import numpy as np
from pyoptex._seed import set_seed
from pyoptex.utils.model import partial_rsm_names, model2Y2X
from pyoptex.doe.fixed_structure import (Factor, RandomEffect, create_fixed_structure_design,
                                         create_parameters as fs_parameters, default_fn as fs_fn)
from pyoptex.doe.fixed_structure.metric import Dopt as FsDopt
from pyoptex.doe.fixed_structure.splitk_plot import create_splitk_plot_design, default_fn, create_parameters, Plot
from pyoptex.doe.fixed_structure.splitk_plot.metric import Dopt
out, seeds = sys.argv[1], int(sys.argv[2])
levels = ["L1", "L2", "L3"]
model = partial_rsm_names({"A": "tfi", "B": "quad", "C": "quad"})
# the quickstart split plot: 5 whole plots of 4 runs, ratio 0.1
sub, whole = Plot(level=0, size=4), Plot(level=1, size=5, ratio=0.1)
factors = [Factor("A", whole, type="categorical", levels=levels), Factor("B", sub, type="continuous"),
           Factor("C", sub, type="continuous", min=2, max=5)]
splitk = create_parameters(factors, default_fn(factors, Dopt(), model2Y2X(model, factors)))
plots = RandomEffect(np.repeat(np.arange(5), 4), ratio=0.1)
factors = [Factor("A", plots, type="categorical", levels=levels), Factor("B", type="continuous"),
           Factor("C", type="continuous", min=2, max=5)]
fixed = fs_parameters(factors, fs_fn(factors, FsDopt(), model2Y2X(model, factors)), 20)
report = {"version": version("pyoptex")}
for name, make, params in (("splitk", create_splitk_plot_design, splitk),
                           ("fixed", create_fixed_structure_design, fixed)):
    make(params, n_tries=1)  # warm: compiled code loaded
    seconds = []
    for s in range(1, seeds + 1):
        set_seed(s)
        start = time.perf_counter()
        Y, state = make(params, n_tries=10)
        seconds.append(time.perf_counter() - start)
        Y.to_csv(f"{out}/pyoptex_{name}_{s}.csv", index=False)
    report[name] = seconds
print(json.dumps(report))
"""


def r_packages_missing(*packages: str) -> str | None:
    """None when Rscript runs and every package loads, else why not."""
    if shutil.which("Rscript") is None:
        return "Rscript is not installed (apt-get install r-base-core)"
    load = "; ".join(f"suppressMessages(library({p}))" for p in packages)
    probe = subprocess.run(["Rscript", "-e", load], capture_output=True, text=True)
    if probe.returncode != 0:
        first = (probe.stderr.strip().splitlines() or ["no message"])[0]
        return f"R's {' / '.join(packages)} does not load ({first})"
    return None


def run_script(cmd: list[str], what: str, extra_env: dict[str, str] | None = None) -> str:
    """Run a child with one BLAS thread and return its last line of output (the peer's version or a report)."""
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **SERIAL, **(extra_env or {})})
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed: {proc.stderr.strip()[-800:]}")
    return proc.stdout.strip().splitlines()[-1]


def _key(values: Any) -> tuple:
    """A factor setting as a hashable key: numbers rounded (1, "1" and 1.0 alike), labels as strings."""
    key = []
    for v in values:
        try:
            key.append(round(float(v), 9))
        except (TypeError, ValueError):
            key.append(str(v))
    return tuple(key)


def match_rows(points: pd.DataFrame, runs: pd.DataFrame) -> np.ndarray:
    """The row of ``points`` of every run (its factor settings), over the columns of ``points``."""
    names = list(points.columns)
    index = {_key(row): k for k, row in enumerate(points[names].itertuples(index=False))}
    return np.array([index[_key(row)] for row in runs[names].itertuples(index=False)])


def d_value(X: np.ndarray, groups: ArrayLike, effects: str, eta: float = 1.0,
            intercept: int | None = 0) -> float:
    """D = det(M)^(1/p) / N of the runs X (N x p) in the groups (blocks or whole plots) given run by run.

    Random effects: M = X^T V^{-1} X, V = I + eta Z Z^T. Fixed: M = X^T (I - P_Z) X without the intercept column.
    """
    labels = np.unique(np.asarray(groups), return_inverse=True)[1]
    Z = np.eye(labels.max() + 1)[labels]
    if effects == "fixed":
        Xp = np.delete(X, intercept, axis=1) if intercept is not None else X
        Xc = Xp - Z @ np.linalg.lstsq(Z, Xp, rcond=None)[0]  # block means removed
        M = Xc.T @ Xc
    else:
        M = X.T @ np.linalg.solve(np.eye(len(X)) + eta * Z @ Z.T, X)
    if np.linalg.matrix_rank(M) < M.shape[0]:  # a design that does not estimate the model
        return 0.0
    return float(np.exp(np.linalg.slogdet(M)[1] / M.shape[0]) / len(X))


def _contr(name: str, levels: list[str]) -> str:
    return f"C({name}, contr.sum, levels={levels!r})"


PYOPTEX_FORMULA = ("~ C(a, contr.sum) + b + c + C(a, contr.sum):b + C(a, contr.sum):c + b:c + I(b**2) + "
                   "I(c**2)")
ALTITUDE = ("~ Altitude + C(Range, contr.sum) + Power", {"Altitude": [-1, 1]},
            {"Range": ["Close", "Medium", "Far"], "Power": [-1, 1]})
COFFEE = ("~ caffeine + cost + C(size, contr.sum) + C(type, contr.sum)", {"caffeine": [-1, 1]},
          {"cost": [-1, 1], "type": ["Kona", "Colombian", "Ethiopian", "Sumatra"],
           "size": ["Short", "Grande", "Venti"]})
QUAD3 = "~ a + b + C(c, contr.sum)", {"a": [-1, 0, 1], "b": [-1, 0, 1], "c": ["A", "B", "C"]}


@dataclass
class BlockedCase:
    """One documented example: how ours designs it, how the peer's runs are read, how the designs are scored."""

    name: str
    peer: str
    effects: str  # "fixed", "random" or "split"
    eta: float
    cs: Any  # our CandidateSet: every design's runs are rows of cs.X
    ours: Callable[..., Any]  # (seed, **options) -> BlockedDesignResult
    peer_runs: Callable[[Path, int], tuple[pd.DataFrame, np.ndarray]]  # (folder, seed) -> (settings, groups)
    peer_seconds: dict[int, float] = field(default_factory=dict)

    def our_runs(self, res: Any) -> tuple[np.ndarray, np.ndarray]:
        if self.effects == "split":
            table = res.table()
            return match_rows(self.cs.points, table), table["whole_plot"].to_numpy()
        return np.asarray(res.rows), np.asarray(res.blocks)

    def score(self, rows: np.ndarray, groups: np.ndarray) -> float:
        effects = "random" if self.effects == "split" else self.effects
        return d_value(self.cs.X[rows], groups, effects, self.eta, self.cs.columns.index("Intercept"))


def _skpr_reader(name: str, recode: dict[str, Callable[[str], float]] | None = None
                 ) -> Callable[[Path, int], tuple[pd.DataFrame, np.ndarray]]:
    def read(folder: Path, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
        table = pd.read_csv(folder / f"skpr_{name}_{seed}.csv", dtype=str)
        for column, fn in (recode or {}).items():
            table[column] = table[column].map(fn)
        return table, table["group"].to_numpy()
    return read


def _pyoptex_reader(algorithm: str) -> Callable[[Path, int], tuple[pd.DataFrame, np.ndarray]]:
    def read(folder: Path, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
        table = pd.read_csv(folder / f"pyoptex_{algorithm}_{seed}.csv", dtype=str)
        table = pd.DataFrame({"a": table["A"], "b": table["B"].astype(float),
                              "c": (table["C"].astype(float) - 3.5) / 1.5})  # C in [2, 5] coded to [-1, 1]
        return table, np.arange(len(table)) // 4  # whole plots of 4 runs, in order
    return read


def _algdesign_reader(case: str, sizes: list[int]) -> Callable[[Path, int], tuple[pd.DataFrame, np.ndarray]]:
    def read(folder: Path, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
        line = next(ln.split() for ln in (folder / "optblock.txt").read_text().splitlines()
                    if ln.split()[:2] == [case, str(seed)])
        rows = np.array([int(v) - 1 for v in line[3].split(",")])
        return pd.DataFrame({"row": rows}), np.repeat(np.arange(len(sizes)), sizes)
    return read


def blocked_cases(folder: Path, peers: set[str]) -> list[BlockedCase]:
    cases = []
    if "AlgDesign" in peers:
        rsm = pd.read_csv(folder / "alg_rsm.csv")
        two4 = pd.read_csv(folder / "alg_two4.csv")
        treat7 = pd.DataFrame({"t": [str(i) for i in range(1, 8)]})
        treat9 = pd.DataFrame({"t": [str(i) for i in range(1, 10)]})
        for name, formula, points, sizes, replicates in (
                ("rsm", "~ (A + B + C)**2 + I(A**2) + I(B**2) + I(C**2)", rsm, [7, 7], False),
                ("bib", "~ C(t)", treat7, [3] * 7, True),
                ("pbib", "~ C(t)", treat9, [3] * 9, True),
                ("two4", "~ X1 + X2 + X3 + X4", two4, [8, 8], False)):
            cs = od.candidates(formula, points)
            cases.append(BlockedCase(
                name, "AlgDesign", "fixed", 0.0, cs,
                lambda s, X=cs.X, sizes=sizes, rep=replicates, **kw: od.blocked_design(X, sizes, replicates=rep, seed=s,
                                                                                      **kw),
                _algdesign_reader(name, sizes)))
    if "skpr" in peers:
        cs = od.candidates(*QUAD3)
        for name, sizes in (("blocks3", [3] * 7), ("blocks_uneven", [4, 3, 2, 3, 3, 3, 3])):
            cases.append(BlockedCase(
                name, "skpr", "random", 1.0, cs,
                lambda s, X=cs.X, sizes=sizes, **kw: od.blocked_design(X, sizes, block_effects="random", eta=1.0,
                                                                       seed=s, **kw),
                _skpr_reader(name)))
        for name, (formula, whole, sub), sizes, recode in (
                ("altitude", ALTITUDE, [3] * 11, None),
                ("altitude_manual", ALTITUDE, [4, 2, 3, 4, 2, 3, 4, 2, 3, 4, 2], None),
                ("coffee", COFFEE, [3] * 12, {"cost": lambda v: 2 * float(v) - 3})):  # skpr codes cost 1, 2 as -1, 1
            cases.append(BlockedCase(
                name, "skpr", "split", 1.0, od.candidates(formula, {**whole, **sub}),
                lambda s, f=formula, w=whole, u=sub, sizes=sizes, **kw: od.split_plot_design(f, w, u, sizes, eta=1.0,
                                                                                             seed=s, **kw),
                _skpr_reader(name, recode)))
    if "pyoptex" in peers:
        whole, sub = {"a": ["L1", "L2", "L3"]}, {"b": [-1, 0, 1], "c": [-1, 0, 1]}
        cs = od.candidates(PYOPTEX_FORMULA, {**whole, **sub})
        for algorithm in ("splitk", "fixed"):
            cases.append(BlockedCase(
                f"quickstart ({algorithm})", "pyoptex", "split", 0.1, cs,
                lambda s, w=whole, u=sub, **kw: od.split_plot_design(PYOPTEX_FORMULA, w, u, [4] * 5, eta=0.1, seed=s,
                                                                     **kw),
                _pyoptex_reader(algorithm)))
    return cases


def blocked_table(args: argparse.Namespace, folder: Path) -> dict[str, str]:
    """Blocked and split-plot designs against AlgDesign, skpr and pyoptex; returns the peers' versions."""
    seeds, versions = args.seeds, {}
    for package, script in (("AlgDesign", R_OPTBLOCK), ("skpr", R_SKPR_DESIGNS)):
        why = r_packages_missing(package)
        if why is None:
            versions[package] = run_script(["Rscript", "-e", script, str(folder), str(seeds), str(R_REPS)], package)
        else:
            console.print(f"[yellow]{package} side skipped: {why}[/]")
    pyoptex_seconds: dict[str, list[float]] = {}
    if args.pyoptex_python and Path(args.pyoptex_python).exists():
        report = json.loads(run_script([args.pyoptex_python, "-c", PYOPTEX_CHILD, str(folder), str(seeds)], "pyoptex",
                                       {"NUMBA_NUM_THREADS": "1"}))
        versions["pyoptex"] = report.pop("version")
        pyoptex_seconds = report
    else:
        console.print("[yellow]pyoptex side skipped: give --pyoptex-python (the interpreter of a virtual environment "
                      "with pyoptex installed)[/]")
    r_seconds: dict[tuple[str, int], float] = {}
    for name in ("optblock.txt", "skpr_times.txt"):
        if (folder / name).exists():
            for line in (folder / name).read_text().splitlines():
                parts = line.split()
                r_seconds[parts[0], int(parts[1])] = float(parts[2])
    table = Table(title=f"Blocked and split-plot D-optimal designs on the peers' documented examples, {seeds} seeds a "
                        "side: D = det(M)^(1/p) / N on our coding, mean (min), and median seconds of a design; ours "
                        "with its defaults and restarting until the peer's median time")
    for col in ("case", "peer", "effects (eta)", "N", "p", "D ours", "s", "D ours, peer's time", "s", "D peer", "s",
                "ours >= peer", "peer singular", "cert. eff"):
        table.add_column(col, justify="right")
    tally: dict[str, list[bool]] = {"mean": [], "faster": [], "timed": []}
    for case in blocked_cases(folder, set(versions)):
        case.ours(0)  # warm: imports, caches
        t_peer, peer = [], []
        for s in range(1, seeds + 1):
            runs, groups = case.peer_runs(folder, s)
            rows = runs["row"].to_numpy() if "row" in runs else match_rows(case.cs.points, runs)
            peer.append(case.score(rows, groups))
            if case.peer == "pyoptex":
                t_peer.append(pyoptex_seconds[case.name.split("(")[1].rstrip(")")][s - 1])
            else:
                t_peer.append(r_seconds[case.name, s])
        limit = float(np.median(t_peer))
        ours, timed, t_ours, t_timed, certified = [], [], [], [], []
        for s in range(1, seeds + 1):
            budget = {"restarts": 10**9, "time_limit": limit}
            for scores, times, kwargs in ((ours, t_ours, {}), (timed, t_timed, budget)):
                start = time.perf_counter()
                res = case.ours(s, **kwargs)
                times.append(time.perf_counter() - start)
                scores.append(case.score(*case.our_runs(res)))
                if not kwargs:
                    certified.append(res.efficiency if res.efficiency is not None else np.nan)
        o, ot, q = np.array(ours), np.array(timed), np.array(peer)
        if case.peer != "AlgDesign":
            tally["mean"].append(o.mean() >= q.mean() * (1 - 1e-9))
            tally["faster"].append(np.median(t_ours) < limit)
            tally["timed"].append(ot.mean() >= q.mean() * (1 - 1e-9))
        effects = case.effects if case.effects == "fixed" else f"{case.effects} {case.eta:g}"
        table.add_row(case.name, case.peer, effects, str(len(res.rows)), str(res.information.shape[0]),
                      f"{o.mean():.6f} ({o.min():.6f})", f"{np.median(t_ours):.3f}",
                      f"{ot.mean():.6f} ({ot.min():.6f})", f"{np.median(t_timed):.3f}",
                      f"{q.mean():.6f} ({q.min():.6f})", f"{limit:.3f}", f"{int(np.sum(o >= q * (1 - 1e-9)))}/{seeds}",
                      f"{int(np.sum(q == 0))}/{seeds}", f"{np.nanmin(certified):.4f}")
    console.print(table)
    if tally["mean"]:
        n = len(tally["mean"])
        console.print(f"skpr and pyoptex examples ({n}): mean D at least the peer's on {sum(tally['mean'])} (defaults) "
                      f"and {sum(tally['timed'])} (restarting until the peer's time); defaults faster "
                      f"than the peer on {sum(tally['faster'])}")
    if (folder / "optblock.txt").exists():
        own = [ln.split() for ln in (folder / "optblock.txt").read_text().splitlines()]
        names = dict.fromkeys(x[0] for x in own)
        console.print("AlgDesign's own D (its report, mean over the seeds): " + ", ".join(
            f"{name} {np.mean([float(x[4]) for x in own if x[0] == name]):.6f}" for name in names))
    return versions


#: skpr's eval_design examples: (id, design, formula with {factor} for its sum-coded levels, alpha, eta of the
#: whole plots or blocks when skpr evaluates with blocking = TRUE (None: independent runs), call)
POWER_EVALS = [
    ("e1", "fac11", "~ A + B + C", 0.2, None, "model ~A + B + C, alpha 0.2"),
    ("e2", "fac11", "~ A + C", 0.2, None, "model ~A + C, alpha 0.2"),
    ("e3", "fac11", "~ A + B + C", 0.05, None, "defaults"),
    ("e4", "fac11", "~ A + B + C", 0.2, None, "alpha 0.2, effectsize 1"),
    ("e5", "coffee29", "~ cost + {size} + {type}", 0.05, None, "defaults"),
    ("e6", "coffee29", "~ cost + {size} + {type}", 0.05, None, "conservative = TRUE"),
    ("e7", "coffee29", "~ cost + {size} + {type}", 0.05, None, "anticoef = c(1, 1, 1, 0, 0, 1, 0)"),
    ("e8", "coffee29", "~ cost + {size} + {type} + cost:{type}", 0.05, None, "model + cost * type"),
    ("e9", "coffee36", "~ caffeine + cost + {size} + {type}", 0.2, 1.0, "alpha 0.2, blocking = TRUE"),
    ("e10", "coffee36", "~ caffeine + cost + {size} + {type}", 0.2, None, "alpha 0.2, blocking = FALSE"),
    ("e11", "coffee36", "~ caffeine + cost + {size} + {type}", 0.2, 2.0, "alpha 0.2, varianceratios = 2"),
    ("e12", "wp12", "~ caffeine", 0.05, 1.0, "Block1 column, blocking = TRUE"),
]


#: a sum-coded factor's term, C(name, contr.sum, levels=[...]), to its name
FACTOR_OF = re.compile(r"C[(](\w+),.*")
FACTOR_NAME = r"\1"


def power_table(args: argparse.Namespace, folder: Path) -> dict[str, str]:
    why = r_packages_missing("skpr")
    if why is not None:
        console.print(f"[yellow]power table skipped: {why}[/]")
        return {}
    version = run_script(["Rscript", "-e", R_SKPR_POWER, str(folder), "1"], "skpr eval_design")
    skpr = pd.read_csv(folder / "power_skpr.csv", dtype={"power": float, "anticoef": str})
    table = Table(title="Power of skpr's eval_design help examples: od.design_power on the same runs, contrasts and "
                        "anticipated coefficients")
    for col in ("eval", "design", "call", "tests", "ours = skpr coef.", "max |power ours - skpr|", "skpr power range"):
        table.add_column(col, justify="right")
    worst = {"unblocked": 0.0, "blocked": 0.0}
    by_rule: list[str] = []  # the blocked effect powers under the between-within degrees of freedom
    for eid, design, template, alpha, eta, call in POWER_EVALS:
        rows = skpr[skpr["eval"] == eid]
        span = f"{rows['power'].min():.6f}-{rows['power'].max():.6f}"
        runs = pd.read_csv(folder / f"power_{design}.csv", dtype=str)
        levels = pd.read_csv(folder / f"levels_{design}.csv", dtype=str, keep_default_na=False)
        factors, coded = {}, {}
        for name, lv in zip(levels["factor"], levels["levels"], strict=True):
            if lv:
                order = lv.split("|")
                counts = runs[name].value_counts()
                if "conservative" in call and counts.nunique() > 1:  # skpr's conservative levels: most runs first
                    order = sorted(order, key=lambda level: counts.get(level, 0))[::-1]
                factors[name] = order
                coded[name] = _contr(name, order)
            else:  # numeric: skpr scales it to [-1, 1] over the candidate set
                values = runs[name].astype(float)
                factors[name] = [-1.0, 1.0]
                runs[name] = 2 * (values - values.min()) / (values.max() - values.min()) - 1
        formula = template.format(**coded)
        cs = od.candidates(formula, {k: v for k, v in factors.items() if k in formula})
        order = match_rows(cs.points, runs)
        theirs = np.array([float(v) for v in rows["anticoef"].iloc[0].split()])
        mine = od.anticipated_coefficients(cs, 2 * abs(theirs[0]), terms=formula)
        same = bool(np.allclose(mine, theirs))
        if eta is None:
            counts = np.bincount(order, minlength=len(cs.X))
            effect = od.design_power(cs, counts, theirs, alpha=alpha, terms=formula).to_frame()
            parameter = od.design_power(cs, counts, theirs, alpha=alpha).to_frame()
        else:  # the runs in skpr's order with their whole plots (blocks): GLS, skpr's degrees of freedom
            at_runs = od.candidates(formula, cs.points.iloc[order].reset_index(drop=True))
            groups = pd.read_csv(folder / f"groups_{design}.csv", dtype=str)["group"].to_numpy()
            blocking = {"groups": groups, "eta": eta, "df_method": "skpr"}
            effect = od.design_power(at_runs, None, theirs, alpha=alpha, terms=formula, **blocking).to_frame()
            parameter = od.design_power(at_runs, None, theirs, alpha=alpha, **blocking).to_frame()
            documented = od.design_power(at_runs, None, theirs, alpha=alpha, terms=formula, groups=groups, eta=eta)
            skpr_effect = rows[rows["type"] == "effect.power"]["power"].to_numpy()
            changed = [f"{FACTOR_OF.sub(FACTOR_NAME, t.term)} df {d} -> {t.df2}, {q:.6f} -> {t.power:.6f}"
                       for t, d, q in zip(documented.terms, effect["df2"].to_numpy()[:-1], skpr_effect, strict=True)
                       if t.df2 != d]
            by_rule.append(f"{eid}: " + ", ".join(changed))
        ours = np.concatenate([effect["power"].to_numpy()[:-1], parameter["power"].to_numpy()[:-1]])  # no whole model
        ref = np.concatenate([rows[rows["type"] == "effect.power"]["power"].to_numpy(),
                              rows[rows["type"] == "parameter.power"]["power"].to_numpy()])
        kind = "unblocked" if eta is None else "blocked"
        if ours.shape != ref.shape:
            table.add_row(eid, design, call, f"{len(ours)} vs {len(ref)}", str(same), "tests do not match", span)
            worst[kind] = np.inf
            continue
        diff = float(np.max(np.abs(ours - ref)))
        worst[kind] = max(worst[kind], diff)
        table.add_row(eid, design, call, str(len(ref)), "yes" if same else "no (skpr's used)", f"{diff:.2e}", span)
    console.print(table)
    console.print(f"largest power difference: {worst['unblocked']:.2e} over the unblocked examples, "
                  f"{worst['blocked']:.2e} over the blocked ones (GLS, df_method='skpr')")
    console.print("the blocked effect powers with the between-within degrees of freedom (Pinheiro & Bates, the rule "
                  "skpr's help names; od.design_power's default), skpr's df and power -> ours:\n  "
                  + "\n  ".join(by_rule))
    return {"skpr": version}


def glm_table(args: argparse.Namespace, folder: Path) -> dict[str, str]:
    why = r_packages_missing("OptimalDesign")
    if why is not None:
        console.print(f"[yellow]glm table skipped: {why}[/]")
        return {}
    version = run_script(["Rscript", "-e", R_GLM, str(folder), str(args.glm_reps), repr(args.glm_budget)],
                         "OptimalDesign Fx_glm")

    def load(name: str, cols: int | None = None) -> np.ndarray:
        x = np.fromfile(folder / name, dtype="<f8")
        return x.reshape(-1, cols) if cols else x

    grid = np.linspace(-1, 1, 21)
    x1, x2 = np.tile(grid, 21), np.repeat(grid, 21)  # Fx_cube's order: x1 fastest
    X = np.column_stack([np.ones(441), x1, x2, x1 * x2, x1**2, x2**2])
    theta = [1, 2, 2, -1, -1.5, 1.5]
    F_r, w_r, t_r = load("logit_F.bin", 6), load("logit_w.bin"), load("logit_times.bin")
    F = od.glm_model_matrix(X, theta, "logit")
    table = Table(title="OptimalDesign's Fx_glm help example (logistic, 441 candidates, p = 6): locally D-optimal "
                        f"approximate designs, median of {args.glm_reps} calls, one BLAS thread")
    for col in ("method", "median s", "certified eff.", "reported gap", "det(M)^(1/6)", "od_REX / ours"):
        table.add_column(col, justify="right")

    def det6(w: np.ndarray) -> float:
        return float(np.linalg.det((F * w[:, None]).T @ F) ** (1 / 6))

    with single_threaded_blas():
        table.add_row("od_REX(Fx) (eff 0.999999)", f"{np.median(t_r):.4f}", f"{efficiency(F, w_r, 'D'):.8f}", "",
                      f"{det6(w_r):.8f}", "1")
        for label, call in (("od.glm_design(X, theta0, 'logit', tol=1e-6)",
                             lambda: od.glm_design(X, theta, "logit", tol=1e-6)),
                            ("od.d_optimal(glm_model_matrix, method='exchange', tol=1e-6)",
                             lambda: od.d_optimal(od.glm_model_matrix(X, theta, "logit"), tol=1e-6,
                                                  method="exchange"))):
            call()  # warm
            times = []
            for _ in range(args.glm_reps):
                start = time.perf_counter()
                res = call()
                times.append(time.perf_counter() - start)
            table.add_row(f"{label} [{res.method}]", f"{np.median(times):.4f}",
                          f"{efficiency(F, res.weights, 'D'):.8f}", f"{res.gap:.1e}", f"{det6(res.weights):.8f}",
                          f"{np.median(t_r) / np.median(times):.1f}x")
    console.print(table)
    console.print(f"Fx_glm and od.glm_model_matrix agree to {np.max(np.abs(F - F_r)):.1e} (max abs entry)")
    # the Poisson example of the same help page: 50 runs, no replicates
    P = od.glm_model_matrix(X[:, :3], [0, 2, 2], "log")
    P_r, w_kl, t_kl = load("poisson_F.bin", 3), load("poisson_w.bin"), float(load("poisson_time.bin")[0])
    od.exact_design(P, 50, replicates=False, restarts=0)  # warm
    lines = []
    for label, kwargs in (("defaults", {}), (f"{args.glm_budget:g} s", {"restarts": 10**9,
                                                                        "time_limit": args.glm_budget})):
        start = time.perf_counter()
        res = od.exact_design(P, 50, replicates=False, seed=0, **kwargs)
        seconds = time.perf_counter() - start
        lines.append(f"ours ({label}) {res.efficiency:.6f} in {seconds:.2f} s")
        bound = res.lower_bound
    eff_kl = bound / exact_value(P, w_kl, "D")
    console.print(f"Poisson example, 50 runs without replicates (Fx_glm vs ours max abs {np.max(np.abs(P - P_r)):.1e}):"
                  f" {'; '.join(lines)}; od_KL (t.max {args.glm_budget:g}) {eff_kl:.6f} in {t_kl:.2f} s "
                  "(efficiencies against our certified bound)")
    return {"OptimalDesign": version}


def augment_table(args: argparse.Namespace, folder: Path) -> dict[str, str]:
    why = r_packages_missing("AlgDesign")
    if why is not None:
        console.print(f"[yellow]augment table skipped: {why}[/]")
        return {}
    seeds = args.augment_seeds
    version = run_script(["Rscript", "-e", R_AUGMENT, str(folder), str(seeds), str(R_REPS)], "AlgDesign optFederov")
    models = {"quadratic": (pd.read_csv(folder / "aug_rsm.csv"), "~ (A + B + C)**2 + I(A**2) + I(B**2) + I(C**2)"),
              "half": (pd.read_csv(folder / "aug_half.csv"), "~ A + B + C + D + A:B")}
    found: dict[str, list] = {name: [] for name in models}
    for line in (folder / "augment.txt").read_text().splitlines():
        name, seed, seconds, fixed, final = line.split()
        found[name].append((int(seed), float(seconds), [int(v) - 1 for v in fixed.split(",")],
                            [int(v) - 1 for v in final.split(",")]))
    table = Table(title=f"Augmented exact D-optimal designs on AlgDesign's fixed runs ({seeds} seeds, each a starting "
                        "design of optFederov): D = det(X^T X / N)^(1/p), mean (min)")
    for col in ("example", "N0 -> N", "p", "D ours", "D optFederov", "ours >= optFederov", "worst ratio", "s ours",
                "s optFederov", "cert. eff (min)"):
        table.add_column(col, justify="right")
    for name, (points, formula) in models.items():
        X = od.candidates(formula, points).X
        K, p = X.shape
        od.exact_design(X, 2, fixed=np.bincount(found[name][0][2], minlength=K), replicates=False)  # warm
        ours, theirs, t_ours, t_theirs, certified = [], [], [], [], []
        for seed, seconds, fixed, final in found[name]:
            n_new = len(final) - len(fixed)
            start = time.perf_counter()
            res = od.exact_design(X, n_new, "D", fixed=np.bincount(fixed, minlength=K), replicates=False, seed=seed)
            t_ours.append(time.perf_counter() - start)
            t_theirs.append(seconds)
            certified.append(res.efficiency)
            for out, counts in ((ours, res.counts), (theirs, np.bincount(final, minlength=K))):
                M = (X * counts[:, None]).T @ X / counts.sum()
                sign, logdet = np.linalg.slogdet(M)
                out.append(float(np.exp(logdet / p)) if sign > 0 else 0.0)
        o, q = np.array(ours), np.array(theirs)
        table.add_row(name, f"{len(fixed)} -> {len(final)}", str(p), f"{o.mean():.6f} ({o.min():.6f})",
                      f"{q.mean():.6f} ({q.min():.6f})", f"{int(np.sum(o >= q * (1 - 1e-9)))}/{len(o)}",
                      f"{np.min(o / q):.4f}", f"{np.median(t_ours):.3f}", f"{np.median(t_theirs):.3f}",
                      f"{min(certified):.4f}")
    console.print(table)
    return {"AlgDesign": version}


TABLES = ("exact", "exact-scale", "approximate", "blocked", "power", "glm", "augment")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(TABLES),
                        help=f"comma-separated tables among {', '.join(TABLES)} (default: all)")
    parser.add_argument("--max-n", type=int, default=1_000_000)
    parser.add_argument("--criteria", default="D,A,I", help="criteria of the approximate table")
    parser.add_argument("--exact-criteria", default="D,A,I")
    parser.add_argument("--budget", type=float, default=0.5, help="od_KL's t.max and our time_limit, seconds")
    parser.add_argument("--seeds", type=int, default=5, help="seeds per exact or blocked case, on each side")
    parser.add_argument("--scale-budget", type=float, default=5.0, help="time limit of the large exact designs, s")
    parser.add_argument("--r-time-limit", type=float, default=300.0, help="od_REX's t.max, seconds")
    parser.add_argument("--pyoptex-python", help="the Python interpreter of a virtual environment with pyoptex")
    parser.add_argument("--glm-reps", type=int, default=50, help="calls timed on each side of the glm table")
    parser.add_argument("--glm-budget", type=float, default=5.0, help="od_KL's t.max in the Poisson example, s")
    parser.add_argument("--augment-seeds", type=int, default=20, help="starting designs of the augment table")
    args = parser.parse_args()
    only = [t.strip() for t in args.only.split(",") if t.strip()]
    unknown = sorted(set(only) - set(TABLES))
    if unknown:
        parser.error(f"unknown table(s) {', '.join(unknown)}; choose among {', '.join(TABLES)}")
    if shutil.which("Rscript") is None:
        print("R side unavailable: Rscript is not installed (apt-get install r-base-core); nothing to compare, "
              "exiting.")
        return
    versions: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in only:
            if name in ("exact", "exact-scale", "approximate"):
                why = r_ready()
                if why is not None:
                    print(f"{name} table skipped: {why}")
                    continue
            folder = Path(tmp) / name
            folder.mkdir()
            if name == "exact":
                exact_table(args, folder)
            elif name == "exact-scale":
                exact_scale_table(args, folder)
            elif name == "approximate":
                approximate_table(args, folder)
            else:
                table = {"blocked": blocked_table, "power": power_table, "glm": glm_table, "augment": augment_table}
                versions.update(table[name](args, folder))
    if versions:
        console.print("peers: " + ", ".join(f"{k} {v}" for k, v in sorted(versions.items())) +
                      f"; {subprocess.run(['R', '--version'], capture_output=True, text=True).stdout.splitlines()[0]}")


if __name__ == "__main__":
    main()
