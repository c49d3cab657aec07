"""Sum-product's forward and backward passes and its ancestral sampling compiled
(:class:`~optdesign.factored.inference.sum_product.SumProduct`).

The operations of the numpy passes in the same order: each row's inputs added left to right, then its row term; a
message entry the log-sum-exp (or the max) of its K rows, shifted by their maximum; in the backward pass each row's
belief phi + o, the factor marginals exp(belief - log Z) added row by row, and each message's outside term the
log-sum-exp of the beliefs that read its entry minus the entry. The numbers agree with the numpy passes to rounding
(numba's exp and log are the C library's, numpy's may be its own SIMD ones), ``tests/test_sum_product_kernels.py``.
Sampling reads the same uniforms as the numpy draws, one row per step in reverse order, so the two draw the same
joint actions unless a uniform falls within rounding of a cumulative probability.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["backward", "forward", "sample"]


@njit(cache=True)
def _reduce(phi: np.ndarray, use_max: bool) -> float:
    """max_k phi[k] or log sum_k exp(phi[k]) (-inf when every phi[k] is -inf)."""
    top: float = phi[0]
    for j in range(1, phi.size):
        top = max(top, phi[j])
    if use_max or top == -np.inf:
        return top
    total = 0.0
    for j in range(phi.size):
        total += math.exp(phi[j] - top)
    return top + math.log(total)


@njit(cache=True)
def forward(values: np.ndarray, K: np.ndarray, row_off: np.ndarray, msg_off: np.ndarray, index: np.ndarray,
            n_cols: np.ndarray, n_flat: int, row_terms: np.ndarray, use_max: bool) -> tuple[np.ndarray, np.ndarray]:
    """The flat function vector with every message, and every step's rows phi_l(z, k) in row order (``row_terms``
    one term per row, or empty for none)."""
    flat = np.empty(n_flat)
    flat[: values.size] = values
    phis = np.empty(row_off[-1])
    for m in range(K.size):
        k, r0 = K[m], row_off[m]
        for z in range((row_off[m + 1] - r0) // k):
            for j in range(k):
                r = r0 + z * k + j
                s = 0.0
                for c in range(n_cols[m]):
                    s += flat[index[r, c]]
                if row_terms.size:
                    s += row_terms[r]
                phis[r] = s
            flat[msg_off[m] + z] = _reduce(phis[r0 + z * k: r0 + (z + 1) * k], use_max)
    return flat, phis


@njit(cache=True)
def backward(flat: np.ndarray, phis: np.ndarray, K: np.ndarray, row_off: np.ndarray, msg_off: np.ndarray,
             index: np.ndarray, n_cols: np.ndarray, col_msg: np.ndarray, state_off: np.ndarray,
             table_size: int) -> np.ndarray:
    """The factor marginals, flat as the values: steps in reverse order, each step's beliefs phi + o from the outside
    terms its consumer left (0 at a root), log Z of the step's component their log-sum-exp."""
    out = np.zeros(table_size)
    outside = np.zeros(state_off[-1])
    for m in range(K.size - 1, -1, -1):
        k, r0, r1 = K[m], row_off[m], row_off[m + 1]
        belief = np.empty(r1 - r0)
        for r in range(r0, r1):
            belief[r - r0] = phis[r] + outside[state_off[m] + (r - r0) // k]
        log_z = _reduce(belief, False)
        for c in range(n_cols[m]):
            source = col_msg[m, c]
            if source < 0:  # a factor table: its marginal
                for r in range(r0, r1):
                    out[index[r, c]] += math.exp(belief[r - r0] - log_z)
                continue
            base, size = msg_off[source], state_off[source + 1] - state_off[source]
            top = np.full(size, -np.inf)
            for r in range(r0, r1):
                y = index[r, c] - base
                top[y] = max(top[y], belief[r - r0])
            total = np.zeros(size)
            for r in range(r0, r1):
                y = index[r, c] - base
                if belief[r - r0] != -np.inf:
                    total[y] += math.exp(belief[r - r0] - top[y])
            for y in range(size):
                o = state_off[source] + y
                outside[o] = -np.inf if top[y] == -np.inf else top[y] + math.log(total[y]) - flat[base + y]
    return out


@njit(cache=True)
def sample(phis: np.ndarray, K: np.ndarray, row_off: np.ndarray, variable: np.ndarray, scope_off: np.ndarray,
           scope_vars: np.ndarray, n_actions: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """Ancestral sampling: steps in reverse order, each agent drawn from its step's row given the agents already
    drawn in its message scope, by the cumulative sums of exp(phi - max) against ``uniforms[s]`` (step S - 1 - s)."""
    S, n = K.size, uniforms.shape[1]
    actions = np.zeros((n, n_actions.size), dtype=np.int64)
    cdf = np.empty(K.max() if S else 0)
    for s in range(S):
        m = S - 1 - s
        k = K[m]
        for i in range(n):
            z = 0
            for c in range(scope_off[m], scope_off[m + 1]):
                z = z * n_actions[scope_vars[c]] + actions[i, scope_vars[c]]
            row = row_off[m] + z * k
            top = phis[row]
            for j in range(1, k):
                top = max(top, phis[row + j])
            total = 0.0
            for j in range(k):
                total += math.exp(phis[row + j] - top)
                cdf[j] = total
            u, drawn = uniforms[s, i] * total, 0
            for j in range(k):
                drawn += u >= cdf[j]
            actions[i, variable[m]] = min(drawn, k - 1)
    return actions
