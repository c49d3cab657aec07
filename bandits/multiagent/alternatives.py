"""The closest alternative of a joint piece: moving the entries (e, a_hat_e) and (e, a_e) of the factors a changes
towards each other by c / w_{e,b}, c = D(a) / H_w(a), makes a as good as a_hat at least cost sum w (theta -
lambda)^2 / (2 sigma^2) (Lagrange); the piece's gradient in w is that cost's per-entry term."""

from __future__ import annotations

import numpy as np

__all__ = ["joint_piece_gradients"]


def joint_piece_gradients(flat: np.ndarray, star: np.ndarray, D: np.ndarray, H: np.ndarray, inv: np.ndarray,
                          sigma: float) -> np.ndarray:
    """d f_a / d w of the pieces of joint actions a: (c / w_{e,b})^2 / (2 sigma^2), c = D(a) / H_w(a), on the entries
    (e, a_e) and (e, a_hat_e) of the factors a changes, 0 elsewhere and for a piece tied with the best (D <= 0).

    Parameters
    ----------
    flat : numpy.ndarray of int, shape (J, F)
        The group action of every alternative in every factor (:meth:`GroupIndexer.flat`).
    star : numpy.ndarray of int, shape (F,)
        The same for the answer a_hat.
    D : numpy.ndarray, shape (J,)
        The gaps D(a).
    H : numpy.ndarray, shape (J,)
        H_w(a) = sum over the changed factors of 1 / w_{e,a_hat_e} + 1 / w_{e,a_e}.
    inv : numpy.ndarray, shape (Abar,)
        1 / w per group action.
    sigma : float
        The noise level.

    Returns
    -------
    numpy.ndarray, shape (J, Abar)
        One gradient per alternative: (theta - lambda_a)^2 / (2 sigma^2) at its closest alternative lambda_a.
    """
    changed = flat != star[None, :]
    c = np.where((D > 0) & (H > 0), D / np.where(H > 0, H, 1.0), 0.0)
    grads = np.zeros((flat.shape[0], inv.size))
    rows = np.repeat(np.arange(flat.shape[0]), flat.shape[1]).reshape(flat.shape)
    for entries in (flat, np.broadcast_to(star, flat.shape)):
        part = np.where(changed, (c[:, None] * inv[entries]) ** 2 / (2 * sigma**2), 0.0)
        np.add.at(grads, (rows[changed], entries[changed]), part[changed])
    return grads
