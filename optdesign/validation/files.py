"""Files the toolkit reads whole or writes: checked before any work, so a bad path is one line, never a hang.

Re-exported by :mod:`optdesign.validation`.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InstanceTooLargeError, InvalidInputError

__all__ = ["IMAGE_SUFFIXES", "MAX_INPUT_BYTES", "check_image_path", "check_input_file"]


#: the largest input file read (arms, items, theta, factor-graph JSON, study files): 2 GiB
MAX_INPUT_BYTES = 2 * 2**30


def check_input_file(path: str | Path, what: str, *, limit: int = MAX_INPUT_BYTES) -> Path:
    """A file to read whole: it exists, is a regular file (not a device or a pipe such as ``/dev/zero``, whose
    size is unknown) and is at most ``limit`` bytes.

    Parameters
    ----------
    path : str or Path
        The file.
    what : str
        What it is, at the start of the error message (e.g. ``"--arms"``).
    limit : int
        Largest accepted size in bytes (MAX_INPUT_BYTES = 2 GiB).

    Returns
    -------
    Path
        The path.

    Raises
    ------
    InvalidInputError
        A missing file, a directory or other non-regular file.
    InstanceTooLargeError
        A file above ``limit`` bytes.
    """
    target = Path(path)
    if not target.exists():
        raise InvalidInputError(f"{what}: file not found: {target}")
    if not target.is_file():
        raise InvalidInputError(f"{what}: {target} is not a regular file")
    size = target.stat().st_size
    if size > limit:
        raise InstanceTooLargeError(f"{what}: {target} holds {size / 2**30:.3g} GiB, above the limit of "
                                    f"{limit / 2**30:.3g} GiB for an input file")
    return target


#: the image formats a figure may be written in (matplotlib's, by file suffix)
IMAGE_SUFFIXES = (".png", ".pdf", ".svg", ".jpg", ".jpeg", ".eps", ".ps", ".tif", ".tiff", ".webp")


def check_image_path(path: str | Path, what: str) -> Path:
    """An image file to write: its directory exists, it is not a directory itself, its suffix is an image format.

    Parameters
    ----------
    path : str or Path
        The file to write.
    what : str
        The option that names it, at the start of the error message (e.g. ``"--plot"``).

    Returns
    -------
    Path
        The path.

    Raises
    ------
    InvalidInputError
        A directory, a missing parent directory, or a suffix outside :data:`IMAGE_SUFFIXES`.
    """
    target = Path(path)
    if target.is_dir():
        raise InvalidInputError(f"{what}: {target} is a directory: give an image file such as {target / 'plot.png'}")
    if not target.parent.is_dir():
        raise InvalidInputError(f"{what}: cannot write {target}: directory not found: {target.parent}")
    if target.suffix.lower() not in IMAGE_SUFFIXES:
        raise InvalidInputError(f"{what}: cannot write {target}: the suffix must be an image format "
                                f"({', '.join(IMAGE_SUFFIXES)}), got {target.suffix or 'none'!r}")
    return target
