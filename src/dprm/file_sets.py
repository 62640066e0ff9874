"""Writing several files as one: all of them or none, an error naming the file it is about.

:func:`dprm.files.write_atomic` makes one file appear whole or not at all. A writer
of several files (``dprm datasets make-planted``'s four) that called it once per
file left the first ones behind when a later one failed (a full disk left
``left.csv`` alone), and the error (``No space left on device``) named no file: the
operating system's error of a write names none. :func:`write_all` writes every file
to a staging name beside its target first (flushed to disk), and only when all are
written renames them into place (:func:`place_all`); on any error the staged files
are removed, the targets already put in place are put back as they were (removed
where they did not exist before), and the ``OSError`` names the target it is about.
:func:`write_named` is the one-file form: :func:`~dprm.files.write_atomic`, its error
naming the target.

A file that a rename replaces keeps a second name (a hard link beside it) until every
rename is done, so that it can be put back: a rerun into the folder of an earlier
result (``dprm classify-eval``, ``dprm itemsets-eval``, ``dprm datasets
make-planted``) that fails leaves the earlier result whole, not a mix of old and new
files. Where the file system makes no hard link, the file replaced keeps its new
content (a rename cannot be undone).

A folder of results (``dprm classify-eval``, ``dprm itemsets-eval``) is written by
:func:`write_folder`: a new folder whole beside its place first (a hidden sibling),
then renamed into place, so that it appears with every file or not at all (an
interrupted or failed run, even a killed one while it computes, leaves no folder of
that name); the folder of an earlier result is written into by :func:`write_all` (the
earlier result stays whole on a failure) and then loses the earlier result's files
the new one does not have, so that it holds one result, not a mix.

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
import secrets
import shutil
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from dprm.files import staged_file, write_atomic

__all__ = ["naming", "place_all", "write_all", "write_folder", "write_named"]

#: The most characters of a target's name the second name of its old file repeats.
_NAME_PART = 24


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
    it replaces, else ``0o666`` less the umask, and flushed to disk; once every one is
    written, all are renamed into place (:func:`place_all`). An ``OSError`` (raised as
    it comes, naming the target) or an interrupt leaves no staged file, and the targets
    as they were before (:func:`place_all`).

    Raises
    ------
    OSError
        Naming the target it is about.
    """
    staged: dict[Path, Path] = {}
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
    except BaseException:
        for tmp in staged.values():
            if os.path.lexists(tmp):
                os.unlink(tmp)
        raise
    return place_all(staged)


def place_all(staged: Mapping[Path, Path]) -> list[Path]:
    """Rename every ``target: staged file`` of ``staged`` onto its target, all or none; the targets, in order.

    Each staged file is in its target's folder, written and flushed to disk. A target
    that exists is first given a second name (:func:`_second_name`), removed again once
    every rename is done. An ``OSError`` or an interrupt removes the staged files not
    yet renamed and puts back each target already renamed: its old file under its
    name again, or no file where there was none. A target the file system gave no
    second name keeps its new content (a rename cannot be undone); an old file that
    could not be put back stays under its second name, never removed.

    Raises
    ------
    OSError
        Naming the target it is about, never the staged file.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     old, new = Path(tmp) / "old.txt", Path(tmp) / "new.txt"
    ...     _ = old.write_text("old")
    ...     staged = {old: Path(tmp) / ".old.staged", new: Path(tmp) / ".new.staged"}
    ...     _ = staged[old].write_text("replaced")   # the other staged file is missing: its rename fails
    ...     try:
    ...         place_all(staged)
    ...     except OSError as error:
    ...         print(Path(error.filename).name, sorted(p.name for p in Path(tmp).iterdir()), old.read_text())
    new.txt ['old.txt'] old
    """
    existed = {Path(target): os.path.lexists(target) for target in staged}
    second: dict[Path, Path] = {}
    placed: list[Path] = []
    try:
        for target in existed:
            name = _second_name(target) if existed[target] else None
            if name is not None:
                second[target] = name
        for target, tmp in staged.items():
            target = Path(target)
            try:
                os.replace(tmp, target)
            except OSError as error:  # a directory there, say: name the target, not the staging name
                raise type(error)(error.errno, error.strerror, str(target)) from None
            placed.append(target)
    except BaseException:
        for target, tmp in staged.items():
            if Path(target) not in placed and os.path.lexists(tmp):
                os.unlink(tmp)
        for target in reversed(placed):
            old = second.pop(target, None)  # put back (or kept on failure): not removed below
            try:
                if old is not None:
                    os.replace(old, target)
                elif not existed[target] and os.path.lexists(target):
                    os.unlink(target)
            except OSError:
                pass  # the error being raised is the one to report; the old file stays under its second name
        raise
    finally:
        for name in second.values():
            if os.path.lexists(name):
                os.unlink(name)
    return placed


def _second_name(target: Path) -> Path | None:
    """Give the file at ``target`` a second, hidden name beside it (a hard link); None where none is made.

    A symbolic link is linked itself, not its target. A directory, or a file system
    without hard links (or one that refuses them, as Linux's ``protected_hardlinks``
    does for another user's file), gives None.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     target = Path(tmp) / "table.csv"
    ...     _ = target.write_text("old")
    ...     name = _second_name(target)
    ...     name.read_text(), name.name.startswith(".table.csv."), _second_name(Path(tmp)) is None
    ('old', True, True)
    """
    for _ in range(100):
        name = target.parent / f".{target.name[:_NAME_PART]}.{secrets.token_hex(8)}.old"
        try:
            os.link(target, name, follow_symlinks=False)
        except FileExistsError:
            continue
        except (OSError, NotImplementedError):
            return None
        return name
    return None


def write_folder(folder: str | os.PathLike[str], contents: Mapping[str, bytes], *,
                 earlier: Callable[[str], bool] | None = None) -> list[Path]:
    """Write the files ``name: bytes`` of ``contents`` into ``folder``, all or none; their paths, in order.

    A ``folder`` that does not exist is made, with any missing folders above it: its
    files are written (:func:`write_all`, flushed to disk) into a hidden folder beside
    it, ``.NAME.RANDOM.staged``, which is then renamed to ``folder``, one step that
    makes the folder appear whole. On an error or an interrupt the hidden folder is
    removed, and so are the folders above that this call made: nothing new is left.

    A ``folder`` that exists (empty, or holding an earlier result) is written into by
    :func:`write_all`: on an error or an interrupt it is left as it was. Once every
    file is in place, its files that ``earlier(name)`` tells are an earlier result's
    and that ``contents`` does not have are removed (a figure of a dataset the new
    result lacks), so the folder holds the new result, not a mix; other files stay.

    Raises
    ------
    OSError
        Naming the file or folder it is about (in ``folder``, never the hidden one).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     folder = Path(tmp) / "new" / "result"
    ...     paths = write_folder(folder, {"a.txt": b"a", "b.txt": b"b"})
    ...     _ = write_folder(folder, {"a.txt": b"A"}, earlier=lambda name: name.endswith(".txt"))
    ...     [p.name for p in paths], sorted(p.name for p in folder.iterdir()), os.listdir(Path(tmp) / "new")
    (['a.txt', 'b.txt'], ['a.txt'], ['result'])
    """
    folder = Path(folder)
    if os.path.lexists(folder):
        written = write_all({folder / name: payload for name, payload in contents.items()})
        if earlier is not None:
            for entry in sorted(folder.iterdir()):
                if entry.name not in contents and earlier(entry.name) and entry.is_file() and not entry.is_symlink():
                    with naming(entry):
                        entry.unlink()
        return written
    made: list[Path] = []
    staging: Path | None = None
    try:
        with naming(folder.parent):
            for ancestor in reversed([folder.parent, *folder.parent.parents]):
                if not os.path.lexists(ancestor):
                    os.mkdir(ancestor)  # 0o777 less the umask, as mkdir -p makes them
                    made.append(ancestor)
        staging = _staging_folder(folder)
        try:
            write_all({staging / name: payload for name, payload in contents.items()})
            _sync_folder(staging)
            os.rename(staging, folder)  # an empty folder made there meanwhile is replaced, a full one refuses
        except OSError as error:
            raise _in_folder(error, staging, folder) from None
        staging = None
        _sync_folder(folder.parent)
    except BaseException:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        for ancestor in reversed(made):
            try:
                ancestor.rmdir()  # only when still empty
            except OSError:
                pass
        raise
    return [folder / name for name in contents]


def _staging_folder(folder: Path) -> Path:
    """A new hidden folder beside ``folder`` (``0o777`` less the umask, the mode ``mkdir`` gives), its path."""
    for _ in range(100):
        name = folder.parent / f".{folder.name[:_NAME_PART]}.{secrets.token_hex(8)}.staged"
        try:
            with naming(folder):
                os.mkdir(name, 0o777)
        except FileExistsError:
            continue
        return name
    raise FileExistsError(17, "no free temporary name beside it", os.fspath(folder))


def _sync_folder(folder: Path) -> None:
    """Flush a folder's entries to disk (a rename in it survives a crash); skipped where folders cannot be."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _in_folder(error: OSError, staging: Path, folder: Path) -> OSError:
    """``error`` naming the path in ``folder`` it is about, not the one in the hidden ``staging`` folder."""
    name = error.filename
    text = os.fspath(name) if isinstance(name, (str, bytes, os.PathLike)) and not isinstance(name, bytes) else None
    if text is None or text == os.fspath(staging):
        shown = os.fspath(folder)
    elif text.startswith(os.fspath(staging) + os.sep):
        shown = os.fspath(folder) + text[len(os.fspath(staging)):]
    else:
        shown = text
    return type(error)(error.errno, error.strerror, shown)
