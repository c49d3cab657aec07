"""``optdesign solve`` for the designs on candidates alone: g-, d-, a-, i-, c-, e- and ds-optimal.

The candidates come from ``--arms FILE`` (one model row per line) or from a model formula over factors
(``--formula "~ x1 + x2 + x1:x2 + I(x1**2)" --factor x1=-1:1:3 --factor x2=-1,0,1``:
:func:`optdesign.formulas.candidates`, the design then reported in factor settings). Each criterion takes its own
argument (``--c`` for c, ``--subset`` for Ds, ``--region`` for I), every one linear constraints
(``--constraints FILE``), and D, A and I an exact N-run design (``--runs N``, :func:`optdesign.exact_design`), also
around runs already made (``--fixed FILE``: kept, and N new runs added). With ``--diagnostics`` the result is
followed by its diagnostics (:func:`optdesign.design_diagnostics`: the efficiency under every criterion, each
optimum solved), with ``--power`` by the power of each term's F test at its runs (:func:`optdesign.design_power`:
``--effects``, ``--alpha``, ``--sigma``; an approximate design rounded to ``--power-runs N``), and with
``--plot FILE`` by its fraction-of-design-space plot.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import typer

from ..errors import InvalidInputError, OptDesignError
from ..validation import check_image_path
from .inputs import (
    load_array,
    load_constraints,
    load_fixed,
    parse_effects,
    parse_factors,
    parse_int_range,
    parse_vector,
)
from .problems import EXACT_CRITERIA, STANDALONE_PROBLEMS, SolveProblem
from .solve_report import arm_labels, print_design_table, print_diagnostics, print_power

if TYPE_CHECKING:
    import pandas as pd

    from ..exact_designs import ExactDesignResult
    from ..formulas import CandidateSet
    from ..power import PowerResult
    from ..result import DesignResult


@dataclass(frozen=True)
class PowerOptions:
    """The options of ``--power`` (None when not given)."""

    power: bool = False
    effects: str | None = None
    alpha: float | None = None
    sigma: float | None = None
    runs: int | None = None

    def given(self) -> dict[str, bool]:
        """Option name to whether it was given."""
        return {"--power": self.power, "--effects": self.effects is not None, "--alpha": self.alpha is not None,
                "--sigma": self.sigma is not None, "--power-runs": self.runs is not None}


@dataclass(frozen=True)
class DesignOptions:
    """The options of the designs on candidates (None or empty when not given)."""

    formula: str | None = None
    factors: list[str] = field(default_factory=list)
    c: str | None = None
    subset: str | None = None
    region: Path | None = None
    constraints: Path | None = None
    runs: int | None = None
    plot: Path | None = None
    diagnostics: bool = False
    fixed: Path | None = None
    power: PowerOptions = field(default_factory=PowerOptions)

    def given(self) -> dict[str, bool]:
        """Option name to whether it was given."""
        return {"--formula": self.formula is not None, "--factor": bool(self.factors), "--c": self.c is not None,
                "--subset": self.subset is not None, "--region": self.region is not None,
                "--constraints": self.constraints is not None, "--runs": self.runs is not None,
                "--plot": self.plot is not None, "--diagnostics": self.diagnostics, "--fixed": self.fixed is not None,
                **self.power.given()}


@dataclass(frozen=True)
class Candidates:
    """The candidates X, a label per row for the tables, and the factor settings when a formula made them."""

    X: np.ndarray
    labels: list[str]
    what: str = "x"
    points: pd.DataFrame | None = None
    #: the candidate set of --formula (its column names name the power's terms)
    source: CandidateSet | None = None


def check_design_options(problem: SolveProblem, opts: DesignOptions, *, arms: Path | None, method: str) -> None:
    """Refuse every option that does not apply to ``problem`` and every missing one, before anything is read."""
    given = opts.given()
    if problem not in STANDALONE_PROBLEMS:
        extra = [name for name, on in given.items() if on]
        if extra:
            raise InvalidInputError(f"{extra[0]} only applies to the designs on candidates "
                                    f"({', '.join(p.value for p in STANDALONE_PROBLEMS)}), not to {problem.value}")
        return
    own = {"--c": SolveProblem.c_optimal, "--subset": SolveProblem.ds_optimal, "--region": SolveProblem.i_optimal}
    for name, owner in own.items():
        if given[name] and problem is not owner:
            raise InvalidInputError(f"{name} only applies to {owner.value}, not to {problem.value}")
    if problem is SolveProblem.c_optimal and opts.c is None:
        raise InvalidInputError("c-optimal needs --c: the vector c, as numbers separated by commas or a file")
    if problem is SolveProblem.ds_optimal and opts.subset is None:
        raise InvalidInputError("ds-optimal needs --subset: the parameters of interest, e.g. 0,1")
    if opts.constraints is not None and problem not in STANDALONE_PROBLEMS:
        raise InvalidInputError(f"--constraints applies to {', '.join(p.value for p in STANDALONE_PROBLEMS)}, "
                                f"not to {problem.value}")
    if opts.runs is not None:
        if problem not in EXACT_CRITERIA:
            raise InvalidInputError(f"--runs: exact designs exist for {', '.join(p.value for p in EXACT_CRITERIA)}, "
                                    f"not for {problem.value}")
        if opts.constraints is not None or method != "auto":
            raise InvalidInputError("--runs makes an exact design by exchange, which takes neither --constraints "
                                    "nor --method")
    if opts.fixed is not None and opts.runs is None:
        raise InvalidInputError("--fixed keeps runs already made in an exact design: give --runs N, the number of "
                                "new runs (0 evaluates the fixed runs alone)")
    _check_power_options(opts)
    if opts.plot is not None:
        check_image_path(opts.plot, "--plot")
    if opts.formula is None:
        if opts.factors:
            raise InvalidInputError("--factor gives the factors of --formula, which is missing")
        if arms is None:
            raise InvalidInputError(f"{problem.value} needs --arms FILE (K x d, CSV or .npy, one candidate per row) "
                                    "or --formula with --factor")
    elif arms is not None:
        raise InvalidInputError("give the candidates either as --arms FILE or as --formula with --factor, not both")
    elif not opts.factors:
        raise InvalidInputError("--formula needs the factors: --factor NAME=LOW:HIGH:POINTS or --factor NAME=L1,L2,...")


def _check_power_options(opts: DesignOptions) -> None:
    """--effects, --alpha, --sigma and --power-runs go with --power; the power needs runs (--runs or --power-runs,
    not both); --alpha in (0, 1) and --sigma positive."""
    power = opts.power
    extra = [name for name, on in power.given().items() if on and name != "--power"]
    if not power.power:
        if extra:
            raise InvalidInputError(f"{extra[0]} applies to the power of the design's F tests: add --power")
        return
    if opts.runs is None and power.runs is None:
        raise InvalidInputError("--power needs the design's runs: --runs N (an exact design), or --power-runs N to "
                                "round the approximate design to N runs")
    if opts.runs is not None and power.runs is not None:
        raise InvalidInputError("--power-runs rounds an approximate design; --runs already gives the exact design's "
                                "runs: drop --power-runs")
    if power.alpha is not None and not 0 < power.alpha < 1:
        raise InvalidInputError(f"--alpha must be strictly between 0 and 1, got {power.alpha!r}")
    if power.sigma is not None and not (np.isfinite(power.sigma) and power.sigma > 0):
        raise InvalidInputError(f"--sigma must be a positive number, got {power.sigma!r}")
    if power.runs is not None and power.runs < 1:
        raise InvalidInputError(f"--power-runs must be a positive integer, got {power.runs}")


def load_candidates(arms: Path | None, opts: DesignOptions) -> Candidates:
    """The candidates from --arms, or the model matrix of --formula on the grid of the --factor levels."""
    if opts.formula is None:
        X = load_array(cast(Path, arms), "arms", ndim=2)
        return Candidates(X, arm_labels(X))
    from ..formulas import candidates

    source = candidates(opts.formula, parse_factors(opts.factors))
    X, points, _ = source
    labels = [", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items())
              for row in points.to_dict("records")]
    return Candidates(X, labels, "factor settings", points, source)


def power_effects(cand: Candidates, opts: DesignOptions) -> float | np.ndarray | None:
    """The anticipated coefficients of --power, checked against the candidates' columns: --effects, or by default
    skpr's effect size 2 (coefficients +-1, alternating within a --formula term); None without --power."""
    if not opts.power.power:
        return None
    from ..power import anticipated_coefficients

    terms = opts.formula if cand.source is not None else None
    if opts.power.effects is None:
        return anticipated_coefficients(cand.source or cand.X, 2.0, terms=terms)
    effects = parse_effects(opts.power.effects)
    p = cand.X.shape[1]
    if isinstance(effects, np.ndarray) and effects.size != p:
        columns = f" ({', '.join(cand.source.columns)})" if cand.source is not None else ""
        raise InvalidInputError(f"--effects: {effects.size} coefficients for the {p} columns of the model{columns}; "
                                "give one per column, or one number for every coefficient but the intercept")
    return effects


def criterion_arguments(problem: SolveProblem, opts: DesignOptions, cand: Candidates) -> dict[str, Any]:
    """The criterion's own argument: c (c-optimal), the subset (ds-optimal) or the region's points (i-optimal)."""
    if problem is SolveProblem.c_optimal:
        return {"c": parse_vector(cast(str, opts.c), "c")}
    if problem is SolveProblem.ds_optimal:
        return {"subset": parse_int_range(cast(str, opts.subset), "subset", 0)}
    if problem is not SolveProblem.i_optimal or opts.region is None:
        return {}
    if cand.points is None:
        return {"region": load_array(opts.region, "region", ndim=2)}
    import pandas as pd

    from ..formulas import candidates

    names = list(cand.points.columns)
    Z = load_array(opts.region, "region", ndim=2)
    if Z.shape[1] != len(names):
        raise InvalidInputError(f"--region: with --formula each row is a setting of the factors {', '.join(names)}, "
                                f"got {Z.shape[1]} columns")
    return {"region": candidates(cast(str, opts.formula), pd.DataFrame(Z, columns=names)).X}


def solve_design(problem: SolveProblem, cand: Candidates, kw: dict[str, Any], opts: DesignOptions, *,
                 solver: str | None, method: str, tol: float,
                 time_limit: float | None) -> DesignResult | ExactDesignResult:
    """The design: exact (--runs) through :func:`optdesign.exact_design`, else the criterion's design function."""
    from .. import linear

    X = cand.X
    if opts.runs is not None:
        from ..exact_designs import exact_design

        Z = kw.get("region")
        moments = None if Z is None else Z.T @ Z / Z.shape[0]
        fixed = None if opts.fixed is None else load_fixed(opts.fixed, X, cand.points)
        return exact_design(X, opts.runs, EXACT_CRITERIA[problem], moments=moments,  # type: ignore[arg-type]
                            time_limit=time_limit, tol=tol, solver=solver, fixed=fixed)
    options: dict[str, Any] = {"solver": solver, "method": method, "tol": tol, "time_limit": time_limit}
    if opts.constraints is not None:
        options["constraints"] = load_constraints(opts.constraints, X.shape[0])
    design: Callable[..., DesignResult] = getattr(linear, problem.value.replace("-", "_"))
    return design(X, **kw, **options)


def run_design(problem: SolveProblem, arms: Path | None, opts: DesignOptions, *, solver: str | None, method: str,
               tol: float, time_limit: float | None, as_json: bool,
               working: Callable[[str], AbstractContextManager[None]]) -> DesignResult | ExactDesignResult:
    """Read the candidates, solve, and print the design with its diagnostics (a table, or JSON)."""
    cand = load_candidates(arms, opts)
    kw = criterion_arguments(problem, opts, cand)
    effects = power_effects(cand, opts)
    kind = f"an exact {opts.runs}-run {problem.value}" if opts.runs is not None else problem.value
    if opts.fixed is not None:
        kind = f"{opts.runs} runs added to the fixed ones, {problem.value}"
    with working(f"solving {kind} on {cand.X.shape[0]:,} candidates in R^{cand.X.shape[1]}"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the printed status and gap say it
        res = solve_design(problem, cand, kw, opts, solver=solver, method=method, tol=tol, time_limit=time_limit)
        diag, note = _diagnostics(cand.X, res, kw, opts, solver)
        power, power_note = _power(cand, res, effects, opts)
    if opts.plot is not None:
        from ..linear import fds_plot

        fds_plot(cand.X, {problem.value: res}, region=kw.get("region"), path=opts.plot, title=kind)
    if as_json:
        out = {"problem": problem.value, **res.to_dict()}
        if cand.points is not None:
            from ..formulas import design_table

            out["design_table"] = design_table(cand.points, res).to_dict("records")
        if diag is not None:
            out["diagnostics"] = diag.to_dict()
        if power is not None:
            out["power"] = power.to_dict()
        typer.echo(json.dumps(out, indent=2))
    else:
        print_design_table(problem, res, cand.labels, cand.what)
        if diag is not None:
            print_diagnostics(diag)
        if power is not None:
            print_power(power)
    for line in (note, power_note):
        if line:
            typer.echo(line, err=True)
    return res


def _diagnostics(X: np.ndarray, res: Any, kw: dict[str, Any], opts: DesignOptions,
                 solver: str | None) -> tuple[Any, str | None]:
    """The design's diagnostics, or None and why they were skipped (the design itself stands)."""
    if not opts.diagnostics:
        return None, None
    from ..linear import design_diagnostics

    try:
        return design_diagnostics(X, res, solver=solver, **kw), None
    except OptDesignError as exc:
        return None, f"diagnostics skipped: {' '.join(str(exc).split())}"


def _power(cand: Candidates, res: Any, effects: float | np.ndarray | None,
           opts: DesignOptions) -> tuple[PowerResult | None, str | None]:
    """The power of each term's F test at the design's runs, or None and why it was skipped (the design stands)."""
    if effects is None:
        return None, None
    from ..power import design_power

    power = opts.power
    try:
        return design_power(cand.source or cand.X, res, effects, alpha=0.05 if power.alpha is None else power.alpha,
                            sigma=1.0 if power.sigma is None else power.sigma,
                            terms=opts.formula if cand.source is not None else None, runs=power.runs), None
    except OptDesignError as exc:
        return None, f"power skipped: {' '.join(str(exc).split())}"
