"""The graphical bilinear bandit instance of Rizk et al. (2021, Sec. 7), ``gbb`` in
:data:`bandits.instances.INSTANCES` (imported on first use)."""

from __future__ import annotations

import numpy as np

from optdesign.errors import InvalidInputError
from optdesign.validation import as_count, check_array_size

from ..core.validation import check_positive
from ..linear.instances import soare
from .environment import GraphicalBilinearBandit
from .graphs import GRAPHS, make_graph

__all__ = ["gbb"]


def gbb(d: int = 5, omega: float = 0.1, graph: str = "complete", m: int = 156,
        sigma: float = 1.0) -> GraphicalBilinearBandit:
    """Rizk et al. Sec. 7: X = {e_1..e_d, (cos omega, sin omega, 0, ...)} (K = d + 1), M = 2 e_1 e_1^T
    (theta = (2, 0, ..., 0) in R^{d^2}), on a star/complete/circle/matching graph with m directed edges.
    z* = vec(e_1 e_1^T); its closest competitors are (e_1, x_{d+1}) and (x_{d+1}, e_1), gap 2 (1 - cos omega),
    then (x_{d+1}, x_{d+1}), gap 2 sin^2 omega.

    The parameters are the keys of the CLI's ``-i gbb:d=5,graph=star,m=20``.

    Parameters
    ----------
    d : int
        Dimension of the node arms (>= 2); K = d + 1 node arms, K^2 edge arms in R^(d^2).
    omega : float
        Angle (radians, > 0) of the extra arm x_{d+1} to e_1; the gaps shrink as omega does.
    graph : str
        Graph family of :func:`~bandits.bilinear.graphs.make_graph`: ``"star"``, ``"complete"`` (default),
        ``"circle"`` or ``"matching"``.
    m : int
        Number of directed edges (156: the complete graph on 13 nodes).
    sigma : float
        Standard deviation of the Gaussian noise of every edge observation.

    Returns
    -------
    GraphicalBilinearBandit
        The instance, named ``gbb(d=..,omega=..,graph=..,m=..)``.

    Raises
    ------
    InvalidInputError
        d < 2, omega <= 0, a graph that is not one of the families, or an m the family cannot have.
    InstanceTooLargeError
        The edge arms and d^2 x d^2 information matrices exceed the array size limit.
    """
    d = as_count(d, "d", minimum=2, floats=True)
    # the K^2 edge arms vec(x_k x_k'^T) in R^{d^2} (K = d + 1), their means and gaps, M, and the d^2 x d^2
    # information matrix, its inverse and factor that every algorithm on this instance keeps
    check_array_size(float(d + 1) ** 2 * (float(d) ** 2 + 2) + float(d) ** 2 + 3 * float(d) ** 4,
                     f"gbb with d = {d} ((d+1)^2 edge arms in R^(d^2), d^2 x d^2 information matrices)",
                     instead="use a smaller d")
    omega = check_positive(omega, "omega")
    if not isinstance(graph, str):
        raise InvalidInputError(f"graph must be one of {', '.join(GRAPHS)}; got {graph!r}")
    G = make_graph(graph, m)
    M = np.zeros((d, d))
    M[0, 0] = 2.0
    return GraphicalBilinearBandit(G, soare(d, omega).X, M, sigma=sigma,
                                   name=f"gbb(d={d},omega={omega:g},graph={graph},m={int(m)})")
