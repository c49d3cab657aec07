"""The graph thresholding instances of LeJeune et al. (2020, Sec. 4; parameters from the authors' notebooks in
their public repository ``dlej/grapl``). Each is seeded: ``seed`` fixes the graph and the means (the paper
draws both anew per trial); the noise is seeded separately by the run.

* ``sbm``: two-block stochastic block model, blocks of n nodes, p_in = log(n)/n, p_out = p_in/sqrt(n);
  mu = +1 on block 0, -1 on block 1 (alternating for more blocks); Gaussian noise sigma = 2; tau = 0, eps = 0.01.
* ``nws``: Newman–Watts–Strogatz small world (n = 1000, k = 4, p = 0.01); smooth means
  mu_0 = (L + I/(1000 n))^{-1} g, g ~ N(0, I), then centred on the median, divided by 5 std, + 0.5, clipped
  to [0, 1]; Bernoulli rewards; tau = 0.5, eps = 0.01.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve

from optdesign.errors import InstanceTooLargeError, InvalidInputError
from optdesign.validation import as_count

from ..core.validation import check_graph_size, check_positive
from .environment import GraphThresholdingBandit, graph_laplacian

__all__ = ["nws", "sbm", "smooth_means"]

#: networkx's stochastic_block_model draws one random number per node pair in Python (about 50 ns each)
SBM_MAX_PAIRS = 5e8
#: nws: expected shortcuts n (k // 2) p above which the smooth means' sparse LU solve is refused (see nws)
NWS_MAX_SHORTCUTS = 2000


def _seeds(seed: int, k: int) -> list[int]:
    return [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(k)]


def sbm(n: int = 500, blocks: int = 2, sigma: float = 2.0, tau: float = 0.0, eps: float = 0.01,
        seed: int = 0) -> GraphThresholdingBandit:
    """Stochastic block model of LeJeune et al. Sec. 4.1 (see module docstring); nodes in block order.

    The parameters are also the CLI's ``sbm:key=value`` keys; the defaults are the paper's.

    Parameters
    ----------
    n : int
        Nodes per block (at least 2); p_in = log(n)/n, p_out = p_in/sqrt(n).
    blocks : int
        Number of blocks; their means alternate +1, -1, +1, ...
    sigma : float
        Gaussian noise level sigma > 0.
    tau : float
        The threshold; the default 0 puts the +1 and -1 blocks on either side.
    eps : float
        The tolerance: arms within eps of tau are not judged (none is, with tau = 0 and eps < 1).
    seed : int
        Seeds the graph (the noise is seeded by the run).

    Returns
    -------
    GraphThresholdingBandit
        Gaussian rewards, named ``sbm(n=...,blocks=...,sigma=...,seed=...)``.

    Raises
    ------
    InstanceTooLargeError
        More than SBM_MAX_PAIRS node pairs, or a graph above the size limits.
    InvalidInputError
        A bad n, blocks or sigma (and a bad tau or eps, from the environment).
    """
    n, blocks = as_count(n, "n", minimum=2, floats=True), as_count(blocks, "blocks", minimum=1, floats=True)
    sigma = check_positive(sigma, "sigma", " (noise level)")
    nodes = float(n) * blocks
    pairs = nodes * (nodes - 1) / 2
    if pairs > SBM_MAX_PAIRS:
        raise InstanceTooLargeError(f"sbm with {nodes:.3g} nodes ({blocks} blocks of n = {n}): networkx's generator "
                                    f"visits all {pairs:.3g} node pairs one by one, above the limit of "
                                    f"{SBM_MAX_PAIRS:.3g} (about 25 s); use fewer nodes or blocks")
    within, across = blocks * n * np.log(n) / 2, blocks * (blocks - 1) / 2 * np.sqrt(n) * np.log(n)  # expected edges
    check_graph_size(nodes, within + across, "sbm graph")
    p_in = np.log(n) / n
    p_out = p_in / np.sqrt(n)
    probs = np.full((blocks, blocks), p_out)
    np.fill_diagonal(probs, p_in)
    graph = nx.stochastic_block_model([n] * blocks, probs.tolist(), seed=_seeds(seed, 1)[0])
    means = np.repeat(np.where(np.arange(blocks) % 2 == 0, 1.0, -1.0), n)
    return GraphThresholdingBandit(graph, means, tau, eps, noise="gaussian", sigma=sigma,
                                   name=f"sbm(n={n},blocks={blocks},sigma={sigma:g},seed={seed})")


def smooth_means(laplacian: sp.spmatrix, rng: np.random.Generator, shift: float) -> npt.NDArray[np.float64]:
    """(L + shift I)^{-1} g, g ~ N(0, I), centred on its median, divided by 5 std, + 0.5, clipped to [0, 1].

    Solved exactly (sparse LU) for g - mean(g): since L 1 = 0, the constant part mean(g)/shift of the
    solution is removed by the median centring anyway, and dropping it avoids cancelling a 1/shift-sized
    constant (the notebook used an approximate CG solve instead).

    Parameters
    ----------
    laplacian : scipy.sparse matrix, shape (N, N)
        The Laplacian L of the graph the means are smooth on.
    rng : numpy.random.Generator
        Draws g.
    shift : float
        The ridge shift > 0 (nws uses 1 / (1000 N)); smaller gives smoother means.

    Returns
    -------
    numpy.ndarray of float, shape (N,)
        Means in [0, 1] with median 1/2 (before clipping), suited to Bernoulli rewards.
    """
    g = rng.standard_normal(laplacian.shape[0])
    A = sp.csc_matrix(laplacian + shift * sp.eye(laplacian.shape[0]))
    mu = spsolve(A, g - g.mean())
    mu -= np.median(mu)
    mu /= 5 * np.std(mu)
    return np.clip(mu + 0.5, 0.0, 1.0)


def nws(n: int = 1000, k: int = 4, p: float = 0.01, tau: float = 0.5, eps: float = 0.01,
        seed: int = 0) -> GraphThresholdingBandit:
    """Newman–Watts–Strogatz small world of LeJeune et al. Sec. 4.2 with smooth Bernoulli means.

    The parameters are also the CLI's ``nws:key=value`` keys; the defaults are the paper's.

    Parameters
    ----------
    n : int
        Nodes (at least 3).
    k : int
        Each node is joined to its k nearest neighbours in the ring (k // 2 on each side); 2 <= k < n.
    p : float
        Probability p > 0 of adding a shortcut for each ring edge.
    tau : float
        The threshold; the default 1/2 is the median of the means.
    eps : float
        Arms with means within eps of tau are not judged.
    seed : int
        Seeds the graph and the means (:func:`smooth_means`); the noise is seeded by the run.

    Returns
    -------
    GraphThresholdingBandit
        Bernoulli rewards, named ``nws(n=...,k=...,p=...,seed=...)``.

    Raises
    ------
    InvalidInputError
        A bad n, k or p, or k >= n (and a bad tau or eps, from the environment).
    InstanceTooLargeError
        More than NWS_MAX_SHORTCUTS expected shortcuts, or a graph above the size limits.
    """
    n, k = as_count(n, "n", minimum=3, floats=True), as_count(k, "k", minimum=2, floats=True)
    if k >= n:
        raise InvalidInputError(f"k (neighbours of each node in the ring) must be smaller than n = {n}, got k = {k}")
    p = check_positive(p, "p")
    check_graph_size(n, n * (k // 2) * (1.0 + min(p, 1.0)), "nws graph")
    shortcuts = n * (k // 2) * min(p, 1.0)
    if shortcuts > NWS_MAX_SHORTCUTS:
        raise InstanceTooLargeError(f"nws with n = {n}, k = {k}, p = {p:g} has about {shortcuts:.3g} shortcuts, above "
                                    f"the limit of {NWS_MAX_SHORTCUTS}: the exact sparse solve of its smooth means "
                                    "fills in like a dense matrix on the shortcuts' endpoints (4000 shortcuts take "
                                    "20 to 90 s); use fewer nodes, neighbours k or a smaller p")
    graph_seed, signal_seed = _seeds(seed, 2)
    graph = nx.newman_watts_strogatz_graph(n, k, p, seed=graph_seed)
    means = smooth_means(graph_laplacian(graph, n), np.random.default_rng(signal_seed), 1.0 / (1000 * n))
    return GraphThresholdingBandit(graph, means, tau, eps, noise="bernoulli",
                                   name=f"nws(n={n},k={k},p={p:g},seed={seed})")
