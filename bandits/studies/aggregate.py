"""Study results -> pandas tables: one row per (cell, algorithm, delta) or per (cell, algorithm, budget).

Fixed confidence: runs, failures, runs cut by the sample cap (``capped``), mean and standard error of the
samples, their 10/50/90 % quantiles, mean rounds, the time per sample (``us_per_sample``: total wall time over
total samples, in microseconds), the error rate with its Clopper–Pearson 95 % interval, the characteristic
time c (:mod:`bandits.studies.bounds`), the lower bound c kl(delta, 1 - delta) with the ratio of the mean to
it (``ratio``, in c's unit: samples, or rounds for factored instances), the practical lower bound t* solving
t = c log((1 + log t) / delta) with the ratio to it (``ratio_practical``), and a warning where the error rate
is significantly above delta (one-sided binomial test, 5 %); ``heavy_tail`` where the mean stopping time is at least
:data:`HEAVY_TAIL` times the median over 10 runs or more (a few runs that follow a wrong answer for long, as EB-TC
with beta = 1/2 on Bernoulli arms).
Fixed budget (graph thresholding): mean and s.e. of E(T), the loss rate P(L_T = 1) with its interval, mean |S_hat|,
time per sample. Fixed-budget mode (records with ``mode = "fixed-budget"``, one per run and budget T): the error rate
P(error) with its Clopper–Pearson 95 % interval, the mean simple regret with its standard error (where an answer is
one arm or item), the mean E(T) of graph-thresholding runs, the mean pulls made by T and the time per sample.

Tables are saved as ``summary.csv`` (provenance in leading ``#`` lines: ``pandas.read_csv(comment="#")``)
and ``summary.parquet`` (provenance in the file's metadata) when pyarrow is installed; ``runs.csv`` holds
one row per record.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from .bounds import bound_key, characteristic_times, kl_delta, practical_bound
from .store import read_entries, read_meta

__all__ = ["HEAVY_TAIL", "error_curves", "records_frame", "summarize", "write_tables"]

WARNING = "error rate above delta"
SIGNIFICANCE = 0.05
#: a cell's stopping times have a heavy tail when their mean is at least this multiple of their median
HEAVY_TAIL = 1.5


def records_frame(out: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per result record of the finished runs, one row per failed run).

    Parameters
    ----------
    out : str or Path
        The results directory to read (its ``runs.jsonl``).

    Returns
    -------
    records : pandas.DataFrame
        One row per record: the run's cell, family, label, instance, replicate and seconds, its instance
        parameters as ``param_<name>`` columns, and the record's fields (samples, correct, delta, T, error, ...).
    failures : pandas.DataFrame
        One row per failed run: cell, family, label, instance, replicate, run_seconds and the error.
    """
    rows, failures = [], []
    for entry in read_entries(out):
        head = {"cell": entry["cell"], "family": entry.get("family"), "label": entry["label"],
                "instance": entry["instance"], "replicate": entry["replicate"], "run_seconds": entry["seconds"]}
        if entry["status"] != "ok":
            failures.append({**head, "error": entry.get("error", "")})
            continue
        params = {f"param_{k}": v for k, v in entry.get("params", {}).items()}
        for record in entry["records"]:
            flat = {k: v for k, v in record.items() if k not in ("config", "error_curve", "algorithm", "instance")}
            question = (record.get("config") or {}).get("problem")  # another question asked of the instance
            rows.append({**head, **params, **flat, "bound_key": bound_key(entry["instance"], question)})
    frame = pd.DataFrame(rows)
    if not frame.empty:
        frame = frame.sort_values(["cell", "label", "replicate"], kind="stable").reset_index(drop=True)
    return frame, pd.DataFrame(failures, columns=["cell", "family", "label", "instance", "replicate",
                                                  "run_seconds", "error"])


def summarize(out: str | Path) -> pd.DataFrame:
    """The summary table of a results directory (see the module docstring).

    Parameters
    ----------
    out : str or Path
        The results directory; its ``bounds.json`` caches the characteristic times (fixed confidence).

    Returns
    -------
    pandas.DataFrame
        One row per (cell, algorithm, delta) or (cell, algorithm, T), in the study's algorithm order; empty
        when no run has finished.
    """
    frame, failures = records_frame(out)
    if frame.empty:
        return pd.DataFrame()
    fail_counts = failures.groupby(["cell", "label"]).size() if not failures.empty else pd.Series(dtype=int)
    listed = read_meta(out)["study"].get("algorithms", [])
    order = {label: i for i, label in enumerate(dict.fromkeys([*listed, *frame["label"]]))}
    param_cols = [c for c in frame.columns if c.startswith("param_")]
    budgeted = "T" in frame.columns and frame["T"].notna().any()
    fixed = "mode" in frame.columns and bool((frame["mode"] == "fixed-budget").any())
    bounds = {} if budgeted else characteristic_times(sorted(set(frame["bound_key"])), out)
    rows = []
    keys = ["cell", "label", "T" if budgeted else "delta"]
    for (cell, label, level), group in frame.groupby(keys, sort=False):
        base = {"cell": cell, "family": group["family"].iloc[0], "algorithm": label,
                **{c: group[c].iloc[0] for c in param_cols},
                keys[2]: level, "runs": len(group), "failed": int(fail_counts.get((cell, label), 0))}
        rows.append({**base, **(_fixed_budget_row(group) if fixed else _budget_row(group) if budgeted
                                else _confidence_row(group, level, bounds))})
    table = pd.DataFrame(rows)
    table["_order"] = table["algorithm"].map(order)
    return table.sort_values(["cell", keys[2], "_order"], kind="stable").drop(columns="_order").reset_index(drop=True)


def _error_rate(group: pd.DataFrame) -> dict[str, Any]:
    """The wrong recommendations of a group of records, their rate and its Clopper–Pearson 95 % interval."""
    n = len(group)
    errors = int((~group["correct"].astype(bool)).sum())
    ci = binomtest(errors, n).proportion_ci(0.95, method="exact")
    return {"errors": errors, "error_rate": errors / n, "error_ci_low": ci.low, "error_ci_high": ci.high}


def _fixed_budget_row(group: pd.DataFrame) -> dict[str, Any]:
    """P(error) at one budget with its interval, the mean simple regret (NaN where answers have no value), the mean
    fraction of misclassified arms E(T) of a graph-thresholding run (NaN otherwise), the mean pulls made and the time
    per sample."""
    regret = pd.to_numeric(group["simple_regret"], errors="coerce").dropna()
    misclassified = pd.to_numeric(group["error"], errors="coerce").dropna() if "error" in group else regret[:0]
    return {**_error_rate(group), "mean_regret": regret.mean() if regret.size else np.nan,
            "se_regret": regret.sem(),
            "mean_error": misclassified.mean() if misclassified.size else np.nan,
            "mean_samples": group["samples"].mean(), "us_per_sample": _us_per_sample(group)}


def _confidence_row(group: pd.DataFrame, delta: float, bounds: dict[str, dict[str, Any]]) -> dict[str, Any]:
    samples = group["samples"].to_numpy(float)
    n = samples.size
    rate = _error_rate(group)
    errors = rate["errors"]
    above = binomtest(errors, n, delta, alternative="greater").pvalue < SIGNIFICANCE
    c = np.mean([bounds[i]["value"] for i in group["bound_key"]])
    kinds = {bounds[i]["kind"] for i in group["bound_key"]}
    unit = bounds[group["bound_key"].iloc[0]]["unit"]
    lower = c * kl_delta(delta)
    practical = np.mean([practical_bound(bounds[i]["value"], delta) for i in group["bound_key"]])
    mean_unit = group[unit].mean()
    return {"mean": samples.mean(), "se": group["samples"].astype(float).sem(),
            "q10": np.quantile(samples, 0.1), "median": np.median(samples), "q90": np.quantile(samples, 0.9),
            "mean_rounds": group["rounds"].mean(),
            "se_rounds": group["rounds"].sem(),
            "us_per_sample": _us_per_sample(group), "capped": int((group["stopped_by"] == "budget").sum()),
            **rate, "bound_kind": "/".join(sorted(kinds)), "c": c, "lower_bound": lower,
            "ratio": mean_unit / lower if lower > 0 else np.nan, "practical_bound": practical,
            "ratio_practical": mean_unit / practical if practical > 0 else np.nan,
            "heavy_tail": bool(n >= 10 and samples.mean() >= HEAVY_TAIL * np.median(samples)),
            "warning": WARNING if above else ""}


def _budget_row(group: pd.DataFrame) -> dict[str, Any]:
    err = group["error"].to_numpy(float)
    n = err.size
    losses = int(group["loss"].astype(bool).sum())
    ci = binomtest(losses, n).proportion_ci(0.95, method="exact")
    return {"mean_error": err.mean(), "se_error": group["error"].astype(float).sem(),
            "median_error": np.median(err), "loss_rate": losses / n, "loss_ci_low": ci.low, "loss_ci_high": ci.high,
            "mean_superlevel": group["superlevel_size"].mean(), "mean_samples": group["samples"].mean(),
            "us_per_sample": _us_per_sample(group)}


def _us_per_sample(group: pd.DataFrame) -> float:
    """Microseconds of wall time per sample: sum of the records' wall times (else the runs') / sum of samples."""
    seconds = group["wall_time"] if "wall_time" in group else group["run_seconds"]
    total = group["samples"].sum()
    return float(1e6 * seconds.sum() / total) if total > 0 else np.nan


def error_curves(out: str | Path) -> pd.DataFrame:
    """Mean E(t) over the runs, per (cell, algorithm, t), from the thresholding records.

    Parameters
    ----------
    out : str or Path
        The results directory of a fixed-budget study.

    Returns
    -------
    pandas.DataFrame
        Columns cell, algorithm, t, mean_error, se_error (standard error) and runs; empty without curves.
    """
    rows = []
    for entry in read_entries(out):
        if entry["status"] != "ok":
            continue
        for record in entry["records"]:
            for t, e in record.get("error_curve", []):
                rows.append({"cell": entry["cell"], "algorithm": entry["label"], "t": t, "error": e})
    if not rows:
        return pd.DataFrame(columns=["cell", "algorithm", "t", "mean_error", "se_error", "runs"])
    frame = pd.DataFrame(rows)
    grouped = frame.groupby(["cell", "algorithm", "t"], sort=False)["error"]
    return grouped.agg(mean_error="mean", se_error="sem", runs="count").reset_index()


def write_tables(out: str | Path) -> pd.DataFrame:
    """Write summary.csv (+ summary.parquet when pyarrow is installed) and runs.csv; return the summary.

    failures.csv is written too when some run failed. Existing tables are replaced.

    Parameters
    ----------
    out : str or Path
        The results directory, where the tables are written.

    Returns
    -------
    pandas.DataFrame
        The summary (:func:`summarize`).

    Raises
    ------
    InvalidInputError
        ``out`` holds no study results (no ``meta.json``).
    """
    out = Path(out)
    meta = read_meta(out)
    summary = summarize(out)
    frame, failures = records_frame(out)
    header = provenance_lines(meta)
    with (out / "summary.csv").open("w", encoding="utf-8") as fh:
        fh.writelines(f"# {line}\n" for line in header)
        summary.to_csv(fh, index=False)
    frame.to_csv(out / "runs.csv", index=False)
    if not failures.empty:
        failures.to_csv(out / "failures.csv", index=False)
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return summary
    mixed = [c for c in summary.columns if summary[c].dtype == object]  # e.g. omega = 0.1 and "pi/2"
    table = pa.Table.from_pandas(summary.astype({c: str for c in mixed}), preserve_index=False)
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), b"provenance": json.dumps(meta).encode()})
    pq.write_table(table, out / "summary.parquet")
    return summary


def provenance_lines(meta: dict[str, Any]) -> list[str]:
    """The header lines of summary.csv: the study file and hash, the seeding, the versions and platform."""
    study = meta["study"]
    versions = ", ".join(f"{k} {v}" for k, v in meta["versions"].items() if v)
    return [f"study {study['name']} ({study['path']}, sha256 {study['sha256']}, quick={study['quick']})",
            f"seed {study['seed']}, {study['runs']} runs per cell; {meta['seeding']}",
            f"python {meta['python']} on {meta['platform']}; {versions}"]
