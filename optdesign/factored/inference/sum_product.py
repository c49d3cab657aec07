"""Sum-product variable elimination in log space: the Gibbs distribution p(a) ∝ exp(sum_e g_e(a_e)).

The same plan and table layout as max-sum (:mod:`.max_sum`), logsumexp where max-sum takes the max: step l's
message is u_l(z) = log sum_k exp(phi_l(z, k)), phi_l the sum of its inputs, and log Z = sum of the root messages
(one per connected component). The factor marginals come from one backward pass over the steps in reverse order:
the belief of step l is b_l(z, k) = phi_l(z, k) + o_l(z), o_l the outside message of l (0 at a root), and every
input of step l, a factor table or an earlier message u_m, is read off b_l by summing its rows with the input's
entry: the factor's marginal is sum exp(b_l - log Z_c) over those rows, and o_m(y) = log sum exp(b_l) - u_m(y).
Cost O(N K^{w+1}) for an order of width w, as max-sum.

``row_terms`` adds a term per row of a step (a potential on the step's scope and variable); the indicator of max-sum's
zero local regrets (0 or -inf) makes p the uniform distribution over the maximisers (:func:`maximiser_terms`).
``reduce="max"`` runs the forward pass with max in place of logsumexp (max_a of the same log-potential).
Both passes and the draws run compiled (:mod:`.sum_product_kernels`) where max-sum's do (:mod:`.flat_plan`), else in
numpy.
"""

from __future__ import annotations

import numpy as np

from ...errors import InvalidInputError
from ...runtime.deadline import check_budget
from .elimination import EliminationPlan
from .flat_plan import plan_arrays, use_compiled
from .max_sum import CHECK_EVERY, MaxSum, gathered_sum

__all__ = ["SumProduct", "maximiser_terms"]

#: the forward reductions
REDUCTIONS = ("logsumexp", "max")


def _logsumexp(phi: np.ndarray) -> np.ndarray:
    """log sum_k exp(phi[:, k]), -inf on rows of -inf only."""
    top = phi.max(axis=1)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        out: np.ndarray = safe + np.log(np.exp(phi - safe[:, None]).sum(axis=1))
    return np.where(np.isneginf(top), -np.inf, out)


def _group_logsumexp(values: np.ndarray, groups: np.ndarray, size: int) -> np.ndarray:
    """log sum over the entries of each group of exp(values) (groups in 0..size-1; -inf for an empty group)."""
    top = np.full(size, -np.inf)
    np.maximum.at(top, groups, values)
    safe = np.where(np.isfinite(top), top, 0.0)
    shifted = np.where(np.isneginf(values), 0.0, np.exp(values - safe[groups]))
    with np.errstate(divide="ignore"):
        out: np.ndarray = safe + np.log(np.bincount(groups, weights=shifted, minlength=size))
    return np.where(np.isneginf(top), -np.inf, out)


class SumProduct:
    """Forward elimination of the log-potential sum_e values_e(a_e) (+ row terms) under ``plan``, run at construction.

    Attributes: ``log_partition`` (log sum_a exp(...) for ``"logsumexp"``, max_a for ``"max"``), ``compiled``
    (whether the passes run compiled). The :meth:`marginals` and :meth:`sample` of the Gibbs distribution need the
    ``"logsumexp"`` pass.

    Parameters
    ----------
    plan : EliminationPlan
        The elimination order and index structure.
    values : numpy.ndarray, shape (plan.table_size,)
        The factor log-potentials, flat as in the plan (finite or -inf).
    row_terms : list of numpy.ndarray, optional
        One array per step, shape (step.n_rows,), added to the step's rows (finite or -inf).
    reduce : str
        ``"logsumexp"`` (sum-product, default) or ``"max"`` (max-sum).
    compiled : bool or None
        Run the passes compiled (:mod:`.sum_product_kernels`) or in numpy; None (default): compiled as
        :func:`~optdesign.factored.inference.flat_plan.compiled_by_default` says (small plans, or outside a time
        budget).

    Raises
    ------
    InvalidInputError
        Not a plan, values of the wrong length, NaN or +inf, row terms of the wrong shapes, an unknown reduction, or a
        ``compiled`` option that is not a bool or None.
    TimeLimitReached
        The enclosing :func:`optdesign.runtime.deadline.time_budget` ran out during the pass.
    """

    def __init__(self, plan: EliminationPlan, values: np.ndarray, *, row_terms: list[np.ndarray] | None = None,
                 reduce: str = "logsumexp", compiled: bool | None = None) -> None:
        if not isinstance(plan, EliminationPlan):
            raise InvalidInputError(f"plan must be an EliminationPlan, got {type(plan).__name__}")
        values = np.asarray(values, dtype=float)
        if values.shape != (plan.table_size,) or np.isnan(values).any() or np.isposinf(values).any():
            raise InvalidInputError(f"values must be {plan.table_size} numbers (finite or -inf)")
        if reduce not in REDUCTIONS:
            raise InvalidInputError(f"unknown reduction {reduce!r}; valid: {', '.join(REDUCTIONS)}")
        if row_terms is not None and (len(row_terms) != len(plan.steps) or any(
                np.shape(r) != (s.n_rows,) for r, s in zip(row_terms, plan.steps, strict=True))):
            raise InvalidInputError("row_terms must hold one array of step.n_rows terms per step")
        self.plan, self.reduce = plan, reduce
        self.compiled = use_compiled(plan, compiled)
        if self.compiled:
            self._compiled_pass(values, row_terms)
        else:
            self._pass(values, row_terms)
        self.log_partition = float(sum(self._flat[plan.message_offsets[r]] for r in plan.roots))

    def _pass(self, values: np.ndarray, row_terms: list[np.ndarray] | None) -> None:
        """The forward pass in numpy, checking the time budget every CHECK_EVERY steps."""
        plan = self.plan
        flat = np.empty(plan.n_functions_flat)
        flat[: plan.table_size] = values
        self.phis: list[np.ndarray] = []  # each step's (message entries, K) table
        for n, (step, offset) in enumerate(zip(plan.steps, plan.message_offsets, strict=True)):
            if n % CHECK_EVERY == 0:
                check_budget("sum-product inference")
            phi = gathered_sum(flat, step.index)
            if row_terms is not None:
                phi = phi + row_terms[n]
            phi = phi.reshape(-1, plan.n_actions[step.variable])
            flat[offset : offset + phi.shape[0]] = _logsumexp(phi) if self.reduce == "logsumexp" else phi.max(axis=1)
            self.phis.append(phi)
        self._flat = flat

    def _compiled_pass(self, values: np.ndarray, row_terms: list[np.ndarray] | None) -> None:
        """The same pass in one compiled call (:mod:`.sum_product_kernels`: the same numbers to rounding)."""
        from .sum_product_kernels import forward

        a = plan_arrays(self.plan)
        check_budget("sum-product inference")
        terms = np.concatenate(row_terms).astype(float) if row_terms else np.zeros(0)
        self._flat, self._phis_flat = forward(values, a.K, a.row_off, a.msg_off, a.inputs, a.n_cols, a.n_flat, terms,
                                              self.reduce == "max")
        phis = self._phis_flat
        self.phis = [phis[a.row_off[m]: a.row_off[m + 1]].reshape(-1, a.K[m]) for m in range(a.K.size)]

    def _check_sum(self) -> None:
        if self.reduce != "logsumexp":
            raise InvalidInputError("marginals and samples need the logsumexp pass")

    def marginals(self) -> np.ndarray:
        """The factor marginals p_e(b) = sum over the joint actions a with a_e = b of p(a), by the backward pass.

        Returns
        -------
        numpy.ndarray, shape (plan.table_size,)
            Flat as the values; each factor's entries sum to 1.

        Raises
        ------
        InvalidInputError
            A ``"max"`` pass, or a log-potential of -inf everywhere (no distribution).
        """
        self._check_sum()
        if not np.isfinite(self.log_partition):
            raise InvalidInputError("the log-potential is -inf on every joint action: no Gibbs distribution")
        plan, flat = self.plan, self._flat
        if self.compiled:
            from .sum_product_kernels import backward

            a = plan_arrays(plan)
            return backward(flat, self._phis_flat, a.K, a.row_off, a.msg_off, a.inputs, a.n_cols, a.col_msg,
                            a.state_off, plan.table_size)
        out = np.zeros(plan.table_size)
        outside: dict[int, np.ndarray] = {}
        for n in range(len(plan.steps) - 1, -1, -1):
            step, phi = plan.steps[n], self.phis[n]
            belief = (phi + outside.pop(n, np.zeros(phi.shape[0]))[:, None]).ravel()
            log_z = float(_logsumexp(belief[None, :])[0])  # log Z of the step's component
            for c in range(step.index.shape[1]):
                position = step.index[:, c].astype(np.int64)
                if position[0] < plan.table_size:  # a factor table: its marginal
                    np.add.at(out, position, np.exp(belief - log_z))
                    continue
                m = int(np.searchsorted(plan.message_offsets, position[0], side="right")) - 1
                base, size = int(plan.message_offsets[m]), plan.steps[m].message_size
                total = _group_logsumexp(belief, position - base, size)
                with np.errstate(invalid="ignore"):
                    outside[m] = np.where(np.isneginf(total), -np.inf, total - flat[base : base + size])
        return out

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` joint actions drawn independently from p, by ancestral sampling in reverse elimination order (one
        uniform per draw and step, the steps in reverse order; compiled or not, the same draws).

        Parameters
        ----------
        rng : numpy.random.Generator
            The source of the n N uniforms.
        n : int
            Number of draws (>= 0).

        Returns
        -------
        numpy.ndarray of int64, shape (n, N)
            One joint action per row.

        Raises
        ------
        InvalidInputError
            A ``"max"`` pass, or a negative n.
        """
        self._check_sum()
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise InvalidInputError(f"n must be an integer >= 0, got {n!r}")
        plan = self.plan
        if self.compiled:
            from .sum_product_kernels import sample

            a = plan_arrays(plan)
            return sample(self._phis_flat, a.K, a.row_off, a.variable, a.scope_off, a.scope_vars,
                          np.asarray(plan.n_actions, dtype=np.int64), rng.random((len(plan.steps), int(n))))
        actions = np.zeros((int(n), plan.n_agents), dtype=np.int64)
        for step, phi in zip(plan.steps[::-1], self.phis[::-1], strict=True):
            z = np.zeros(int(n), dtype=np.int64)
            for j, k in zip(step.scope, step.shape, strict=True):
                z = z * k + actions[:, j]
            logits = phi[z]
            p = np.exp(logits - logits.max(axis=1, keepdims=True))
            cdf = np.cumsum(p, axis=1)
            u = rng.random(int(n))[:, None] * cdf[:, -1:]
            actions[:, step.variable] = np.minimum((u >= cdf).sum(axis=1), phi.shape[1] - 1)
        return actions


def maximiser_terms(plan: EliminationPlan, values: np.ndarray, *, rtol: float = 1e-12) -> list[np.ndarray]:
    """Row terms 0 where max-sum's local regret is 0, else -inf: with them p is uniform on argmax_a sum_e values.

    max-sum's gap of a joint action is the sum of its local regrets, one per step, all >= 0, so a joint action is a
    maximiser exactly when each of its rows has regret 0; a regret at most ``rtol`` times the scale
    (1 + sum_e max_b abs(values_e(b))) counts as 0, so sums that differ by rounding alone tie.

    Parameters
    ----------
    plan : EliminationPlan
        The elimination order and index structure.
    values : numpy.ndarray, shape (plan.table_size,)
        The factor values, finite.
    rtol : float
        The relative tolerance of a zero regret (>= 0).

    Returns
    -------
    list of numpy.ndarray
        One array per step (``row_terms`` of :class:`SumProduct`).

    Raises
    ------
    InvalidInputError
        Values of the wrong length or not finite.
    """
    values = np.asarray(values, dtype=float)
    if values.shape != (plan.table_size,) or not np.isfinite(values).all():
        raise InvalidInputError(f"values must be {plan.table_size} finite numbers")
    ms = MaxSum(plan, values)
    assert ms.regrets is not None
    tables = np.split(np.abs(values), plan.factor_offsets[1:-1])
    tol = rtol * (1.0 + sum(float(t.max()) for t in tables if t.size))
    return [np.where(r <= tol, 0.0, -np.inf) for r in ms.regrets]
