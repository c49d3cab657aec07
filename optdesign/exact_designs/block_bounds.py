"""A certified bound for grouped designs from one design's information: the equivalence theorem over whole groups.

Every design of a class (the group sizes n_g, effects and eta fixed) has a normalised information
M / N = sum_g (n_g / N) T_g, the average of its groups' T_g = (1/n) sum_r x_r x_r^T - (1 - lambda) xbar xbar^T,
lambda = 1 / (1 + eta n) (0 for fixed effects; :mod:`optdesign.exact_designs.block_information`): a convex combination
of the information of single groups. So for every positive definite A, tr(A M / N) <= tau(A), the largest tr(A T) over
the groups one can form, and

* D: AM-GM on the eigenvalues of A^{1/2} (M/N) A^{1/2} gives det(M/N)^(1/p) <= tau(A) / (p det(A)^(1/p)), so every
  design's value det(M/N)^(-1/p) is at least p det(A)^(1/p) / tau(A); with A = (M*/N)^{-1} from the design found;
* A and I: phi(M) = tr(B M^{-1}) is convex and homogeneous of degree -1, so (as in
  :mod:`optdesign.exact_designs.bounds`) phi(M') >= phi(M)^2 / tau(G) with G = M^{-1} B M^{-1}, M the design found.

When the design found is optimal over mixtures of groups (the equivalence theorem, Kiefer 1974, with groups as the
candidates), tau equals p (or phi), and the bound its value. tau(A) is the largest over the group sizes and (split
plots) the whole-plot settings of the best group's tr(A T) = sum_k w_k h_k - (1 - lambda) (X^T w)^T A (X^T w),
w = m / n the group's runs per candidate, h_k = x_k^T A x_k; two upper bounds on it are taken, the smaller kept:

* relaxation: w over the whole simplex, a concave quadratic; pairwise Frank–Wolfe steps with exact line search,
  and any w bounds the maximum by f(w) + max_k grad_k - grad^T w (concavity);
* pairs: tr(A T) = tr(A C) + lambda xbar^T A xbar with C the group's covariance (1/n^2) sum over its pairs of runs
  (x_r - x_s)(x_r - x_s)^T, so tr(A T) <= (n - 1) / (2 n) max_kl (x_k - x_l)^T A (x_k - x_l) + lambda max_k h_k
  (exact for a balanced incomplete block design).

The bound is lowered by ROUNDING_MARGIN for the rounding of its evaluation.
"""

from __future__ import annotations

import numpy as np

from .bounds import ROUNDING_MARGIN

__all__: list[str] = []  # internal: blocked_design and split_plot_design report it

#: Frank–Wolfe steps per group problem (each O(K p)); the bound is valid whenever they stop
FW_STEPS = 2000
#: relative Frank–Wolfe gap at which the steps stop
FW_GAP = 1e-10
#: candidates per group problem up to which the pair bound (K^2 distances) is computed
PAIR_CANDIDATES = 2000


def _relaxed(X: np.ndarray, A: np.ndarray, h: np.ndarray, rho: float, floor: float = -np.inf) -> float:
    """An upper bound on max over the simplex of f(w) = h^T w - rho (X^T w)^T A (X^T w) (module docstring), or any
    number <= ``floor`` once the bound is known to be at most ``floor`` (the caller keeps the larger of the two).

    Pairwise Frank–Wolfe (weight moved from the support's worst candidate to the best, Lacoste-Julien & Jaggi
    2015) with exact line search: f is a strongly concave function of X^T w plus a linear one, so it converges
    linearly where plain Frank–Wolfe crawls. Every iterate w is a point of the simplex, so each f(w) + max_k
    grad_k - grad^T w bounds the maximum whatever the steps were; the smallest is returned. The loop is compiled
    (:mod:`optdesign.exact_designs.group_relaxation`)."""
    from .group_relaxation import relaxed_bound

    return float(relaxed_bound(np.ascontiguousarray(X, dtype=float), np.ascontiguousarray(A, dtype=float),
                               np.ascontiguousarray(h, dtype=float), float(rho), float(floor), FW_STEPS, FW_GAP))


def _pairs(X: np.ndarray, A: np.ndarray, h: np.ndarray, n: int, lam: float) -> float:
    """The pair bound (n - 1) / (2 n) max_kl (x_k - x_l)^T A (x_k - x_l) + lambda max_k h_k (module docstring)."""
    if X.shape[0] > PAIR_CANDIDATES:
        return np.inf
    H = X @ A @ X.T
    spread = float(np.max(h[:, None] + h[None, :] - 2.0 * H))
    return (n - 1) / (2.0 * n) * max(spread, 0.0) + lam * float(h.max())


def group_tau(X: np.ndarray, A: np.ndarray, sizes: np.ndarray, effects: str, eta: float,
              plots: int | None) -> float:
    """An upper bound on tau(A), the largest tr(A T) of a group of any of the sizes (module docstring); ``plots``: the
    sub-plot candidates per whole-plot setting (a group stays within one setting), None: any candidates."""
    settings = [X] if plots is None else [X[a:a + plots] for a in range(0, X.shape[0], plots)]
    hs = [np.einsum("ki,ij,kj->k", Xa, A, Xa) for Xa in settings]
    relaxed: dict[tuple[int, float], float] = {}  # the relaxation depends on the size only through rho
    tau = 0.0
    for n in np.unique(sizes).tolist():
        lam = 0.0 if effects == "fixed" else 1.0 / (1.0 + eta * n)
        for a, (Xa, h) in enumerate(zip(settings, hs, strict=True)):
            pairs = _pairs(Xa, A, h, int(n), lam)
            if pairs <= tau:  # min(relaxed, pairs) cannot raise tau
                continue
            key = (a, 1.0 - lam)
            if key not in relaxed:
                relaxed[key] = _relaxed(Xa, A, h, 1.0 - lam, floor=tau)
            tau = max(tau, min(relaxed[key], pairs))
    return tau


def group_bound(X: np.ndarray, M: np.ndarray, sizes: np.ndarray, effects: str, eta: float, B: np.ndarray | None,
                plots: int | None = None) -> float:
    """The certified lower bound on the value of every design of the class, from the information M (unnormalised)
    of one design (module docstring); B None for D, else the matrix of tr(B M^{-1}); 0 when M is singular."""
    p = M.shape[0]
    Mn = M / int(sizes.sum())
    try:
        inverse = np.linalg.inv(Mn)
    except np.linalg.LinAlgError:
        return 0.0
    inverse = (inverse + inverse.T) / 2
    if B is None:
        sign, logdet = np.linalg.slogdet(inverse)
        if sign <= 0:
            return 0.0
        tau = group_tau(X, inverse, sizes, effects, eta, plots)
        return float(p * np.exp(logdet / p) / tau * (1.0 - ROUNDING_MARGIN))
    G = inverse @ B @ inverse
    phi = float(np.trace(B @ inverse))
    tau = group_tau(X, (G + G.T) / 2, sizes, effects, eta, plots)
    return float(phi * phi / tau * (1.0 - ROUNDING_MARGIN)) if tau > 0 else 0.0


def combined(unblocked: float | None, note: str, grouped: float) -> tuple[float | None, dict]:
    """(the larger of the two certified bounds, or None without either; the extras that say which and give both)."""
    extras: dict = {"unblocked_lower_bound": unblocked, "group_lower_bound": grouped if grouped > 0 else None}
    if unblocked is None and grouped <= 0:
        extras.update(bound=note, no_bound=note)
        return None, extras
    if unblocked is None or grouped > unblocked:
        extras["bound"] = "the equivalence theorem over mixtures of groups, at the design found"
        return grouped, extras
    extras["bound"] = note
    return unblocked, extras
