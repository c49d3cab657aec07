"""Fixed-budget thresholding on graphs: GrAPL (LeJeune, Dasarathy & Baraniuk, AISTATS 2020), APT (Locatelli et
al. 2016) and the non-adaptive Laplacian baseline.

    environment   GraphThresholdingBandit: graph, means, tau, eps, Gaussian/Bernoulli noise; error E and loss L_T
    instances     sbm(...), nws(...): the paper's Sec. 4 experiments, seeded
    estimator     LaplacianEstimator: mu_hat = tau + V^{-1} xvec, warm-started CG (or Sherman–Morrison)
    spectral      effective_dimension (d_T), smoothness ||mu - tau 1||_{L_lambda}, optimal_gamma
    algorithms    GrAPL, RandomLaplacian (ThresholdingAlgorithm / ThresholdingPolicy)
    apt           APT (Locatelli et al. 2016): empirical means, the sqrt(n_i) (|mu_hat_i - tau| + eps) index
    runner        run_thresholding(algorithm, env, T, seed) -> ThresholdingResult (E(t) on a grid, S_hat, L_T)
"""

from .algorithms import GrAPL, RandomLaplacian, ThresholdingAlgorithm, ThresholdingPolicy
from .apt import APT
from .environment import GraphThresholdingBandit, graph_laplacian
from .estimator import LaplacianEstimator
from .instances import nws, sbm
from .runner import ThresholdingResult, run_thresholding
from .spectral import OptimalGamma, Spectrum, effective_dimension, optimal_gamma, smoothness

__all__ = [
    "APT", "GrAPL", "GraphThresholdingBandit", "LaplacianEstimator", "OptimalGamma", "RandomLaplacian", "Spectrum",
    "ThresholdingAlgorithm", "ThresholdingPolicy", "ThresholdingResult", "effective_dimension", "graph_laplacian",
    "nws", "optimal_gamma", "run_thresholding", "sbm", "smoothness",
]
