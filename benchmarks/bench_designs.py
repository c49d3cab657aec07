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
7. Re-solves of the transductive oracle design, linear Track-and-Stop's target (``--only barrier-resolve``,
   ``--resolves N`` estimates per instance, 30 by default, one BLAS thread): the barrier with its centring stages
   compiled (the default) against the numpy reference stage (``compiled=False``), in the same run, and the whole
   ``od.transductive`` call, on a random instance (K = 50 unit-norm Gaussian arms in R^20, X = Z,
   theta + 0.01 N(0, I)) and on Soare et al.'s (d = 6, omega = 0.1, theta = 2 e_1 + 0.3 N(0, I)): milliseconds
   per re-solve (the fastest of three passes), Newton steps, certificate LPs per solve, and how far apart the two
   paths' designs and lower bounds end. ``--baseline DIR`` (a checkout of the code to compare with, e.g. the commit
   before the compiled stage) also times ``od.transductive`` there, in a subprocess, and the speed-up is against it.
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


def resolve_instances(n: int) -> dict[str, tuple[np.ndarray, list[np.ndarray]]]:
    """The arms (= items) and n estimates of theta, per instance of table 7."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 20))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    theta = rng.standard_normal(20)
    soare = np.vstack([np.eye(6), np.r_[np.cos(0.1), np.sin(0.1), np.zeros(4)]])
    return {"random K = 50, d = 20": (X, [theta + 0.01 * rng.standard_normal(20) for _ in range(n)]),
            "Soare d = 6, omega = 0.1": (soare, [np.r_[2.0, np.zeros(5)] + 0.3 * rng.standard_normal(6)
                                                 for _ in range(n)])}


def best_of_three(solve, problems: list) -> tuple[float, list]:
    """Milliseconds per problem of ``solve(*problem)`` (the fastest of three passes) and the last pass's results."""
    best, results = np.inf, []
    for _ in range(3):
        start = time.perf_counter()
        results = [solve(*problem) for problem in problems]
        best = min(best, time.perf_counter() - start)
    return 1e3 * best / len(problems), results


def resolve_worker(n: int) -> None:
    """One JSON line: milliseconds per ``od.transductive`` re-solve on each instance of table 7, with the code on the
    path (the baseline's, in a subprocess)."""
    import json

    times = {}
    with single_threaded_blas():
        for name, (X, thetas) in resolve_instances(n).items():
            od.transductive(X, X, thetas[0], method="barrier")  # imports, compiled code
            times[name] = best_of_three(lambda X, t: od.transductive(X, X, t, method="barrier"),
                                        [(X, t) for t in thetas])[0]
    print(json.dumps(times))


def baseline_resolves(checkout: str, n: int) -> dict[str, float]:
    """:func:`resolve_worker`'s times with ``checkout`` (a repository root) first on the path."""
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": checkout, "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, __file__, "--resolve-worker", "--resolves", str(n)], env=env,
                         capture_output=True, text=True, check=True, cwd=checkout)
    return json.loads(out.stdout.strip().splitlines()[-1])


def table_barrier_resolve(console: Console, n: int, baseline: str | None) -> None:
    from optdesign.linear import barrier

    before = baseline_resolves(baseline, n) if baseline else {}
    t = Table(title=f"Transductive oracle re-solves, {n} estimates per instance, one thread (ms per re-solve)")
    for col in ("instance", "baseline", "numpy stage", "compiled", "od.transductive", "speed-up", "Newton steps",
                "LPs per solve", "max |w - w_numpy|", "max rel. lower bound diff"):
        t.add_column(escape(col), justify="right")
    lps: list[int] = []
    sharpened = barrier._sharpened
    barrier._sharpened = lambda *a: lps.append(1) or sharpened(*a)  # count the certificate LPs
    with single_threaded_blas():
        for name, (X, thetas) in resolve_instances(n).items():
            directions = [(X, od.oracle_directions(X, th)[0]) for th in thetas]
            od.transductive(X, X, thetas[0], method="barrier")  # load the compiled code
            slow, ref = best_of_three(lambda X, Y: minmax_barrier(X, Y, compiled=False), directions)
            lps.clear()
            fast, res = best_of_three(minmax_barrier, directions)
            per_solve = len(lps) / (3 * n)
            public = best_of_three(lambda X, th: od.transductive(X, X, th, method="barrier"),
                                   [(X, th) for th in thetas])[0]
            old = before.get(name)
            pairs = list(zip(ref, res, strict=True))
            speedup = f"{old / public:.1f}x" if old else f"{slow / fast:.1f}x"
            t.add_row(name, f"{old:.2f}" if old else "-", f"{slow:.2f}", f"{fast:.2f}", f"{public:.2f}", speedup,
                      f"{np.mean([r.iterations for r in res]):.1f}", f"{per_solve:.2f}",
                      f"{max(np.abs(a.weights - b.weights).max() for a, b in pairs):.1e}",
                      f"{max(abs(b.lower_bound / a.lower_bound - 1) for a, b in pairs):.1e}")
    barrier._sharpened = sharpened
    console.print(t)


TABLES = {"gd": table_gd, "xy": table_xy, "resolve": table_resolve, "oracle-size": table_oracle_size,
          "parameters": table_parameter_cost, "conditioning": table_conditioning, "blas": table_blas,
          "barrier-resolve": table_barrier_resolve}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true",
                        help="also run the cvxpy XY model at K = 100 and the oracle compile at |Z| = 400 (minutes)")
    parser.add_argument("--only", choices=sorted(TABLES), action="append", help="run only these tables")
    parser.add_argument("--resolves", type=int, default=30, help="estimates per instance of the barrier-resolve table")
    parser.add_argument("--baseline", help="a checkout (its repository root) whose od.transductive the "
                                           "barrier-resolve table times beside this one's")
    parser.add_argument("--resolve-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.resolve_worker:
        resolve_worker(args.resolves)
        return
    console = Console(width=200)
    console.print(f"optdesign {od.__version__}; solver {solvers.default_solver()}")
    for name, table in TABLES.items():
        if args.only is None or name in args.only:
            if name in ("xy", "oracle-size", "parameters"):
                table(console, args.full)
            elif name == "barrier-resolve":
                table(console, args.resolves, args.baseline)
            else:
                table(console)


if __name__ == "__main__":
    main()
