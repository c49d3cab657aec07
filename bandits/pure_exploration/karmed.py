"""K-armed best-arm identification with rewards from a one-parameter exponential family.

Answers are the arms; the pieces at (mu, w) are the other arms a, with closest alternative moving mu_best and
mu_a to their weighted mean m_a = (w_b mu_b + w_a mu_a) / (w_b + w_a), so

    f_a(w) = w_b d(mu_b, m_a) + w_a d(mu_a, m_a)          (Garivier & Kaufmann, COLT 2016, Lemma 3).

The oracle solves GK16's Theorem 5: with x_a(y) the inverse of g_a(x) = (1 + x) I_{1/(1+x)}(mu_b, mu_a),
find y* with sum_a d(mu_b, m_a) / d(mu_a, m_a) = 1 (m_a at weights (1, x_a(y*))); then
w_b = 1 / (1 + sum_a x_a), w_a = x_a w_b and T* = (1 + sum_a x_a) / y*. Both levels are Newton iterations
safeguarded by bisection: the inner inverses, vectorised over the arms, on u = x / (1 + x) in [0, 1), where
g_a(x) = d(mu_b, m) + x d(mu_a, m) has derivative d(mu_a, m) (envelope theorem: m minimises the weighted
divergence), and the outer equation in log y. The result is certified by
:func:`bandits.pure_exploration.certificate.certified_bracket`, with the multipliers p_a ~ 1 / d(mu_a, m_a) that
are optimal at w* (they equalise (p^T G)_a over the arms exactly when the balance equation holds).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from optdesign.errors import InvalidInputError, SolverError
from optdesign.validation import as_count, unique_argmax

from .certificate import certified_bracket
from .families import ExponentialFamily, Gaussian
from .optimism import Optimism
from .oracle import Oracle
from .pieces import Pieces
from .problem import Problem
from .values import checked_index

if TYPE_CHECKING:
    from .environment import KArmedBandit

__all__ = ["KArmedOptimism", "KArmedProblem"]

#: a Newton iteration has converged when its step or its bracket is this small relative to the iterate
RTOL = 1e-13
#: ... or when a step this small no longer halves the previous one (round-off in the function: the floor)
STALL = 1e-8
#: iterations of either level before giving up (each at least halves the bracket or converges quadratically)
MAX_STEPS = 200
#: largest u = x / (1 + x) the inner iteration evaluates (u = 1 is x = inf)
U_MAX = float(np.nextafter(1.0, 0.0))


class KArmedProblem(Problem):
    """Best-arm identification among K arms of one exponential family.

    Parameters
    ----------
    n_arms : int
        Number K of arms (at least 2).
    family : ExponentialFamily
        The reward family (Gaussian with its sigma, Bernoulli, ...).

    Raises
    ------
    InvalidInputError
        Fewer than two arms.
    """

    kind = "karmed"
    family: ExponentialFamily

    def __init__(self, n_arms: int, family: ExponentialFamily | None = None) -> None:
        self._K = as_count(n_arms, "n_arms (a K-armed problem needs at least two arms)", minimum=2)
        self.family = family if family is not None else Gaussian()

    @classmethod
    def of_environment(cls, env: KArmedBandit) -> KArmedProblem:
        """The problem of a K-armed instance: its number of arms and its family (not its means).

        Parameters
        ----------
        env : KArmedBandit
            The instance.

        Returns
        -------
        KArmedProblem
            The problem a learner faces on it.
        """
        return cls(env.n_arms, env.family)

    @property
    def n_arms(self) -> int:
        return self._K

    @property
    def n_answers(self) -> int:
        return self._K

    def estimate(self, counts: np.ndarray, sums: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)

    def answer(self, mu: np.ndarray) -> int:
        return int(np.argmax(mu))

    def answer_value(self, answer: int, mu: np.ndarray) -> float | None:
        """mu_a: an answer is an arm."""
        return float(np.asarray(mu, dtype=float)[int(answer)])

    def pieces(self, mu: np.ndarray, w: np.ndarray, *, gradients: bool = True) -> Pieces:
        mu, w = self.check_shapes(mu, w)
        b = self.answer(mu)
        others = np.delete(np.arange(self._K), b)
        wb, wa = float(w[b]), np.asarray(w, dtype=float)[others]
        total = wb + wa
        safe = np.where(total > 0, total, 1.0)
        m = np.where(total > 0, (wb * mu[b] + wa * mu[others]) / safe, 0.5 * (mu[b] + mu[others]))
        db, da = self.family.kl(mu[b], m), self.family.kl(mu[others], m)
        values = wb * db + wa * da
        grads = None
        if gradients:
            grads = np.zeros((others.size, self._K))
            grads[:, b] = db
            grads[np.arange(others.size), others] = da
        return Pieces(best=b, answers=others, values=values, gradients=grads)

    def withheld(self) -> frozenset[str]:
        """Posterior draws only for a family with a posterior."""
        return frozenset() if self.family.has_posterior else frozenset({"posterior_draws"})

    def pair_costs(self, mu: np.ndarray, counts: np.ndarray, leader: int) -> np.ndarray:
        """W_B,j = N_B d(mu_B, m) + N_j d(mu_j, m), m = (N_B mu_B + N_j mu_j) / (N_B + N_j), when mu_B > mu_j (else 0);
        inf at B. When B is the estimate's answer these are the pieces' values at (mu, N)."""
        if self.check_arm(leader) == self.answer(mu):
            pieces = self.pieces(mu, counts, gradients=False)
            out = np.full(self.n_arms, np.inf)
            out[pieces.answers] = pieces.values
            return out
        N = np.asarray(counts, dtype=float)
        m = (N[leader] * mu[leader] + N * mu) / (N[leader] + N)
        kl = self.family.kl
        W = np.where(mu[leader] > mu, N[leader] * kl(mu[leader], m) + N * kl(mu, m), 0.0)
        W[leader] = np.inf
        return W

    def pair_share(self, mu: np.ndarray, counts: np.ndarray, leader: int, challenger: int) -> float:
        """N_B d(mu_B, m) / (N_B d(mu_B, m) + N_C d(mu_C, m)) at the pair's weighted mean m (1/2 when both vanish)."""
        kl = self.family.kl
        nB, nC = float(counts[self.check_arm(leader)]), float(counts[self.check_arm(challenger)])
        m = (nB * mu[leader] + nC * mu[challenger]) / (nB + nC)
        lead, chal = nB * float(kl(mu[leader], m)), nC * float(kl(mu[challenger], m))
        return lead / (lead + chal) if lead + chal > 0 else 0.5

    def check_arm(self, arm: int) -> int:
        """``arm`` as an int if it is an arm's index (a side of a pair, whatever the answers), else one clear error.

        Parameters
        ----------
        arm : int
            An arm.

        Returns
        -------
        int
            The index.

        Raises
        ------
        InvalidInputError
            Not an integer in [0, K).
        """
        return checked_index(arm, self.n_arms, "an arm")

    def posterior_draws(self, mu: np.ndarray, counts: np.ndarray, sums: np.ndarray, size: int,
                        rng: np.random.Generator) -> np.ndarray:
        """The family's posterior (:meth:`~bandits.pure_exploration.ExponentialFamily.posterior_draws`)."""
        return self.family.posterior_draws(mu, np.asarray(counts, dtype=float), sums, size, rng)

    def upper_indices(self, mu: np.ndarray, counts: np.ndarray, level: float) -> np.ndarray:
        """The upper ends of the family's KL confidence intervals at levels level / N_k."""
        return self.family.confidence_interval(mu, level / np.asarray(counts, dtype=float))[1]

    def response(self, mu: np.ndarray, w: np.ndarray) -> np.ndarray:
        """The closest alternative lambda of the best response at (mu, w): the answer and its challenger moved to
        their weighted mean (w_b mu_b + w_a mu_a) / (w_b + w_a) (the midpoint when both weights vanish).

        Parameters
        ----------
        mu : numpy.ndarray, shape (K,)
            The means.
        w : numpy.ndarray, shape (K,)
            Weights or counts.

        Returns
        -------
        numpy.ndarray, shape (K,)
            lambda.
        """
        pieces = self.pieces(mu, w, gradients=False)
        return pair_response(mu, w, pieces.best, int(pieces.challenger))

    def optimism(self, mu: np.ndarray, counts: np.ndarray, c: float) -> KArmedOptimism:
        """LinGame's optimism over the arms' KL confidence intervals (:class:`KArmedOptimism`)."""
        return KArmedOptimism(self, mu, counts, c)

    def true_parameter(self, env: KArmedBandit) -> np.ndarray:
        """The arms' means (:meth:`~bandits.pure_exploration.Problem.true_parameter`).

        Parameters
        ----------
        env : KArmedBandit
            The instance.

        Returns
        -------
        numpy.ndarray
            ``env.means``.

        Raises
        ------
        InvalidInputError
            A tie for the best arm (no run identifies one of several best arms).
        """
        means = self.check_parameter(env.means)
        unique_argmax(means, "means")
        return means

    def oracle(self, mu: np.ndarray) -> Oracle:
        """T*(mu) and w*(mu) by GK16's Theorem 5, certified with the optimal multipliers p_a ~ 1 / d(mu_a, m_a).

        Parameters
        ----------
        mu : numpy.ndarray
            The arms' means, with a unique best.

        Returns
        -------
        Oracle
            The characteristic time in Garivier & Kaufmann's convention and the optimal weights.

        Raises
        ------
        InvalidInputError
            A parameter of the wrong length, with NaN or infinite entries, outside the family's mean space, with
            a tie for the best arm, or whose divergences d(mu_best, mu_a) underflow to 0 or overflow.
        SolverError
            The root finding did not converge (Bernoulli means within BERNOULLI_EPS of 0 or 1 but not on it, where
            the kl is clipped).
        """
        mu = self.family.check_means(self.check_parameter(mu))
        b = unique_argmax(mu, "the arms' means")
        others = np.delete(np.arange(self._K), b)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            tops = self.family.kl(mu[b], mu[others])
            if not (np.all(np.isfinite(tops)) and tops.min() > 0):
                raise InvalidInputError("the arms' divergences d(mu_best, mu_a) underflow to 0 or overflow in "
                                        "floating point: rescale the means")
            u, da = _equalise(self.family, mu[b], mu[others], tops)
            mixture = 1.0 / da  # the optimal multipliers: p_a d(mu_a, m_a) equal, sum_a p_a d(mu_b, m_a) the same
        x = u / (1.0 - u)
        weights = np.empty(self._K)
        weights[b] = 1.0 / (1.0 + x.sum())
        weights[others] = x * weights[b]
        ok = bool(np.all(np.isfinite(mixture)))
        lower, upper = certified_bracket(self, mu, weights, mixture / mixture.sum() if ok else None)
        return Oracle(T=upper, weights=weights, lower_bound=min(lower, upper))


def _newton_step(x: np.ndarray, step: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                last: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One safeguarded Newton step, elementwise: the rules of Numerical Recipes' ``rtsafe`` (Press et al., Sec. 9.4).

    The Newton point x + step is taken if it lies strictly inside the bracket (lo, hi) of the root and the step
    is at most half the last move; otherwise the bracket's midpoint. An entry has converged (and stays at x)
    when the step or the bracket is below RTOL |x|, or when a step below STALL |x| no longer halves the last
    move (the function's round-off is reached).

    Parameters
    ----------
    x : numpy.ndarray
        The iterates, where the function was just evaluated (and the bracket updated).
    step : numpy.ndarray
        Newton steps -f(x) / f'(x) (NaN or inf where the derivative fails: bisection).
    lo, hi : numpy.ndarray
        Brackets of the roots, lo <= x <= hi.
    last : numpy.ndarray
        Sizes of the previous moves (the bracket width at the start).

    Returns
    -------
    tuple of numpy.ndarray
        The next iterates and the mask of converged entries.
    """
    size = np.abs(step)
    scale = np.abs(x)
    done = (size <= RTOL * scale) | (hi - lo <= RTOL * np.abs(hi)) | ((size <= STALL * scale) & (size > 0.5 * last))
    newton = x + step
    inside = (newton > lo) & (newton < hi) & (size <= 0.5 * last)
    return np.where(done, x, np.where(inside, newton, 0.5 * (lo + hi))), done


def _inverses(family: ExponentialFamily, mb: float, ma: np.ndarray, y: float,
              u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """u_a with phi_a(u_a) = y for every other arm, from the starting points u, by safeguarded Newton steps.

    phi_a(u) = g_a(u / (1 - u)) = d(mb, m) + u / (1 - u) d(ma, m) at m = mb - u (mb - ma) increases from 0 to
    d(mb, ma) on [0, 1), with phi_a'(u) = d(ma, m) / (1 - u)^2 (GK16, Lemma 4 and Thm 5).

    Returns
    -------
    tuple of numpy.ndarray
        u_a, m_a, d(ma, m_a) and d(mb, m_a), at the last evaluation.
    """
    lo, hi = np.zeros(ma.size), np.ones(ma.size)
    last = hi - lo
    for _ in range(MAX_STEPS):
        m = mb - u * (mb - ma)
        da, db = family.kl(ma, m), family.kl(mb, m)
        phi = db + u / (1.0 - u) * da
        below = phi < y
        lo, hi = np.where(below, u, lo), np.where(below, hi, u)
        slope = da / (1.0 - u) ** 2
        new, done = _newton_step(u, (y - phi) / slope, lo, hi, last)
        if done.all():
            return u, m, da, db
        last, u = np.abs(new - u), np.minimum(new, U_MAX)
    raise SolverError("the inverses of GK16's Lemma 4 did not converge (divergences at the limit of floating "
                      "point, e.g. Bernoulli means within 1e-15 of 0 or 1)")


def _equalise(family: ExponentialFamily, mb: float, ma: np.ndarray,
              tops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """u_a(y*) = x_a / (1 + x_a) and d(ma, m_a) at the root of S(y) = sum_a d(mb, m_a) / d(ma, m_a) = 1 (GK16 Thm 5).

    S increases from 0 to inf on (0, min_a d(mb, ma)); Newton on log S(y) = 0 in log y (S ~ y^2 near 0), with
    S'(y) = sum_a R_a'(m_a) dm_a/dy, R_a = d(mb, m) / d(ma, m), dm_a/dy = -(mb - ma) / phi_a'(u_a). It starts at
    y = top / 2 (the root for two Gaussian arms) with u = y / d(mb, ma) (exact for Gaussian arms); tops are the
    d(mb, ma).
    """
    lo, hi = 0.0, float(tops.min())
    y, last = 0.5 * hi, hi
    u = y / tops
    for _ in range(MAX_STEPS):
        u, m, da, db = _inverses(family, mb, ma, y, u)
        slope = da / (1.0 - u) ** 2
        total = np.sum(db / da)
        lo, hi = (y, hi) if total < 1.0 else (lo, y)
        dratio = (family.kl_derivative(mb, m) * da - db * family.kl_derivative(ma, m)) / da**2
        dtotal = np.sum(dratio * (ma - mb) / slope)
        step = y * np.expm1(-np.log(total) * total / (y * dtotal))
        new, done = _newton_step(np.array(y), np.array(step), np.array(lo), np.array(hi), np.array(last))
        if done:
            return u, da
        move = float(new) - y
        last, y = abs(move), float(new)
        u = np.minimum(np.maximum(u + move / slope, 0.0), U_MAX)  # first-order prediction of u(y)
    raise SolverError("GK16's equation for y* did not converge")


def pair_response(mu: np.ndarray, w: np.ndarray, i: int, j: int) -> np.ndarray:
    """mu with arms i and j moved to their weighted mean (w_i mu_i + w_j mu_j) / (w_i + w_j), the closest alternative
    of a pair piece in every exponential family (the midpoint when both weights vanish)."""
    lam = np.asarray(mu, dtype=float).copy()
    total = w[i] + w[j]
    lam[[i, j]] = (w[i] * mu[i] + w[j] * mu[j]) / total if total > 0 else 0.5 * (mu[i] + mu[j])
    return lam


class KArmedOptimism(Optimism):
    """LinGame's optimistic gains on K arms: U_k = min(max(d(u_k, lambda_k), d(l_k, lambda_k)), c) over the
    confidence intervals [l_k, u_k] = {m : N_k d(mu_k, m) <= c} (for Gaussian arms, the linear formula with the
    arms e_k), at the closest alternative lambda of the best response to w (:meth:`KArmedProblem.response`).

    Parameters
    ----------
    problem : KArmedProblem
        The structure.
    mu : numpy.ndarray, shape (K,)
        The means.
    counts : numpy.ndarray, shape (K,)
        Pulls per arm.
    c : float
        The level c_t.
    """

    def __init__(self, problem: KArmedProblem, mu: np.ndarray, counts: np.ndarray, c: float) -> None:
        self.problem, self.mu, self.c = problem, mu, c
        self.best = problem.answer(mu)
        self.lower, self.upper = problem.family.confidence_interval(mu, c / np.maximum(counts, 1e-300))

    def gains(self, w: np.ndarray) -> np.ndarray:
        return self._gains(self.problem.response(self.mu, w))

    def at_estimate(self) -> np.ndarray:
        return self._gains(np.asarray(self.mu, dtype=float))

    def _gains(self, lam: np.ndarray) -> np.ndarray:
        """min(max(d(l_k, lambda_k), d(u_k, lambda_k)), c)."""
        kl = self.problem.family.kl
        return np.minimum(np.maximum(kl(self.lower, lam), kl(self.upper, lam)), self.c)
