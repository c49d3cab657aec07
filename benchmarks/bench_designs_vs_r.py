"""Side by side with R's OptimalDesign (Harman & Filová, 1.0.3): approximate designs against od_REX (Harman, Filová &
Richtárik 2020), exact designs against od_KL, both called through Rscript in the same run.

    python benchmarks/bench_designs_vs_r.py                       # both tables (tens of minutes with R)
    python benchmarks/bench_designs_vs_r.py --only approximate --max-n 100000
    python benchmarks/bench_designs_vs_r.py --only exact --exact-criteria D
    python benchmarks/bench_designs_vs_r.py --only exact-scale --exact-criteria D,A --seeds 3

R and the package: ``apt-get install r-base-core r-cran-matrix r-cran-matrixstats r-cran-matrixcalc r-cran-plyr
r-cran-quadprog r-cran-lpsolve r-cran-rgl``, then ``install.packages("OptimalDesign")`` or ``R CMD INSTALL`` of its
source. Without Rscript or the package the script says so and exits 0.

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
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

import optdesign as od
from optdesign.runtime.blas import single_threaded_blas

#: criterion -> (our function in optdesign, R's crit name)
CRITERIA = {"D": ("d_optimal", "D"), "A": ("a_optimal", "A"), "I": ("i_optimal", "I")}
SERIAL = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
EFFICIENCY = 1 - 1e-6
console = Console(width=160)

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("approximate", "exact", "exact-scale"))
    parser.add_argument("--max-n", type=int, default=1_000_000)
    parser.add_argument("--criteria", default="D,A,I", help="criteria of the approximate table")
    parser.add_argument("--exact-criteria", default="D,A,I")
    parser.add_argument("--budget", type=float, default=0.5, help="od_KL's t.max and our time_limit, seconds")
    parser.add_argument("--seeds", type=int, default=5, help="seeds per exact case, on each side")
    parser.add_argument("--scale-budget", type=float, default=5.0, help="time limit of the large exact designs, s")
    parser.add_argument("--r-time-limit", type=float, default=300.0, help="od_REX's t.max, seconds")
    args = parser.parse_args()
    why = r_ready()
    if why is not None:
        print(f"R side unavailable: {why}; nothing to compare, exiting.")
        return
    with tempfile.TemporaryDirectory() as tmp:
        if args.only in (None, "exact"):
            exact_table(args, Path(tmp))
        if args.only in (None, "exact-scale"):
            exact_scale_table(args, Path(tmp))
        if args.only in (None, "approximate"):
            approximate_table(args, Path(tmp))


if __name__ == "__main__":
    main()
