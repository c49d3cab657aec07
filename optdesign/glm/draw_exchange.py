"""The exchange of an N-run pseudo-Bayesian design: one run moved at a time, every move priced over all the draws.

An exact design has counts n_k (N runs) and, under draw s, the information M_s = sum_k n_k nu_ks x_k x_k^T. The loss
is the D-criterion's -sum_s pi_s log det M_s, or the trace criteria's sum_s pi_s tr(B_s M_s^{-1}) (A: B_s = I, I: a
region's moments). Moving one run from x_i to x_j changes every M_s by the rank-two U C U^T of the linearised rows
sqrt(nu_is) x_i, sqrt(nu_js) x_j (:mod:`optdesign.exact_designs.criteria`, per draw): with h_j = nu_js x_j^T M_s^{-1}
x_j, h_i alike and h_ij = sqrt(nu_is nu_js) x_i^T M_s^{-1} x_j,

    det M_s' / det M_s = r_s = (1 + h_j)(1 - h_i) + h_ij^2,
    tr(B_s M_s'^{-1}) = tr(B_s M_s^{-1}) - (b_j (h_i - 1) - 2 h_ij b_ij + (1 + h_j) b_i) / (-r_s),

b the same forms in M_s^{-1} B_s M_s^{-1}. The gain of a move is the prior mean of the per-draw gains (log r_s for
D), vectorised over the draws and a chunk of candidates from the factors L_s^{-1} of the M_s; a move making some M_s
(nearly) singular (r_s <= MIN_DET_RATIO) is never made.

Each step makes the best move over all (design point i, candidate j) (Fedorov's exchange), pruned by a bound that
needs only the prices of the approximate designs' certificates, recomputed once per step over all K candidates
(O(K S p^2)): with d_j = sum_s pi_s nu_js x_j^T M_s^{-1} x_j (D) and e_j = sum_s pi_s nu_js x_j^T M_s^{-1} B_s
M_s^{-1} x_j (A, I),

* D: h_ij^2 <= h_i h_j gives r_s <= 1 + h_j - h_i, and Jensen's inequality sum_s pi_s log r_s <= log(1 + d_j - d_i);
* A, I: tr(B M^{-1}) is convex in M, so a move lowers it by at most nu_j x_j^T Q x_j - nu_i x_i^T Q x_i per draw,
  e_j - e_i over the prior.

Candidates are priced in decreasing order of d_j (or e_j), a chunk at a time, each chunk whitened once per step
(the rows L_s^{-1} x_j of every draw by one matrix product, and C_s^T M_s^{-1} x_j for A and I, B_s = C_s C_s^T),
against every design point whose bound still exceeds the best gain found; the search stops at the first chunk where
no point's does. For D a second bound, sum_s pi_s log r_s <= log(sum_s pi_s r_s) on the exact ratios, leaves out
most candidates before any logarithm is taken. When no single move improves, two runs are moved at once
(:mod:`optdesign.glm.draw_pairs`: pairs of the best single moves from the design points to them and to the
``SHORTLIST`` candidates of largest price), and single moves go on after an improving pair.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..exact_designs.criteria import MIN_DET_RATIO
from .draw_pairs import PAIRS_FROM, SIGNS, pair_candidates, pair_gains
from .prior import BayesianProblem
from .trace_prior import moment_factors
from .traces import trace_prices, trace_value
from .variances import Factors, draw_factors, log_det_mean, prices

__all__ = ["local_optimum"]  # DrawSearch, Whitening and Rows are its pieces

#: candidates priced at once (one whitening product, and one block of every design point's gains)
CHUNK = 64
#: a move must lower the loss by this much (relative to 1 + |loss|) to be made, so the search cannot cycle
MIN_GAIN = 1e-10
#: moves (a pair counts as one) before a search stops, whether or not it reached a local optimum
MAX_STEPS = 10_000
#: the candidates of largest price that pairs of moves may go to, beside the design points
SHORTLIST = 64


@dataclass(frozen=True)
class Rows:
    """Whitened candidates under every draw: y = L_s^{-1} x (m x p x S), h = nu_s x^T M_s^{-1} x (m x S), and for A
    and I z = C_s^T M_s^{-1} x, b = nu_s ||z||^2 (None for D); nu their GLM weights (m x S)."""

    y: np.ndarray
    h: np.ndarray
    nu: np.ndarray
    z: np.ndarray | None
    b: np.ndarray | None


class Whitening:
    """The factors of one design's M_s as two p x p S matrices, so that whitening m candidates is one product."""

    def __init__(self, problem: BayesianProblem, factors: Factors, moments: np.ndarray | None):
        inverse = factors[1]  # L_s^{-1}, S x p x p
        S, p, _ = inverse.shape
        self.X, self.nu_all = problem.X, problem.nu
        self.W = inverse.transpose(2, 1, 0).reshape(p, p * S)  # W[b, (a, s)] = (L_s^{-1})_ab
        self.V = None
        if moments is not None:
            C = moment_factors(moments)  # C_s C_s^T = B_s
            V = C.transpose(0, 2, 1) @ (inverse.transpose(0, 2, 1) @ inverse)  # C_s^T M_s^{-1}
            self.V = np.ascontiguousarray(V.transpose(2, 1, 0)).reshape(p, p * S)

    def rows(self, index: np.ndarray) -> Rows:
        """The whitened candidates ``index``."""
        X = self.X[index]
        m, p = X.shape
        y = (X @ self.W).reshape(m, p, -1)
        nu = self.nu_all[index]
        h = nu * np.einsum("mas,mas->ms", y, y)
        if self.V is None:
            return Rows(y, h, nu, None, None)
        z = (X @ self.V).reshape(m, p, -1)
        return Rows(y, h, nu, z, nu * np.einsum("mas,mas->ms", z, z))


@dataclass
class DrawSearch:
    """One exchange from given counts: the problem, the matrices B_s of a trace criterion (None for D)."""

    #: candidates, draws, GLM weights nu (K x S) and prior weights
    problem: BayesianProblem
    #: B_s of tr(B_s M_s^{-1}), S x p x p or 1 x p x p; None for the D-criterion
    moments: np.ndarray | None
    #: whether a candidate may hold several runs
    replicates: bool
    #: runs per candidate (nonnegative integers)
    counts: np.ndarray
    #: moves made (runs moved)
    moves: int = 0
    #: whether pairs of moves are tried at a local optimum of single moves
    pairs: bool = True

    def factors(self) -> Factors | None:
        """L_s and L_s^{-1} of every M_s of the counts, or None when some M_s is numerically singular."""
        support = np.flatnonzero(self.counts)
        return draw_factors(self.problem.X[support], self.problem.nu[support], self.counts[support].astype(float))

    def loss_and_prices(self, factors: Factors) -> tuple[float, np.ndarray]:
        """The loss (module doc) and the prices d (D) or e (A, I) of every candidate."""
        problem = self.problem
        if self.moments is None:
            return -log_det_mean(factors, problem.prior), prices(problem.X, problem.nu, problem.prior, factors[1])
        e, _ = trace_prices(problem.X, problem.nu, problem.prior, self.moments, factors)
        return trace_value(factors, problem.prior, self.moments), e

    def bounds(self, price: float, own: np.ndarray) -> np.ndarray:
        """Upper bounds on the gain of moving a run from design points of prices ``own`` to a candidate of price
        ``price`` (module doc): log(1 + d_j - d_i) for D (-inf when not positive), e_j - e_i for A and I."""
        step = price - own
        if self.moments is not None:
            return step
        out = np.full(step.shape, -np.inf)
        ok = step > -1.0
        out[ok] = np.log1p(step[ok])
        return out

    def gains(self, points: Rows, a: int, chunk: Rows, floor: float) -> np.ndarray:
        """The gains (loss decreases) of moving one run from design point ``a`` of ``points`` to each candidate of
        ``chunk``, -inf where some M_s' is (nearly) singular (module doc); for D, -inf too where the Jensen bound
        log(sum_s pi_s r_s) does not exceed ``floor`` (no log is taken there)."""
        prior = self.problem.prior
        cross = np.einsum("mas,as->ms", chunk.y, points.y[a])  # x_i^T M_s^{-1} x_j
        both = chunk.nu * points.nu[a]
        ratio = (1.0 + chunk.h) * (1.0 - points.h[a]) + both * cross * cross
        ok = ratio.min(axis=1) > MIN_DET_RATIO
        out = np.full(ratio.shape[0], -np.inf)
        if points.z is None or points.b is None or chunk.z is None or chunk.b is None:
            hopeful = ok & (ratio @ prior > np.exp(floor))
            out[hopeful] = np.log(ratio[hopeful]) @ prior
            return out
        b_ij = np.einsum("mas,as->ms", chunk.z, points.z[a])
        numerator = chunk.b * (points.h[a] - 1.0) - 2.0 * both * cross * b_ij + (1.0 + chunk.h) * points.b[a]
        out[ok] = -(numerator[ok] / ratio[ok]) @ prior
        return out

    def best_move(self, factors: Factors, loss: float, candidate_prices: np.ndarray) -> tuple[int, int] | None:
        """The move (i, j) of largest gain above MIN_GAIN (1 + |loss|), the candidates whitened by chunks in
        decreasing price and each design point pruned by its bound (module doc); None at a local optimum."""
        whitening = Whitening(self.problem, factors, self.moments)
        order = np.argsort(-candidate_prices, kind="stable")
        points = np.flatnonzero(self.counts)
        own, rows = candidate_prices[points], whitening.rows(points)
        best_gain, best = MIN_GAIN * (1.0 + abs(loss)), None
        for start in range(0, order.size, CHUNK):
            J = order[start:start + CHUNK]
            active = np.flatnonzero(self.bounds(float(candidate_prices[J[0]]), own) > best_gain)
            if active.size == 0:
                break
            chunk = whitening.rows(J)
            for a in active[np.argsort(own[active], kind="stable")]:
                gain = self.gains(rows, int(a), chunk, best_gain)
                gain[J == points[a]] = -np.inf
                if not self.replicates:
                    gain[self.counts[J] > 0] = -np.inf
                k = int(np.argmax(gain))
                if gain[k] > best_gain:
                    best_gain, best = float(gain[k]), (int(points[a]), int(J[k]))
        return best

    def best_pair(self, factors: Factors, loss: float, candidate_prices: np.ndarray) -> np.ndarray | None:
        """The pair of moves of largest gain above MIN_GAIN (1 + |loss|), as [j1, i1, j2, i2] (runs added at j1 and
        j2, taken from i1 and i2), among the pairs of the PAIRS_FROM best single moves from the design points to
        the design points and the SHORTLIST candidates of largest price; None when none improves."""
        whitening = Whitening(self.problem, factors, self.moments)
        points = np.flatnonzero(self.counts)
        shortlist = np.argsort(-candidate_prices, kind="stable")[:SHORTLIST]
        targets = np.union1d(points, shortlist)
        rows, chunk = whitening.rows(points), whitening.rows(targets)
        table = np.stack([self.gains(rows, a, chunk, -np.inf) for a in range(points.size)])
        table[points[:, None] == targets[None, :]] = -np.inf
        if not self.replicates:
            table[:, self.counts[targets] > 0] = -np.inf
        best = np.argsort(-table, axis=None, kind="stable")[:PAIRS_FROM]
        best = best[np.isfinite(table.ravel()[best])]
        a, t = np.unravel_index(best, table.shape)
        combos = pair_candidates(self.counts, points[a], targets[t], self.replicates)
        if combos.shape[0] == 0:
            return None
        involved, local = np.unique(combos, return_inverse=True)
        picked = whitening.rows(involved)
        gains = pair_gains(picked.y, picked.nu, picked.z, self.problem.prior, local.reshape(combos.shape))
        k = int(np.argmax(gains))
        return combos[k] if gains[k] > MIN_GAIN * (1.0 + abs(loss)) else None

    def run(self) -> float:
        """Best single moves, and a pair at each local optimum of them, until neither improves the loss (or
        MAX_STEPS); the final loss (``counts`` updated in place).

        Raises
        ------
        numpy.linalg.LinAlgError
            The starting counts leave some M_s singular.
        """
        factors = self.factors()
        if factors is None:
            raise np.linalg.LinAlgError("the start leaves some draw's information singular")
        loss, candidate_prices = self.loss_and_prices(factors)
        for _ in range(MAX_STEPS):
            single = self.best_move(factors, loss, candidate_prices)
            change = np.array(single[::-1]) if single is not None else \
                (self.best_pair(factors, loss, candidate_prices) if self.pairs else None)
            if change is None:
                break
            signs = SIGNS[:change.size]
            np.add.at(self.counts, change, signs)
            moved = self.factors()
            new_loss, new_prices = (np.inf, candidate_prices) if moved is None else self.loss_and_prices(moved)
            if moved is None or not new_loss < loss:  # rounding made a (nearly) singular move look improving
                np.add.at(self.counts, change, -signs)
                break
            factors, loss, candidate_prices = moved, new_loss, new_prices
            self.moves += change.size // 2
        return float(loss)


def local_optimum(problem: BayesianProblem, moments: np.ndarray | None, counts: np.ndarray,
                  replicates: bool) -> tuple[np.ndarray, float, int]:
    """The exchange from ``counts``: (the counts of the local optimum, its loss, moves made).

    Parameters
    ----------
    problem : BayesianProblem
        The candidates, draws and weights.
    moments : numpy.ndarray or None
        B_s of a trace criterion (S x p x p or 1 x p x p), None for D.
    counts : numpy.ndarray
        The starting runs per candidate.
    replicates : bool
        Whether a candidate may hold several runs.

    Returns
    -------
    tuple
        Counts, loss (module doc; smaller is better) and moves.

    Raises
    ------
    numpy.linalg.LinAlgError
        The starting counts leave some M_s singular.
    """
    search = DrawSearch(problem, moments, replicates, counts.astype(np.int64).copy())
    loss = search.run()
    return search.counts, loss, search.moves
