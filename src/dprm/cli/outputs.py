"""Output files of a command: checked before any work, written all or none at the end.

A command that writes files (``mine --output --clired``, ``datasets make-planted``)
first declares them in an :class:`Outputs` plan. :meth:`Outputs.check` runs before
any data is read or any budget is spent: every target's directory must exist and
accept a new file, no target may be a directory, and an existing target must be
replaceable. At the end, :meth:`Outputs.commit` stages every file under a hidden
temporary name in its target's directory and moves them into place only when all
were written, so a failure leaves no part behind; its errors name the path the user
gave, never the temporary one.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from dprm.errors import DprmError

__all__ = ["Outputs", "check_writable", "check_directory"]


def check_directory(directory: Path, *, create: bool = False) -> None:
    """Refuse a directory that cannot take new files (or, with ``create``, be made).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     check_directory(Path(tmp))
    ...     check_directory(Path(tmp) / "new" / "deeper", create=True)
    ...     try:
    ...         check_directory(Path(tmp) / "absent")
    ...     except DprmError as error:
    ...         print(str(error).replace(tmp, "TMP"))
    TMP/absent: directory does not exist
    """
    if directory.exists():
        if not directory.is_dir():
            raise DprmError(f"{directory}: exists and is not a directory")
        _probe(directory, directory)
        return
    if not create:
        raise DprmError(f"{directory}: directory does not exist")
    parent = directory.parent
    while not parent.exists():  # the nearest existing ancestor must accept the new directory
        parent = parent.parent
    if not parent.is_dir():
        raise DprmError(f"{directory}: cannot be created, {parent} is not a directory")
    _probe(parent, directory)


def check_writable(path: Path) -> None:
    """Refuse an output file before any work: it could not be written or replaced.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     check_writable(Path(tmp) / "out.json")
    ...     try:
    ...         check_writable(Path(tmp))
    ...     except DprmError as error:
    ...         print(str(error).replace(tmp, "TMP"))
    TMP: is a directory; give a file name
    """
    if path.is_dir():
        raise DprmError(f"{path}: is a directory; give a file name")
    if path.exists() and not path.is_file():
        raise DprmError(f"{path}: is not a regular file (a device or a pipe); give a file name")
    if not path.parent.exists():
        raise DprmError(f"{path}: directory {path.parent} does not exist")
    if not path.parent.is_dir():
        raise DprmError(f"{path}: {path.parent} is not a directory")
    _probe(path.parent, path)
    if path.exists() and not os.access(path, os.W_OK) and not os.access(path.parent, os.W_OK):
        raise DprmError(f"{path}: cannot be replaced (permission denied)")


def _probe(directory: Path, shown: Path) -> None:
    """Create and remove a file in ``directory``: the only check that cannot lie."""
    try:
        fd, name = tempfile.mkstemp(dir=directory, prefix=".dprm-probe-")
    except OSError as error:
        raise DprmError(f"{shown}: cannot write in {directory} ({error.strerror or error})") from None
    os.close(fd)
    os.unlink(name)


def _resolved(path: Path) -> Path:
    """``path.resolve()``, with a loop of symbolic links a :class:`DprmError` naming the path.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     (Path(tmp) / "a").symlink_to(Path(tmp) / "b")
    ...     (Path(tmp) / "b").symlink_to(Path(tmp) / "a")
    ...     try:
    ...         _resolved(Path(tmp) / "a")
    ...     except DprmError as error:
    ...         print(str(error).rpartition("/")[2])
    a: is a loop of symbolic links
    """
    try:
        return path.resolve()
    except RuntimeError:  # Python 3.11's pathlib: "Symlink loop from ..."
        raise DprmError(f"{path}: is a loop of symbolic links") from None


@dataclass
class Outputs:
    """The files a command will write, checked first and written all or none.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     plan = Outputs()
    ...     plan.add(Path(tmp) / "a.txt", lambda path: path.write_text("A"))
    ...     plan.add(None, lambda path: None)  # an option not given
    ...     plan.check()
    ...     written = plan.commit()
    ...     [p.name for p in written], sorted(p.name for p in Path(tmp).iterdir())
    (['a.txt'], ['a.txt'])
    """

    #: The command's input files: no output may replace one.
    inputs: list[Path | str | None] = field(default_factory=list)
    _targets: list[tuple[Path, Callable[[Path], object]]] = field(default_factory=list)

    def add(self, path: Path | None, write: Callable[[Path], object]) -> None:
        """Plan ``write(staged_path)`` for ``path`` (nothing when ``path`` is None).

        A symbolic link is followed: its target file is written, the link stays.
        """
        if path is not None:
            path = Path(path)
            followed = path.is_symlink() and not (path.exists() and not path.is_file())  # a link to a pipe
            self._targets.append((_resolved(path) if followed else path, write))  # is refused by its own name

    def check(self) -> None:
        """Raise :class:`DprmError` naming the first target that could not be written."""
        seen: set[Path] = set()
        inputs = {_resolved(Path(i)) for i in self.inputs if i is not None}
        for path, _ in self._targets:
            resolved = _resolved(path)
            if resolved in seen:
                raise DprmError(f"{path}: given for two outputs")
            if resolved in inputs:
                raise DprmError(f"{path}: is an input of this command; give another file name")
            seen.add(resolved)
            check_writable(path)

    def commit(self) -> list[Path]:
        """Write every target, all or none; return the paths written."""
        staged: list[tuple[Path, Path]] = []
        current: Path | None = None
        try:
            for path, write in self._targets:
                current = path
                fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
                os.close(fd)
                staged.append((Path(name), path))
                write(Path(name))
                os.chmod(name, 0o644)
            for temporary, path in staged:
                current = path
                os.replace(temporary, path)
            written = [path for _, path in staged]
            staged = []
            return written
        except OSError as error:
            raise DprmError(f"{current}: cannot be written ({error.strerror or error})") from None
        finally:
            for temporary, _ in staged:
                temporary.unlink(missing_ok=True)
