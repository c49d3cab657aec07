"""The argument checks: arrays (finite, real, of the right shape), arm sets (spanning, on a sane scale), counts,
tolerances, weights and unique maximisers; each raises InvalidInputError naming the argument."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InstanceTooLargeError, InvalidInputError
from .sizes import count_text

__all__ = ["TIE_RTOL", "as_arms", "as_count", "as_matrix", "as_nonnegative", "as_tolerance", "as_vector",
           "check_weights", "unique_argmax"]


def real_array(value: ArrayLike) -> np.ndarray:
    """``value`` as a float array; complex entries raise TypeError (casting would drop their imaginary parts), and so
    do dates, durations, text and raw bytes (casting would read them as numbers)."""
    arr = np.asarray(value)
    if np.iscomplexobj(arr):
        raise TypeError("complex entries are not accepted (casting to float would drop the imaginary parts)")
    if arr.dtype.kind in "MmUSV":
        raise TypeError(f"entries must be numbers, got {arr.dtype} values")
    return arr.astype(float, copy=False)


def as_matrix(value: ArrayLike, name: str, *, n_cols: int | None = None, min_rows: int = 1) -> np.ndarray:
    """Return ``value`` as a finite float 2-D array (rows are vectors), or raise.

    Parameters
    ----------
    value : array_like
        The matrix, one vector per row.
    name : str
        The argument's name in error messages.
    n_cols : int, optional
        Required number of columns (the dimension d); any by default.
    min_rows : int
        Required number of rows, at least.

    Returns
    -------
    numpy.ndarray
        Float64 array of shape (rows, cols); ``value`` itself when it already is one.

    Raises
    ------
    InvalidInputError
        Non-numeric or complex entries, not 2-D, too few rows, no column, the wrong number of columns, NaN or inf.
    """
    try:
        arr = real_array(value)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{name} must be a numeric 2-D array: {exc}") from None
    if arr.ndim != 2:
        raise InvalidInputError(f"{name} must be 2-D (one row per vector), got ndim={arr.ndim}")
    if arr.shape[0] < min_rows or arr.shape[1] == 0:
        raise InvalidInputError(f"{name} must have at least {min_rows} row(s) and 1 column, got shape {arr.shape}")
    if n_cols is not None and arr.shape[1] != n_cols:
        raise InvalidInputError(f"{name} must have {n_cols} columns (the dimension d), got {arr.shape[1]}")
    if not np.all(np.isfinite(arr)):
        raise InvalidInputError(f"{name} contains NaN or infinite entries")
    return arr


def as_vector(value: ArrayLike, name: str, *, length: int | None = None) -> np.ndarray:
    """Return ``value`` as a finite float 1-D array, or raise.

    Parameters
    ----------
    value : array_like
        The vector.
    name : str
        The argument's name in error messages.
    length : int, optional
        Required length; any nonzero length by default.

    Returns
    -------
    numpy.ndarray
        Float64 array of shape (length,).

    Raises
    ------
    InvalidInputError
        Non-numeric or complex entries, not 1-D, the wrong length, empty, NaN or inf.
    """
    try:
        arr = real_array(value)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{name} must be a numeric 1-D array: {exc}") from None
    if arr.ndim != 1:
        raise InvalidInputError(f"{name} must be 1-D, got ndim={arr.ndim}")
    if length is not None and arr.shape[0] != length:
        raise InvalidInputError(f"{name} must have length {length}, got {arr.shape[0]}")
    if arr.size == 0:
        raise InvalidInputError(f"{name} is empty")
    if not np.all(np.isfinite(arr)):
        raise InvalidInputError(f"{name} contains NaN or infinite entries")
    return arr


# arms whose largest |entry| lies outside this range make A(w) = X^T diag(w) X underflow or overflow
ARM_SCALE = (1e-100, 1e100)
# as_arms decides the rank from a QR factor (condition estimate, SVD only near the tolerance) from this many rows
# and columns; below, numpy's matrix_rank (an SVD of X) is as cheap
RANK_QR_MIN = 200
# LAPACK's 1-norm condition estimate is a lower bound, rarely off by more than a few times: triangular_rank trusts
# it only this far from the rank tolerance
RANK_ESTIMATE_MARGIN = 1e3


def check_scale(arr: np.ndarray, name: str) -> np.ndarray:
    """The largest |entry| of ``arr`` lies in ARM_SCALE (A(w) is then representable in floating point)."""
    scale = max(float(arr.max()), -float(arr.min())) if arr.size else 0.0  # no |arr| copy of a large X
    if not ARM_SCALE[0] <= scale <= ARM_SCALE[1]:
        raise InvalidInputError(f"{name} has largest |entry| {scale:.3g}, outside [{ARM_SCALE[0]:g}, {ARM_SCALE[1]:g}] "
                                f"where A(w) = X^T diag(w) X neither underflows nor overflows; rescale {name}")
    return arr


def check_direction_scale(Y: np.ndarray, X: np.ndarray, name: str = "Y", *, rescale: str | None = None) -> np.ndarray:
    """max |Y| / max |X| lies in ARM_SCALE, so y^T A(w)^{-1} y neither underflows nor overflows."""
    ratio = np.max(np.abs(Y)) / np.max(np.abs(X)) if Y.size else 0.0
    if not ARM_SCALE[0] <= ratio <= ARM_SCALE[1]:
        raise InvalidInputError(f"{name}: largest |entry| is {ratio:.3g} times that of the arms X, outside "
                                f"[{ARM_SCALE[0]:g}, {ARM_SCALE[1]:g}] (y^T A(w)^-1 y would underflow or overflow); "
                                f"rescale {rescale or name}")
    return Y


def as_arms(X: ArrayLike, name: str = "X") -> np.ndarray:
    """Arms as a K x d array whose rows span R^d (otherwise A(w) is singular for every w), at a representable scale.

    Parameters
    ----------
    X : array_like, shape (K, d)
        The arms, one per row.
    name : str
        The argument's name in error messages.

    Returns
    -------
    numpy.ndarray
        Float64 array of shape (K, d).

    Raises
    ------
    InvalidInputError
        What :func:`as_matrix` refuses, rank below d (numpy's ``matrix_rank``), or a largest absolute entry
        outside ARM_SCALE = [1e-100, 1e100].
    """
    arr = as_matrix(X, name)
    n, d = arr.shape
    if min(n, d) < RANK_QR_MIN:
        rank = int(np.linalg.matrix_rank(arr))
    else:  # the singular values of R (X = QR) are those of X; R decides at once when it is well conditioned
        from scipy.linalg import qr  # here, not at the top: the command lines' help and bandit listings skip it

        rank = triangular_rank(qr(arr, mode="r", check_finite=False)[0][:d], n)
    if rank < d:
        raise InvalidInputError(f"the rows of {name} must span R^{d} (A(w) is singular otherwise); found rank {rank}")
    return check_scale(arr, name)


def triangular_rank(R: np.ndarray, n_rows: int) -> int:
    """numpy's ``matrix_rank`` of a K x d matrix X from the triangular factor R of X = QR (same singular values).

    The tolerance is matrix_rank's, sigma_max max(K, d) eps. LAPACK's O(d^2) 1-norm condition estimate of R
    settles an R far from it (kappa_2 <= d kappa_1, and a margin of RANK_ESTIMATE_MARGIN because the estimate may
    fall short of kappa_1); only the others pay for the singular values (an O(d^3) SVD: minutes at d = 5000).

    Parameters
    ----------
    R : numpy.ndarray, shape (min(K, d), d)
        Upper triangular factor of X.
    n_rows : int
        K, the number of rows of X (it enters the tolerance).

    Returns
    -------
    int
        The numerical rank of X.
    """
    from scipy.linalg import svd
    from scipy.linalg.lapack import dtrcon

    d = int(R.shape[1])
    limit = 1.0 / (max(n_rows, d) * np.finfo(float).eps)  # kappa_2 above this: rank below d
    if R.shape == (d, d) and d and np.all(np.isfinite(R)):
        rcond, info = dtrcon(R, norm="1", uplo="U")
        if info == 0 and rcond > 0 and d * RANK_ESTIMATE_MARGIN / rcond < limit:
            return d
    s = svd(R, compute_uv=False, check_finite=False) if R.size else np.zeros(1)
    return int(np.sum(s > s.max() * max(n_rows, d) * np.finfo(float).eps))


#: the relative tie tolerance of :func:`unique_argmax` (times the largest |score|)
TIE_RTOL = 1e-12


def unique_argmax(scores: np.ndarray, name: str, *, rtol: float = TIE_RTOL) -> int:
    """Index of the strict maximum of ``scores``; a tie raises (oracle designs need a unique best).

    Scores within ``rtol`` of the largest magnitude are ties (a purely relative test: the problem is the same at
    every scale of theta, so untied scores of order 1e-12 are not ties).

    Parameters
    ----------
    scores : numpy.ndarray, shape (n,)
        Finite scores, e.g. ``Z @ theta``.
    name : str
        What the scores are, in the error message.
    rtol : float
        Relative tie tolerance, times max |score|.

    Returns
    -------
    int
        The index of the maximum.

    Raises
    ------
    InvalidInputError
        Another score lies within the tolerance of the maximum (the message lists up to five tied indices).
    """
    best = int(np.argmax(scores))
    top = scores[best]
    tol = rtol * float(np.max(np.abs(scores)))
    ties = np.flatnonzero(scores >= top - tol)
    if ties.size > 1:
        raise InvalidInputError(
            f"{name}: the best item is not unique (indices {ties[:5].tolist()} tie at value {top:.6g})"
        )
    return best


def check_weights(weights: ArrayLike, name: str = "weights") -> np.ndarray:
    """A 1-D array of nonnegative finite weights with a positive sum.

    Parameters
    ----------
    weights : array_like, shape (n,)
        The weights; they need not sum to one.
    name : str
        The argument's name in error messages.

    Returns
    -------
    numpy.ndarray
        Float64 array of shape (n,), not normalised.

    Raises
    ------
    InvalidInputError
        What :func:`as_vector` refuses, a negative entry, or a zero sum.
    """
    arr = as_vector(weights, name)
    if np.any(arr < 0):
        raise InvalidInputError(f"{name} must be nonnegative")
    if arr.sum() <= 0:
        raise InvalidInputError(f"{name} must have a positive sum")
    return arr


#: counts at or above this do not fit numpy's int64 and are refused
COUNT_LIMIT = 2**63


def as_count(value: object, name: str, *, minimum: int = 1, floats: bool = False) -> int:
    """``value`` as a Python int >= ``minimum``: the package's one check of counts, sizes and seeds.

    The rule: a Python or numpy integer, never a bool, from ``minimum`` to below 2**63 (numpy's int64). Floats
    are refused, unless ``floats`` is set and the float is integral (``2.0``, ``1e9``: numbers read from TOML or
    a command line); ``2.5``, NaN and inf always are.

    Parameters
    ----------
    value : object
        A Python or numpy integer (or, with ``floats``, an integral float).
    name : str
        The argument's name in the error message.
    minimum : int
        Smallest accepted value (1: a positive count).
    floats : bool
        Accept integral floats too (option values parsed from text).

    Returns
    -------
    int
        ``value`` as a Python int.

    Raises
    ------
    InvalidInputError
        ``value`` breaks the rule; the message names the argument.
    """
    kind = "a positive integer" if minimum == 1 and not floats else f"an integer >= {minimum}"
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        count = int(value)
    elif floats and isinstance(value, (float, np.floating)) and float(value).is_integer():  # NaN, inf: False
        count = int(value)
    else:
        raise InvalidInputError(f"{name} must be {kind}, got {value!r}")
    if count < minimum:
        raise InvalidInputError(f"{name} must be {kind}, got {value!r}")
    if count >= COUNT_LIMIT:
        raise InvalidInputError(f"{name} must be {kind} below 2**63, got {value!r}")
    return count


def as_nonnegative(value: object, name: str) -> float:
    """``value`` as a finite float >= 0 (a slack such as epsilon); bools, strings, NaN and inf are refused.

    Parameters
    ----------
    value : object
        A Python or numpy number.
    name : str
        The argument's name in the error message.

    Returns
    -------
    float
        ``value`` as a Python float.

    Raises
    ------
    InvalidInputError
        ``value`` is a bool, not a real number, not finite, or negative.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not np.isfinite(value) or value < 0:
        raise InvalidInputError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


def as_tolerance(value: object, name: str = "tol") -> float:
    """``value`` as a finite float > 0 (a relative gap); bools, strings and NaN are refused.

    Parameters
    ----------
    value : object
        A Python or numpy number.
    name : str
        The argument's name in the error message.

    Returns
    -------
    float
        ``value`` as a Python float.

    Raises
    ------
    InvalidInputError
        ``value`` is a bool, not a real number, not finite, or not positive.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not np.isfinite(value) or value <= 0:
        raise InvalidInputError(f"{name} must be a positive number, got {value!r}")
    return float(value)


def check_m_best(m: int, n_joint_actions: int) -> int:
    """The m of the m-best restrictions (T^MF(m), regret bound): 1 <= m <= |A| - 1."""
    m = as_count(m, "m")
    if m > n_joint_actions - 1:
        raise InvalidInputError(f"m = {m} exceeds the number of joint actions minus one ({n_joint_actions - 1})")
    return m


def check_enumerable(n_joint_actions: int, limit: int, *, what: str, instead: str) -> None:
    """Refuse a program with one row per joint action above ``limit`` (an integer >= 0) joint actions."""
    limit = as_count(limit, "max_joint_actions", minimum=0)
    if n_joint_actions > limit:
        raise InstanceTooLargeError(f"{what} needs one constraint per joint action: {count_text(n_joint_actions)} "
                                    f"exceeds the limit {limit}; use {instead} instead")
