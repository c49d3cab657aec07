"""Sizes before allocating: refuse arrays above a memory limit, and write huge counts readably in messages.

Re-exported by :mod:`optdesign.validation`, the module code built on the toolkit imports them from.
"""

from __future__ import annotations

import math

from ..errors import InstanceTooLargeError

__all__ = ["MAX_ARRAY_ENTRIES", "check_array_size", "count_text"]


def count_text(n: int) -> str:
    """A count for a message: the exact integer up to 12 digits, else its order of magnitude (``3.98e6020``).

    The digits are truncated, not rounded; never the str() of an integer beyond 4000 digits, which Python refuses.

    Parameters
    ----------
    n : int
        A nonnegative count (numbers of joint actions reach far beyond a float).

    Returns
    -------
    str
        ``str(n)`` below 10^12, else ``"d.dde<exponent>"``.
    """
    n = int(n)
    if n < 10**12:
        return str(n)
    if n < 10**4000:
        digits = str(n)
        return f"{digits[0]}.{digits[1:3]}e{len(digits) - 1}"
    log = math.log10(n)
    exponent = math.floor(log)
    mantissa = math.floor(10 ** (log - exponent + 2)) / 100  # truncated, like the exact digits above
    if mantissa >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    return f"{mantissa:.2f}e{exponent}"


#: array entries an instance or a design may allocate at once: 2.5e8 float64 entries is 2 GiB
MAX_ARRAY_ENTRIES = 250_000_000


def check_array_size(entries: float, what: str, *, instead: str | None = None,
                     limit: float = MAX_ARRAY_ENTRIES) -> None:
    """Refuse, before allocating, ``entries`` float64 numbers above ``limit``.

    Parameters
    ----------
    entries : float
        Number of float64 entries the caller is about to allocate.
    what : str
        What needs them, at the start of the error message (e.g. ``"the pairwise differences"``).
    instead : str, optional
        The alternative the error suggests.
    limit : float
        Largest accepted count (MAX_ARRAY_ENTRIES = 2.5e8, 2 GiB of float64).

    Raises
    ------
    InstanceTooLargeError
        ``entries > limit``; the message gives both sizes in GiB and ``instead``.
    """
    if entries > limit:
        hint = f"; {instead}" if instead else ""
        raise InstanceTooLargeError(f"{what} needs {entries:.3g} numbers ({entries * 8 / 2**30:.3g} GiB), above the "
                                    f"limit of {limit:.3g} ({limit * 8 / 2**30:.3g} GiB){hint}")
