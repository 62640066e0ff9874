"""Writing several files as one: all of them or none, an error naming the file it is about.

:func:`dprm.files.write_atomic` makes one file appear whole or not at all. A writer
of several files (``dprm datasets make-planted``'s four) that called it once per
file left the first ones behind when a later one failed (a full disk left
``left.csv`` alone), and the error (``No space left on device``) named no file: the
operating system's error of a write names none. :func:`write_all` writes every file
to a staging name beside its target first (flushed to disk), and only when all are
written renames them into place; on any error the staged files are removed (and
targets it had already put in place that did not exist before), and the
``OSError`` names the target it is about. :func:`write_named` is the one-file form:
:func:`~dprm.files.write_atomic`, its error naming the target.

Examples
--------
>>> import tempfile
>>> with tempfile.TemporaryDirectory() as tmp:
...     paths = write_all({Path(tmp) / "a.txt": b"a", Path(tmp) / "b.txt": b"b"})
...     sorted(p.name for p in Path(tmp).iterdir()), [p.read_bytes() for p in paths]
(['a.txt', 'b.txt'], [b'a', b'b'])
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from dprm.files import staged_file, write_atomic

__all__ = ["naming", "write_all", "write_named"]


@contextmanager
def naming(target: str | os.PathLike[str]) -> Iterator[None]:
    """Re-raise an ``OSError`` that names no file (a full disk's ``ENOSPC``) as one naming ``target``.

    Examples
    --------
    >>> import errno
    >>> try:
    ...     with naming("out/left.csv"):
    ...         raise OSError(errno.ENOSPC, "No space left on device")
    ... except OSError as error:
    ...     print(error.filename, error.strerror)
    out/left.csv No space left on device
    """
    try:
        yield
    except OSError as error:
        if error.filename is not None or error.errno is None:
            raise
        raise type(error)(error.errno, error.strerror, os.fspath(target)) from None


def write_named(target: str | os.PathLike[str], data: bytes | str, *, mode: int | None = None) -> Path:
    """:func:`dprm.files.write_atomic`, an ``OSError`` naming ``target`` (:func:`naming`)."""
    with naming(target):
        return write_atomic(target, data, mode=mode)


def write_all(contents: Mapping[Path, bytes], *, mode: int | None = None) -> list[Path]:
    """Write every ``target: bytes`` of ``contents``, all or none (module notes); the targets, in order.

    The targets' folders must exist. Each file is written to a short hidden staging name
    in its target's folder (:func:`dprm.files.staged_file`: any name the file system
    takes is written), with permission bits ``mode`` when given, else those of the file
    it replaces, else ``0o666`` less the umask, and flushed to disk; once every one is written, each is
    renamed into place. An ``OSError`` (raised as it comes, naming the target) leaves
    no staged file, and removes the targets already renamed into place that did not
    exist before (a target that did is left with its new content: a rename replaces
    it, it cannot be put back).

    Raises
    ------
    OSError
        Naming the target it is about.
    """
    staged: dict[Path, Path] = {}
    placed: list[Path] = []
    existed = {Path(target): os.path.lexists(target) for target in contents}
    try:
        for target, payload in contents.items():
            target = Path(target)
            with naming(target):
                fd, tmp = staged_file(target, suffix=".staged")
                staged[target] = tmp
                with os.fdopen(fd, "wb") as handle:
                    handle.write(payload)
                    handle.flush()
                    os.fsync(handle.fileno())
                if mode is not None:
                    os.chmod(tmp, mode)
        for target, tmp in staged.items():
            try:
                os.replace(tmp, target)
            except OSError as error:  # a directory there, say: name the target, not the staging name
                raise type(error)(error.errno, error.strerror, str(target)) from None
            placed.append(target)
    except BaseException:
        for target, tmp in staged.items():
            if target not in placed and os.path.lexists(tmp):
                os.unlink(tmp)
        for target in placed:
            if not existed[target] and os.path.lexists(target):
                os.unlink(target)
        raise
    return placed
