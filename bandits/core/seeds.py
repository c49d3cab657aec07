"""Seeds of a run: one seed gives independent streams for the environment's noise and the algorithm's own draws,
so a run is reproducible and its noise does not depend on how the algorithm draws."""

from __future__ import annotations

import numpy as np

from optdesign.validation import as_count

__all__ = ["split_seed"]


def split_seed(
    seed: int | np.integer | np.random.SeedSequence | None,
) -> tuple[np.random.Generator, np.random.Generator]:
    """Independent generators for the environment's noise and the algorithm's own draws: the two children of
    ``SeedSequence(seed)``.

    Parameters
    ----------
    seed : int, SeedSequence or None
        The run's seed (an integer >= 0), a SeedSequence, or None (fresh entropy).

    Returns
    -------
    tuple of numpy.random.Generator
        ``(environment generator, algorithm generator)``.

    Raises
    ------
    InvalidInputError
        A seed that is not None, a SeedSequence or an integer >= 0.
    """
    if not (seed is None or isinstance(seed, np.random.SeedSequence)):
        seed = as_count(seed, "seed", minimum=0)
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    env_ss, alg_ss = ss.spawn(2)
    return np.random.default_rng(env_ss), np.random.default_rng(alg_ss)
