"""Named factored instances for the registry (``NAME:key=value,...`` strings of the CLI).

Every factory returns a :class:`~bandits.multiagent.environment.FactoredBandit` (kind ``"factored"``):

* ``line``, ``ring``, ``star`` (N agents, K actions each), ``grid`` (rows x cols): pairwise factors with
  ``means="uniform"`` (i.i.d. U[0, 1) tables, MF-TaS §7.1) or ``"planted"`` (a unique planted best with
  Delta_min = ``gap``, default 0.1), from :class:`optdesign.FactorGraph` with ``seed``; ``scale`` = M multiplies
  the uniform tables, giving the paper's theta_e(b) ~ U(0, M) (§7.1; Delta_min and 1/sqrt(T^MF) scale as M);
* ``antenna``: the antenna-tilt network of :mod:`bandits.multiagent.antenna` (N cells, K tilts);
* ``factor-graph``: a FactorGraph JSON file (``path=FILE``, as written by ``FactorGraph.save``);
* ``mab``: one agent with Gaussian arms ``means="0.5/0.45/0.43/0.4"`` (slash-separated, since commas
  separate options), for Garivier–Kaufmann Track-and-Stop.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from optdesign import FactorGraph, shared_doc
from optdesign.errors import InvalidInputError
from optdesign.validation import as_count

from .antenna import antenna_tilt
from .environment import FactoredBandit

__all__ = ["antenna", "factor_graph", "grid", "line", "mab", "ring", "star"]

#: GK16's first experiment (arm means, here with unit-variance Gaussian noise)
GK_MEANS = "0.5/0.45/0.43/0.4"


# the parameters the factories share (the CLI keys), documented once (substituted by _shared_doc)
_DOC = {
    "N": """    N : int
        Number of agents.""",
    "K": """    K : int or sequence of int
        Actions per agent (>= 2), or one count per agent.""",
    "seed": """    seed : int or None
        Seed of the mean tables (None: fresh entropy).""",
    "means": """    means : str
        ``"uniform"``: i.i.d. U[0, 1) tables (MF-TaS §7.1); ``"planted"``: a unique planted best with
        Delta_min = ``gap``.
    gap : float, optional
        The planted Delta_min (planted means only; default 0.1).""",
    "sigma": """    sigma : float
        Standard deviation of the Gaussian noise of every factor observation.""",
    "scale": """    scale : float
        M of theta_e(b) ~ U(0, M): multiplies the uniform tables (Delta_min and 1/sqrt(T^MF) scale as M).""",
    "returns": """    Returns
    -------
    FactoredBandit
        The instance, named after the factory and its options.""",
    "raises": """    Raises
    ------
    InvalidInputError
        A count below its minimum, an unknown mean model, a gap with uniform means, a scale that is not
        a positive number or that is set with planted means, or a tie for the best joint action.""",
}


_shared_doc = shared_doc(_DOC)


def _label(kind: str, **opts: object) -> str:
    inner = ",".join(f"{k}={v}" for k, v in opts.items() if v is not None)
    return f"{kind}({inner})"


def _actions(K: int | Sequence[int]) -> int | tuple[int, ...]:
    """K: an integer >= 2 (every agent) or a sequence of per-agent action counts (checked by FactorGraph)."""
    return as_count(K, "K", minimum=2, floats=True) if isinstance(K, (int, float, str)) else tuple(K)


def _scaled(fg: FactorGraph, scale: float, means: str) -> FactorGraph:
    """``fg`` with every table times ``scale`` = M (uniform means: theta_e(b) ~ U(0, M), MF-TaS §7.1)."""
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not (math.isfinite(scale) and scale > 0):
        raise InvalidInputError(f"scale must be a finite number > 0, got {scale!r}")
    if scale == 1:
        return fg
    if means != "uniform":
        raise InvalidInputError("scale applies to means='uniform' (U(0, scale) tables); planted means set gap")
    return FactorGraph(fg.n_actions, [(s, scale * t) for s, t in zip(fg.scopes, fg.tables, strict=True)],
                       metadata={**fg.metadata, "scale": scale})


def _pairwise(kind: str, make: Callable[..., FactorGraph], N: int, K: int | tuple[int, ...], seed: int | None,
              means: str, gap: float | None, sigma: float, scale: float = 1.0) -> FactoredBandit:
    fg = _scaled(make(N, K, seed=seed, means=means, gap=gap), scale, means)
    return FactoredBandit(fg, sigma=sigma, name=_label(kind, N=N, K=K, seed=seed, means=means, gap=gap,
                                                       scale=None if scale == 1 else scale))


@_shared_doc
def line(N: int = 6, K: int | Sequence[int] = 3, seed: int | None = 0, means: str = "uniform",
         gap: float | None = None, sigma: float = 1.0, scale: float = 1.0) -> FactoredBandit:
    """Agents 0..N-1, factors (i, i+1) (CLI ``-i line:N=6,K=3``).

    Parameters
    ----------
%(N)s At least 2.
%(K)s
%(seed)s
%(means)s
%(sigma)s
%(scale)s

%(returns)s

%(raises)s
    """
    N = as_count(N, "N", minimum=2, floats=True)
    return _pairwise("line", FactorGraph.line, N, _actions(K), seed, means, gap, sigma, scale)


@_shared_doc
def ring(N: int = 5, K: int | Sequence[int] = 3, seed: int | None = 0, means: str = "uniform",
         gap: float | None = None, sigma: float = 1.0, scale: float = 1.0) -> FactoredBandit:
    """A line closed by the factor (N-1, 0); MF-TaS §7.1 with ``scale`` = M (theta_e(b) ~ U(0, M)).

    Parameters
    ----------
%(N)s At least 3.
%(K)s
%(seed)s
%(means)s
%(sigma)s
%(scale)s

%(returns)s

%(raises)s
    """
    N = as_count(N, "N", minimum=3, floats=True)
    return _pairwise("ring", FactorGraph.ring, N, _actions(K), seed, means, gap, sigma, scale)


@_shared_doc
def star(N: int = 5, K: int | Sequence[int] = 3, seed: int | None = 0, means: str = "uniform",
         gap: float | None = None, sigma: float = 1.0) -> FactoredBandit:
    """Hub 0 with factors (0, i).

    Parameters
    ----------
%(N)s At least 2 (the hub and N - 1 leaves).
%(K)s
%(seed)s
%(means)s
%(sigma)s

%(returns)s

%(raises)s
    """
    N = as_count(N, "N", minimum=2, floats=True)
    return _pairwise("star", FactorGraph.star, N, _actions(K), seed, means, gap, sigma)


@_shared_doc
def grid(rows: int = 2, cols: int = 3, K: int | Sequence[int] = 3, seed: int | None = 0, means: str = "uniform",
         gap: float | None = None, sigma: float = 1.0) -> FactoredBandit:
    """A rows x cols lattice with factors between neighbours.

    Parameters
    ----------
    rows : int
        Rows of the lattice (>= 1).
    cols : int
        Columns of the lattice (>= 1); agent r cols + c sits at (r, c).
%(K)s
%(seed)s
%(means)s
%(sigma)s

%(returns)s

%(raises)s
    """
    rows, cols = as_count(rows, "rows", floats=True), as_count(cols, "cols", floats=True)
    K = _actions(K)
    fg = FactorGraph.grid(rows, cols, K, seed=seed, means=means, gap=gap)
    return FactoredBandit(fg, sigma=sigma, name=_label("grid", rows=rows, cols=cols, K=K, seed=seed, means=means,
                                                       gap=gap))


@_shared_doc
def antenna(N: int = 6, K: int = 3, seed: int | None = 0, users: int = 1000, layout: str = "line",
            interferers: int = 2, scale: float = 1.0, sigma: float = 1.0) -> FactoredBandit:
    """The antenna-tilt network (see :mod:`bandits.multiagent.antenna`), MF-TaS §7.2.

    Parameters
    ----------
    N : int
        Number of cells (agents), at least 2.
    K : int
        Tilts per cell, at least 2.
    seed : int or None
        Seed of the user positions.
    users : int
        Users dropped uniformly over the network.
    layout : str
        ``"line"`` or ``"hex"`` site layout.
    interferers : int
        Interferers in every cell's factor (1..N-1).
    scale : float
        The largest group mean (the tables are normalised to it).
%(sigma)s

%(returns)s

    Raises
    ------
    InvalidInputError
        A parameter out of range or an unknown layout (:func:`~bandits.multiagent.antenna.antenna_tilt`).
    """
    fg = antenna_tilt(N, K, seed, users=users, layout=layout, interferers=interferers, scale=scale)
    return FactoredBandit(fg, sigma=sigma, name=_label("antenna", N=N, K=K, seed=seed, layout=layout,
                                                       interferers=interferers, scale=scale))


@_shared_doc
def factor_graph(path: str | None = None, sigma: float = 1.0) -> FactoredBandit:
    """A FactorGraph JSON file (``FactorGraph.save`` format).

    Parameters
    ----------
    path : str
        The file (required, ``-i factor-graph:path=FILE``).
%(sigma)s

%(returns)s

    Raises
    ------
    InvalidInputError
        No path, an unreadable file, or a tie for the best joint action.
    """
    if path is None:
        raise InvalidInputError("factor-graph needs path=FILE (a FactorGraph JSON file)")
    return FactoredBandit(FactorGraph.load(path), sigma=sigma, name=f"factor-graph({path})")


@_shared_doc
def mab(means: str | float = GK_MEANS, sigma: float = 1.0) -> FactoredBandit:
    """One agent whose arms have the given means (``"0.5/0.45/0.43/0.4"``).

    Parameters
    ----------
    means : str or float
        The arm means separated by ``/`` (or ``;``), at least two; default GK16's first experiment.
%(sigma)s

%(returns)s

    Raises
    ------
    InvalidInputError
        A mean that is not a number, fewer than two arms, or a tie for the best arm.
    """
    try:
        values = [float(v) for v in str(means).replace(";", "/").split("/") if v.strip()]
    except ValueError:
        raise InvalidInputError(f"means must be numbers separated by '/', got {means!r}") from None
    return FactoredBandit(FactorGraph.single_agent(values), sigma=sigma, name=f"mab({'/'.join(map(str, values))})")
