"""Checking an input file before reading it: it exists, is a regular file, is not too big.

A named pipe would block a reader that waits for a writer, and a link to a device
such as ``/dev/zero`` would be read until memory runs out; every input file dprm
reads (data files, types files, run documents) is checked here first, so that each
gets the same one-line message naming what the path is instead.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from dprm.errors import DataError

__all__ = ["read_small_file", "regular_file_size"]


def regular_file_size(path: str | os.PathLike[str], source: str, what: str = "data file") -> int:
    """The size in bytes of the regular file ``path``; anything else a one-line :class:`DataError`.

    A missing file (``file_not_found``), a directory, a named pipe, a device or a
    socket (``not_a_file``) and a loop of symbolic links or a file that cannot be
    examined (``unreadable_file``) are named as such.

    Parameters
    ----------
    path : str or PathLike
        The file.
    source : str
        Its name in messages (as the user gave it).
    what : str
        What the file should be, for messages (``"data file"``, ``"types file"``).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     try:
    ...         regular_file_size(tmp, "d.json", "types file")
    ...     except DataError as error:
    ...         print(error, error.code)
    d.json: is a directory, not a types file not_a_file
    """
    try:
        status = Path(path).stat()
    except FileNotFoundError:
        raise _error(source, "no such file", "file_not_found") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _error(source, "is a loop of symbolic links", "unreadable_file") from None
        raise _error(source, f"cannot be read: {exc.strerror or exc}", "unreadable_file") from None
    if stat.S_ISDIR(status.st_mode):
        raise _error(source, f"is a directory, not a {what}", "not_a_file")
    if not stat.S_ISREG(status.st_mode):
        kind = ("a named pipe" if stat.S_ISFIFO(status.st_mode) else
                "a socket" if stat.S_ISSOCK(status.st_mode) else "a device")
        raise _error(source, f"is {kind}, not a regular file: give a {what}", "not_a_file")
    return status.st_size


def read_small_file(path: str | os.PathLike[str], source: str, what: str, limit: int) -> bytes:
    """The bytes of the regular file ``path`` of at most ``limit`` bytes.

    Checked with :func:`regular_file_size` first; a bigger file (or one that grew
    past ``limit`` while being read) is a one-line :class:`DataError`
    (``file_too_large``) and is not read into memory.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "t.json"
    ...     _ = path.write_text("{}" + " " * 100)
    ...     try:
    ...         read_small_file(path, "t.json", "types file", 64)
    ...     except DataError as error:
    ...         print(error)
    t.json: is 102 bytes; a types file may be at most 64 bytes
    """
    size = regular_file_size(path, source, what)
    if size > limit:
        raise _too_large(source, f"{size} bytes", what, limit)
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise _error(source, f"cannot be read: {exc.strerror or exc}", "unreadable_file") from None
    if len(data) > limit:
        raise _too_large(source, f"more than {limit} bytes", what, limit)
    return data


def _too_large(source: str, size: str, what: str, limit: int) -> DataError:
    shown = f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit} bytes"
    return _error(source, f"is {size}; a {what} may be at most {shown}", "file_too_large")


def _error(source: str, text: str, code: str) -> DataError:
    return DataError(f"{source}: {text}", code=code, file=source, data_dependent=False)
