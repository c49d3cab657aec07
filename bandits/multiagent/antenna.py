"""Antenna-tilt instances (MF-TaS §7.2 and App. I) on a synthetic network described here.

The paper ran a proprietary simulator. This generator follows its model with a simple geometry:

* Cells: N sites with one antenna each, 32 m high (the paper's Table 4), inter-site distance ``isd``
  (500 m). ``layout="line"`` puts them on a line; ``"hex"`` puts them on a triangular (hexagonal-cell)
  lattice filled row by row. Users (``users``, 1000 as in Table 4) are uniform on the cells' bounding
  box grown by isd/2, at 1.5 m.
* Propagation: path loss L = 128.1 + 37.6 log10(d_3D / 1 km) dB (3GPP TR 36.942 macro, urban). The
  vertical antenna pattern follows 3GPP TR 36.814: G(phi) = 17 - min(12 ((phi - tilt) / 10)^2, 20) dBi,
  with phi the elevation angle below the horizon towards the user and a horizontally omnidirectional
  pattern. Transmit power P = 46 dBm on all 50 PRBs of 180 kHz (9 MHz). Noise is -174 dBm/Hz + 10 log10(9 MHz)
  + 7 dB noise figure.
* Tilts: K values 3 * 4^{k/(K-1)} degrees, k = 0..K-1, i.e. the paper's {3, 6, 12} for K = 3.
* Users attach to the cell of maximal RSRP at the reference tilt (index K // 2 everywhere). The paper
  assumes fixed sets U_i (§7.2), which is what makes the groups' noise independent.
* Groups: cell i and its ``interferers`` strongest interferers N_i (ranked by the power they send to
  U_i at the reference tilt). The factor has scope {i} ∪ N_i.
* Group reward (App. I): the mean user throughput of cell i,
  theta_i(a_e) = (1/abs(U_i)) sum_{u in U_i} omega_B n_PRB log2(1 + SINR_{i,u}(a_e)), in Mbit/s, where
  SINR_{i,u} = P G_{i,u}(a_i) L_{i,u} / (sum_{k in N_i} P G_{k,u}(a_k) L_{k,u} + noise). Each user is
  served on all PRBs when scheduled, a full-buffer round robin.
* Scale: the tables are divided by the largest group mean and multiplied by ``scale`` (default 1). With
  unit-variance noise, the noise standard deviation is then 1/scale of the best cell's throughput.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from optdesign import FactorGraph
from optdesign.errors import InvalidInputError
from optdesign.factored import factor_graph_entries
from optdesign.validation import as_count, check_array_size

from ..core.validation import check_choice, check_positive

__all__ = ["antenna_tilt", "received_power_mw", "site_positions", "tilt_values"]

HEIGHT, UE_HEIGHT = 32.0, 1.5  # m
POWER_DBM, MAX_GAIN_DBI, HPBW_DEG, SIDE_LOBE_DB = 46.0, 17.0, 10.0, 20.0
N_PRB, PRB_HZ, NOISE_FIGURE_DB = 50, 180e3, 7.0
LAYOUTS = ("line", "hex")


def tilt_values(K: int) -> npt.NDArray[np.float64]:
    """K electrical tilts in degrees, geometric from 3 to 12 (the paper's {3, 6, 12} for K = 3).

    Parameters
    ----------
    K : int
        Number of tilts.

    Returns
    -------
    ndarray, shape (K,)
        3 * 4^(k / (K - 1)) degrees for k = 0..K-1.
    """
    return 3.0 * 4.0 ** (np.arange(K) / max(K - 1, 1))


def site_positions(N: int, layout: str, isd: float) -> npt.NDArray[np.float64]:
    """(N, 2) site coordinates in metres.

    Parameters
    ----------
    N : int
        Number of sites.
    layout : str
        ``"line"``: on the x axis; any other value (``"hex"``): a triangular lattice of ceil(sqrt(N)) columns,
        filled row by row, odd rows shifted by isd/2.
    isd : float
        Inter-site distance in metres.

    Returns
    -------
    ndarray, shape (N, 2)
        The (x, y) coordinates of every site.
    """
    if layout == "line":
        return np.c_[np.arange(N) * isd, np.zeros(N)]
    cols = int(np.ceil(np.sqrt(N)))
    r, c = np.divmod(np.arange(N), cols)
    return np.c_[(c + 0.5 * (r % 2)) * isd, r * isd * np.sqrt(3.0) / 2.0]


def received_power_mw(sites: npt.NDArray[np.float64], users: npt.NDArray[np.float64],
                      tilts: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """(K, N, U) received power in mW of cell k's pilot at user u for every tilt.

    The path loss and vertical antenna pattern of the module docstring; horizontal distances are floored
    at 10 m.

    Parameters
    ----------
    sites : ndarray, shape (N, 2)
        Site coordinates in metres (antennas at 32 m).
    users : ndarray, shape (U, 2)
        User coordinates in metres (at 1.5 m).
    tilts : ndarray, shape (K,)
        Electrical tilts in degrees.

    Returns
    -------
    ndarray, shape (K, N, U)
        Entry (k, i, u): power received by user u from cell i at tilt ``tilts[k]``, in mW.
    """
    d2 = np.maximum(np.linalg.norm(users[None, :, :] - sites[:, None, :], axis=2), 10.0)
    d3 = np.hypot(d2, HEIGHT - UE_HEIGHT)
    elevation = np.degrees(np.arctan2(HEIGHT - UE_HEIGHT, d2))
    path_loss = 128.1 + 37.6 * np.log10(d3 / 1000.0)
    gain = MAX_GAIN_DBI - np.minimum(12.0 * ((elevation[None] - tilts[:, None, None]) / HPBW_DEG) ** 2, SIDE_LOBE_DB)
    return 10.0 ** ((POWER_DBM + gain - path_loss[None]) / 10.0)


def check_antenna_size(N: int, K: int, users: int, interferers: int) -> None:
    """Refuse, before allocating, a network whose arrays exceed the array limit: the (K, N, users) received powers
    and their (N, users) temporaries, one cell's K^(interferers+1) x users rates (all users in one cell at
    worst) and the FactorGraph of N tables of K^(interferers+1) means (:func:`optdesign.factored.factor_graph_entries`,
    :func:`optdesign.validation.check_array_size`)."""
    scope = interferers + 1
    table = float(K**scope) if scope * math.log10(K) < 300 else 1e300
    entries = ((3.0 * K + 5.0) * N * users + 4.0 * table * users + scope * table
               + factor_graph_entries(N, N, N * table))
    check_array_size(entries, f"antenna instance (N = {N} cells, K = {K} tilts, {users} users, tables of "
                              f"K^{scope} = {table:.3g} means)",
                     instead="use fewer cells, users, tilts or interferers")


def antenna_tilt(N: int = 6, K: int = 3, seed: int | None = 0, *, users: int = 1000, layout: str = "line",
                 interferers: int = 2, scale: float = 1.0, isd: float = 500.0) -> FactorGraph:
    """A FactorGraph of the antenna-tilt problem (module docstring); one factor per cell.

    Parameters
    ----------
    N : int
        Number of cells (agents), at least 2.
    K : int
        Number of tilts per cell (:func:`tilt_values`), at least 2.
    seed : int or None
        Seed of the user positions.
    users : int
        Number of users dropped uniformly (1000 as in the paper's Table 4).
    layout : str
        ``"line"`` or ``"hex"`` (:func:`site_positions`).
    interferers : int
        Strongest interferers in every cell's factor (scope size interferers + 1), at most N - 1.
    scale : float
        The largest group mean after normalisation (> 0).
    isd : float
        Inter-site distance in metres (> 0).

    Returns
    -------
    FactorGraph
        N factors over K tilts per agent; ``metadata`` holds the settings, the tilts, the throughput scale
        in Mbit/s and the users per cell.

    Raises
    ------
    InvalidInputError
        A parameter out of range, an unknown layout, or more interferers than N - 1.
    InstanceTooLargeError
        Arrays above the size limit (``check_antenna_size``).
    """
    N, K = as_count(N, "N", minimum=2, floats=True), as_count(K, "K", minimum=2, floats=True)
    users = as_count(users, "users", minimum=1, floats=True)
    interferers = as_count(interferers, "interferers", minimum=1, floats=True)
    if interferers > N - 1:
        raise InvalidInputError(f"interferers must be at most N - 1 = {N - 1}, got {interferers}")
    check_choice(layout, "layout", LAYOUTS)
    scale, isd = check_positive(scale, "scale"), check_positive(isd, "isd")
    check_antenna_size(N, K, users, interferers)
    rng = np.random.default_rng(seed)
    sites = site_positions(N, layout, isd)
    lo, hi = sites.min(axis=0) - isd / 2.0, sites.max(axis=0) + isd / 2.0
    ues = lo + (hi - lo) * rng.random((users, 2))
    tilts = tilt_values(K)
    rx = received_power_mw(sites, ues, tilts)  # (K, N, U)
    ref = K // 2
    serving = np.argmax(rx[ref], axis=0)
    noise_mw = 10.0 ** ((-174.0 + 10.0 * np.log10(N_PRB * PRB_HZ) + NOISE_FIGURE_DB) / 10.0)
    factors = []
    for i in range(N):
        mine = np.flatnonzero(serving == i)
        load = rx[ref][:, mine].sum(axis=1) if mine.size else -np.linalg.norm(sites - sites[i], axis=1)
        load[i] = -np.inf
        strongest = np.argsort(-load, kind="stable")[:interferers]
        scope = tuple(sorted({i, *strongest.tolist()}))
        grid = np.indices((K,) * len(scope)).reshape(len(scope), -1)  # column: tilt index of each scope member
        signal = np.zeros((grid.shape[1], mine.size))
        interference = np.zeros_like(signal)
        for p, k in enumerate(scope):
            power = rx[:, k, mine][grid[p]]  # (combinations, users of cell i)
            if k == i:
                signal = power
            else:
                interference += power
        rate = N_PRB * PRB_HZ * np.log2(1.0 + signal / (interference + noise_mw)) / 1e6  # Mbit/s
        table = rate.mean(axis=1) if mine.size else np.zeros(grid.shape[1])
        factors.append((scope, table.reshape((K,) * len(scope))))
    top = max(float(t.max()) for _, t in factors)
    factors = [(s, scale * t / top) for s, t in factors]
    meta = {"generator": "antenna", "N": N, "K": K, "seed": seed, "users": users, "layout": layout,
            "interferers": interferers, "scale": scale, "isd": isd, "tilts_deg": tilts.tolist(),
            "throughput_scale_mbps": top, "users_per_cell": np.bincount(serving, minlength=N).tolist()}
    return FactorGraph((K,) * N, factors, metadata=meta)
