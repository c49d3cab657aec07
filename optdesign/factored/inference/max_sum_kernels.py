"""Max-sum's elimination pass and greedy assignment, compiled (:class:`optdesign.factored.inference.max_sum.MaxSum`).

The same operations as the numpy pass in the same order: each row's inputs added left to right (as
:func:`~optdesign.factored.inference.max_sum.gathered_sum` does up to ``COLUMN_SUM_INPUTS`` inputs), the message the
row maximum, the regret the maximum minus the row, the choice the first maximiser. So the messages, regrets, choices and
the best joint action are those of the numpy pass, bit for bit (``tests/test_max_sum_kernels.py``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["assign", "forward"]


@njit(cache=True)
def forward(values: np.ndarray, K: np.ndarray, row_off: np.ndarray, msg_off: np.ndarray, index: np.ndarray,
            n_cols: np.ndarray, state_off: np.ndarray, n_flat: int,
            keep_regrets: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The flat function vector with every message, the regrets in row order (empty unless ``keep_regrets``) and
    the choices of every message entry (message m at ``state_off[m]``)."""
    flat = np.empty(n_flat)
    flat[: values.size] = values
    regrets = np.empty(row_off[-1] if keep_regrets else 0)
    choices = np.empty(state_off[-1], dtype=np.int64)
    for m in range(K.size):
        k, r0 = K[m], row_off[m]
        phi = np.empty(k)
        for z in range(state_off[m + 1] - state_off[m]):
            best, choice = 0.0, 0
            for j in range(k):
                r = r0 + z * k + j
                s = flat[index[r, 0]]
                for c in range(1, n_cols[m]):
                    s += flat[index[r, c]]
                phi[j] = s
                if j == 0 or s > best:
                    best, choice = s, j
            flat[msg_off[m] + z] = best
            choices[state_off[m] + z] = choice
            if keep_regrets:
                for j in range(k):
                    regrets[r0 + z * k + j] = best - phi[j]
    return flat, regrets, choices


@njit(cache=True)
def assign(action: np.ndarray, start: int, scope_pad: np.ndarray, stride_pad: np.ndarray, variables: np.ndarray,
           choice_offsets: np.ndarray, choices: np.ndarray) -> np.ndarray:
    """Greedy (zero-regret) assignment of positions start.. (reverse elimination order) in place: each agent takes
    the choice of its message at the state of the agents already assigned."""
    for p in range(start, variables.size):
        z = 0
        for w in range(scope_pad.shape[1]):
            z += action[scope_pad[p, w]] * stride_pad[p, w]
        action[variables[p]] = choices[choice_offsets[p] + z]
    return action
