"""Tracking a mean-field (product) allocation: each agent samples independently from its local allocation.

The MF program (MF-TaS eqs. 2-3) gives local allocations v_i in the simplex. Its constraints are
written on the PRODUCT group marginals wbar_{e,b} = prod_{i in S_e} v_{i,b_i}, so what must converge is
N_{e,b}(t) / t -> prod_i v_{i,b_i}, not only the per-agent frequencies. The rule here: every round
each agent draws a_{t,i} ~ v_i independently (inverse-CDF draws, a whole batch of R rounds at once). Given
v_hat(t) -> v*, the group frequencies then converge almost surely to the product marginals (martingale strong
law), with O(sqrt(t)) fluctuations.

Why not the paper's per-agent D-tracking a_{t,i} = argmax_k (t v_{i,k} - N_{i,k}(t)) (Alg. 2)? It makes
each agent's frequencies converge to v_i, but it says nothing about the joint frequencies. Deterministic
per-agent rules run in lockstep: two agents with v = (1/2, 1/2) and the same tie-breaking alternate
(0,0), (1,1), (0,0), ..., so the group actions (0,1) and (1,0) get only the sqrt(t) forced-exploration
samples. The GLR of alternatives that use them then grows like sqrt(t) instead of t. Independent draws
cannot fall into that lockstep; they cost only a vanishing relative variance.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

__all__ = ["sample_product", "uniform_local"]

#: entries of the R x N x K comparison array held at once
SAMPLE_CHUNK = 2**22


def sample_product(local: list[npt.NDArray[np.float64]], rounds: int,
                   rng: np.random.Generator) -> npt.NDArray[np.int64]:
    """``rounds`` x N joint actions with a_{r,i} ~ local[i] independently (inverse-CDF sampling).

    Parameters
    ----------
    local : list of ndarray
        v_i for every agent i: K_i nonnegative weights (normalised here; the last action takes any
        rounding leftover).
    rounds : int
        Number of joint actions R to draw (in chunks of ``SAMPLE_CHUNK`` comparisons).
    rng : numpy.random.Generator
        Source of the R N uniforms.

    Returns
    -------
    ndarray of int64, shape (rounds, N)
        One joint action per row.
    """
    n = len(local)
    kmax = max(v.size for v in local)
    cdf = np.ones((n, kmax))
    for i, v in enumerate(local):
        c = np.cumsum(np.clip(v, 0.0, None))
        cdf[i, : v.size] = c / c[-1]
        cdf[i, v.size - 1:] = np.inf  # the last action takes any rounding leftover
    kmax_idx = np.asarray([v.size - 1 for v in local])
    out = np.empty((rounds, n), dtype=np.int64)
    step = max(1, SAMPLE_CHUNK // (n * kmax))
    for lo in range(0, rounds, step):
        u = rng.random((min(step, rounds - lo), n))
        a = (u[:, :, None] >= cdf[None, :, :]).sum(axis=2)
        out[lo:lo + u.shape[0]] = np.minimum(a, kmax_idx)
    return out


def uniform_local(n_actions: Iterable[int]) -> list[npt.NDArray[np.float64]]:
    """v_i uniform on every agent's actions (uniform product sampling).

    Parameters
    ----------
    n_actions : iterable of int
        K_i for every agent.

    Returns
    -------
    list of ndarray
        The vector of K_i entries 1/K_i for every agent.
    """
    return [np.full(int(k), 1.0 / int(k)) for k in n_actions]
