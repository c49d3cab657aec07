"""BLAS threading for the fast paths: their matrices are tiny (d x d, d x K), and on them a
multi-threaded BLAS spends more time synchronising than computing (7x slower on 2 cores for
XY-allocation at K = 100, d = 10 in ``benchmarks/bench_designs.py``).
The controller is created once (it scans loaded libraries).

Re-exported at the top level (``optdesign.single_threaded_blas``): bandit loops built on the fast paths run their
own small linear algebra between solves under the same limit, and import only the public surface of optdesign.
"""

from __future__ import annotations

import functools
from contextlib import AbstractContextManager

from threadpoolctl import ThreadpoolController

__all__ = ["single_threaded_blas"]


@functools.cache
def _controller() -> ThreadpoolController:
    return ThreadpoolController()


def single_threaded_blas() -> AbstractContextManager:
    """Context manager limiting BLAS to one thread (about 30 microseconds of overhead).

    Returns
    -------
    contextlib.AbstractContextManager
        Use as ``with single_threaded_blas(): ...``; the previous thread limits are restored on exit.
    """
    limiter: AbstractContextManager = _controller().limit(limits=1, user_api="blas")
    return limiter
