"""Atomic file writes: a reader sees the old file or the whole new one, never a part.

Every output dprm writes (redescription documents, HTML reports, experiment tables
and run documents) goes through :func:`write_atomic`: the bytes go to a temporary
file in the target's directory, are flushed to disk, and then replace the target
with :func:`os.replace` (atomic on POSIX). On any error the temporary file is
removed and the target is untouched.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["write_atomic"]


def write_atomic(target: str | os.PathLike, data: bytes | str, *, mode: int = 0o644) -> Path:
    """Write ``data`` to ``target`` atomically, with permission bits ``mode``.

    ``str`` data is written as UTF-8. The directory must exist; ``OSError`` is raised
    as it comes (callers word it for their users), naming ``target`` when it cannot be
    replaced (a directory there), never the temporary file.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = write_atomic(Path(tmp) / "a.txt", "first")
    ...     _ = write_atomic(path, "second")
    ...     path.read_text(), sorted(p.name for p in Path(tmp).iterdir())
    ('second', ['a.txt'])
    """
    target = Path(target)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        try:
            os.replace(tmp, target)
        except OSError as error:  # a directory at target, say: name it, not the temporary file
            raise type(error)(error.errno, error.strerror, str(target)) from None
        tmp = None
    finally:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
    return target
