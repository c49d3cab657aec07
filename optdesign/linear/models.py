"""cvxpy models of the linear design problems, built once and re-solved.

* :class:`MinMaxDesignModel`: min_w max_{y in Y} y^T A(w)^{-1} y for fixed arms and directions, an SOCP with
  y^T A^{-1} y = min { sum_k u_k^2 / w_k : X^T u = y } (one rotated cone per direction and arm,
  :mod:`optdesign.linear.socp`);
* :class:`OracleDesignModel`: the oracle design with weights 1 / gap^2, re-solved for a new theta through
  Parameters (Soare et al. 2014 eq. 6, Fiez et al. 2019 rho*);
* :class:`DOptimalModel`: max_w log det A(w).

Each min-max solve is certified on the true directions (:func:`optdesign.linear.criteria.certificate`) and
polished by the barrier method when its gap is loose (:class:`optdesign.linear.socp.CertifiedSOCP`).
The ``*_model_fits`` and :func:`oracle_model_size` functions state the size limits of the models.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .._lazy import cp
from ..errors import InstanceTooLargeError, InvalidInputError
from ..result import DesignResult, relative_gap
from ..runtime import solvers
from ..validation import as_arms, as_matrix, as_vector, check_direction_scale, unique_argmax
from .criteria import minmax_value
from .socp import CertifiedSOCP, _weights_from, minmax_socp

__all__ = [
    "DOptimalModel",
    "MinMaxDesignModel",
    "OracleDesignModel",
    "d_optimal_model_fits",
    "minmax_model_fits",
    "oracle_model_size",
]

MINMAX_MAX_CONES = 2_000_000  # one rotated cone per (direction, arm): 2e6 cones is a multi-GiB conic problem
D_OPTIMAL_MAX_DIM = 150  # d of the log det cone: the solver's Newton systems have (d(d+1)/2)^2 entries (1.3e8 at 150)
D_OPTIMAL_MAX_ENTRIES = 50_000_000  # K d^2 coefficients of the affine map w -> A(w) (400 MB)


def minmax_model_fits(n_arms: int, n_directions: int) -> bool:
    """Whether :class:`MinMaxDesignModel` accepts K arms and m directions (K m rotated cones).

    Parameters
    ----------
    n_arms : int
        K, the number of arms.
    n_directions : int
        m, the number of directions.

    Returns
    -------
    bool
        Whether K m <= MINMAX_MAX_CONES (2e6).
    """
    return n_arms * n_directions <= MINMAX_MAX_CONES


def d_optimal_model_fits(n_arms: int, dim: int) -> bool:
    """Whether :class:`DOptimalModel` accepts K arms in R^d (the log det cone and the K d^2 coefficients).

    Parameters
    ----------
    n_arms : int
        K, the number of arms.
    dim : int
        d, the dimension of the arms.

    Returns
    -------
    bool
        Whether d <= D_OPTIMAL_MAX_DIM (150) and K d^2 <= D_OPTIMAL_MAX_ENTRIES (5e7).
    """
    return dim <= D_OPTIMAL_MAX_DIM and n_arms * dim * dim <= D_OPTIMAL_MAX_ENTRIES


class MinMaxDesignModel(CertifiedSOCP):
    """cvxpy model of min_w max_{y in Y} y^T A(w)^{-1} y for fixed arms X and directions Y.

    Arms and directions are constants on purpose: as Parameters they make cvxpy's DPP
    compilation cost about (cone rows) x (parameter entries); the benchmark compares an m x d
    direction Parameter with constant directions
    (``benchmarks/bench_designs.py``). Loops whose data change each round use :class:`OracleDesignModel`.

    Interior-point designs are accurate to about 1e-8 in absolute weight, but min-max designs can
    keep arms at weights of that order (only to keep A(w) invertible), so a design's true value can
    exceed the optimum noticeably (0.7 % and 1.7 % for the oracle on Soare's omega = 0.01 instance,
    d = 5 and 10, in the benchmark). With ``polish=True`` (default) a design whose certified gap
    exceeds POLISH_TOL is refined by the barrier method warm-started at the solver's design;
    ``extras["polished"]`` records it.

    Parameters
    ----------
    X : array_like, shape (K, d)
        The arms; they must span R^d.
    Y : array_like, shape (m, d)
        The directions.
    solver : str, optional
        Forced conic solver (``"CLARABEL"``, ``"SCS"``, ``"MOSEK"``); the default chain otherwise.
    polish : bool
        Refine a loose design by the barrier method (above).

    Raises
    ------
    InvalidInputError
        Arms that do not span R^d, NaN/inf, shapes that do not match, directions at an unrepresentable scale.
    InstanceTooLargeError
        K m above MINMAX_MAX_CONES rotated cones.
    """

    def __init__(self, X: np.ndarray, Y: np.ndarray, *, solver: str | None = None, polish: bool = True):
        X = as_arms(X)
        Y = check_direction_scale(as_matrix(Y, "Y", n_cols=X.shape[1]), X)
        cones = X.shape[0] * Y.shape[0]
        if not minmax_model_fits(X.shape[0], Y.shape[0]):
            raise InstanceTooLargeError(
                f"MinMaxDesignModel with K = {X.shape[0]} arms and m = {Y.shape[0]} directions has {cones:,} rotated "
                f"cones (limit {MINMAX_MAX_CONES:,}): use the certified barrier fast path (method='barrier') instead"
            )
        super().__init__(X, solver, polish)
        self.Y = Y
        norm = float(np.sqrt(np.max(np.einsum("ij,ij->i", Y, Y))))
        scale = norm if norm > 0 else 1.0  # unit-scale directions condition the conic data
        # ... and so do unit-scale arms (the optimal w does not depend on the scale of X; at |X| = 1e-12 the
        # unscaled conic solvers reported "infeasible"); the certificate uses the given X and Y
        Xs = X / np.max(np.abs(X))
        self.problem, self.w, self.q, self._epigraph = minmax_socp(Xs, Y / scale, Y.shape[0], weighted=False)

    def solve(self, *, criterion: str = "minmax") -> DesignResult:
        """Solve (a second call re-uses cvxpy's cached compilation).

        Parameters
        ----------
        criterion : str
            Label stored in the result's ``criterion``.

        Returns
        -------
        DesignResult
            ``method="cvxpy"``, the solver's ``status``, ``value`` and certified ``lower_bound`` on Y, and
            ``extras['polished']``.

        Raises
        ------
        SolverError
            Every conic solver of the chain failed.
        """
        return self._solve(self.Y, np.ones(self.Y.shape[0]), criterion, {})


ORACLE_MAX_CONES = 50_000
ORACLE_MAX_COMPILE_ENTRIES = 250_000_000


def oracle_model_size(n_arms: int, n_items: int, dim: int) -> tuple[int, int]:
    """(rotated cones, DPP compile entries) of :class:`OracleDesignModel` for K arms, |Z| items in R^d.

    cones = |Z| K (one per item and arm: the conic solver's size). compile entries =
    (variables + 1) (parameter entries + 1) = (2 |Z| K + K + 2) (|Z| + d + 1): cvxpy's DPP
    compilation reshapes the parameter tensor into a sparse matrix with that many columns and
    allocates index arrays of that length (about 17 bytes per entry measured at peak).

    Parameters
    ----------
    n_arms : int
        K, the number of measurement arms.
    n_items : int
        The number of items n.
    dim : int
        d, their dimension.

    Returns
    -------
    cones : int
        ``n_items * n_arms`` rotated cones (limit ORACLE_MAX_CONES).
    compile_entries : int
        DPP compilation entries (limit ORACLE_MAX_COMPILE_ENTRIES).
    """
    return n_items * n_arms, (2 * n_items * n_arms + n_arms + 2) * (n_items + dim + 1)


class OracleDesignModel(CertifiedSOCP):
    """cvxpy model of the oracle design min_w max_{z != z*} ||z* - z||^2_{A(w)^{-1}} / ((z* - z)^T theta)^2.

    Measurement arms X, items Z (default Z = X: Soare's XY-oracle, value H_LB; otherwise Fiez et
    al.'s rho*). Parameters are the anchor z* (d entries) and the weights 1 / gap^2 (|Z| entries),
    so a re-solve with a new theta (a plug-in estimate each round) skips compilation; with
    CLARABEL it also keeps the solver, its symbolic factorisation and equilibration
    (:class:`ClarabelSession`), so a re-solve costs the interior-point solve plus clarabel's data
    update and cvxpy's unpacking (0.5 ms at K x d = 10 x 3, 6 ms at 60 x 8, about 3 % of a
    rebuild). The interior-point solve is what is left, and it grows faster than the compilation: a
    re-solve is 4.3-4.9x faster than a rebuild (new model + solve) at K x d = 10 x 3, 2.6-3.1x
    at 15 x 4, 2.0-2.2x at 20 x 5 and 1.2-1.3x at 60 x 8, where the solver alone is 75-80 % of a
    rebuild (2-core machine; the table "Parameterised re-solve vs rebuild" of
    ``benchmarks/bench_designs.py`` prints the breakdown).

    Size limit: the model has one rotated cone per (item, arm) pair, and cvxpy's DPP compilation
    allocates index arrays of (2 |Z| K + K + 2)(|Z| + d + 1) entries, 16-17 bytes each at peak
    (:func:`oracle_model_size`). Measured with |Z| = K, d = 10 (CLARABEL; a shared 2-core machine,
    times vary up to 2x with its load):

    ========  ===========  =============  ======================
    ``|Z|``   compile [s]  peak traced    first solve [s] (iters)
    ========  ===========  =============  ======================
    100       0.2          46 MiB         1.0 (25)
    200       1.2          0.3 GiB        9.7 (46)
    300       6.2          0.9 GiB        104 (37)
    400       7.9          2.1 GiB        222 (62)
    ========  ===========  =============  ======================

    The constructor raises :class:`InstanceTooLargeError` above ORACLE_MAX_CONES = 50,000 cones
    (|Z| = K = 223; the solve passes about 20 s) or ORACLE_MAX_COMPILE_ENTRIES = 2.5e8 compile
    entries (about 4 GiB, e.g. |Z| = 3,500 items for K = d = 10); use the certified barrier fast
    path, ``optdesign.xy_oracle(X, theta)`` or ``optdesign.transductive(X, Z, theta)``
    (``method="barrier"``), instead.

    Parameters
    ----------
    X : array_like, shape (K, d)
        The measurement arms; they must span R^d.
    Z : array_like, shape (n, d), optional
        The items, n >= 2; X by default.
    solver : str, optional
        Forced conic solver; the default chain otherwise.
    polish : bool
        Refine a design whose certified gap exceeds POLISH_TOL by the barrier method.

    Raises
    ------
    InvalidInputError
        Arms that do not span R^d, fewer than two items, NaN/inf, shapes that do not match.
    InstanceTooLargeError
        Above ORACLE_MAX_CONES cones or ORACLE_MAX_COMPILE_ENTRIES compile entries (above).
    """

    def __init__(self, X: np.ndarray, Z: np.ndarray | None = None, *, solver: str | None = None,
                 polish: bool = True):
        X = as_arms(X)
        Z = X if Z is None else check_direction_scale(as_matrix(Z, "Z", n_cols=X.shape[1]), X, "Z")
        if Z.shape[0] < 2:
            raise InvalidInputError("Z must have at least two items")
        cones, entries = oracle_model_size(X.shape[0], Z.shape[0], X.shape[1])
        if cones > ORACLE_MAX_CONES or entries > ORACLE_MAX_COMPILE_ENTRIES:
            raise InstanceTooLargeError(
                f"OracleDesignModel with |Z| = {Z.shape[0]} items and K = {X.shape[0]} arms has {cones:,} "
                f"rotated cones (limit {ORACLE_MAX_CONES:,}) and a DPP compilation of {entries:.2e} index "
                f"entries (limit {ORACLE_MAX_COMPILE_ENTRIES:.1e}, about 4 GiB): use the certified barrier "
                "fast path, optdesign.xy_oracle(X, theta) or optdesign.transductive(X, Z, theta) "
                "(method='barrier'), instead"
            )
        super().__init__(X, solver, polish)
        self.Z = Z
        norm = float(np.sqrt(np.max(np.einsum("ij,ij->i", Z, Z))))
        self._scale = norm if norm > 0 else 1.0
        m, d = Z.shape
        self.anchor = cp.Parameter(d, name="best_item")
        rhs = np.ones((m, 1)) @ cp.reshape(self.anchor, (1, d), order="F") - Z / self._scale
        self.problem, self.w, self.q, self._epigraph = minmax_socp(X, rhs, m, weighted=True)

    def solve(self, theta: ArrayLike, *, criterion: str = "oracle") -> DesignResult:
        """Solve for parameter ``theta``; ``extras['best']`` is the index of z* (must be unique).

        Parameters
        ----------
        theta : array_like, shape (d,)
            The parameter (e.g. a plug-in estimate); z* = argmax_z z^T theta.
        criterion : str
            Label stored in the result's ``criterion``.

        Returns
        -------
        DesignResult
            The design, its value (H_LB or rho*) and certified ``lower_bound`` on the oracle directions,
            ``extras['best']`` and ``extras['polished']``.

        Raises
        ------
        InvalidInputError
            ``theta`` of the wrong length or not finite, a tie for z*, or oracle directions at an
            unrepresentable scale.
        SolverError
            Every conic solver of the chain failed.
        """
        theta = as_vector(theta, "theta", length=self.X.shape[1])
        scores = self.Z @ theta
        best = unique_argmax(scores, "Z @ theta")
        gaps = scores[best] - scores
        q = np.zeros(self.Z.shape[0])
        others = np.arange(self.Z.shape[0]) != best
        q[others] = gaps[others] ** -2.0
        self.anchor.value = self.Z[best] / self._scale
        Y_eff = (self.Z[best] - self.Z) * np.sqrt(q)[:, None]  # zero row for z* itself
        check_direction_scale(Y_eff, self.X, "the oracle directions (z* - z) / gap(z)", rescale="theta or Z")
        return self._solve(Y_eff, q, criterion, {"best": best})


class DOptimalModel:
    """cvxpy model max_w log det A(w) over the simplex (A(w) one affine expression in w).

    Parameters
    ----------
    X : array_like, shape (K, d)
        The arms; they must span R^d.
    solver : str, optional
        Forced conic solver (log det needs the PSD and exponential cones); the default chain otherwise.

    Raises
    ------
    InvalidInputError
        Arms that do not span R^d, NaN/inf, a wrong shape.
    InstanceTooLargeError
        d above D_OPTIMAL_MAX_DIM or K d^2 above D_OPTIMAL_MAX_ENTRIES (:func:`d_optimal_model_fits`).
    """

    def __init__(self, X: np.ndarray, *, solver: str | None = None):
        X = as_arms(X)
        K, d = X.shape
        if not d_optimal_model_fits(K, d):
            raise InstanceTooLargeError(
                f"DOptimalModel with K = {K:,} arms in R^{d} needs a {d} x {d} log det cone (limit d = "
                f"{D_OPTIMAL_MAX_DIM}) and {K * d * d:.2e} coefficients (limit {D_OPTIMAL_MAX_ENTRIES:.0e}): use "
                f"od.d_optimal(X, method='exchange') or 'frank-wolfe' (certified by Kiefer–Wolfowitz) instead"
            )
        self.X, self.solver = X, solver
        self.w = cp.Variable(K, nonneg=True, name="w")
        Xs = X / np.max(np.abs(X))  # the D-optimal w does not depend on the scale of X; unscaled, |X| = 1e-8 gave
        outer = np.einsum("ki,kj->kij", Xs, Xs).reshape(K, d * d)  # status "optimal" at a rank-one design
        A = cp.reshape(outer.T @ self.w, (d, d), order="C")
        self.problem = cp.Problem(cp.Maximize(cp.log_det(A)), [cp.sum(self.w) == 1])

    def solve(self) -> DesignResult:
        """Solve; the design is certified by Kiefer–Wolfowitz (lower bound d, gap = G-value / d - 1).

        Returns
        -------
        DesignResult
            ``criterion="d-optimal"``, ``value`` the G-value, ``lower_bound`` d and ``extras['log_det']``.

        Raises
        ------
        SolverError
            Every conic solver of the chain failed.
        """
        info = solvers.solve(self.problem, self.solver)
        w = _weights_from(self.w)
        d = self.X.shape[1]
        value = minmax_value(self.X, w, self.X)
        return DesignResult(
            weights=w, value=value, status=info.status, solver=info.solver, solve_time=info.solve_time,
            gap=relative_gap(value, d), method="cvxpy", criterion="d-optimal", lower_bound=float(d),
            extras={"log_det": float(np.linalg.slogdet(self.X.T @ (w[:, None] * self.X))[1])},
        )
