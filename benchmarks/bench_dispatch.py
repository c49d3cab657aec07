"""Where the G/D-optimal dispatch should switch from plain Frank–Wolfe to the active-set exchange: one run, ratios.

    python benchmarks/bench_dispatch.py                       # n = 50 .. 10^5, p = 2 .. 21, tol 1e-4 and 1e-6
    python benchmarks/bench_dispatch.py --max-n 3000 --repeats 3
    python benchmarks/bench_dispatch.py --cvxpy-max-n 1000    # also the cvxpy model (the fallback of ``auto``)

For each family of candidates, number of candidates n and parameters p, the two certified fast paths of
``od.d_optimal`` are timed on the same rows in the same process, one BLAS thread: plain Frank–Wolfe with away steps
(:func:`optdesign.linear.firstorder.d_optimal_fw`, ``method="frank-wolfe"``) and the active-set exchange
(:func:`optdesign.linear.exchange.d_optimal_exchange`, ``method="exchange"``), each the median of ``--repeats``
calls, with the certified gap each reached (max_k h_k / p - 1; ``*`` marks a gap above the tolerance: that path
would have made ``auto`` fall back to cvxpy). ``FW / exch`` above 1 means the exchange is faster. With
``--cvxpy-max-n`` the cvxpy log-det model is timed too (one call) up to that n. ``auto`` is what
``od.d_optimal(X, tol=tol)`` chose (``corank`` when (n - p)^2 <= CORANK_RATIO p).

Families (rows drawn once per (n, p), seed 0):

* ``gaussian``: standard Gaussian rows in R^p, p in 2, 5, 10, 20;
* ``quadratic``: the full quadratic model in k = 1..5 factors at n points uniform on [-1, 1]^k, p = 3, 6, 10, 15,
  21 (response-surface candidates; a D-optimal design on a few dozen of them, like OptimalDesign's ``Fx_glm``
  example);
* ``glm``: the same quadratic rows times sqrt(nu(x^T theta)) of a logistic model at a random theta (a locally
  optimal GLM design; ``od.glm_design``).

The A- and I-optimal designs do not go through this rule: their fast path (:mod:`optdesign.linear.classical`) is
always the active set.
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # one core, before numpy loads
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import itertools  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

import optdesign as od  # noqa: E402
from optdesign.linear import dispatch  # noqa: E402
from optdesign.linear.exchange import d_optimal_exchange  # noqa: E402
from optdesign.linear.firstorder import d_optimal_fw  # noqa: E402
from optdesign.linear.models import DOptimalModel  # noqa: E402
from optdesign.result import FastPathResult  # noqa: E402

SIZES = (50, 100, 300, 1_000, 3_000, 10_000, 30_000, 100_000)
GAUSSIAN_P = (2, 5, 10, 20)
FACTORS = (1, 2, 3, 4, 5)  # quadratic in k factors: p = (k + 1)(k + 2) / 2


def quadratic_rows(n: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """The full quadratic model (intercept, linear, squares, products) at n points uniform on [-1, 1]^k."""
    Z = rng.uniform(-1.0, 1.0, size=(n, k))
    cols = [np.ones(n), *Z.T, *(Z[:, i] * Z[:, j] for i, j in itertools.combinations_with_replacement(range(k), 2))]
    return np.column_stack(cols)


def instances(families: list[str], sizes: list[int]) -> list[tuple[str, int, int, np.ndarray]]:
    out = []
    for family in families:
        dims = GAUSSIAN_P if family == "gaussian" else tuple((k + 1) * (k + 2) // 2 for k in FACTORS)
        for n, p in itertools.product(sizes, dims):
            rng = np.random.default_rng(0)
            if family == "gaussian":
                X = rng.standard_normal((n, p))
            else:
                k = FACTORS[dims.index(p)]
                X = quadratic_rows(n, k, rng)
                if family == "glm":
                    theta = rng.normal(scale=1.0, size=p)
                    mu = 1.0 / (1.0 + np.exp(-(X @ theta)))
                    X = np.sqrt(mu * (1.0 - mu))[:, None] * X
            out.append((family, n, p, X))
    return out


def timed(fn: Callable[[], float], repeats: int) -> tuple[float, float]:
    """(median seconds, the gap of the last call) of ``repeats`` calls of fn, which returns the certified gap."""
    times, gap = [], np.nan
    for _ in range(repeats):
        start = time.perf_counter()
        gap = fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), gap


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--families", default="gaussian,quadratic,glm")
    parser.add_argument("--max-n", type=int, default=100_000)
    parser.add_argument("--tols", default="1e-4,1e-6")
    parser.add_argument("--repeats", type=int, default=3, help="calls per path (median); one call above n = 10^4")
    parser.add_argument("--cvxpy-max-n", type=int, default=0, help="time the cvxpy model up to this n (0: never)")
    parser.add_argument("--fw-time-limit", type=float, default=60.0, help="seconds of one Frank–Wolfe call")
    args = parser.parse_args()
    tols = [float(t) for t in args.tols.split(",")]
    sizes = [n for n in SIZES if n <= args.max_n]
    console = Console(width=200)
    table = Table(title=f"od.d_optimal paths, one BLAS thread (EXCHANGE_MIN_ARMS = {dispatch.EXCHANGE_MIN_ARMS})")
    for col in ("family", "n", "p", "tol", "auto", "FW s", "FW gap", "exch s", "exch gap", "FW / exch",
                "cvxpy s"):
        table.add_column(col, justify="right")
    wins: dict[tuple[str, float], list[tuple[int, int, float]]] = {}
    for (family, n, p, X), tol in itertools.product(instances(args.families.split(","), sizes), tols):
        if n <= p + 1:
            continue
        reps = args.repeats if n <= 10_000 else 1
        auto = od.d_optimal(X, tol=tol).method
        fw_s, fw_gap = timed(lambda X=X, tol=tol: _gap(d_optimal_fw(X, tol=tol, time_limit=args.fw_time_limit)), reps)
        ex_s, ex_gap = timed(lambda X=X, tol=tol: _gap(d_optimal_exchange(X, tol=tol, time_limit=120.0)), reps)
        cv = ""
        if n <= args.cvxpy_max_n:
            start = time.perf_counter()
            DOptimalModel(X).solve()
            cv = f"{time.perf_counter() - start:.3f}"
        ratio = fw_s / ex_s
        wins.setdefault((family, tol), []).append((n, p, ratio))
        table.add_row(family, f"{n:,}", str(p), f"{tol:g}", auto, f"{fw_s:.4f}", _mark(fw_gap, tol), f"{ex_s:.4f}",
                      _mark(ex_gap, tol), f"{ratio:.1f}x", cv)
    console.print(table)
    for (family, tol), rows in wins.items():
        slower = [(n, p, r) for n, p, r in rows if r < 1.0]
        console.print(f"{family}, tol {tol:g}: exchange faster on {len(rows) - len(slower)}/{len(rows)}"
                      + (f"; slower at {', '.join(f'n={n} p={p} ({r:.2f}x)' for n, p, r in slower)}" if slower else ""))


def _gap(res: FastPathResult) -> float:
    return res.value / res.lower_bound - 1.0


def _mark(gap: float, tol: float) -> str:
    return f"{gap:.1e}" + ("*" if gap > tol else "")


if __name__ == "__main__":
    main()
