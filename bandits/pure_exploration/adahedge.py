"""AdaHedge, the scale-free exponential-weights learner of de Rooij, van Erven, Grünwald & Koolen (JMLR 2014):
learning rate ln K / Delta, where Delta sums the gaps between the Hedge and mix losses (LinGame's learner)."""

from __future__ import annotations

import numpy as np

__all__ = ["AdaHedge"]


class AdaHedge:
    """Exponential weights with the AdaHedge learning rate, on losses of any scale.

    Weights are proportional to exp(-eta L_k) for cumulative losses L, with eta = ln K / Delta and Delta the
    sum of the mixability gaps (Hedge loss w . l minus mix loss -(1/eta) ln sum_k w_k exp(-eta l_k)) so far; while
    Delta = 0 it follows the leaders (uniform on argmin L, whose mix loss is the least loss among them). A subclass
    may keep the distribution implicit (:class:`bandits.multiagent.gibbs.FactoredAdaHedge`: joint actions of a factor
    graph): it supplies :meth:`weights`, ``_mix_loss`` and ``log_size``, the update is this one.

    Parameters
    ----------
    n : int
        Number of actions (at least 2).
    """

    def __init__(self, n: int) -> None:
        self.losses = np.zeros(int(n))
        self.gap = 0.0

    @property
    def log_size(self) -> float:
        """ln K, the numerator of the learning rate."""
        return float(np.log(self.losses.size))

    def weights(self) -> np.ndarray:
        """The current distribution over the actions.

        Returns
        -------
        numpy.ndarray
            A point of the simplex.
        """
        shifted = self.losses - self.losses.min()
        if self.gap <= 0:
            u = (shifted <= 0).astype(float)
        else:
            u = np.exp(-self.log_size / self.gap * shifted)
        return u / u.sum()

    def _mix_loss(self, loss: np.ndarray, w: np.ndarray) -> float:
        """-(1/eta) ln sum_k w_k exp(-eta loss_k) at the current eta (the least loss on w's support while Delta = 0)."""
        if self.gap <= 0:
            return float(loss[w > 0].min())
        eta = self.log_size / self.gap
        low = float(loss.min())
        return low - float(np.log(w @ np.exp(-eta * (loss - low)))) / eta

    def update(self, loss: np.ndarray) -> None:
        """Incur a loss vector: add it to the cumulative losses and the mixability gap to Delta.

        Parameters
        ----------
        loss : numpy.ndarray
            One loss per action (finite).
        """
        loss = np.asarray(loss, dtype=float)
        w = self.weights()
        hedge = float(w @ loss)
        mix = self._mix_loss(loss, w)
        self.losses = self.losses + loss
        self.gap += max(hedge - mix, 0.0)
