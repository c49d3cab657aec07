"""Result types: plain dataclasses holding numpy arrays, never cvxpy objects."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

import numpy as np

from .design_result import DesignResult as DesignResult  # re-exported: the modules import every result from here
from .design_result import better_certified as better_certified
from .design_result import jsonable
from .design_result import relative_gap as relative_gap
from .information import bernoulli_kl, kl_delta

if TYPE_CHECKING:
    from .vocabulary import CharTimeKind, RegretMethod, Status

__all__ = [
    "BilinearDesign",
    "CharTimeResult",
    "FastPathResult",
    "MeanFieldSolution",
    "RegretBoundResult",
    "SolveInfo",
    "bernoulli_kl",
]


@dataclass(frozen=True)
class SolveInfo:
    """What a solve did: final status, the solver that produced it, and wall time in seconds."""

    #: cvxpy's status of the accepted solve: ``"optimal"`` or ``"optimal_inaccurate"`` (the orbit search of
    #: :mod:`optdesign.factored.mean_field` reports its own, see :data:`optdesign.vocabulary.Status`)
    status: Status
    #: the solver that produced it (``"CLARABEL"``, ``"SCS"``, ``"MOSEK"``)
    solver: str
    #: wall-clock seconds of the solve
    solve_time: float


@dataclass(frozen=True)
class FastPathResult:
    """Outcome of a fast-path run: design, value F(w), certified lower bound, iterations.

    ``dual`` is the distribution over directions that certified ``lower_bound`` (None when the
    bound comes from a theorem, e.g. Kiefer–Wolfowitz for G/D designs).
    """

    #: the design w over the rows of X (nonnegative, summing to 1)
    weights: np.ndarray
    #: the criterion F(w) at ``weights`` (the G-value max_k h_k for G/D designs)
    value: float
    #: certified lower bound on the optimal value (d for G/D designs)
    lower_bound: float
    #: Newton steps, Frank–Wolfe iterations or pricing passes, depending on the path
    iterations: int
    #: whether the certified relative gap reached the requested ``tol``
    converged: bool
    #: the distribution over directions behind ``lower_bound`` (None when it comes from a theorem)
    dual: np.ndarray | None = None


@dataclass(frozen=True)
class MeanFieldSolution:
    """One solve of a mean-field program (:meth:`optdesign.factored.MeanFieldModel.solve`), in its own units.

    The values are t* = T^MF(m) Delta_m^2 (divide by the m-th gap squared for T^MF(m)): ``upper`` is the
    objective evaluated exactly at ``class_v`` (attained), ``lower`` a certified lower bound, and ``t`` the
    solver's optimum. The orbit search (symmetric instances) also fills ``orbit_point``, ``passes`` and ``cuts``.
    """

    #: the allocation per action class, normalised so every agent's allocation sums to one
    class_v: np.ndarray
    #: the solver's optimum (the orbit search: ``upper``)
    t: float
    #: the objective at ``class_v``, evaluated exactly (attained)
    upper: float
    #: certified lower bound on the optimum
    lower: float
    #: certified relative gap ``upper / lower - 1``
    gap: float
    #: final status, the solver (or ``"orbit-kelley"``) and its seconds
    info: SolveInfo
    #: seconds compiling the conic program (0 for the orbit search)
    compile_time: float
    #: orbit search only: the point of the orbit coordinates that attains ``upper``
    orbit_point: np.ndarray | None = None
    #: orbit search only: passes of the cutting-plane search
    passes: int | None = None
    #: orbit search only: the cuts of its model (counted as the program's constraints)
    cuts: int | None = None


@dataclass(frozen=True)
class BilinearDesign:
    """Node design mu over X and the induced edge design mu (x) mu over edge arms vec(x x'^T).

    ``edge_weights[i, j] = mu_i mu_j`` is the weight of the edge arm ``vec(x_i x_j^T)``;
    ``value`` is the G-value of that edge design on all K^2 edge arms (d^2 at the optimum,
    Rizk et al. 2021, Thm 5.1) and ``node`` the underlying node design result.
    """

    #: the node design mu over the rows of X
    node_weights: np.ndarray
    #: K x K edge design, ``edge_weights[i, j] = mu_i mu_j``
    edge_weights: np.ndarray
    #: G-value of the edge design on all K^2 edge arms (the node G-value squared, d^2 at the optimum)
    value: float
    #: the node design's own result (certificate, status, method)
    node: DesignResult

    @property
    def gap(self) -> float | None:
        """Relative gap of the edge value: (1 + node gap)^2 - 1, since the value is squared."""
        return None if self.node.gap is None else (1 + self.node.gap) ** 2 - 1

    def to_dict(self) -> dict:
        """JSON-ready dictionary (arrays as lists).

        Returns
        -------
        dict
            Edge ``value`` and ``gap``, the node design's ``node_value``, status, solver, method and time, and
            ``weights`` (node) and ``edge_weights`` as lists.
        """
        return {
            "criterion": "bilinear-g",
            "value": self.value,
            "node_value": self.node.value,
            "gap": self.gap,
            "status": self.node.status,
            "solver": self.node.solver,
            "method": self.node.method,
            "solve_time": self.node.solve_time,
            "weights": self.node_weights.tolist(),
            "edge_weights": self.edge_weights.tolist(),
        }


@dataclass(frozen=True)
class CharTimeResult:
    """A characteristic time (MF-TaS convention: E[tau] >= 2 T kl(delta, 1 - delta), unit variance).

    ``value`` is the program's objective evaluated exactly (by max-sum or enumeration) at the
    returned allocation, so it is attained by that allocation; ``solver_value`` is the conic
    solver's optimum, which agrees with ``value`` to solver accuracy. ``method`` is ``"exact"``
    (T*, global allocation over the marginal polytope) or ``"mean-field"`` (T^MF(m), product
    allocations). ``n_constraints`` counts the rows standing for "every joint action a != a*"
    (FCR rows, or one per joint action when enumerated, or the cutting planes of the orbit search) plus the m - 1
    explicit m-best rows.
    """

    #: T* or T^MF(m), evaluated exactly at the returned allocation (attained by it)
    value: float
    #: the solver's optimum (agrees with ``value`` to solver accuracy)
    solver_value: float
    #: ``"exact"`` (T*) or ``"mean-field"`` (T^MF(m))
    method: CharTimeKind
    #: the m of T^MF(m) (0 for T*)
    m: int
    #: the best joint action a*
    best_action: np.ndarray
    #: the gaps Delta_1 <= ... <= Delta_m used (``gaps[0]`` is Delta_min)
    gaps: np.ndarray
    #: per factor e, the allocation's marginal table wbar_e (the shape of table e)
    marginals: list
    #: mean field only: per agent i, the product allocation v_i over its actions
    local_allocations: list | None
    #: the enumerated global formulation only: w over all joint actions
    global_allocation: np.ndarray | None
    #: rows standing for "every joint action a != a*" plus the explicit m-best rows
    n_constraints: int
    #: variables of the program solved
    n_variables: int
    #: width of the elimination order of FCR or constraint generation (None otherwise)
    width: int | None
    #: ``"optimal"``, ``"not_converged"``, ``"interrupted"`` or the solver's status
    status: Status
    #: the solver (or ``"orbit-kelley"``) that produced the allocation
    solver: str
    #: seconds solving
    solve_time: float
    #: seconds compiling the conic program
    compile_time: float
    #: method-specific details (order, orbits, iterations, working-set size, why it stopped, ...)
    extras: dict = field(default_factory=dict)
    #: certified lower bound (weak duality)
    lower_bound: float | None = None
    #: certified relative gap ``value / lower_bound - 1``
    gap: float | None = None
    #: constraint generation only: clique tables of the returned allocation
    clique_weights: np.ndarray | None = None
    #: constraint generation only: the joint actions whose rows carry the optimum (a warm start)
    working_set: np.ndarray | None = None
    #: constraint generation only: (action counts, scopes) of the instance, which a warm start must share
    structure: tuple | None = None

    @property
    def gap_min(self) -> float:
        """The smallest gap Delta_min = ``gaps[0]`` (nan when a time limit ran out before it was found)."""
        return float(self.gaps[0]) if np.size(self.gaps) else float("nan")

    def sample_complexity(self, delta: float) -> float:
        """The lower bound 2 T kl(delta, 1 - delta) on E[tau] (Bernoulli kl in nats).

        Parameters
        ----------
        delta : float
            Confidence level in (0, 1).

        Returns
        -------
        float
            2 ``value`` kl(delta, 1 - delta), in samples.
        """
        return 2.0 * self.value * kl_delta(delta)

    def to_dict(self) -> dict:
        """JSON-ready dictionary (arrays as lists; global allocation, clique tables, working set, structure left out).

        Returns
        -------
        dict
            Every field but those four, then the entries of ``extras`` (order, orbits, ...).
        """
        return _fields_dict(self, exclude=("global_allocation", "clique_weights", "working_set", "structure"))


@dataclass(frozen=True)
class RegretBoundResult:
    """A Graves–Lai constant: liminf R(T) / log T >= c_theta (:func:`optdesign.factored.regret_lower_bound`).

    ``value`` is the objective sum_a w_a Delta(a) at ``marginals``, an allocation that satisfies
    the program's constraints exactly (the solver's point, scaled up by
    ``extras["feasibility_scale"] >= 1`` if it violated them), so ``value`` is attained;
    ``solver_value`` is the conic optimum (they differ only through that scale). For
    ``method="mf"`` both bound c_theta from above. ``status`` may be ``optimal_inaccurate`` on
    ill-conditioned instances: accepted silently when the value and the solver optimum agree to
    1e-6, else with a RuntimeWarning (:func:`optdesign.factored.exact.rescaling.solve_in_passes`).
    ``marginals[e]`` has the shape of table e; its entries at a*_e are arbitrary (w_{a*} is free).
    ``m`` is the number of m-best rows of ``"mf"`` (0 for ``"exact"``).
    """

    #: c_theta (``"exact"``) or its upper bound c^MF(m) (``"mf"``), attained by ``marginals``
    value: float
    #: the conic optimum (differs from ``value`` only through ``extras["feasibility_scale"]``)
    solver_value: float
    #: ``"exact"`` or ``"mf"``
    method: RegretMethod
    #: m-best rows of ``"mf"`` (0 for ``"exact"``)
    m: int
    #: the best joint action a*
    best_action: np.ndarray
    #: per factor e, the optimal counts wbar_e (the shape of table e; arbitrary at a*_e)
    marginals: list
    #: rows of the program solved (joint actions, FCR rows or the working set)
    n_constraints: int
    #: variables of the program solved
    n_variables: int
    #: ``"optimal"``, ``"not_converged"``, ``"interrupted"`` or the solver's status
    status: Status
    #: the conic solver that produced the counts
    solver: str
    #: seconds solving
    solve_time: float
    #: method-specific details (iterations, working set, why it stopped, feasibility scale, ...)
    extras: dict = field(default_factory=dict)
    #: ``"exact"``: certified lower bound by weak duality (None for ``"mf"``, an upper bound)
    lower_bound: float | None = None
    #: certified relative gap ``value / lower_bound - 1`` (``"exact"``)
    gap: float | None = None

    def to_dict(self) -> dict:
        """JSON-ready dictionary (arrays as lists).

        Returns
        -------
        dict
            Every field, then the entries of ``extras`` (iterations, feasibility scale, ...).
        """
        return _fields_dict(self)


def _fields_dict(result: Any, exclude: tuple[str, ...] = ()) -> dict:
    """A result dataclass as a JSON-ready dict: its fields (arrays and lists of arrays as lists), then its extras."""
    out = {f.name: jsonable(getattr(result, f.name)) for f in fields(result) if f.name not in ("extras", *exclude)}
    out.update({k: jsonable(v) for k, v in result.extras.items()})
    return out
