"""The barrier's start (:mod:`optdesign.linear.barrier`): a strictly positive design, the directions rescaled so
that F(start) = 1, and the arm subset it runs on when K exceeds ``max_arms`` (chosen by a smoothed multiplicative
warm start: w_k <- w_k sqrt(h_k / f_p), p = softmax(v / (smoothing F)))."""

from __future__ import annotations

from typing import cast

import numpy as np

from ..errors import InvalidInputError
from .criteria import cholesky_factor, whiten

__all__ = ["initial_arms", "scaled_start"]


def _warm_start_arms(X: np.ndarray, Y: np.ndarray, n_iter: int = 30,
                     smoothing: float = 0.2) -> tuple[np.ndarray, np.ndarray]:
    """Damped multiplicative algorithm on the smoothed objective (p = softmax(v / (smoothing F))).

    Only used to choose a promising arm subset when K is large: w_k <- w_k sqrt(h_k / f_p).
    """
    K = X.shape[0]
    w = np.full(K, 1.0 / K)
    ratio = np.ones(K)
    for _ in range(n_iter):
        L = cast(np.ndarray, cholesky_factor(X, w))  # X spans R^d and w > 0
        Zy = whiten(L, Y)
        v = np.einsum("ij,ij->j", Zy, Zy)
        p = np.exp((v - v.max()) / (smoothing * v.max()))
        p /= p.sum()
        f = p @ v
        Zx = whiten(L, X)
        h = np.einsum("ij,ij->j", Zx, ((Zy * p) @ Zy.T) @ Zx)
        ratio = h / f
        w = w * np.sqrt(ratio)
        w /= w.sum()
    return w, ratio


def scaled_start(X: np.ndarray, Y: np.ndarray, w0: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, float]:
    """Strictly positive starting design, the directions rescaled to F(start) = 1, and that scale F(start).

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms.
    Y : numpy.ndarray, shape (m, d)
        The directions.
    w0 : numpy.ndarray, shape (K,), or None
        A warm start (mixed with 10 % of the uniform design), or None for the uniform design.

    Returns
    -------
    tuple
        The start w (K,), the directions Y / sqrt(F(w)) and F(w) (F(cY) = c^2 F(Y)).

    Raises
    ------
    InvalidInputError
        A(w) of the start is singular (the rows of X do not span R^d).
    """
    K = X.shape[0]
    w_full = np.full(K, 1.0 / K) if w0 is None else np.clip(np.asarray(w0, float), 0.0, None)
    w_full = 0.9 * w_full / w_full.sum() + 0.1 / K  # strictly positive start
    L = cholesky_factor(X, w_full)
    if L is None:
        raise InvalidInputError("the rows of X must span R^d (A(w) is singular)")
    Z = whiten(L, Y)
    scale2 = float(np.einsum("ij,ij->j", Z, Z).max())  # F(cY) = c^2 F(Y): work at F(w_start) = 1
    return w_full, Y / np.sqrt(scale2), scale2


def initial_arms(X: np.ndarray, Y: np.ndarray, w_full: np.ndarray, max_arms: int) -> tuple[np.ndarray, np.ndarray]:
    """Arm subset S the barrier starts on and its normalised weights: every arm up to ``max_arms`` arms, above that
    the max_arms / 2 largest weights and max_arms / 4 largest ratios h_k / f_p of the smoothed multiplicative warm
    start (every arm if they do not span R^d).

    Parameters
    ----------
    X : numpy.ndarray, shape (K, d)
        The arms.
    Y : numpy.ndarray, shape (m, d)
        The directions.
    w_full : numpy.ndarray, shape (K,)
        The start on every arm (:func:`scaled_start`).
    max_arms : int
        The most arms the barrier starts on.

    Returns
    -------
    tuple
        The subset S (indices into X) and its weights (summing to 1).
    """
    K, d = X.shape
    if K > max_arms:
        w_ws, ratio = _warm_start_arms(X, Y)
        S = np.union1d(np.argsort(-w_ws)[: max_arms // 2], np.argsort(-ratio)[: max_arms // 4])
        w = w_ws[S] + 1e-3 / len(S)
        if np.linalg.matrix_rank(X[S]) < d:
            S, w = np.arange(K), np.full(K, 1.0 / K)
    else:
        S, w = np.arange(K), w_full.copy()
    return S, w / w.sum()
