"""The thresholding graph bandit of LeJeune, Dasarathy & Baraniuk (AISTATS 2020, Sec. 2), and its metrics.

N arms are the nodes of a weighted undirected graph G (Laplacian L = D - W); arm i returns draws of
nu_i with mean mu_i (Gaussian N(mu_i, sigma^2), or Bernoulli(mu_i), 1/2-sub-Gaussian). After a fixed
budget T the learner outputs S_hat = {i : mu_hat_i >= tau}, an estimate of S_tau = {i : mu_i >= tau}.
Arms with |mu_i - tau| <= eps are not judged ("eps-tolerance"):

* loss (their eq. 2, Sec. 2.1): L_T = 1{some arm with |mu_i - tau| > eps is on the wrong side of tau};
* error (the metric of the paper's Figs. 1-3, Sec. 4):
  E = #{misclassified arms with |mu_i - tau| > eps} / N, with "misclassified" read on S_hat (mu_hat_i = tau
  counts as above). ``error_notebook`` is the variant the authors' notebooks plot (see there).

Arm i is node ``list(graph.nodes)[i]``; ``graph=None`` means no edges (plain thresholding bandit, W = 0).
Pulls come in batches of counts and return per-arm reward sums (sufficient statistics), as in
:mod:`bandits.core.environments`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import networkx as nx
import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from optdesign.errors import InvalidInputError
from optdesign.validation import as_vector

from ..core.environments import as_counts, check_sigma, gaussian_sums
from ..core.validation import check_choice, is_number

__all__ = ["GraphThresholdingBandit", "graph_laplacian"]

NOISES = ("gaussian", "bernoulli")


def graph_laplacian(graph: nx.Graph | None, n_nodes: int) -> sp.csr_matrix:
    """Sparse combinatorial Laplacian L = D - W (edge attribute ``weight``, default 1; parallel edges of a
    multigraph add up), rows in ``list(graph.nodes)`` order; ``None`` gives the N x N zero matrix.

    Parameters
    ----------
    graph : networkx.Graph or None
        An undirected graph with finite nonnegative edge weights, or None for no edges.
    n_nodes : int
        The number of arms N; it must equal the graph's number of nodes.

    Returns
    -------
    scipy.sparse.csr_matrix, shape (N, N)
        L = D - W in float64.

    Raises
    ------
    InvalidInputError
        ``graph`` not a networkx graph or directed, a node count other than ``n_nodes``, or a negative or
        non-finite edge weight.
    """
    if graph is None:
        return sp.csr_matrix((n_nodes, n_nodes))
    if not isinstance(graph, nx.Graph):
        raise InvalidInputError(f"graph must be a networkx graph or None, got {type(graph).__name__}")
    if graph.is_directed():
        raise InvalidInputError("graph must be undirected (the Laplacian D - W must be symmetric); "
                                "use graph.to_undirected()")
    if graph.number_of_nodes() != n_nodes:
        raise InvalidInputError(f"means must have one entry per node of the graph ({graph.number_of_nodes()}), "
                                f"got {n_nodes}")
    weights = np.array([w for *_, w in graph.edges(data="weight", default=1.0)], dtype=float)
    if weights.size and not (np.all(np.isfinite(weights)) and np.all(weights >= 0)):
        raise InvalidInputError("edge weights must be finite and nonnegative (W >= 0 keeps L positive semidefinite)")
    L = nx.laplacian_matrix(graph, nodelist=list(graph.nodes), weight="weight")
    return sp.csr_matrix(L, dtype=float)


@dataclass(frozen=True, eq=False)
class GraphThresholdingBandit:
    """Thresholding bandit on a graph (see module docstring). ``sigma`` is the Gaussian noise level
    (ignored for Bernoulli rewards, whose means must lie in [0, 1]); thresholds outside the range of
    the means are allowed (S_tau is then empty or everything).

    Parameters
    ----------
    graph : networkx.Graph or None
        The undirected graph on the arms (arm i is ``list(graph.nodes)[i]``; edge attribute ``weight``,
        default 1), or None for the plain thresholding bandit.
    means : array_like, shape (N,)
        The arms' means mu.
    tau : float
        The threshold: the target is S_tau = {i : mu_i >= tau}.
    eps : float
        Tolerance eps > 0: arms with |mu_i - tau| <= eps are not judged; it also enters the indices of APT
        and GrAPL.
    noise : str
        ``"gaussian"`` (N(mu_i, sigma^2) rewards) or ``"bernoulli"`` (Bernoulli(mu_i)).
    sigma : float
        The Gaussian noise level (stored as 1/2, the sub-Gaussian constant, for Bernoulli rewards).
    name : str
        The instance's name in result records.

    Attributes
    ----------
    laplacian : scipy.sparse.csr_matrix
        L = D - W of the graph (:func:`graph_laplacian`), N x N.

    Raises
    ------
    InvalidInputError
        Means that are not a finite vector (or outside [0, 1] for Bernoulli rewards), a non-finite tau, eps
        not positive, an unknown noise, a bad sigma, or a graph that :func:`graph_laplacian` refuses.
    """

    graph: nx.Graph | None
    means: npt.NDArray[np.float64]
    tau: float
    eps: float
    noise: str = "gaussian"
    sigma: float = 1.0
    name: str = "graph-thresholding"
    #: the instance kind (:data:`bandits.kinds.KINDS`)
    kind: ClassVar[str] = "thresholding"
    laplacian: sp.csr_matrix = field(init=False, repr=False)

    def __post_init__(self) -> None:
        means = as_vector(self.means, "means")
        if not is_number(self.tau):
            raise InvalidInputError(f"tau must be a finite number, got {self.tau!r}")
        if not (is_number(self.eps) and self.eps > 0):
            raise InvalidInputError(f"eps must be a positive number (the tolerance around tau), got {self.eps!r}")
        check_choice(self.noise, "noise", NOISES)
        if self.noise == "bernoulli" and (means.min() < 0 or means.max() > 1):
            raise InvalidInputError("Bernoulli means must lie in [0, 1]")
        sigma = check_sigma(self.sigma) if self.noise == "gaussian" else 0.5
        object.__setattr__(self, "means", means)
        object.__setattr__(self, "tau", float(self.tau))
        object.__setattr__(self, "eps", float(self.eps))
        object.__setattr__(self, "sigma", sigma)
        object.__setattr__(self, "laplacian", graph_laplacian(self.graph, means.size))

    @property
    def n_arms(self) -> int:
        """The number of arms N."""
        return self.means.size

    @property
    def R(self) -> float:
        """Sub-Gaussian constant of the noise: sigma (Gaussian) or 1/2 (Bernoulli)."""
        return self.sigma

    @property
    def above(self) -> npt.NDArray[np.bool_]:
        """Membership of S_tau: mu_i >= tau."""
        return self.means >= self.tau

    @property
    def checked(self) -> npt.NDArray[np.bool_]:
        """Arms the loss and the error judge: |mu_i - tau| > eps."""
        return np.abs(self.means - self.tau) > self.eps

    @property
    def complexity(self) -> float:
        """H = sum_i (|mu_i - tau| + eps)^{-2} (APT's and GrAPL's complexity)."""
        return float(np.sum((np.abs(self.means - self.tau) + self.eps) ** -2.0))

    def pull(self, counts: npt.ArrayLike, rng: np.random.Generator) -> npt.NDArray[np.float64]:
        """Reward sums of a batch: ``counts[k]`` pulls of arm k; draws only for arms with counts > 0.

        Parameters
        ----------
        counts : array_like of int, shape (N,)
            Nonnegative pull counts per arm.
        rng : numpy.random.Generator
            The noise stream.

        Returns
        -------
        numpy.ndarray of float, shape (N,)
            The sum of the ``counts[k]`` rewards of arm k (0 for arms not pulled).
        """
        counts = as_counts(counts, self.n_arms)
        sums = np.zeros(self.n_arms)
        idx = np.flatnonzero(counts)
        if self.noise == "gaussian":
            sums[idx] = gaussian_sums(self.means[idx], counts[idx], self.sigma, rng)
        else:
            sums[idx] = rng.binomial(counts[idx], self.means[idx])
        return sums

    def misclassified(self, mu_hat: npt.ArrayLike) -> npt.NDArray[np.bool_]:
        """Mask of judged arms (|mu_i - tau| > eps) on the wrong side: (mu_hat_i >= tau) != (mu_i >= tau).

        Parameters
        ----------
        mu_hat : array_like, shape (N,)
            A mean estimate; the learner's answer is S_hat = {i : mu_hat_i >= tau}.

        Returns
        -------
        numpy.ndarray of bool, shape (N,)
            True for the judged arms that S_hat misclassifies.

        Raises
        ------
        InvalidInputError
            ``mu_hat`` not of shape (N,).
        """
        mu_hat = np.asarray(mu_hat, dtype=float)
        if mu_hat.shape != self.means.shape:
            raise InvalidInputError(f"mu_hat must have shape {self.means.shape}, got {mu_hat.shape}")
        return self.checked & ((mu_hat >= self.tau) != self.above)

    def error(self, mu_hat: npt.ArrayLike) -> float:
        """E = #misclassified judged arms / N (fraction of all N arms, as in the paper's Figs. 1-3).

        Parameters
        ----------
        mu_hat : array_like, shape (N,)
            A mean estimate, read through S_hat as in :meth:`misclassified`.

        Returns
        -------
        float
            E in [0, 1].
        """
        return float(np.count_nonzero(self.misclassified(mu_hat))) / self.n_arms

    def error_notebook(self, mu_hat: npt.ArrayLike) -> float:
        """The authors' notebook metric (``failure_rate``):
        1 - #{judged arms with (mu_hat_i - tau)(mu_i - tau) > 0} / N. It also counts as errors the unjudged
        arms (|mu_i - tau| <= eps) and exact ties mu_hat_i = tau (frequent for Bernoulli empirical means at
        tau = 1/2); use it to compare with the paper's figures.

        Parameters
        ----------
        mu_hat : array_like, shape (N,)
            A mean estimate (compared with tau strictly, unlike :meth:`error`).

        Returns
        -------
        float
            The notebook's failure rate in [0, 1].
        """
        mu_hat = np.asarray(mu_hat, dtype=float)
        right = self.checked & ((mu_hat - self.tau) * (self.means - self.tau) > 0)
        return float(self.n_arms - np.count_nonzero(right)) / self.n_arms

    def loss(self, mu_hat: npt.ArrayLike) -> bool:
        """L_T = 1{some judged arm is misclassified} (LeJeune et al. 2020, eq. 2).

        Parameters
        ----------
        mu_hat : array_like, shape (N,)
            The learner's final estimate, read through S_hat as in :meth:`misclassified`.

        Returns
        -------
        bool
            Whether S_hat misclassifies some judged arm.
        """
        return bool(np.any(self.misclassified(mu_hat)))

    def describe(self) -> dict[str, Any]:
        """A summary of the instance for result records and the CLI.

        Returns
        -------
        dict
            Name, N, edge count, tau, eps, noise, sub-Gaussian constant R, complexity H and the number of
            judged arms.
        """
        edges = 0 if self.graph is None else self.graph.number_of_edges()
        return {"name": self.name, "N": self.n_arms, "edges": edges, "tau": self.tau, "eps": self.eps,
                "noise": self.noise, "R": self.R, "H": self.complexity, "judged": int(np.count_nonzero(self.checked))}
