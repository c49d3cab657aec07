"""Indexing joint actions of a factored multi-agent bandit: mixed-radix codes and group-action positions.

* Codes: a joint action a = (a_1..a_N) is identified by its index among all prod K_i joint actions in C order
  (agent 0 most significant, as ``np.ravel_multi_index``), a Python ``int`` exact for any N (e.g. 3^50).
  :func:`encode_joint` and :func:`decode` combine halves, so N-agent codes cost a few big-integer products.
  A factored instance's ``best_item`` and its policies' recommendations are such codes.
* Group actions: :class:`GroupIndexer` maps a batch of joint actions to the flat positions (e, a_{S_e}) of
  their group actions in :attr:`optdesign.FactorGraph.means` order, and to the group counts N_{e,b} that
  :meth:`bandits.multiagent.environment.FactoredBandit.pull` takes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from optdesign import FactorGraph
from optdesign.errors import InvalidInputError

__all__ = ["SHOWN_AGENTS", "GroupIndexer", "decode", "encode_joint", "show_joint"]

#: agents a joint action shows in tables before an ellipsis
SHOWN_AGENTS = 24

#: entries of the (rounds x factors x scope) index array held at once when indexing a batch
INDEX_CHUNK = 2**22


class GroupIndexer:
    """Flat group-action positions of joint actions, vectorised over a whole batch.

    ``flat(actions)`` maps an (R, N) array of joint actions to the (R, rho) array of positions
    offset_e + ravel(a_{S_e}) in the layout of :attr:`optdesign.FactorGraph.means`; the same as
    ``FactorGraph.group_indices`` but one gather for all factors at once (scopes padded with a
    dummy agent of stride 0).

    Parameters
    ----------
    fg : FactorGraph
        The structure (agents, action counts, scopes); the mean tables are not read.
    """

    def __init__(self, fg: FactorGraph) -> None:
        self.n_agents = fg.n_agents
        self.n_factors = fg.n_factors
        self.n_actions = np.asarray(fg.n_actions, dtype=np.int64)
        self.abar = fg.abar
        width = max(len(s) for s in fg.scopes)
        self.scopes = np.full((fg.n_factors, width), fg.n_agents, dtype=np.int64)  # padded with the dummy agent
        self.strides = np.zeros((fg.n_factors, width), dtype=np.int64)
        for e, (scope, table) in enumerate(zip(fg.scopes, fg.tables, strict=True)):
            self.scopes[e, : len(scope)] = scope
            shape = table.shape
            self.strides[e, : len(scope)] = [int(np.prod(shape[p + 1:], dtype=np.int64)) for p in range(len(shape))]
        self.offsets = np.asarray(fg.plan().factor_offsets[:-1], dtype=np.int64)
        #: factor of every flat group action
        self.factor_of = np.repeat(np.arange(fg.n_factors), fg.table_sizes)
        self._first = int(fg.table_sizes[0])

    def check(self, actions: npt.ArrayLike) -> npt.NDArray[np.int64]:
        """Joint actions as an (R, N) int64 array (one row per round), or InvalidInputError.

        Parameters
        ----------
        actions : array_like of int, shape (R, N) or (N,)
            Joint actions, a_i in 0..K_i-1 for agent i.

        Returns
        -------
        ndarray of int64, shape (R, N)
            The same actions (a single action becomes one row).

        Raises
        ------
        InvalidInputError
            Wrong shape, non-integer entries, or an action out of range.
        """
        a = np.asarray(actions)
        if a.ndim == 1:
            a = a[None, :]
        if a.ndim != 2 or a.shape[1] != self.n_agents:
            raise InvalidInputError(f"joint actions must have shape (R, {self.n_agents}) (one action per agent), "
                                    f"got {np.shape(actions)}")
        if not np.issubdtype(a.dtype, np.integer):
            raise InvalidInputError("joint actions must be integers")
        if a.size and (np.any(a < 0) or np.any(a >= self.n_actions)):
            raise InvalidInputError("joint action out of range: a_i must lie in 0..K_i-1")
        return a.astype(np.int64, copy=False)

    def flat(self, actions: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """(R, rho) flat positions of the group actions of each row of ``actions`` (unchecked).

        Parameters
        ----------
        actions : ndarray of int64, shape (R, N)
            Valid joint actions (as :meth:`check` returns them).

        Returns
        -------
        ndarray of int64, shape (R, rho)
            Entry (r, e) is the position of (e, a_{S_e}) in :attr:`optdesign.FactorGraph.means`.
        """
        R = actions.shape[0]
        ext = np.concatenate([actions, np.zeros((R, 1), dtype=np.int64)], axis=1)
        return self.offsets + (ext[:, self.scopes] * self.strides).sum(axis=2)

    def counts(self, actions: npt.NDArray[np.int64],
               reps: npt.NDArray[np.int64] | None = None) -> npt.NDArray[np.int64]:
        """Group counts N_{e,b} of a batch: row r of ``actions`` played ``reps[r]`` times (default once).

        Parameters
        ----------
        actions : ndarray of int64, shape (R, N)
            Valid joint actions (unchecked); indexed in chunks of ``INDEX_CHUNK`` entries.
        reps : ndarray of int, shape (R,), optional
            Plays of every row; None plays each once.

        Returns
        -------
        ndarray of int64, shape (Abar,)
            Observations of every group action (rho per play).
        """
        R = actions.shape[0]
        out = np.zeros(self.abar, dtype=np.int64)
        step = max(1, INDEX_CHUNK // max(1, self.scopes.size))
        for lo in range(0, R, step):
            idx = self.flat(actions[lo:lo + step]).ravel()
            w = None if reps is None else np.repeat(np.asarray(reps[lo:lo + step], dtype=np.int64), self.n_factors)
            out += np.bincount(idx, weights=w, minlength=self.abar).astype(np.int64)
        return out

    def rounds_in(self, counts: npt.NDArray[np.int64]) -> int:
        """Rounds in a batch of group counts: every round adds one count to factor 0.

        Parameters
        ----------
        counts : ndarray of int, shape (Abar,)
            Group counts of a batch.

        Returns
        -------
        int
            The sum of factor 0's counts.
        """
        return int(counts[: self._first].sum())


#: digits handled one by one below this many agents; above, the halves are combined (divide and conquer)
_RADIX_LEAF = 32


def encode_joint(action: npt.ArrayLike, n_actions: Iterable[int]) -> int:
    """Index of a joint action among all joint actions in C order (mixed radix, agent 0 most significant).

    Halves are combined as code(left) * prod K(right) + code(right), so the cost is a few big-integer products
    instead of one N-digit integer per agent (strides are quadratic in N).

    Parameters
    ----------
    action : array_like of int, shape (N,)
        The joint action, a_i in 0..K_i-1 (not checked).
    n_actions : iterable of int
        K_i for every agent.

    Returns
    -------
    int
        The code, a Python int (exact for any N), as ``np.ravel_multi_index`` would give in C order.
    """
    digits = [int(a) for a in np.asarray(action).tolist()]
    radices = [int(k) for k in n_actions]

    def part(lo: int, hi: int) -> tuple[int, int]:  # (code of digits[lo:hi], product of radices[lo:hi])
        if hi - lo <= _RADIX_LEAF:
            code, size = 0, 1
            for a, k in zip(digits[lo:hi], radices[lo:hi], strict=True):
                code, size = code * k + a, size * k
            return code, size
        mid = (lo + hi) // 2
        (left, left_size), (right, right_size) = part(lo, mid), part(mid, hi)
        return left * right_size + right, left_size * right_size

    return part(0, len(digits))[0]


def decode(code: int, n_actions: Iterable[int]) -> npt.NDArray[np.int64]:
    """Inverse of :func:`encode_joint`: the joint action of a code (by halves, like :func:`encode_joint`).

    Parameters
    ----------
    code : int
        Index of a joint action in C order (e.g. a run's recommendation on a factored instance).
    n_actions : iterable of int
        K_i for every agent.

    Returns
    -------
    ndarray of int64, shape (N,)
        The joint action.

    Raises
    ------
    InvalidInputError
        ``code`` is negative or not below prod K_i.
    """
    code = int(code)
    radices = [int(k) for k in n_actions]
    out = np.zeros(len(radices), dtype=np.int64)

    def size_of(lo: int, hi: int) -> int:
        return _product(radices[lo:hi])

    def part(value: int, lo: int, hi: int) -> None:
        if hi - lo <= _RADIX_LEAF:
            for i in range(hi - 1, lo - 1, -1):
                value, out[i] = divmod(value, radices[i])
            return
        mid = (lo + hi) // 2
        left, right = divmod(value, size_of(mid, hi))
        part(left, lo, mid)
        part(right, mid, hi)

    if not 0 <= code < size_of(0, len(radices)):
        raise InvalidInputError("code exceeds the number of joint actions")
    part(code, 0, len(radices))
    return out


def show_joint(action: Iterable[int]) -> str:
    """A joint action as tables show it: ``(a0,a1,...)``, its first :data:`SHOWN_AGENTS` agents then an ellipsis.

    Parameters
    ----------
    action : iterable of int
        One action per agent.

    Returns
    -------
    str
        The text.
    """
    shown = [int(a) for a in action]
    return f"({','.join(map(str, shown[:SHOWN_AGENTS]))}{',…' if len(shown) > SHOWN_AGENTS else ''})"


def _product(values: list[int]) -> int:
    """prod(values) as a Python int, by halves (balanced big-integer products)."""
    if len(values) <= _RADIX_LEAF:
        return math.prod(values)
    mid = len(values) // 2
    return _product(values[:mid]) * _product(values[mid:])
