"""The tables ``optdesign solve`` prints: a design (support, weights or runs, certificate), its diagnostics, and the
summary and allocations of a multi-agent lower bound. Each fits 80 columns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike
from rich.markup import escape
from rich.table import Table

from ..result import BilinearDesign, CharTimeResult, DesignResult, RegretBoundResult
from ..runtime.terminal import narrow_console
from ..validation import count_text
from .problems import SolveProblem

if TYPE_CHECKING:
    from ..exact_designs import ExactDesignResult
    from ..factored.graph.factor_graph import FactorGraph
    from ..linear.classical.diagnostics import DesignDiagnostics
    from ..power import PowerResult

CHAR_TIME_CONVENTION = "E[tau] >= 2 T kl(delta,1-delta)"
REGRET_CONVENTION = "liminf R(T) / log T >= c_theta"
# rows shown in the allocation tables and entries shown per row
MAX_ROWS = 10
MAX_ENTRIES = 6
MAX_ACTION_AGENTS = 16
MAX_ARMS = 50  # support arms listed in a design table


def arm_labels(X: np.ndarray) -> list[str]:
    """Each candidate as its coordinates ``(x_1, ..., x_6, ...)``."""
    more = ", ..." if X.shape[1] > 6 else ""
    return ["(" + ", ".join(f"{v:.4g}" for v in row[:6]) + more + ")" for row in X]


def print_design_table(problem: SolveProblem, res: DesignResult | BilinearDesign | ExactDesignResult,
                       labels: Sequence[str], what: str = "x") -> None:
    """The support of a design (its largest weights, or its runs) with each point's label, then its summary."""
    console = narrow_console()
    node = res.node if isinstance(res, BilinearDesign) else res
    counts = getattr(node, "counts", None)
    fixed = getattr(node, "fixed", None)
    weights = node.weights
    size = "runs" if counts is not None else "weight"
    console.print(f"{problem.value} design: support ({node.support.size} of {len(weights)} candidates)",
                  style="bold", markup=False)
    table = Table()
    for name, justify in (("arm", "right"), (size, "right"), (what, "left")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    order = node.support[np.argsort(-weights[node.support], kind="stable")]
    for k in order[:MAX_ARMS]:
        runs = f"{counts[k]}" + (f" ({fixed[k]} fixed)" if fixed is not None and fixed[k] else "") \
            if counts is not None else f"{weights[k]:.6f}"
        table.add_row(str(k), runs, escape(labels[k]))
    if order.size > MAX_ARMS:
        table.caption = f"... {order.size - MAX_ARMS} more arms of smaller weight (all of them in --json)"
    console.print(table)
    console.print(_design_summary(res))


def _design_summary(res: DesignResult | BilinearDesign | ExactDesignResult) -> Table:
    """Value, certified lower bound, gap or efficiency, status and time of a design, one row each."""
    summary = Table(show_header=False, box=None)
    if not isinstance(res, (DesignResult, BilinearDesign)):  # an exact design
        summary.add_row(f"value ({res.criterion}, {res.n} runs)", f"{res.value:.8g}")
        summary.add_row("certified lower bound", f"{res.lower_bound:.8g} (approximate optimum)")
        summary.add_row("certified efficiency", f">= {res.efficiency:.6f}")
        if res.fixed is not None:
            summary.add_row("runs: fixed + new", f"{res.n_fixed} + {res.n_new}")
            summary.add_row("efficiency vs any design", f">= {res.extras['free_efficiency']:.6f} ({res.n} runs)")
        summary.add_row("starts, moves", f"{res.starts}, {res.moves}")
        summary.add_row("time", f"{res.solve_time:.4f} s")
        return summary
    node = res.node if isinstance(res, BilinearDesign) else res
    value_name = "edge G-value" if isinstance(res, BilinearDesign) else f"value ({node.criterion})"
    summary.add_row(value_name, f"{res.value:.8g}")
    if not isinstance(res, BilinearDesign):
        summary.add_row("units", escape(node.units))
        if node.g_value is not None and node.criterion != "g-optimal":
            summary.add_row("G-value", f"{node.g_value:.8g}")
    if node.lower_bound is not None:
        summary.add_row("certified lower bound", f"{node.lower_bound:.8g}")
    summary.add_row("relative gap", "n/a" if node.gap is None else f"{node.gap:.2e}")
    for key in ("status", "solver", "method"):
        summary.add_row(key, str(getattr(node, key)))
    summary.add_row("time", f"{node.solve_time:.4f} s")
    for key in ("constraints", "link", "fallback"):
        if getattr(node, key) is not None:
            summary.add_row(key, escape(str(getattr(node, key))))
    for key, val in node.extras.items():
        if np.isscalar(val):
            summary.add_row(key, escape(str(val)))
    return summary


def print_diagnostics(diag: DesignDiagnostics) -> None:
    """Each criterion's value at the design and its efficiency (certified, and an upper bound), then the
    eigenvalues of M(w)."""
    console = narrow_console()
    console.print("diagnostics: efficiency = optimum / value (certified interval)", style="bold", markup=False)
    table = Table()
    for name in ("criterion", "value", "efficiency >=", "<=", "exact"):
        table.add_column(name, justify="left" if name == "criterion" else "right")
    labels = {"d": "D  det(M)^(-1/d)", "g": "G  max x'M^-1 x", "a": "A  tr M^-1", "i": "I  tr(M^-1 B)",
              "e": "E  1/lambda_min", "c": "c  c'M^- c", "ds": "Ds det(M_s^-1)^(1/s)"}
    for name, e in diag.efficiencies.items():
        table.add_row(labels[name], f"{e.value:.6g}", f"{e.efficiency:.6f}", f"{e.efficiency_upper:.6f}",
                      "yes" if e.exact else "bound")
    console.print(table)
    console.print(f"eigenvalues of M(w): {_format_vector(diag.eigenvalues)}", markup=False)
    if "g" in diag.efficiencies:
        console.print("(d-optimal's value is the G-value, row G; row D is det(M)^(-1/d))", markup=False)


def print_power(power: PowerResult) -> None:
    """The power of each term's F test (and the whole model's): degrees of freedom, noncentrality, power."""
    console = narrow_console()
    console.print(f"power of the F tests: alpha = {power.alpha:g}, sigma = {power.sigma:g}, N = {power.n} runs",
                  style="bold", markup=False)
    table = Table()
    for name in ("term", "df1", "df2", "noncentrality", "power"):
        table.add_column(name, justify="left" if name == "term" else "right")
    for t in power.tests:
        table.add_row(escape(t.term), str(t.df1), str(t.df2), f"{t.noncentrality:.4g}", f"{t.power:.4f}")
    console.print(table)
    console.print(f"coefficients: {_format_vector(power.coefficients)}", markup=False)


def _format_action(action: ArrayLike, limit: int = MAX_ACTION_AGENTS) -> str:
    a = [int(v) for v in np.asarray(action).ravel()]
    if len(a) <= limit:
        return "(" + ", ".join(map(str, a)) + ")"
    return "(" + ", ".join(map(str, a[:limit])) + f", ...) [{len(a)} agents]"


def _format_count(n: int) -> str:
    """An exact integer, or its order of magnitude when it has more than 12 digits."""
    return count_text(n)


def _format_vector(v: ArrayLike, limit: int = MAX_ENTRIES) -> str:
    arr = np.asarray(v, dtype=float).ravel()
    text = ", ".join(f"{x:.4g}" for x in arr[:limit])
    return f"[{text}, ... ({arr.size})]" if arr.size > limit else f"[{text}]"


def _quantity(problem: SolveProblem, res: CharTimeResult | RegretBoundResult) -> str:
    """The symbol of what a multi-agent solve computes: T*, T^MF(m), c_theta or c^MF(m)."""
    if problem is SolveProblem.char_time:
        return "T*"
    if problem is SolveProblem.mf_char_time:
        return f"T^MF({res.m})"
    return "c_theta" if res.method == "exact" else f"c^MF({res.m})"


def _value_label(problem: SolveProblem, res: CharTimeResult | RegretBoundResult) -> str:
    """What ``value`` is: the optimum when the solve converged (status optimal), else an upper bound on it (the
    objective at the allocation returned, which attains it), with the status that says why."""
    name = _quantity(problem, res)
    if res.status != "optimal":
        return f"{name} upper bound ({str(res.status).replace('_', ' ')})"
    if problem is SolveProblem.mf_char_time:
        return f"{name} (mean field)"
    if problem is SolveProblem.regret and res.method != "exact":
        return f"{name} (upper bound on c_theta)"
    return f"{name} (exact)"


def print_factor_graph_table(problem: SolveProblem, res: CharTimeResult | RegretBoundResult, fg: FactorGraph) -> None:
    """The summary of a multi-agent solve, then its local allocations (mean field) or its factor marginals."""
    console = narrow_console()
    console.print(_factor_graph_summary(problem, res, fg))
    if not np.size(res.best_action):  # the time limit ran out before a* was found: no allocation to show
        return
    local = getattr(res, "local_allocations", None)
    if local is not None:
        console.print(_local_allocation_table(res, local))
        return
    console.print(_factor_marginal_table(res, fg, problem is SolveProblem.regret))


def _factor_graph_summary(problem: SolveProblem, res: CharTimeResult | RegretBoundResult, fg: FactorGraph) -> Table:
    """Value, certificate, sizes, solver and times of a multi-agent solve, one row each."""
    is_regret = problem is SolveProblem.regret
    title = f"{problem.value}: N={fg.n_agents}, factors={fg.n_factors}, |A|={_format_count(fg.n_joint_actions)}"
    summary = Table(title=title, show_header=False)
    summary.add_column(style="bold")
    summary.add_column()
    summary.add_row(_value_label(problem, res), f"{res.value:.8g}")
    summary.add_row("convention", escape(REGRET_CONVENTION if is_regret else CHAR_TIME_CONVENTION))
    if res.lower_bound is not None:
        summary.add_row("certified bracket", escape(f"{res.lower_bound:.8g} <= {_quantity(problem, res)} <= "
                                                    f"{res.value:.8g}"))
        summary.add_row("relative gap", f"{res.gap:.2e}")
    if res.status in ("optimal", "optimal_inaccurate") and res.solver != "none":
        # the conic optimum agrees with the value once converged; before, it is a relaxation's (no bound): left out
        summary.add_row("solver optimum", f"{res.solver_value:.8g}")
    # a* and Delta_min are known unless the time limit ran out before max-sum found them
    summary.add_row("Delta_min", f"{fg.gap_min():.6g}" if np.size(res.best_action) else "not computed in time")
    if res.method != "exact":
        summary.add_row("m", str(res.m))
    if res.extras.get("formulation") == "constraint-generation":
        summary.add_row("constraint generation", f"{res.extras['iterations']} iterations, working set of "
                        f"{res.extras['working_set']} joint actions")
    summary.add_row("n_constraints", str(res.n_constraints))
    summary.add_row("n_variables", str(res.n_variables))
    width = getattr(res, "width", None)
    if width is None:
        width = res.extras.get("width")
    summary.add_row("width", "n/a" if width is None else str(width))
    summary.add_row("status", str(res.status))
    for key in ("stopped", "fallback"):  # why a limit stopped it; the closed-form bracket used instead of a solve
        if key in res.extras:
            summary.add_row(key, escape(str(res.extras[key])))
    summary.add_row("solver", str(res.solver))
    summary.add_row("solve time", f"{res.solve_time:.4f} s")
    compile_time = getattr(res, "compile_time", None)
    if compile_time is not None:
        summary.add_row("compile time", f"{compile_time:.4f} s")
    summary.add_row("best joint action a*", escape(_format_action(res.best_action)))
    return summary


def _local_allocation_table(res: CharTimeResult | RegretBoundResult, local: list[np.ndarray]) -> Table:
    """The mean-field allocation v_i of each agent (the first MAX_ROWS agents)."""
    table = Table(title="local allocations v_i (w_a = prod_i v_i(a_i))")
    table.add_column("agent", justify="right")
    table.add_column("K_i", justify="right")
    table.add_column("v_i(a*_i)", justify="right")
    table.add_column("v_i")
    for i, v in enumerate(local[:MAX_ROWS]):
        table.add_row(str(i), str(v.size), f"{v[int(res.best_action[i])]:.4g}", escape(_format_vector(v)))
    if len(local) > MAX_ROWS:
        table.caption = f"... {len(local) - MAX_ROWS} more agents (all of them in --json)"
    return table


def _factor_marginal_table(res: CharTimeResult | RegretBoundResult, fg: FactorGraph, is_regret: bool) -> Table:
    """Each factor's marginal at a*_e and off it (the first MAX_ROWS factors); regret counts at a*_e are free."""
    title = "factor marginals: counts / log T (entries at a*_e are free)" if is_regret else "factor marginals wbar_e"
    table = Table(title=title)
    table.add_column("factor", justify="right")
    table.add_column("scope")
    if not is_regret:
        table.add_column("wbar_e(a*_e)", justify="right")
    table.add_column("sum off a*_e", justify="right")
    table.add_column("max off a*_e", justify="right")
    for e, marg in enumerate(res.marginals[:MAX_ROWS]):
        marg = np.asarray(marg, dtype=float)
        scope = fg.scopes[e]
        at_star = tuple(int(res.best_action[i]) for i in scope)
        off = marg.copy()
        off[at_star] = 0.0
        row = [str(e), str(scope)]
        if not is_regret:
            row.append(f"{marg[at_star]:.4g}")
        table.add_row(*row, f"{off.sum():.4g}", f"{off.max():.4g}")
    if len(res.marginals) > MAX_ROWS:
        table.caption = f"... {len(res.marginals) - MAX_ROWS} more factors (all of them in --json)"
    return table


