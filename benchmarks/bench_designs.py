"""Speed of the linear design solvers, as ratios against baselines run in the same process.

    python benchmarks/bench_designs.py            # default sizes (about 1-2 minutes)
    python benchmarks/bench_designs.py --full     # adds the cvxpy XY model at K = 100 and the oracle
                                                  # compile at |Z| = K = 400 (minutes, ~2.5 GiB)

Designs on 10^4..10^6 arms or directions are in benchmarks/bench_designs_scale.py.

Tables:
1. G/D-optimal: cvxpy + default solver (log det), a plain numpy Frank–Wolfe with away steps
   (the reference: leverages recomputed from A^{-1} every iteration, stop at G/d <= 1 + tol),
   and od.g_optimal with default settings.
2. XY-allocation: the cvxpy SOCP model (compile time, solve time, peak traced memory) against
   the default fast path (certified gap; with a cvxpy value, the realised relative error).
3. Parameterised re-solve of the XY-oracle model against rebuilding it (a new model + solve),
   for fresh random thetas and for a drifting plug-in estimate (theta_{t+1} = theta_t + noise),
   with the breakdown of a re-solve (interior-point solver time, python/cvxpy overhead) and of a
   rebuild (compilation); ``ceiling`` = rebuild / solver time, the speed-up a re-solve with zero
   overhead would reach. Also the re-solve through cvxpy's ``problem.solve`` (before the kept
   CLARABEL session).
3b. Compile cost of the XY-oracle model at |Z| = K, d = 10 (the size guard of OracleDesignModel).
4. Why the directions are constants: compile time and peak memory of the same SOCP with the
   m x d directions as a cp.Parameter against constants.
5. Conditioning: CLARABEL's raw oracle design on Soare's omega = 0.01 instance against the
   polished one (realised value and certified gap).
6. BLAS threading: the barrier fast path with the default BLAS threads against one thread.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import cvxpy as cp
import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

import optdesign as od
from optdesign.linear.barrier import minmax_barrier
from optdesign.linear.criteria import inverse_information
from optdesign.linear.models import (
    ORACLE_MAX_COMPILE_ENTRIES,
    ORACLE_MAX_CONES,
    DOptimalModel,
    MinMaxDesignModel,
    OracleDesignModel,
    oracle_model_size,
)
from optdesign.linear.socp import minmax_socp
from optdesign.runtime import solvers
from optdesign.runtime.blas import single_threaded_blas


def reference_fw_away(X: np.ndarray, tol: float = 1e-3, max_iter: int = 200_000) -> np.ndarray:
    """Plain Frank–Wolfe with away steps for D-optimality, leverages recomputed every iteration."""
    K, d = X.shape
    w = np.full(K, 1.0 / K)
    for _ in range(max_iter):
        M = inverse_information(X, w)
        h = np.einsum("ij,jk,ik->i", X, M, X)
        j = int(np.argmax(h))
        if h[j] <= d * (1 + tol):
            break
        sup = np.flatnonzero(w > 0)
        i = sup[np.argmin(h[sup])]
        if h[j] - d >= d - h[i]:
            g = (h[j] - d) / (d * (h[j] - 1))
            w *= 1 - g
            w[j] += g
        else:
            gmax = w[i] / (1 - w[i])
            g = min((d - h[i]) / (d * (h[i] - 1)), gmax) if h[i] > 1 else gmax
            w *= 1 + g
            w[i] -= g
            w = np.clip(w, 0, None)
    return w / w.sum()


def timed(fn, *args, repeat: int = 1, **kwargs):
    best, out = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return out, best


def table_gd(console: Console) -> None:
    t = Table(title="G/D-optimal design (time ratios: lower is faster)")
    for col in ("K x d", "cvxpy D [s]", "ref FW-away [s]", "g_optimal [s]", "G/d (g_optimal)",
                "vs ref FW", "vs cvxpy"):
        t.add_column(escape(col), justify="right")
    for K, d in [(20, 5), (500, 10), (2000, 20)]:
        X = np.random.default_rng(K).standard_normal((K, d))
        _, t_cvx = timed(lambda X=X: DOptimalModel(X).solve())
        w_ref, t_ref = timed(reference_fw_away, X, 1e-3, repeat=3)
        assert od.g_value(X, w_ref) <= d * 1.001 + 1e-9
        res, t_fast = timed(od.g_optimal, X, repeat=3)
        t.add_row(f"{K} x {d}", f"{t_cvx:.4f}", f"{t_ref:.4f}", f"{t_fast:.4f}", f"{res.value / d:.6f}",
                  f"{t_fast / t_ref:.2f}x", f"{t_fast / t_cvx:.3f}x")
    console.print(t)


def table_xy(console: Console, full: bool) -> None:
    t = Table(title="XY-allocation, all pairwise differences (cvxpy SOCP vs default fast path)")
    for col in ("K x d", "dirs", "compile [s]", "cvxpy solve [s]", "peak MiB", "fast [s]",
                "fast gap", "rel err vs cvxpy", "speed-up"):
        t.add_column(escape(col), justify="right")
    sizes = [(20, 5), (40, 6), (100, 10)]  # cvxpy at K = 100 only with --full
    for K, d in sizes:
        X = np.random.default_rng(K + d).standard_normal((K, d))
        Y = od.pairwise_differences(X)
        fast, t_fast = timed(od.xy_allocation, X, repeat=3)
        if K < 100 or full:
            tracemalloc.start()
            start = time.perf_counter()
            model = MinMaxDesignModel(X, Y, polish=False)
            model.problem.get_problem_data(solvers.default_solver())
            t_compile = time.perf_counter() - start
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            ref, t_solve = timed(model.solve)
            err = f"{fast.value / ref.value - 1:+.1e}"
            speedup = (t_compile + t_solve) / t_fast
            cells = (f"{t_compile:.2f}", f"{t_solve:.2f}", f"{peak / 2**20:.0f}", f"{speedup:.0f}x")
        else:
            err = "(--full)"
            cells = ("-", "-", "-", "-")
        t.add_row(f"{K} x {d}", str(Y.shape[0]), *cells[:3], f"{t_fast:.3f}", f"{fast.gap:.1e}", err, cells[3])
    console.print(t)


def drifting_thetas(rng, d: int, n: int, step: float = 0.05) -> list[np.ndarray]:
    """A plug-in estimate between bandit rounds: theta_{t+1} = theta_t + step * N(0, I)."""
    theta, out = rng.standard_normal(d), []
    for _ in range(n):
        theta = theta + step * rng.standard_normal(d)
        out.append(theta.copy())
    return out


def table_resolve(console: Console) -> None:
    t = Table(title="Parameterised re-solve vs rebuild (XY-oracle model, polish=False; medians over thetas; "
                    "ratios to the rebuild of the same run)")
    for col in ("K x d", "thetas", "rebuild [ms]", "re-solve [ms]", "speed-up", "via problem.solve",
                "compile / rebuild", "solver / rebuild", "overhead / rebuild", "iters", "ceiling"):
        t.add_column(escape(col), justify="right")
    for K, d in [(10, 3), (15, 4), (20, 5), (40, 6), (60, 8)]:
        rng = np.random.default_rng(K)
        X = rng.standard_normal((K, d))
        n = 9 if K <= 20 else 5
        sequences = {"random": [rng.standard_normal(d) for _ in range(n + 1)],
                     "drift": drifting_thetas(rng, d, n + 1)}
        for name, thetas in sequences.items():
            model = OracleDesignModel(X, polish=False)
            before = OracleDesignModel(X, polish=False)
            before._use_session = False  # the previous re-solve: problem.solve via optdesign.runtime.solvers
            model.solve(thetas[0])  # the first solve compiles
            before.solve(thetas[0])
            rows = []
            for th in thetas[1:]:
                start = time.perf_counter()
                model.solve(th)
                t_re = time.perf_counter() - start
                t_solver, iters = model.last_solver_seconds, model.problem.solver_stats.num_iters
                start = time.perf_counter()
                before.solve(th)
                t_before = time.perf_counter() - start
                start = time.perf_counter()
                fresh = OracleDesignModel(X, polish=False)
                fresh.solve(th)
                t_build = time.perf_counter() - start
                rows.append((t_build, t_re, t_before, fresh.problem.compilation_time, t_solver, iters))
            build, re, bef, comp, solver, iters = np.median(np.array(rows), axis=0)
            t.add_row(f"{K} x {d}", name, f"{1e3 * build:.2f}", f"{1e3 * re:.2f}", f"{build / re:.1f}x",
                      f"{build / bef:.1f}x", f"{comp / build:.2f}", f"{solver / build:.2f}",
                      f"{(re - solver) / build:.2f}", f"{iters:.0f}", f"{build / solver:.1f}x")
    console.print(t)


def oracle_problem(X: np.ndarray):
    """The cvxpy problem of OracleDesignModel(X) without its size guard (to measure above it)."""
    m, d = X.shape
    anchor = cp.Parameter(d, value=np.zeros(d))
    rhs = np.ones((m, 1)) @ cp.reshape(anchor, (1, d), order="F") - X
    problem, _, q, _ = minmax_socp(X, rhs, m, weighted=True)
    q.value = np.ones(m)
    return problem


def table_oracle_size(console: Console, full: bool) -> None:
    t = Table(title="XY-oracle model compile cost, |Z| = K, d = 10 (guard: OracleDesignModel refuses "
                    f"> {ORACLE_MAX_CONES:,} cones or > {ORACLE_MAX_COMPILE_ENTRIES:.1e} compile entries)")
    for col in ("|Z| = K", "cones", "compile entries", "compile [s]", "peak MiB", "MiB / 1e6 entries",
                "guard"):
        t.add_column(escape(col), justify="right")
    for K in [100, 200, 400] if full else [100, 200]:
        X = np.random.default_rng(K).standard_normal((K, 10))
        cones, entries = oracle_model_size(K, K, 10)
        seconds, mib = compile_cost(oracle_problem(X))
        refused = cones > ORACLE_MAX_CONES or entries > ORACLE_MAX_COMPILE_ENTRIES
        t.add_row(str(K), f"{cones:,}", f"{entries:.2e}", f"{seconds:.2f}", f"{mib:.0f}",
                  f"{mib / (entries / 1e6):.1f}", "refused" if refused else "builds")
    console.print(t)


def compile_cost(problem) -> tuple[float, float]:
    """Seconds and peak traced MiB of compiling ``problem`` for the default solver."""
    tracemalloc.start()
    start = time.perf_counter()
    problem.get_problem_data(solvers.default_solver())
    elapsed = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return elapsed, peak / 2**20


def table_parameter_cost(console: Console, full: bool) -> None:
    t = Table(title="Compiling the XY SOCP: directions as constants vs as an m x d cp.Parameter")
    for col in ("K x d", "dirs", "constant [s]", "constant MiB", "Parameter [s]", "Parameter MiB"):
        t.add_column(escape(col), justify="right")
    for K, d in [(20, 5), (40, 6)] if full else [(20, 5)]:
        X = np.random.default_rng(K + d).standard_normal((K, d))
        Y = od.pairwise_differences(X)
        Y = Y / np.abs(Y).max()
        const = compile_cost(minmax_socp(X, Y, Y.shape[0], weighted=False)[0])
        param = cp.Parameter(Y.shape, value=Y)
        varied = compile_cost(minmax_socp(X, param, Y.shape[0], weighted=False)[0])
        t.add_row(f"{K} x {d}", str(Y.shape[0]), f"{const[0]:.2f}", f"{const[1]:.0f}",
                  f"{varied[0]:.2f}", f"{varied[1]:.0f}")
    console.print(t)


def table_conditioning(console: Console) -> None:
    t = Table(title="XY-oracle on Soare's instance, omega = 0.01 (Delta_min ~ 1e-4): raw solver design vs polished")
    for col in ("d", "raw value", "raw gap", "polished value", "polished gap", "barrier value"):
        t.add_column(escape(col), justify="right")
    for d in (5, 10):
        X = np.vstack([np.eye(d), np.r_[np.cos(0.01), np.sin(0.01), np.zeros(d - 2)]])
        theta = np.r_[2.0, np.zeros(d - 1)]
        raw = OracleDesignModel(X, polish=False).solve(theta)
        fine = OracleDesignModel(X).solve(theta)
        fast = od.xy_oracle(X, theta)
        t.add_row(str(d), f"{raw.value:.6g}", f"{raw.gap:.1e}", f"{fine.value:.8g}", f"{fine.gap:.1e}",
                  f"{fast.value:.8g}")
    console.print(t)


def table_blas(console: Console) -> None:
    t = Table(title="Barrier fast path, XY-allocation K = 100, d = 10: BLAS threads")
    for col in ("default threads [s]", "one thread [s]", "ratio"):
        t.add_column(escape(col), justify="right")
    X = np.random.default_rng(110).standard_normal((100, 10))
    Y = od.pairwise_differences(X)
    _, t_default = timed(minmax_barrier, X, Y, repeat=3)

    def limited():
        with single_threaded_blas():
            return minmax_barrier(X, Y)

    _, t_one = timed(limited, repeat=3)
    t.add_row(f"{t_default:.3f}", f"{t_one:.3f}", f"{t_default / t_one:.1f}x")
    console.print(t)


TABLES = {"gd": table_gd, "xy": table_xy, "resolve": table_resolve, "oracle-size": table_oracle_size,
          "parameters": table_parameter_cost, "conditioning": table_conditioning, "blas": table_blas}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true",
                        help="also run the cvxpy XY model at K = 100 and the oracle compile at |Z| = 400 (minutes)")
    parser.add_argument("--only", choices=sorted(TABLES), action="append", help="run only these tables")
    args = parser.parse_args()
    console = Console(width=200)
    console.print(f"optdesign {od.__version__}; solver {solvers.default_solver()}")
    for name, table in TABLES.items():
        if args.only is None or name in args.only:
            if name in ("xy", "oracle-size", "parameters"):
                table(console, args.full)
            else:
                table(console)


if __name__ == "__main__":
    main()
