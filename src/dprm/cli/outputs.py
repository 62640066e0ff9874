"""Output files of a command: checked before any work, written all or none at the end.

A command that writes files (``mine --output --clired``, ``datasets make-planted``)
first declares them in an :class:`Outputs` plan. :meth:`Outputs.check` runs before
any data is read or any budget is spent: every target's directory must exist and
accept a new file, no target may be a directory, and an existing target must be
replaceable. At the end, :meth:`Outputs.commit` stages every file under a hidden
temporary name in its target's directory and moves them into place only when all
were written (:func:`dprm.file_sets.place_all`, which puts back the ones already
moved if a later one fails), so a failure leaves no part behind; its errors name the
path the user gave, never the temporary one. The folders of results of ``dprm
classify-eval`` and ``dprm itemsets-eval`` are written whole, by
:class:`dprm.cli.eval_options.ResultFolder`.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from dprm.errors import DprmError
from dprm.file_sets import place_all
from dprm.files import staged_file

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


def check_writable(path: Path, shown: Path | None = None) -> None:
    """Refuse an output file before any work: it could not be written or replaced.

    Messages name ``shown`` (the path the user gave; ``path`` by default), e.g. a link
    whose target ``path`` is.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     check_writable(Path(tmp) / "out.json")
    ...     for bad in (Path(tmp), Path(tmp) / ("x" * 300)):
    ...         try:
    ...             check_writable(bad)
    ...         except DprmError as error:
    ...             print(str(error).replace(tmp, "TMP").replace("x" * 300, "x..."))
    TMP: is a directory; give a file name
    TMP/x...: the file name is too long (300 bytes; at most 255 here)
    """
    shown = path if shown is None else shown
    _check_name_length(path, shown)
    if path.is_dir():
        raise DprmError(f"{shown}: is a directory; give a file name")
    if path.exists() and not path.is_file():
        raise DprmError(f"{shown}: is not a regular file (a device or a pipe); give a file name")
    if not path.parent.exists():
        raise DprmError(f"{shown}: directory {path.parent} does not exist")
    if not path.parent.is_dir():
        raise DprmError(f"{shown}: {path.parent} is not a directory")
    _probe(path.parent, shown)
    if path.exists() and not os.access(path, os.W_OK) and not os.access(path.parent, os.W_OK):
        raise DprmError(f"{shown}: cannot be replaced (permission denied)")


def _check_name_length(path: Path, shown: Path) -> None:
    """Refuse a file name longer than its directory's file system takes (before any work).

    The temporary file a target is staged under has a short name of its own
    (:func:`dprm.files.staged_file`), so a name that passes here is written.
    """
    directory = path.parent
    while not directory.exists() and directory != directory.parent:
        directory = directory.parent
    try:
        limit = os.pathconf(directory, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):  # no such query here: the usual limit
        limit = 255
    length = len(os.fsencode(path.name))
    if length > limit:
        raise DprmError(f"{shown}: the file name is too long ({length} bytes; at most {limit} here)")


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
    #: (the path the user gave, the file written, the writer): a link's target is written.
    _targets: list[tuple[Path, Path, Callable[[Path], object]]] = field(default_factory=list)

    def add(self, path: Path | None, write: Callable[[Path], object]) -> None:
        """Plan ``write(staged_path)`` for ``path`` (nothing when ``path`` is None).

        A symbolic link is followed: its target file is written, the link stays.
        Messages name ``path`` as given.
        """
        if path is not None:
            path = Path(path)
            _check_name_length(path, path)  # before is_symlink() fails on it
            followed = path.is_symlink() and not (path.exists() and not path.is_file())  # a link to a pipe
            self._targets.append((path, _resolved(path) if followed else path, write))  # is refused by its own name

    def check(self) -> None:
        """Raise :class:`DprmError` naming the first target that could not be written."""
        seen: set[Path] = set()
        inputs = {_resolved(Path(i)) for i in self.inputs if i is not None}
        for shown, path, _ in self._targets:
            resolved = _resolved(path)
            if resolved in seen:
                raise DprmError(f"{shown}: given for two outputs")
            if resolved in inputs:
                link = f" (a link to {resolved})" if shown != path else ""
                raise DprmError(f"{shown}: is an input of this command{link}; give another file name")
            seen.add(resolved)
            check_writable(path, shown)

    def commit(self) -> list[Path]:
        """Write every target, all or none; return the paths written, as given.

        Every file is staged under a short temporary name in its target's directory
        (:func:`dprm.files.staged_file`: the mode the target will have, whatever the
        length of its name) and flushed to disk, then all are moved into place
        (:func:`dprm.file_sets.place_all`: on a failure, or an interrupt, the targets
        already moved are put back as they were, so a folder of earlier results is
        not left half replaced). An error names the path the user gave, never the
        temporary one.
        """
        staged: dict[Path, Path] = {}
        shown_as: dict[str, Path] = {}
        current: Path | None = None
        temporary: Path | None = None
        try:
            for shown, path, write in self._targets:
                current, temporary = shown, None
                fd, temporary = staged_file(path)
                os.close(fd)
                staged[path] = temporary
                shown_as[os.fspath(path)] = shown
                write(temporary)
                _flush(temporary)
            current, temporary = None, None
            return [shown_as[os.fspath(path)] for path in place_all(staged)]
        except OSError as error:
            where = current if current is not None else shown_as.get(os.fspath(error.filename or ""), error.filename)
            raise DprmError(f"{where}: cannot be written ({error.strerror or error})") from None
        except DprmError as error:  # a writer's own message names the file it was given: the temporary one
            if temporary is None:
                raise
            raise DprmError(str(error).replace(os.fspath(temporary), os.fspath(current))) from None
        finally:
            for temporary in staged.values():
                temporary.unlink(missing_ok=True)


def _flush(path: Path) -> None:
    """Flush the file a writer wrote at ``path`` to disk (a crash after the rename leaves it whole)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
