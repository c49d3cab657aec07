"""cvxpy models of the classical designs, built once (data as Parameters where a re-solve changes them).

One class, :class:`ClassicalDesignModel`, over w >= 0, sum_k w_k = 1 and the optional constraints A w <= b
(``b`` a Parameter); the conic form of the objective follows the criterion:

* linear, tr(C A(w)^- C^T) (A, I, c, L): min tr T subject to [[A(w), C^T], [C, T]] PSD (the Schur complement,
  Boyd & Vandenberghe 2004 §A.5.5), exact for singular designs (the generalised inverse when C^T is in the range of
  A(w), infeasible otherwise); C is a Parameter, and the off-diagonal block Y of the constraint's multiplier
  certifies the design (Elfving's bound Phi* >= tr(C Y)^2 / max_k ||Y^T x_k||^2);
* E, max lambda_min(A(w)): max tau subject to A(w) - tau I PSD; its dual Z (trace 1) certifies
  Phi_E* >= 1 / max_k x_k^T Z x_k;
* D (phi_0) and Ds: max log det T subject to [[A_rr, A_rs], [A_sr, A_ss - T]] PSD (T below the Schur complement);
* phi_2: min ||T||_F subject to [[A, I], [I, T]] PSD (T above A^{-1}).

The affine map w -> A(w) has K d^2 coefficients: :func:`classical_model_fits` states the limits. X is scaled to
max |x| = 1 for the solver (the optimal design does not depend on the scale). These are interior-point solves with
one PSD block of side d (d + k for the linear criteria) whose cost grows with K d^2, so large constrained designs
run the model on a working set (:mod:`~optdesign.linear.classical.working`); ``benchmarks/bench_classical_designs.py``
times the model against the fast paths.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..._lazy import cp
from ...errors import InstanceTooLargeError, InvalidInputError
from ...runtime import solvers
from ...vocabulary import CLASSICAL_CRITERIA, ClassicalCriterion, check_option
from ..models import D_OPTIMAL_MAX_DIM, D_OPTIMAL_MAX_ENTRIES
from .constraints import ConstraintsLike, LinearConstraints, as_constraints
from .criteria import Criterion
from .kiefer import KieferCriterion
from .linear import LinearCriterion
from .problems import make_problem
from .subset import SubsetCriterion

__all__ = ["ClassicalDesignModel", "ModelSolution", "classical_model_fits"]

#: statuses of a failed conic solve that mean no feasible design makes the criterion finite
SINGULAR_STATUSES = ("infeasible", "infeasible_inaccurate", "unbounded", "unbounded_inaccurate")


def classical_model_fits(criterion: Criterion, n_arms: int, dim: int) -> bool:
    """Whether :class:`ClassicalDesignModel` accepts this criterion on K arms in R^d.

    Parameters
    ----------
    criterion : Criterion
        The criterion.
    n_arms : int
        K.
    dim : int
        d.

    Returns
    -------
    bool
        d <= 150 and K d^2 <= 5e7 coefficients (as :func:`optdesign.linear.models.d_optimal_model_fits`); False
        for phi_p without a conic form here (p not in 0, 1, 2, inf).
    """
    if isinstance(criterion, KieferCriterion) and criterion.p not in (0.0, 2.0, np.inf):
        return False
    return dim <= D_OPTIMAL_MAX_DIM and n_arms * dim * dim <= D_OPTIMAL_MAX_ENTRIES


class ModelSolution:
    """What a solve of :class:`ClassicalDesignModel` returns: the design and the solver's duals.

    Parameters
    ----------
    weights : numpy.ndarray, shape (K,)
        The design (clipped at 0, normalised).
    info : optdesign.runtime.solvers.SolveInfo
        Status, solver and time.
    dual : numpy.ndarray, optional
        Y (d x k) of a linear criterion, Z (d x d) of E; None otherwise.
    """

    def __init__(self, weights: np.ndarray, info: solvers.SolveInfo, dual: np.ndarray | None):
        self.weights, self.info, self.dual = weights, info, dual


class ClassicalDesignModel:
    """cvxpy model of min_w Phi(A(w)) over the designs meeting the constraints (module doc).

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms (checked by the caller: finite, at a representable scale).
    criterion : Criterion
        A linear criterion, a subset criterion with K columns of I_d, or Kiefer's with p in {0, 2, inf}.
    constraints : LinearConstraints, optional
        A w <= b; ``b`` becomes the Parameter ``self.rhs``.
    solver : str, optional
        Forced conic solver; the default chain otherwise.

    Raises
    ------
    InvalidInputError
        A Kiefer order without a conic form here (p not in {0, 1, 2, inf}).
    InstanceTooLargeError
        Above :func:`classical_model_fits`.
    """

    def __init__(self, X: np.ndarray, criterion: Criterion, *, constraints: LinearConstraints | None = None,
                 solver: str | None = None):
        K, d = X.shape
        if isinstance(criterion, KieferCriterion) and criterion.p not in (0.0, 2.0, np.inf):
            raise InvalidInputError(f"phi_p with p = {criterion.p:g} has no conic model here (p in 0, 1, 2, inf do); "
                                    "use method='fast' (certified Frank–Wolfe)")
        if not classical_model_fits(criterion, K, d):
            raise InstanceTooLargeError(f"the cvxpy model of {criterion.label} on K = {K:,} arms in R^{d} exceeds its "
                                        "size limit (classical_model_fits); use method='fast'")
        self.X, self.criterion, self.solver = X, criterion, solver
        self.scale = float(np.max(np.abs(X)))
        self.w = cp.Variable(K, nonneg=True, name="w")
        cons: list = [cp.sum(self.w) == 1]
        self.rhs: Any = None
        if constraints is not None:
            self.rhs = cp.Parameter(constraints.b.size, name="rhs", value=constraints.b)
            cons.append(constraints.A @ self.w <= self.rhs)
        objective, more, self._dual = self._objective(X / self.scale)
        self.problem = cp.Problem(objective, cons + more)

    @classmethod
    def for_criterion(cls, X: ArrayLike, criterion: ClassicalCriterion, *, constraints: ConstraintsLike = None,
                      solver: str | None = None, **arguments: Any) -> ClassicalDesignModel:
        """The model of a criterion named as in :func:`optdesign.criterion_value` (``"a"``, ``"i"``, ``"c"``,
        ``"e"``, ``"ds"``, ``"phi"`` with p in {0, 1, 2, inf}, ``"d"``), with the arguments of its design function.

        Parameters
        ----------
        X : array_like, shape (K, d)
            The candidates.
        criterion : str
            The criterion's name.
        constraints : LinearConstraints or (A, b) or list of them, optional
            A w <= b; ``b`` becomes the Parameter ``rhs``.
        solver : str, optional
            Forced conic solver.
        **arguments
            ``c``, ``region``, ``region_weights``, ``moments``, ``subset`` or ``p`` as the design functions take them.

        Returns
        -------
        ClassicalDesignModel
            Built once; :meth:`solve` re-solves it with new ``rhs`` or ``C``.

        Raises
        ------
        InvalidInputError
            An unknown criterion or argument, or what the design function refuses.
        """
        name = check_option(criterion, "criterion", CLASSICAL_CRITERIA)
        if name == "g" or set(arguments) - {"c", "region", "region_weights", "moments", "subset", "p"}:
            raise InvalidInputError(f"no model for criterion {name!r} with arguments {sorted(arguments)}")
        problem = make_problem(X, name, arguments)
        return cls(problem.X, problem.criterion, constraints=as_constraints(constraints, problem.X.shape[0]),
                   solver=solver)

    def _information(self, Xs: np.ndarray) -> Any:
        K, d = Xs.shape
        outer = np.einsum("ki,kj->kij", Xs, Xs).reshape(K, d * d)
        A = cp.reshape(outer.T @ self.w, (d, d), order="C")
        return (A + A.T) / 2

    def _objective(self, Xs: np.ndarray) -> tuple[Any, list, Any]:
        crit, d = self.criterion, Xs.shape[1]
        A = self._information(Xs)
        if isinstance(crit, LinearCriterion):
            k = crit.C.shape[0]
            self.C = cp.Parameter(crit.C.shape, name="C", value=crit.C / np.max(np.abs(crit.C)))
            T = cp.Variable((k, k), symmetric=True, name="T")
            block = cp.bmat([[A, self.C.T], [self.C, T]])
            psd = (block + block.T) / 2 >> 0
            return cp.Minimize(cp.trace(T)), [psd], psd
        if isinstance(crit, KieferCriterion) and np.isinf(crit.p):
            tau = cp.Variable(name="lambda_min")
            psd = A - tau * np.eye(d) >> 0
            return cp.Maximize(tau), [psd], psd
        if isinstance(crit, KieferCriterion) and crit.p == 2.0:
            T = cp.Variable((d, d), symmetric=True)
            block = cp.bmat([[A, np.eye(d)], [np.eye(d), T]])
            return cp.Minimize(cp.norm(T, "fro")), [(block + block.T) / 2 >> 0], None
        keep = np.argmax(crit.K, axis=0) if isinstance(crit, SubsetCriterion) else np.arange(d)
        return self._schur_log_det(A, keep, d)

    @staticmethod
    def _schur_log_det(A: Any, keep: np.ndarray, d: int) -> tuple[Any, list, Any]:
        rest = np.setdiff1d(np.arange(d), keep)
        if rest.size == 0:
            return cp.Maximize(cp.log_det(A)), [], None
        P = np.eye(d)[np.concatenate([rest, keep])]  # nuisance parameters first
        B = P @ A @ P.T
        r, s = rest.size, keep.size
        T = cp.Variable((s, s), symmetric=True)
        block = cp.bmat([[B[:r, :r], B[:r, r:]], [B[r:, :r], B[r:, r:] - T]])
        return cp.Maximize(cp.log_det(T)), [(block + block.T) / 2 >> 0], None

    def solve(self, *, rhs: np.ndarray | None = None, C: np.ndarray | None = None) -> ModelSolution:
        """Solve (a second call re-uses cvxpy's compilation; new Parameter values first).

        Parameters
        ----------
        rhs : numpy.ndarray, shape (m,), optional
            New right-hand sides b of the constraints.
        C : numpy.ndarray, shape (k, d), optional
            New rows of a linear criterion.

        Returns
        -------
        ModelSolution
            The design, the solver's status and the dual that certifies it (linear criteria, E).

        Raises
        ------
        InvalidInputError
            ``rhs`` or ``C`` given where the model has no such Parameter, or of the wrong shape.
        SolverError
            Every conic solver of the chain failed.
        """
        for name, value, param in (("rhs", rhs, self.rhs), ("C", C, getattr(self, "C", None))):
            if value is None:
                continue
            if param is None or np.shape(value) != param.shape:
                raise InvalidInputError(f"{name}: this model has no Parameter of shape {np.shape(value)}")
            param.value = np.asarray(value, dtype=float) / (np.max(np.abs(value)) if name == "C" else 1.0)
            if name == "C":
                self.criterion = LinearCriterion(np.asarray(value, dtype=float), self.criterion.label)
        info = solvers.solve(self.problem, self.solver)
        w = np.clip(np.asarray(self.w.value, dtype=float).ravel(), 0.0, None)
        dual = None if self._dual is None or self._dual.dual_value is None else np.asarray(self._dual.dual_value)
        if dual is not None and isinstance(self.criterion, LinearCriterion):
            dual = dual[: self.X.shape[1], self.X.shape[1]:]  # Y, the multiplier's off-diagonal block
        return ModelSolution(w / w.sum(), info, dual)
