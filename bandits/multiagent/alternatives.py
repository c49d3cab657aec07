"""The closest alternative of a joint piece: moving the entries (e, a_hat_e) and (e, a_e) of the factors a changes
towards each other by c / w_{e,b}, c = D(a) / H_w(a), makes a as good as a_hat at least cost sum w (theta -
lambda)^2 / (2 sigma^2) (Lagrange); the piece's gradient in w is that cost's per-entry term."""

from __future__ import annotations

import numpy as np

from optdesign.errors import InvalidInputError

from ..pure_exploration.pieces import Pieces

__all__ = ["joint_piece_gradients", "leader_share", "listed_pieces"]


def joint_piece_gradients(flat: np.ndarray, star: np.ndarray, D: np.ndarray, H: np.ndarray, inv: np.ndarray,
                          sigma: float) -> np.ndarray:
    """d f_a / d w of the pieces of joint actions a: (c / w_{e,b})^2 / (2 sigma^2), c = D(a) / H_w(a), on the entries
    (e, a_e) and (e, a_hat_e) of the factors a changes, 0 elsewhere and for a piece tied with the best (D <= 0).

    Parameters
    ----------
    flat : numpy.ndarray of int, shape (J, F)
        The group action of every alternative in every factor
        (:meth:`~bandits.multiagent.joint_actions.GroupIndexer.flat`).
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


def leader_share(counts: np.ndarray, leader_entries: np.ndarray, challenger_entries: np.ndarray) -> float:
    """The IDS proportion of the leader: sum 1 / N_{e,B_e} over the factors where B and C differ, over H(C).

    Parameters
    ----------
    counts : numpy.ndarray, shape (Abar,)
        Observations per group action (positive at the entries read).
    leader_entries : numpy.ndarray of int, shape (F,)
        The flat group action of the leader in every factor.
    challenger_entries : numpy.ndarray of int, shape (F,)
        The same for the challenger.

    Returns
    -------
    float
        The share in [0, 1]; 1/2 when the two joint actions agree on every factor.

    Raises
    ------
    InvalidInputError
        Entry arrays of different shapes or outside the counts, or a count read that is not positive.
    """
    leader_entries, challenger_entries = np.asarray(leader_entries), np.asarray(challenger_entries)
    if leader_entries.shape != challenger_entries.shape or leader_entries.ndim != 1:
        raise InvalidInputError(f"the leader's and the challenger's entries must be vectors of one shape, got "
                                f"{leader_entries.shape} and {challenger_entries.shape}")
    read = np.concatenate([leader_entries, challenger_entries])
    if read.size and (read.min() < 0 or read.max() >= counts.size or np.any(counts[read] <= 0)):
        raise InvalidInputError("leader_share reads counts that are missing or not positive")
    changed = leader_entries != challenger_entries
    lead = float(np.sum(1.0 / counts[leader_entries[changed]]))
    chal = float(np.sum(1.0 / counts[challenger_entries[changed]]))
    return lead / (lead + chal) if lead + chal > 0 else 0.5


def listed_pieces(flat: np.ndarray, best: int, mu: np.ndarray, w: np.ndarray, sigma: float, *,
                  gradients: bool = True) -> Pieces:
    """The piece f_a(w) = D(a)^2 / (2 sigma^2 H_w(a)) of every joint action a other than the answer, listed
    (:mod:`bandits.multiagent.problem`; 0 for a piece tied with the answer, inf for one no weight separates).

    Parameters
    ----------
    flat : numpy.ndarray of int, shape (A, F)
        The group action of every joint action (in code order) in every factor.
    best : int
        The answer a_hat (its code).
    mu, w : numpy.ndarray, shape (Abar,)
        The parameter; weights or counts per group action.
    sigma : float
        The noise level.
    gradients : bool
        Also the gradients in w (:func:`joint_piece_gradients`).

    Returns
    -------
    Pieces
        One piece per joint action other than the answer, in code order.
    """
    others = np.delete(np.arange(flat.shape[0]), best)
    flat, star = flat[others], flat[best]
    changed = flat != star
    D = (mu[star][None, :] - mu[flat]).sum(axis=1)
    with np.errstate(divide="ignore"):
        inv = 1.0 / w.astype(float)
    H = np.where(changed, inv[star][None, :] + inv[flat], 0.0).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.where(D > 0, np.where(H > 0, D**2 / (2 * sigma**2 * H), np.inf), 0.0)
    grads = joint_piece_gradients(flat, star, D, H, inv, sigma) if gradients else None
    return Pieces(best=best, answers=others, values=values, gradients=grads)
