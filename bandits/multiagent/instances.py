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

from optdesign import FactorGraph
from optdesign.errors import InvalidInputError

from ..validation import check_int
from .antenna import antenna_tilt
from .environment import FactoredBandit

#: GK16's first experiment (arm means, here with unit-variance Gaussian noise)
GK_MEANS = "0.5/0.45/0.43/0.4"


def _label(kind: str, **opts) -> str:
    inner = ",".join(f"{k}={v}" for k, v in opts.items() if v is not None)
    return f"{kind}({inner})"


def _actions(K):
    """K: an integer >= 2 (every agent) or a sequence of per-agent action counts (checked by FactorGraph)."""
    return check_int(K, "K", 2) if isinstance(K, (int, float, str)) else tuple(K)


def _scaled(fg: FactorGraph, scale, means: str) -> FactorGraph:
    """``fg`` with every table times ``scale`` = M (uniform means: theta_e(b) ~ U(0, M), MF-TaS §7.1)."""
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not (math.isfinite(scale) and scale > 0):
        raise InvalidInputError(f"scale must be a finite number > 0, got {scale!r}")
    if scale == 1:
        return fg
    if means != "uniform":
        raise InvalidInputError("scale applies to means='uniform' (U(0, scale) tables); planted means set gap")
    return FactorGraph(fg.n_actions, [(s, scale * t) for s, t in zip(fg.scopes, fg.tables, strict=True)],
                       metadata={**fg.metadata, "scale": scale})


def _pairwise(kind: str, make, N: int, K, seed, means: str, gap, sigma: float, scale=1.0) -> FactoredBandit:
    fg = _scaled(make(N, K, seed=seed, means=means, gap=gap), scale, means)
    return FactoredBandit(fg, sigma=sigma, name=_label(kind, N=N, K=K, seed=seed, means=means, gap=gap,
                                                       scale=None if scale == 1 else scale))


def line(N: int = 6, K: int = 3, seed=0, means: str = "uniform", gap: float | None = None,
         sigma: float = 1.0, scale: float = 1.0) -> FactoredBandit:
    """Agents 0..N-1, factors (i, i+1)."""
    return _pairwise("line", FactorGraph.line, check_int(N, "N", 2), _actions(K), seed, means, gap, sigma, scale)


def ring(N: int = 5, K: int = 3, seed=0, means: str = "uniform", gap: float | None = None,
         sigma: float = 1.0, scale: float = 1.0) -> FactoredBandit:
    """A line closed by the factor (N-1, 0); MF-TaS §7.1 with ``scale`` = M (theta_e(b) ~ U(0, M))."""
    return _pairwise("ring", FactorGraph.ring, check_int(N, "N", 3), _actions(K), seed, means, gap, sigma, scale)


def star(N: int = 5, K: int = 3, seed=0, means: str = "uniform", gap: float | None = None,
         sigma: float = 1.0) -> FactoredBandit:
    """Hub 0 with factors (0, i)."""
    return _pairwise("star", FactorGraph.star, check_int(N, "N", 2), _actions(K), seed, means, gap, sigma)


def grid(rows: int = 2, cols: int = 3, K: int = 3, seed=0, means: str = "uniform", gap: float | None = None,
         sigma: float = 1.0) -> FactoredBandit:
    """A rows x cols lattice with factors between neighbours."""
    rows, cols, K = check_int(rows, "rows", 1), check_int(cols, "cols", 1), _actions(K)
    fg = FactorGraph.grid(rows, cols, K, seed=seed, means=means, gap=gap)
    return FactoredBandit(fg, sigma=sigma, name=_label("grid", rows=rows, cols=cols, K=K, seed=seed, means=means,
                                                       gap=gap))


def antenna(N: int = 6, K: int = 3, seed=0, users: int = 1000, layout: str = "line", interferers: int = 2,
            scale: float = 1.0, sigma: float = 1.0) -> FactoredBandit:
    """The antenna-tilt network (see :mod:`bandits.multiagent.antenna`)."""
    fg = antenna_tilt(N, K, seed, users=users, layout=layout, interferers=interferers, scale=scale)
    return FactoredBandit(fg, sigma=sigma, name=_label("antenna", N=N, K=K, seed=seed, layout=layout,
                                                       interferers=interferers, scale=scale))


def factor_graph(path: str | None = None, sigma: float = 1.0) -> FactoredBandit:
    """A FactorGraph JSON file (``FactorGraph.save`` format)."""
    if path is None:
        raise InvalidInputError("factor-graph needs path=FILE (a FactorGraph JSON file)")
    return FactoredBandit(FactorGraph.load(path), sigma=sigma, name=f"factor-graph({path})")


def mab(means: str | float = GK_MEANS, sigma: float = 1.0) -> FactoredBandit:
    """One agent whose arms have the given means (``"0.5/0.45/0.43/0.4"``)."""
    try:
        values = [float(v) for v in str(means).replace(";", "/").split("/") if v.strip()]
    except ValueError:
        raise InvalidInputError(f"means must be numbers separated by '/', got {means!r}") from None
    return FactoredBandit(FactorGraph.single_agent(values), sigma=sigma, name=f"mab({'/'.join(map(str, values))})")


#: name -> (factory, summary) for :func:`bandits.instances.register` (kind ``"factored"``)
FACTORED_INSTANCES = {
    "line": (line, "MF-TaS: line of N agents, K actions, pairwise factors (N, K, seed, means, gap, scale)"),
    "ring": (ring, "MF-TaS §7.1: ring of N agents (N, K, seed, means=uniform|planted, gap, scale=M)"),
    "star": (star, "star of N agents around agent 0 (N, K, seed, means, gap)"),
    "grid": (grid, "rows x cols lattice of agents (rows, cols, K, seed, means, gap)"),
    "antenna": (antenna, "MF-TaS §7.2: antenna tilts of N cells, K tilts (N, K, seed, users, layout, interferers)"),
    "factor-graph": (factor_graph, "a FactorGraph JSON file (path)"),
    "mab": (mab, "one agent, Gaussian arms (means=0.5/0.45/0.43/0.4) for gk-tas"),
}
