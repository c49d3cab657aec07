"""A study file (TOML) -> the validated list of runs it stands for.

A study is a grid: instance families x their parameter sweeps x algorithms x replicates (seeds)::

    [study]
    name = "soare-fig4"
    seed = 2014              # root entropy of every run's numpy SeedSequence
    runs = 100               # replicates per (instance, algorithm) cell
    delta = 0.05             # one number or a list (fixed confidence; an algorithm that samples differently
                             # for each delta gets one run per delta, the others one run for all) ...
    # budget = 5000          # ... or the budget T of thresholding algorithms
    # mode = "fixed-budget"  # ... or fixed-budget mode: no delta, stop or max_samples, but
    # budgets = [250, 500]   # the budgets at which every run's recommendation is read (see below)
    max_samples = 1e9        # per-run cap (a run that hits it stops with stopped_by = "budget")
    # stop = "glr"           # default stopping rule of every [[algorithms]] block (see below)
    # compiled = false       # every run on the reference path (default true: runs that qualify take numba's loops)
    x = "d"                  # plot axis: an instance parameter; y = "samples" | "rounds" | "error"
    # series = "graph"       # optional: an instance parameter drawn as separate lines in each panel

    [[instances]]            # one block per family; a list value is a sweep, several lists a product
    family = "soare"
    d = [2, 3, 4, 5]
    omega = 0.01

    [[algorithms]]           # options as in the CLI's NAME:key=value; "label" names the curve
    name = "xy-adaptive"
    alpha = 0.1

    [[algorithms]]           # the same sampling under the GLR stop (as --stop on the command line)
    name = "xy-adaptive"
    label = "xy-adaptive + GLR"
    stop = "glr:threshold=practical"

    [quick]                  # the --quick preset: overrides of [study] keys, of instance parameters
    runs = 2                 # ([quick.instances], applied to every block that has the key) and a
    algorithms = ["xy-adaptive"]   # subset of algorithm labels

``stop`` (a block's key, or a default in ``[study]`` for the blocks without one) is the stopping rule of a
fixed-confidence algorithm on K-armed or linear instances: ``"own"`` (the algorithm's own rule, the default) or
``"glr[:threshold=NAME,growth=G]"`` (the GLR stop; thresholds ``practical``, ``theory`` for linear instances, ``kk21``
for K-armed ones, or ``package.module:Class``); see :mod:`bandits.pure_exploration.with_stop`. ``name`` may also be a
``package.module:Class`` path (a Sampler or Algorithm subclass; the module must import in the workers too) or a name
from the ``bandits.samplers`` entry points (:mod:`bandits.plugins`).

Fixed-budget mode (``mode = "fixed-budget"``, ``budgets`` increasing integers): every run's recommendation is read at
every budget T (:mod:`bandits.fixed_budget`; the studies guide's "Fixed-budget studies" has the rules and the
summary); ``delta``, ``stop``, ``max_samples`` and a sampler's ``threshold`` are refused there, ``budgets`` elsewhere.

An instance parameter ``seed = "run"`` draws a new instance per replicate (seed = replicate index), as papers that
redraw the graph or the means for every trial do.

Seeds: run r of instance text I gets ``SeedSequence(seed, spawn_key=(crc32(I), r))`` whatever the backend, job count
or order; every algorithm sees the same noise stream on the same (instance, r).
"""

from __future__ import annotations

import hashlib
import math
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, as the tomli package
    import tomli as tomllib

from optdesign.errors import InstanceTooLargeError, InvalidInputError
from optdesign.validation import check_input_file

from ..experiment import Experiment
from ..instances import instance_kind, parse_instance
from ..kinds import kind_of
from ..registry import make_algorithm
from ..run import DEFAULT_MAX_SAMPLES

if TYPE_CHECKING:
    from ..fixed_budget import BudgetRule
    from ..pure_exploration import PureExploration
    from ..thresholding import ThresholdingAlgorithm
from .document import _blocks, _expand, _integer, _label, _mode, _no_unknown, _stop, _study_name, _table, _text

__all__ = ["RunSpec", "Study", "load_study", "parse_study"]

#: the largest study file read (a study is a few dozen lines of TOML)
MAX_STUDY_BYTES = 16 * 2**20
STUDY_KEYS = {"name", "description", "seed", "runs", "delta", "budget", "max_samples", "free_warmup", "x", "series",
              "y", "log_x", "log_y", "stop", "mode", "budgets", "compiled"}
QUICK_KEYS = STUDY_KEYS - {"name", "description", "seed"} | {"instances", "algorithms"}
Y_COLUMNS = ("samples", "rounds", "error")
#: a study lists all its runs up front (about RUN_SPEC_BYTES each, measured): more than this many are refused
MAX_STUDY_RUNS = 1_000_000
RUN_SPEC_BYTES = 400


@dataclass(frozen=True)
class RunSpec:
    """One run of a study: what ``bandits.studies.worker.execute_run`` needs, picklable for workers."""

    #: the concrete instance text (``family:key=value,...``, a ``seed = "run"`` replaced by the replicate)
    instance: str
    #: the algorithm text (``name:key=value,...``)
    algorithm: str
    #: the algorithm's label in tables and legends
    label: str
    #: the replicate index r
    replicate: int
    #: the instance family
    family: str
    #: the instance parameters as written in the study (``seed = "run"`` kept)
    params: dict[str, Any]
    #: confidence levels (fixed confidence; empty for a budget)
    deltas: tuple[float, ...]
    #: the budget T of a thresholding run, or None
    budget: int | None
    #: the study's root seed
    entropy: int
    #: (crc32 of the instance text, replicate): the run's SeedSequence spawn key
    spawn_key: tuple[int, ...]
    #: the per-run sample cap
    max_samples: int
    #: give the warm-up pulls free before t = 0 (thresholding runs)
    free_warmup: bool
    #: the stopping rule (None or ``"own"``: the algorithm's; ``"glr[:...]"``: the GLR stop)
    stop: str | None = None
    #: one run per delta: the algorithm samples differently for each delta of the study
    per_delta: bool = False
    #: the budgets of a fixed-budget study (a run's recommendation read at each), or empty
    budgets: tuple[int, ...] = ()
    #: a run that qualifies takes numba's compiled loop (False: the reference path)
    compiled: bool = True

    @property
    def cell(self) -> str:
        """The (family, parameters) cell as written in the study (``seed=run`` kept symbolic)."""
        return _text(self.family, self.params)

    @property
    def key(self) -> str:
        """Identifies the run in the results store (resume skips stored keys)."""
        key = f"{self.instance}|{self.label}|{self.replicate}"
        return f"{key}|delta={self.deltas[0]:g}" if self.per_delta else key

    def experiment(self) -> Experiment:
        """The run as an :class:`~bandits.experiment.Experiment`, seeded by ``SeedSequence(entropy, spawn_key)``.

        Returns
        -------
        Experiment
            Ready to ``check()`` or ``execute()``.
        """
        seed = np.random.SeedSequence(self.entropy, spawn_key=self.spawn_key)
        return Experiment(self.algorithm, self.instance, deltas=self.deltas, budget=self.budget, seed=seed,
                          max_samples=self.max_samples, free_warmup=self.free_warmup, stop=self.stop,
                          budgets=self.budgets, compiled=self.compiled)


@dataclass(frozen=True)
class Study:
    """A parsed, validated study; ``runs`` lists every run in a fixed order."""

    #: the study's name (default: the file's stem)
    name: str
    #: free text from ``[study]``
    description: str
    #: the study file (``"<memory>"`` for a parsed document)
    path: str
    #: the file's SHA-256, for provenance and resume checks
    sha256: str
    #: whether the ``[quick]`` preset was applied
    quick: bool
    #: the root entropy of every run's SeedSequence
    seed: int
    #: replicates per (instance, algorithm) cell
    replicates: int
    #: the plot axis: an instance parameter, or None
    x: str | None
    #: an instance parameter drawn as separate lines (e.g. the graph type), or None
    series: str | None
    #: the plotted column: ``"samples"``, ``"rounds"`` or ``"error"``
    y: str
    #: log scale of the x axis
    log_x: bool
    #: log scale of the y axis
    log_y: bool
    #: the algorithms' labels in the file's order (tables and legends follow it)
    labels: tuple[str, ...]
    #: every run, cells x algorithms x replicates
    runs: list[RunSpec] = field(repr=False)


def load_study(path: str | Path, *, quick: bool = False, runs: int | None = None) -> Study:
    """Parse and validate a study file (every error is raised before any run starts).

    Parameters
    ----------
    path : str or Path
        The study TOML: ``[study]`` (name, seed, runs, delta, x, y), ``[[instances]]`` and ``[[algorithms]]``
        (lists expand to sweeps), and an optional ``[quick]`` preset.
    quick : bool
        Apply the ``[quick]`` preset (fewer runs and sizes: the smoke test).
    runs : int, optional
        Override the number of runs per cell.

    Returns
    -------
    Study
        Every run (instance, algorithm, seed) with its key, and the file's hash for provenance.

    Raises
    ------
    InvalidInputError
        An unreadable or invalid TOML, not a regular file, unknown keys or names (the message lists the valid ones),
        bad values, or more runs than MAX_STUDY_RUNS.
    InstanceTooLargeError
        A study file above MAX_STUDY_BYTES (a study is a few dozen lines).
    """
    path = Path(path)
    if path.exists():  # a missing file keeps the message below
        check_input_file(path, "study file", limit=MAX_STUDY_BYTES)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InvalidInputError(f"cannot read study file {path}: {exc.strerror}") from None
    try:
        doc = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"{path}: not valid TOML: {exc}") from None
    return parse_study(doc, path=str(path), sha256=hashlib.sha256(raw).hexdigest(), quick=quick, runs=runs)


def parse_study(doc: dict[str, Any], *, path: str = "<memory>", sha256: str = "", quick: bool = False,
                runs: int | None = None) -> Study:
    """Validate a study document already read from TOML (what :func:`load_study` does after reading).

    Parameters
    ----------
    doc : dict
        The TOML document: ``study``, ``instances``, ``algorithms`` and ``quick`` tables.
    path : str
        The file it came from, for messages and provenance.
    sha256 : str
        The file's hash, stored for provenance and resume checks.
    quick, runs
        As in :func:`load_study`.

    Returns
    -------
    Study
        Every run with its seed.

    Raises
    ------
    InvalidInputError
        An invalid document (see :func:`load_study`).
    InstanceTooLargeError
        More than MAX_STUDY_RUNS runs, or an instance above the size limits.
    """
    where = path
    study, instances, algorithms = _tables_of(doc, where, quick)
    seed = _integer(study.get("seed", 0), "seed", where, 0)
    replicates = _integer(runs if runs is not None else study.get("runs", 10), "runs", where, 1)
    max_samples = _integer(study.get("max_samples", DEFAULT_MAX_SAMPLES), "max_samples", where, 1)
    deltas, budget, budgets = _mode(study, where)
    y = study.get("y", "samples" if deltas else "error")
    if y not in Y_COLUMNS:
        raise InvalidInputError(f"{where}: y must be one of {', '.join(Y_COLUMNS)}; got {y!r}")
    labels = [_label(a) for a in algorithms]
    if len(set(labels)) != len(labels):
        raise InvalidInputError(f"{where}: two [[algorithms]] share a label; give each a distinct 'label'")
    _check_run_count(instances, len(algorithms), replicates, where)
    cells = [(family, params) for block in instances for family, params in _expand(block, where)]
    flags = {f: study.get(f, f in ("compiled", "log_y")) for f in ("free_warmup", "compiled", "log_x", "log_y")}
    for flag, value in flags.items():
        if not isinstance(value, bool):
            raise InvalidInputError(f"{where}: {flag} must be true or false, got {value!r}")
    log_x, log_y = flags.pop("log_x"), flags.pop("log_y")
    x, series = study.get("x"), study.get("series")
    for key, what in ((x, "plot axis x"), (series, "plot series")):
        if key is not None and not isinstance(key, str):
            raise InvalidInputError(f"{where}: {what} must name an instance parameter (a string), got {key!r}")
        if key is not None and not all(key in params for _, params in cells):
            raise InvalidInputError(f"{where}: {what} = {key!r} is not a parameter of every instance")
    common = {"deltas": deltas, "budget": budget, "budgets": budgets, "entropy": seed, "max_samples": max_samples,
              "stop": _stop(study, "[study]", where), **flags}
    specs = _run_specs(cells, algorithms, labels, replicates, common, where)
    return Study(name=_study_name(study.get("name", "study" if path == "<memory>" else Path(path).stem), where),
                 description=str(study.get("description", "")),
                 path=path, sha256=sha256, quick=quick, seed=seed, replicates=replicates, x=x, series=series, y=y,
                 log_x=log_x, log_y=log_y, labels=tuple(labels),
                 runs=specs)


def _tables_of(doc: dict[str, Any], where: str,
               quick: bool) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """The checked [study] table, [[instances]] and [[algorithms]] blocks, with the [quick] overrides if asked."""
    if not isinstance(doc, dict):
        raise InvalidInputError(f"{where}: a study must be a TOML document (a table), got {type(doc).__name__}")
    unknown = set(doc) - {"study", "instances", "algorithms", "quick"}
    if unknown:
        raise InvalidInputError(f"{where}: unknown top-level table(s) {sorted(unknown)}; expected [study], "
                                "[[instances]], [[algorithms]], [quick]")
    study = _table(doc.get("study", {}), "[study]", where)
    _no_unknown(study, STUDY_KEYS, "[study]", where)
    instances = _blocks(doc.get("instances"), "instances", where)
    algorithms = _blocks(doc.get("algorithms"), "algorithms", where)
    if quick:
        q = _table(doc.get("quick", {}), "[quick]", where)
        _no_unknown(q, QUICK_KEYS, "[quick]", where)
        study = {**study, **{k: v for k, v in q.items() if k in STUDY_KEYS}}
        overrides = _table(q.get("instances", {}), "[quick.instances]", where)
        instances = [{**b, **{k: v for k, v in overrides.items() if k in b}} for b in instances]
        if "algorithms" in q:
            keep = q["algorithms"]
            if not isinstance(keep, list) or not all(isinstance(k, str) for k in keep):
                raise InvalidInputError(f"{where}: [quick] algorithms must be a list of algorithm labels, got {keep!r}")
            labels = [_label(a) for a in algorithms]
            missing = [k for k in keep if k not in labels]
            if missing:
                raise InvalidInputError(f"{where}: [quick] algorithms {missing} are not labels of [[algorithms]]")
            algorithms = [a for a, lab in zip(algorithms, labels, strict=True) if lab in keep]
    return study, instances, algorithms


def _run_specs(cells: list[tuple[str, dict[str, Any]]], algorithms: list[dict[str, Any]], labels: list[str],
               replicates: int, common: dict[str, Any], where: str) -> list[RunSpec]:
    """Every run of the grid (cells x algorithms x replicates) with its seed and the ``common`` RunSpec fields; the
    first replicate of each cell is validated (its instance built once)."""
    specs: list[RunSpec] = []
    built: set[str] = set()
    for family, params in cells:
        for algo, label in zip(algorithms, labels, strict=True):
            algo_text = _text(algo["name"], {k: v for k, v in algo.items() if k not in ("name", "label", "stop")})
            stop = _stop(algo, label, where) if "stop" in algo else common["stop"]
            per_delta = _per_delta(algo_text, stop, common["deltas"], f"{where}: {label}")
            groups = [(d,) for d in common["deltas"]] if per_delta else [common["deltas"]]
            for r in range(replicates):
                concrete = {k: (r if v == "run" else v) for k, v in params.items()}
                instance = _text(family, concrete)
                for deltas in groups:
                    spec = RunSpec(instance=instance, algorithm=algo_text, label=label, replicate=r, family=family,
                                   params=params, spawn_key=(zlib.crc32(instance.encode()), r),
                                   **{**common, "stop": stop, "deltas": deltas, "per_delta": per_delta})
                    if r == 0:
                        _validate(spec, where, build=instance not in built)
                        built.add(instance)
                    specs.append(spec)
    if not specs:
        raise InvalidInputError(f"{where}: the study has no runs (no instances or no algorithms)")
    return specs


def _per_delta(algorithm: str, stop: str | None, deltas: tuple[float, ...], where: str) -> bool:
    """Whether the algorithm needs one run per delta: several deltas, and it samples differently for each (one
    trajectory of a delta-independent algorithm gives the stopping time of every delta)."""
    if len(deltas) < 2:
        return False
    try:
        algo = make_algorithm(algorithm, stop=stop)
    except (InvalidInputError, InstanceTooLargeError) as exc:
        raise type(exc)(f"{where}: {exc}") from None
    return not bool(getattr(algo, "delta_independent", True))


def _check_run_count(instances: list[dict[str, Any]], n_algorithms: int, replicates: int, where: str) -> None:
    """Refuse, before listing any run, a study of more than MAX_STUDY_RUNS runs (cells x algorithms x replicates;
    a cell count is the product of its block's sweep lengths)."""
    cells = sum(math.prod(len(v) if isinstance(v, list) else 1 for k, v in b.items() if k != "family")
                for b in instances)
    total = cells * n_algorithms * replicates
    if total > MAX_STUDY_RUNS:
        raise InstanceTooLargeError(
            f"{where}: the study has {total:,} runs ({cells:,} instance cells x {n_algorithms} algorithms x "
            f"{replicates:,} replicates), above the limit of {MAX_STUDY_RUNS:,} (every run is listed in memory, "
            f"about {RUN_SPEC_BYTES} bytes each, before the first starts); lower runs or split the sweep into "
            "several study files")


def _validate(spec: RunSpec, where: str, build: bool) -> None:
    """Check a cell (options, kinds, delta or budgets: the rule's smallest, a warm-up); ``build`` also builds it."""
    try:
        algorithm = spec.experiment().check()
        if build or spec.budgets:
            env = parse_instance(spec.instance)
        if spec.budgets and kind_of(instance_kind(spec.instance)).budgeted:  # a thresholding rule is anytime
            warm = 0 if spec.free_warmup else cast("ThresholdingAlgorithm", algorithm).warmup_pulls(env.n_arms)
            if warm > spec.budgets[0]:
                raise InvalidInputError(f"budget T = {spec.budgets[0]} is below the {warm} pulls of its warm-up "
                                        "(free_warmup = true gives them before t = 0)")
        elif spec.budgets:
            from ..fixed_budget import check_run_budgets

            check_run_budgets(cast("PureExploration | BudgetRule", algorithm), env, spec.budgets)
    except (InvalidInputError, InstanceTooLargeError) as exc:
        raise type(exc)(f"{where}: {spec.label} on {spec.instance}: {exc}") from None
