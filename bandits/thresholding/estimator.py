"""Laplacian-regularised mean estimate of GrAPL and of its non-adaptive baseline (LeJeune et al. 2020, Sec. 2.3).

    mu_hat_t = argmin_mu  sum_{s<=t} (x_s - mu_{pi_s})^2 + gamma ||mu - tau 1||^2_{L_lambda},   L_lambda = L + lambda I,

i.e. (dividing the normal equations by gamma) mu_hat_t = tau 1 + V_t^{-1} xvec_t with

    V_t = L_lambda + diag(n_t) / gamma,     xvec_t = sum_{s<=t} (x_s - tau) e_{pi_s} / gamma.

This is the paper's eqs. (5)-(8) with the tau offset of its Remark 3.5 (eqs. 17-18), which the
authors' code uses (``use_tau_offset=True``): the prior mean is tau, so an arm with no information is
put *at* the threshold (mu_hat_0 = tau 1) and the bounds involve ||mu - tau 1||_{L_lambda}. It is the
Gaussian posterior mean under the prior N(tau 1, (gamma L_lambda)^{-1}) and unit-variance likelihood.

Update methods (``solver``):

* ``"cg"`` (default): V_t is kept as a sparse CSR matrix whose diagonal is updated in place; each
  estimate solves V_t y = xvec_t by Jacobi-preconditioned conjugate gradients warm-started at the
  previous y (the authors' code uses warm-started CG too). A pull changes one diagonal entry and one
  entry of xvec, so the warm start's residual is a single spike; but the correction it calls for,
  V^{-1} e_i, spreads over the graph, and the iterations grow with the condition number of the
  Jacobi-scaled V: few on expanders (SBM), hundreds on small worlds, whatever N. The cost is
  O(iterations x nnz(L)) per estimate and O(nnz) memory.
  Stops when ||xvec - V y||_{D^-1} <= rtol ||xvec||_{D^-1}, D = diag(V) (the Jacobi-scaled residual,
  invariant to the scale of the pull counts; ``rtol``, default 1e-9). Solving is lazy: pulls are
  accumulated and the system is solved when :meth:`LaplacianEstimator.mean` is called, so a
  non-adaptive sampler only solves at the times it is asked for an estimate.
* ``"lu-update"``: sparse LU of V (SuperLU, minimum-degree ordering on V + V^T) at some time f, and
  between factorisations the exact Woodbury correction for the diagonal entries pulled since
  (:mod:`.lowrank`): one LU solve per newly pulled arm and O(N k) for k arms pulled since f; V is
  factorised afresh once k would exceed min(128, 2^23 / N). Exact, no tolerance. The solver of graphs
  where CG needs many iterations and the LU little fill (ring lattices, small worlds, grids): see
  ``benchmarks/bench_thresholding.py --parts scale`` for GrAPL on small worlds of N = 10^3 to 10^5. On
  expanders such as the SBM the LU fills in heavily while CG needs few iterations.
* ``"direct"``: the same sparse LU of V_t, factorised afresh at each estimate (k = 0 above).
* ``"sherman-morrison"``: keeps the dense V_t^{-1} (O(N^2) memory, N <= 5000) and applies the rank-one
  update V^{-1} <- V^{-1} - c u u^T / (gamma + c u_i), u = V^{-1} e_i, with
  y <- y + u (a - c y_i) / (gamma + c u_i) for c pulls of arm i with reward sum tau c + a. O(N^2) per
  pulled arm, no iteration, exact up to round-off.

* ``"auto"``: Sherman–Morrison up to N = 2000 arms (an adaptive rule estimates after every pull, and
  one O(N^2) update beats both iterative and sparse direct solves there: GrAPL on the N = 1000 small
  world runs 3x faster than with ``"direct"`` and 7x faster than with CG); above, CG while its solves
  converge within AUTO_CG_ITERATIONS = 100 iterations, and ``"lu-update"`` from the first solve that
  does not (that solve is finished by the LU). A graph whose Jacobi-scaled V is badly conditioned has a
  small spectral gap, so poor expansion and, as a rule, small separators: little fill. In
  ``benchmarks/bench_thresholding.py --parts scale`` the SBM's CG solves take about 30 iterations and
  stay on CG, the small worlds' take hundreds and switch.

No dense inverse or dense solve is ever formed per round. lambda must be > 0: with lambda = 0, V_t is
singular as long as a connected component of the graph has no sample (and V_0 = L always is).
"""

from __future__ import annotations

import time

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp
from scipy.linalg import blas
from scipy.sparse.csgraph import connected_components

from optdesign.errors import InvalidInputError

from ..core.environments import as_counts
from ..core.validation import check_choice, check_positive
from .lowrank import UpdatedLU, default_rank

__all__ = ["LaplacianEstimator"]

SOLVERS = ("auto", "cg", "lu-update", "direct", "sherman-morrison")
#: ``solver="auto"`` keeps the dense inverse (Sherman–Morrison) up to this many arms, CG above
AUTO_DENSE_MAX_N = 2000
#: ``solver="auto"`` above AUTO_DENSE_MAX_N: a CG solve longer than this switches to ``"lu-update"`` for good
AUTO_CG_ITERATIONS = 100
SHERMAN_MORRISON_MAX_N = 5000


def check_lambda(lam: object, laplacian: sp.spmatrix | None = None) -> float:
    """lambda > 0 (ridge of L_lambda = L + lambda I); lambda = 0 leaves V singular on unsampled components."""
    if isinstance(lam, bool) or not isinstance(lam, (int, float, np.integer, np.floating)) or not np.isfinite(lam):
        raise InvalidInputError(f"lam must be a positive number, got {lam!r}")
    if lam < 0:
        raise InvalidInputError(f"lam must be positive (L + lam I must be positive definite), got {lam!r}")
    if lam == 0:
        where = ""
        if laplacian is not None:
            n_comp = connected_components(laplacian != 0, directed=False)[0]
            where = f" (this graph has {n_comp} connected component{'s' if n_comp > 1 else ''})"
        raise InvalidInputError(
            "lam must be > 0: with lam = 0, V = L + diag(n)/gamma is singular as long as a connected component "
            f"of the graph has no sample{where}, and the prior estimate mu_hat_0 = tau 1 is undefined"
        )
    return float(lam)


class LaplacianEstimator:
    """mu_hat = tau + V^{-1} xvec with V = L + lam I + diag(n)/gamma (see module docstring).

    ``add(arm, total, count)`` records ``count`` pulls of ``arm`` with reward sum ``total``;
    ``add_batch(counts, sums)`` a batch; ``mean()`` returns the current estimate. ``iterations``
    counts CG iterations, ``unconverged`` the CG solves that hit ``maxiter`` (default 10 N; the
    estimate is then the last iterate), ``factorizations`` the sparse LU factorisations, ``solve_time``
    the seconds spent updating and solving.

    Parameters
    ----------
    laplacian : scipy.sparse matrix, shape (N, N)
        The graph Laplacian L (symmetric positive semidefinite).
    tau : float
        The threshold: the prior mean of every arm, so mu_hat_0 = tau 1.
    gamma : float
        Weight gamma > 0 of the Laplacian penalty (the paper's gamma).
    lam : float
        Ridge lambda > 0 of L_lambda = L + lambda I.
    solver : str
        ``"cg"``, ``"lu-update"``, ``"direct"``, ``"sherman-morrison"`` or ``"auto"`` (see the module
        docstring). After an ``"auto"`` switch, the attribute ``solver`` reads ``"lu-update"``.
    rtol : float
        Relative tolerance in (0, 1) of the CG solves, on the Jacobi-scaled residual.
    maxiter : int, optional
        CG iterations per solve; None means 10 N (``"auto"`` hands a solve to the LU after
        AUTO_CG_ITERATIONS).

    Raises
    ------
    InvalidInputError
        A laplacian that is not a square sparse matrix, gamma or lam not positive, an unknown solver, rtol
        outside (0, 1), or ``"sherman-morrison"`` above SHERMAN_MORRISON_MAX_N arms.
    """

    def __init__(self, laplacian: sp.spmatrix, tau: float, gamma: float, lam: float = 1e-3, *, solver: str = "cg",
                 rtol: float = 1e-9, maxiter: int | None = None):
        if not sp.issparse(laplacian) or laplacian.shape[0] != laplacian.shape[1]:
            raise InvalidInputError("laplacian must be a square scipy sparse matrix")
        self.gamma = check_positive(gamma, "gamma", " (the weight of the Laplacian penalty)")
        self.lam = check_lambda(lam, laplacian)
        check_choice(solver, "solver", SOLVERS)
        if not (np.isfinite(rtol) and 0 < rtol < 1):
            raise InvalidInputError(f"rtol must be in (0, 1), got {rtol!r}")
        n = laplacian.shape[0]
        self._auto = solver == "auto" and n > AUTO_DENSE_MAX_N  # CG, until a solve needs the LU
        if solver == "auto":
            solver = "sherman-morrison" if n <= AUTO_DENSE_MAX_N else "cg"
        if solver == "sherman-morrison" and n > SHERMAN_MORRISON_MAX_N:
            raise InvalidInputError(f"solver='sherman-morrison' keeps a dense N x N inverse; N = {n} exceeds "
                                    f"{SHERMAN_MORRISON_MAX_N}: use solver='lu-update' (sparse, exact) or 'cg'")
        self.tau = float(tau)
        self.solver = solver
        self.rtol = float(rtol)
        self.maxiter = 10 * n if maxiter is None else int(maxiter)
        self._factor: UpdatedLU | None = None
        self.factorizations = 0
        self.n_arms = n
        self.counts = np.zeros(n, dtype=np.int64)
        self.xvec = np.zeros(n)
        self._y = np.zeros(n)  # mu_hat - tau
        self._dirty = False
        self.iterations = self.unconverged = self.solves = 0
        self.solve_time = 0.0
        self._L_lam = sp.csr_matrix(laplacian + self.lam * sp.eye(n, format="csr"), dtype=float)
        self._L_lam.sum_duplicates()
        self._L_lam.sort_indices()
        if solver != "sherman-morrison":
            self._V = self._L_lam.copy()
            rows = np.repeat(np.arange(n), np.diff(self._V.indptr))
            self._diag_pos = np.flatnonzero(rows == self._V.indices)  # one stored diagonal entry per row
            if self._diag_pos.size != n:
                raise InvalidInputError("laplacian + lam I must store every diagonal entry")
        else:
            self._Vinv = np.asfortranarray(np.linalg.inv(self._L_lam.toarray()))  # full; dsyr keeps the upper half

    def add(self, arm: int, total: float, count: int = 1) -> None:
        """Record ``count`` pulls of ``arm`` whose rewards sum to ``total``.

        Parameters
        ----------
        arm : int
            The arm's index in 0..N-1.
        total : float
            The sum of the ``count`` rewards.
        count : int
            The number of pulls (at least 1).
        """
        start = time.perf_counter()
        a = (float(total) - count * self.tau)
        if self.solver != "sherman-morrison":
            self._V.data[self._diag_pos[arm]] += count / self.gamma
            self.xvec[arm] += a / self.gamma
            self._dirty = True
        else:
            A = self._Vinv
            u = np.concatenate((A[:arm, arm], A[arm, arm:]))  # column arm of the symmetric inverse (upper half)
            denom = self.gamma + count * u[arm]
            self._y += u * ((a - count * self._y[arm]) / denom)
            self._Vinv = blas.dsyr(-count / denom, u, a=A, overwrite_a=True)
            self.xvec[arm] += a / self.gamma
        self.counts[arm] += count
        self.solve_time += time.perf_counter() - start

    def add_batch(self, counts: npt.ArrayLike, sums: npt.ArrayLike) -> None:
        """Record a batch: ``counts[k]`` pulls of arm k with reward sum ``sums[k]``.

        Parameters
        ----------
        counts : array_like of int, shape (N,)
            The batch's pulls of each arm (nonnegative).
        sums : array_like of float, shape (N,)
            The reward sum of each arm's pulls.
        """
        counts = as_counts(counts, self.n_arms)
        sums = np.asarray(sums, dtype=float)
        if self.solver == "sherman-morrison":
            for k in np.flatnonzero(counts):
                self.add(int(k), sums[k], int(counts[k]))
            return
        self._V.data[self._diag_pos] += counts / self.gamma
        self.xvec += (sums - counts * self.tau) / self.gamma
        self.counts += counts
        self._dirty = True

    def mean(self) -> npt.NDArray[np.float64]:
        """The current estimate mu_hat = tau + V^{-1} xvec (solved now if pulls arrived since the last call).

        Returns
        -------
        numpy.ndarray of float, shape (N,)
            mu_hat (a new array).
        """
        if self._dirty:
            start = time.perf_counter()
            self._solve()
            self.solve_time += time.perf_counter() - start
        return self.tau + self._y

    def system(self) -> tuple[sp.csr_matrix, npt.NDArray[np.float64]]:
        """(V_t, xvec_t), copies: for checks and dense baselines.

        Returns
        -------
        V : scipy.sparse.csr_matrix, shape (N, N)
            V_t = L + lambda I + diag(n_t) / gamma.
        xvec : numpy.ndarray of float, shape (N,)
            xvec_t = sum_s (x_s - tau) e_{pi_s} / gamma.
        """
        V = self._L_lam + sp.diags(self.counts / self.gamma, format="csr")
        return V.tocsr(), self.xvec.copy()

    def _solve(self) -> None:
        """V y = xvec: sparse LU (``lu-update``, ``direct``) or Jacobi-preconditioned CG from the previous y."""
        self._dirty = False
        self.solves += 1
        if self.solver != "cg" or not self._cg():
            self._lu_solve()

    def _lu_solve(self) -> None:
        """y = V^{-1} xvec from the LU of an earlier V and a Woodbury correction, or a new LU (:mod:`.lowrank`)."""
        V, b = self._V, self.xvec
        diag = V.data[self._diag_pos]
        y = None if self._factor is None else self._factor.solve(diag, b)
        if y is None:
            self._factor = UpdatedLU(V, b, default_rank(self.n_arms) if self.solver == "lu-update" else 0)
            self.factorizations += 1
            y = self._factor.z_f
        self._y[:] = y

    def _cg(self) -> bool:
        """Jacobi-preconditioned CG from the previous y; False when ``"auto"`` hands the solve to the LU."""
        V, b, y = self._V, self.xvec, self._y
        maxiter = min(self.maxiter, AUTO_CG_ITERATIONS) if self._auto else self.maxiter
        inv_diag = 1.0 / V.data[self._diag_pos]
        tol2 = self.rtol**2 * (b @ (b * inv_diag))  # stop on the Jacobi-scaled residual: sqrt(r^T D^-1 r)
        if tol2 == 0.0:
            y[:] = 0.0
            return True
        r = b - V @ y
        z = r * inv_diag
        rz = r @ z
        if rz <= tol2:
            return True
        p = z.copy()
        for k in range(1, maxiter + 1):
            Ap = V @ p
            step = rz / (p @ Ap)
            y += step * p
            r -= step * Ap
            z = r * inv_diag
            rz_new = r @ z
            if rz_new <= tol2:
                self.iterations += k
                return True
            p *= rz_new / rz
            p += z
            rz = rz_new
        self.iterations += maxiter
        if self._auto:  # CG is slow on this graph: the sparse LU from now on
            self._auto = False
            self.solver = "lu-update"
            return False
        self.unconverged += 1
        return True
