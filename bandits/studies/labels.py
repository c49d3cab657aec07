"""Short names of a study's cells (instance texts ``family:key=value,...``) for tables and figures: the options that
vary between cells, and what they all share."""

from __future__ import annotations

from ..core.entries import split_items

__all__ = ["short_cells"]


def short_cells(cells: list[str]) -> tuple[dict[str, str], str]:
    """Short names of instance texts ``family:key=value,...``: the family (when several) and the varying options.

    Parameters
    ----------
    cells : list of str
        The cells of the summary (repeats allowed).

    Returns
    -------
    labels : dict
        Cell text to its short name (the full text when the short names would not tell cells apart).
    common : str
        The options every cell shares (``family, key=value, ...``), empty when nothing is shared.
    """
    unique = list(dict.fromkeys(cells))
    parsed = {c: _options(c) for c in unique}
    families = {family for family, _ in parsed.values()}
    keys = list(dict.fromkeys(k for _, opts in parsed.values() for k in opts))
    fixed = [k for k in keys if len({opts.get(k) for _, opts in parsed.values()}) == 1]
    labels = {}
    for cell, (family, opts) in parsed.items():  # ", " between the options: rich wraps there
        shown = ", ".join(f"{k}={v}" for k, v in opts.items() if k not in fixed)
        labels[cell] = (f"{family}: {shown}" if shown else family) if len(families) > 1 else (shown or family)
    if len(set(labels.values())) < len(unique):
        return {c: c for c in unique}, ""
    shared = [f"{k}={parsed[unique[0]][1][k]}" for k in fixed]
    return labels, ", ".join((list(families) if len(families) == 1 else []) + shared)


def _options(cell: str) -> tuple[str, dict[str, str]]:
    """``"family:key=value,..."`` -> (family, {key: value text}), the family a name or a ``module:function`` path
    (as :func:`bandits.core.entries.split_algorithm` reads it); a part without ``=`` is kept whole."""
    family, _, rest = str(cell).partition(":")
    attr, colon, more = rest.partition(":")
    if colon or (attr and "=" not in attr and "," not in attr):  # a path: module:function[:options]
        family, rest = f"{family}:{attr}", more
    options = {}
    for part in split_items(rest):
        key, _, value = part.partition("=")
        options[key] = value
    return family, options
