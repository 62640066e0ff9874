"""Atomic file writes: a reader sees the old file or the whole new one, never a part.

Every output dprm writes (redescription documents, HTML reports, experiment tables
and run documents) goes through :func:`write_atomic`: the bytes go to a temporary
file in the target's directory (:func:`staged_file`), are flushed to disk, and then
replace the target with :func:`os.replace` (atomic on POSIX). On any error the
temporary file is removed and the target is untouched.

Permissions are those of a file the user's tools would make: a new file gets
``0o666`` less the umask (the kernel applies the umask when the temporary file is
created, so the umask is never read, nor changed, which is not thread-safe), and a
file replaced keeps its mode (a ``0600`` file of results stays private).
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

__all__ = ["write_atomic", "staged_file"]

#: The most characters of the target's name a temporary file's name repeats.
_NAME_PART = 24


def staged_file(target: str | os.PathLike, *, suffix: str = ".partial") -> tuple[int, Path]:
    """Create an empty temporary file beside ``target`` with the mode ``target`` will have.

    Its name is short whatever the length of ``target``'s (a name of 250 characters
    leaves no room for a prefix and a suffix): a dot, the first characters of the
    target's name, random digits and ``suffix``. Its mode is ``target``'s when that
    exists, else ``0o666`` less the umask.

    Returns
    -------
    fd : int
        The file, open for writing (close it).
    path : Path
        Its path.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     old = Path(tmp) / ("x" * 250)
    ...     _ = old.write_text("old"); old.chmod(0o600)
    ...     fd, staged = staged_file(old)
    ...     os.close(fd)
    ...     oct(staged.stat().st_mode & 0o777), len(staged.name) < 60, staged.name.startswith(".xxx")
    ('0o600', True, True)
    """
    target = Path(target)
    try:
        existing = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        existing = None
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(100):
        path = target.parent / f".{target.name[:_NAME_PART]}.{secrets.token_hex(8)}{suffix}"
        try:
            fd = os.open(path, flags, 0o600 if existing is not None else 0o666)  # the kernel applies the umask
        except FileExistsError:
            continue
        if existing is not None:
            try:
                os.fchmod(fd, existing)
            except OSError:
                os.close(fd)
                os.unlink(path)
                raise
        return fd, path
    raise FileExistsError(f"{target.parent}: no free temporary name")


def write_atomic(target: str | os.PathLike, data: bytes | str, *, mode: int | None = None) -> Path:
    """Write ``data`` to ``target`` atomically.

    ``str`` data is written as UTF-8. The file gets permission bits ``mode`` when
    given, else those of the file it replaces, else ``0o666`` less the umask. The
    directory must exist; ``OSError`` is raised with its reason (callers word it for
    their users), naming ``target`` (a full disk, a directory there), never the
    temporary file.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = write_atomic(Path(tmp) / "a.txt", "first")
    ...     path.chmod(0o640)
    ...     _ = write_atomic(path, "second")
    ...     path.read_text(), sorted(p.name for p in Path(tmp).iterdir()), oct(path.stat().st_mode & 0o777)
    ('second', ['a.txt'], '0o640')
    """
    target = Path(target)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        fd, staged = staged_file(target, suffix=".tmp")
    except OSError as error:
        raise type(error)(error.errno, error.strerror, str(target)) from None
    tmp: Path | None = staged
    try:
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(payload)
                handle.flush()
                os.fsync(handle.fileno())
                if mode is not None:
                    os.fchmod(handle.fileno(), mode)
            os.replace(staged, target)
        except OSError as error:  # a full disk, a directory at target: name target, not the temporary file
            raise type(error)(error.errno, error.strerror, str(target)) from None
        tmp = None
    finally:
        if tmp is not None and os.path.lexists(tmp):
            os.unlink(tmp)
    return target
