"""Multi-agent bandits with a factored mean reward and semi-bandit Gaussian feedback (MF-TaS §3, spec §1.1).

N agents, factor e with scope S_e and mean table theta_e (an :class:`optdesign.FactorGraph`). Playing the
joint action a = (a_1..a_N) returns one observation r_e ~ N(theta_e(a_e), sigma^2) for EVERY factor e,
independent across factors and rounds; the global mean is theta(a) = sum_e theta_e(a_e).

Batch interface (what :func:`bandits.run.run` drives). The runner's "arms" are the Abar group actions
(e, b), flattened in :attr:`optdesign.FactorGraph.means` order (factor by factor, each table in C order
over its scope), as the bilinear environment's arms are edge arms:

* a policy turns the joint actions of a batch into group counts N_{e,b} with :meth:`GroupIndexer.counts`
  (one vectorised gather and one ``np.bincount``);
* ``pull(counts, rng)`` returns, for every (e, b), the sum of its ``counts[e, b]`` observations in one
  Gaussian draw, counts * theta_e(b) + sigma sqrt(counts) xi. This is exact in law: the observations of
  (e, b) are i.i.d. N(theta_e(b), sigma^2) whatever joint actions produced them, and distinct (e, b) are
  independent. A batch of n plays of one joint action adds n to N_{e, a_e} for every e.

One round therefore yields rho observations: the runner's ``samples`` counts observations, and the
policies report ``rounds`` (joint actions played, the paper's tau). ``best_item`` is the best joint
action a* (unique: ties raise InvalidInputError from optdesign) encoded as a Python ``int`` in mixed
radix (agent 0 most significant, as ``np.ravel_multi_index`` in C order; exact for any N, e.g. 3^50),
so the runner can compare it with a policy's recommendation; :meth:`FactoredBandit.decode` turns a
code back into the joint action.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from optdesign import FactorGraph
from optdesign.errors import InvalidInputError
from optdesign.validation import count_text

from ..environments import as_counts, check_sigma, gaussian_sums

#: entries of the (rounds x factors x scope) index array held at once when indexing a batch
INDEX_CHUNK = 2**22


class GroupIndexer:
    """Flat group-action positions of joint actions, vectorised over a whole batch.

    ``flat(actions)`` maps an (R, N) array of joint actions to the (R, rho) array of positions
    offset_e + ravel(a_{S_e}) in the layout of :attr:`optdesign.FactorGraph.means`; the same as
    ``FactorGraph.group_indices`` but one gather for all factors at once (scopes padded with a
    dummy agent of stride 0).
    """

    def __init__(self, fg: FactorGraph):
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

    def check(self, actions) -> np.ndarray:
        """Joint actions as an (R, N) int64 array (one row per round), or InvalidInputError."""
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

    def flat(self, actions: np.ndarray) -> np.ndarray:
        """(R, rho) flat positions of the group actions of each row of ``actions`` (unchecked)."""
        R = actions.shape[0]
        ext = np.concatenate([actions, np.zeros((R, 1), dtype=np.int64)], axis=1)
        return self.offsets + (ext[:, self.scopes] * self.strides).sum(axis=2)

    def counts(self, actions: np.ndarray, reps: np.ndarray | None = None) -> np.ndarray:
        """Group counts N_{e,b} of a batch: row r of ``actions`` played ``reps[r]`` times (default once)."""
        R = actions.shape[0]
        out = np.zeros(self.abar, dtype=np.int64)
        step = max(1, INDEX_CHUNK // max(1, self.scopes.size))
        for lo in range(0, R, step):
            idx = self.flat(actions[lo:lo + step]).ravel()
            w = None if reps is None else np.repeat(np.asarray(reps[lo:lo + step], dtype=np.int64), self.n_factors)
            out += np.bincount(idx, weights=w, minlength=self.abar).astype(np.int64)
        return out

    def rounds_in(self, counts: np.ndarray) -> int:
        """Rounds in a batch of group counts: every round adds one count to factor 0."""
        return int(counts[: self._first].sum())


def joint_strides(n_actions) -> list[int]:
    """Mixed-radix place values (Python ints, exact for any N): agent 0 most significant."""
    strides, place = [], 1
    for k in reversed(list(n_actions)):
        strides.append(place)
        place *= int(k)
    return strides[::-1]


def encode(action, strides: list[int]) -> int:
    """Joint action -> its index among all joint actions in C order (a Python int)."""
    return int(sum(int(a) * s for a, s in zip(np.asarray(action).tolist(), strides, strict=True)))


#: digits handled one by one below this many agents; above, the halves are combined (divide and conquer)
_RADIX_LEAF = 32


def encode_joint(action, n_actions) -> int:
    """:func:`encode` from the action counts K_i: halves combined as code(left) * prod K(right) + code(right), so
    the cost is a few big-integer products instead of one N-digit integer per agent (strides are quadratic in N)."""
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


def decode(code: int, n_actions) -> np.ndarray:
    """Inverse of :func:`encode` (by halves, like :func:`encode_joint`)."""
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


def _product(values: list[int]) -> int:
    """prod(values) as a Python int, by halves (balanced big-integer products)."""
    if len(values) <= _RADIX_LEAF:
        return math.prod(values)
    mid = len(values) // 2
    return _product(values[:mid]) * _product(values[mid:])


def structure_of(fg: FactorGraph) -> FactorGraph:
    """The learner's view of ``fg``: same agents, actions and scopes, all-zero mean tables."""
    return FactorGraph(fg.n_actions, [(s, np.zeros(t.shape)) for s, t in zip(fg.scopes, fg.tables, strict=True)],
                       metadata={"structure_of": fg.metadata.get("generator", "factor graph")})


@dataclass(frozen=True, eq=False)
class FactoredBandit:
    """Multi-agent bandit with semi-bandit Gaussian feedback per factor (see the module docstring).

    A learner may read ``structure`` (agents, actions, scopes; zero tables), ``indexer``, ``sigma``,
    ``n_agents``/``n_factors``/``n_arms``; only oracle algorithms read ``fg`` (the true means).
    """

    fg: FactorGraph
    sigma: float = 1.0
    name: str = "factored"
    best_action: np.ndarray = field(init=False)
    best_item: int = field(init=False)
    gap_min: float = field(init=False)
    structure: FactorGraph = field(init=False)
    indexer: GroupIndexer = field(init=False)

    def __post_init__(self):
        if not isinstance(self.fg, FactorGraph):
            raise InvalidInputError(f"fg must be an optdesign FactorGraph, got {type(self.fg).__name__}")
        gap = self.fg.gap_min()  # raises InvalidInputError when the best joint action is not unique
        best = self.fg.best_action()
        object.__setattr__(self, "sigma", check_sigma(self.sigma))
        object.__setattr__(self, "best_action", best)
        object.__setattr__(self, "best_item", encode_joint(best, self.fg.n_actions))
        object.__setattr__(self, "gap_min", float(gap))
        object.__setattr__(self, "structure", structure_of(self.fg))
        object.__setattr__(self, "indexer", GroupIndexer(self.fg))

    @property
    def n_arms(self) -> int:
        """Abar, the number of group actions (the length of ``pull``'s counts)."""
        return self.fg.abar

    @property
    def n_agents(self) -> int:
        return self.fg.n_agents

    @property
    def n_factors(self) -> int:
        """rho: observations per round."""
        return self.fg.n_factors

    @property
    def means(self) -> np.ndarray:
        """theta_e(b) for every group action, flat (the arms of ``pull``)."""
        return self.fg.means

    def encode(self, action) -> int:
        return encode_joint(self.indexer.check(action)[0], self.fg.n_actions)

    def decode(self, code: int) -> np.ndarray:
        return decode(code, self.fg.n_actions)

    def group_counts(self, actions, reps=None) -> np.ndarray:
        """Counts N_{e,b} of the joint actions ``actions`` (R x N), row r played ``reps[r]`` times."""
        a = self.indexer.check(actions)
        if reps is not None:
            reps = as_counts(reps, a.shape[0])
        return self.indexer.counts(a, reps)

    def pull(self, counts, rng: np.random.Generator) -> np.ndarray:
        """Observation sums of a batch of group counts, one Gaussian draw per (e, b) (module docstring)."""
        return gaussian_sums(self.means, as_counts(counts, self.n_arms), self.sigma, rng)

    def play(self, actions, rng: np.random.Generator) -> np.ndarray:
        """Per-round, per-factor noisy rewards (R x rho) of the joint actions (R x N): the plain
        simulator, one Gaussian per observation (for checks and small runs)."""
        a = self.indexer.check(actions)
        mean = self.means[self.indexer.flat(a)]
        return mean + self.sigma * rng.standard_normal(mean.shape)

    def describe(self) -> dict:
        return {"name": self.name, "N": self.n_agents, "factors": self.n_factors, "Abar": self.n_arms,
                "joint_actions": count_text(self.fg.n_joint_actions), "sigma": self.sigma, "gap_min": self.gap_min}
