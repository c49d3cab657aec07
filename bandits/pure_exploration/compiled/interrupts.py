"""What the compiled loops read of the outside world while they run: the clock, and the signals (Ctrl-C).

A compiled loop holds the interpreter, so a signal's Python handler waits until the loop returns, and a call of
``time.perf_counter`` from compiled code does not run it either. The loops therefore call ``signals_pending`` when
:func:`look_now` says so (every :data:`CLOCK_EVERY` batches, and after every batch of as many pulls), end with
:data:`INTERRUPTED` when a handler raised, and their caller raises KeyboardInterrupt.
"""

from __future__ import annotations

import time
from typing import Any

from llvmlite import ir  # type: ignore[import-untyped]
from numba import njit, objmode, types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["CLOCK_EVERY", "INTERRUPTED", "look_now", "signals_pending", "wall_clock"]

#: batches between two looks at the clock and the signals (a batch of this many pulls looks at its end)
CLOCK_EVERY = 1024
#: the first entry of a loop's stop when Ctrl-C (a signal handler that raised) ended it
INTERRUPTED = -2.0


@njit(cache=True)
def look_now(batches: int, size: int) -> bool:
    """Whether a loop looks at the signals and the clock after this batch: every CLOCK_EVERY batches, and after every
    batch of CLOCK_EVERY pulls or more."""
    return batches % CLOCK_EVERY == 0 or size >= CLOCK_EVERY


@njit(cache=True)
def wall_clock() -> float:
    """``time.perf_counter()`` from compiled code (seconds)."""
    with objmode(now="float64"):
        now = time.perf_counter()
    return now


@intrinsic
def signals_pending(typingctx: Any) -> tuple[Any, Any]:
    """Run the Python signal handlers pending (``PyErr_CheckSignals``, called by name: the kernels stay cacheable);
    True when one raised (Ctrl-C's KeyboardInterrupt), its exception cleared for the caller to raise once the loop has
    returned. Called from compiled code without arguments."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        check = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(32), []),
                                               "PyErr_CheckSignals")
        clear = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), []), "PyErr_Clear")
        raised = builder.icmp_signed("!=", builder.call(check, []), ir.Constant(ir.IntType(32), 0))
        with builder.if_then(raised):
            builder.call(clear, [])
        return raised

    return types.boolean(), codegen
