"""What every command prints with: the consoles, notes, and the one-line error.

Results go to standard output (:data:`console`); notes, warnings and errors go to
standard error, so that ``dprm mine ... > table.txt`` keeps only the table. Every
user error becomes exactly one line ``error: <message>`` and exit code 2
(:func:`fail`); :func:`exit_on` applies that rule to whatever ended a command, also to
the errors that are not the project's own (a full disk, an interrupted run, a bug).

:func:`standard_streams` sets the streams up for a command: a closed standard output
(``dprm mine ... | head -1``) raises :class:`StdoutClosed`, which ends the command
quietly with :data:`STDOUT_CLOSED` (:func:`quiet_exit`); another error writing it
(a full disk) names ``standard output``; a character its encoding cannot hold is
written in ASCII (:data:`ASCII_SPELLINGS`); a closed standard error swallows the
messages instead of sending them to standard output. The consoles never take a
width below :data:`MIN_WIDTH` (``COLUMNS=0`` printed nothing at all).
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import io
import os
import sys
from collections.abc import Iterator
from typing import Any, NoReturn

from rich.console import Console, ConsoleDimensions

__all__ = ["console", "err_console", "note", "fail", "exit_on", "plural", "standard_streams", "quiet_exit",
           "StdoutClosed", "USER_ERROR", "INTERNAL_ERROR", "STDOUT_CLOSED", "MIN_WIDTH", "DEFAULT_WIDTH"]

#: Exit code of a user error (bad input, bad option, refused budget).
USER_ERROR = 2
#: Exit code of an error that is not the user's (a bug, an exhausted machine).
INTERNAL_ERROR = 1
#: Exit code after Ctrl-C (128 + SIGINT).
INTERRUPTED = 130
#: Exit code when standard output was closed by its reader (128 + SIGPIPE), as a shell
#: reports ``yes | head -1``'s ``yes``.
STDOUT_CLOSED = 141

#: The narrowest width the consoles take from ``COLUMNS`` or the terminal; below it, :data:`DEFAULT_WIDTH`.
MIN_WIDTH = 20
#: The width of a console whose ``COLUMNS`` or terminal says less than :data:`MIN_WIDTH` (or nothing).
DEFAULT_WIDTH = 80


class _Console(Console):
    """A rich console whose width is never below :data:`MIN_WIDTH`.

    Rich takes ``COLUMNS=0`` as a width of 0 columns and then prints nothing, not
    even the privacy status line; a width this small is taken as no width at all.

    Examples
    --------
    >>> import io
    >>> _Console(file=io.StringIO(), width=0).width, _Console(file=io.StringIO(), width=100).width
    (80, 100)
    """

    @property
    def size(self) -> ConsoleDimensions:
        width, height = Console.size.fget(self)  # type: ignore[attr-defined]
        return ConsoleDimensions(width if width >= MIN_WIDTH else DEFAULT_WIDTH, height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]


console: Console = _Console(highlight=False)
err_console: Console = _Console(stderr=True, highlight=False)

#: ASCII spellings of the symbols dprm prints, for a standard output whose encoding
#: lacks them (``PYTHONIOENCODING=ascii``, a C locale); any other such character is
#: written as a backslash escape. Files are always written in UTF-8.
ASCII_SPELLINGS: dict[str, str] = {
    "∩": "&", "∪": "|", "≤": "<=", "≥": ">=", "≠": "!=", "±": "+/-", "ε": "eps", "δ": "delta",
    "∧": "&", "∨": "|", "¬": "!", "…": "...", "–": "-", "—": "-", "×": "x", "·": ".", "→": "->",
    "≈": "~", "∞": "inf", "’": "'", "“": '"', "”": '"', "•": "*", "│": "|", "─": "-",
}

_ERRORS = "dprm-ascii"


def _ascii_spelling(error: UnicodeError) -> tuple[str, int]:
    """Codec error handler: :data:`ASCII_SPELLINGS`, else a backslash escape.

    Examples
    --------
    >>> "[x ≤ 5] ∧ ¬b, ±0.1, café".encode("ascii", errors=_ERRORS)
    b'[x <= 5] & !b, +/-0.1, caf\\\\xe9'
    """
    if not isinstance(error, UnicodeEncodeError):
        raise error
    bad = error.object[error.start:error.end]
    text = "".join(ASCII_SPELLINGS.get(c) or c.encode("ascii", "backslashreplace").decode("ascii") for c in bad)
    return text, error.end


codecs.register_error(_ERRORS, _ascii_spelling)


class StdoutClosed(Exception):
    """Standard output was closed by its reader (``| head -1``): the command ends quietly.

    Not an :class:`OSError`, so that click does not turn it into exit code 1 on its way
    out; :func:`quiet_exit` ends the process.
    """


class _Stdout:
    """Standard output, whose write errors say where they happened.

    A closed pipe raises :class:`StdoutClosed`; any other :class:`OSError` (a full
    disk: ``> /dev/full``) is raised again naming ``standard output``. Everything
    else is the wrapped stream's.
    """

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def _failed(self, error: OSError) -> BaseException:
        if isinstance(error, BrokenPipeError) or error.errno == errno.EPIPE:
            return StdoutClosed()
        return type(error)(error.errno, error.strerror, "standard output")

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as error:
            raise self._failed(error) from None

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as error:
            raise self._failed(error) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _plug_closed_descriptors() -> None:
    """Open ``/dev/null`` on a closed descriptor 0, 1 or 2 (``2>&-``).

    Otherwise the next file the command opens (an output file) would get that
    number, and whatever writes to it (a warning of a library) would land in it.
    """
    for fd, flags in ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY)):
        try:
            os.fstat(fd)
        except OSError:
            opened = os.open(os.devnull, flags)
            if opened != fd:  # a lower one was free too: it is plugged now, and this one by the next round
                os.close(opened)


def _cannot_encode(stream: Any) -> bool:
    """Whether ``stream``'s encoding lacks a symbol dprm prints."""
    encoding = getattr(stream, "encoding", None)
    if not isinstance(stream, io.TextIOWrapper) or not encoding:
        return False
    try:
        "".join(ASCII_SPELLINGS).encode(encoding)
    except (UnicodeError, LookupError):
        return True
    return False


@contextlib.contextmanager
def standard_streams() -> Iterator[None]:
    """Set up the standard streams while a command runs (restored after it).

    - standard output is wrapped (:class:`_Stdout`): a closed pipe raises
      :class:`StdoutClosed`, another write error names ``standard output``;
    - a stream whose encoding cannot hold dprm's symbols writes them in ASCII
      (:data:`ASCII_SPELLINGS`) instead of failing on the first ``∩``;
    - a closed standard error (``2>&-``) takes the messages to ``/dev/null``, not to
      standard output (where ``print(file=None)`` would send them).
    """
    _plug_closed_descriptors()
    before = sys.stdout, sys.stderr
    devnull = None
    try:
        for name in ("stdout", "stderr"):
            stream = getattr(sys, name)
            if _cannot_encode(stream):
                stream.reconfigure(errors=_ERRORS)
        if sys.stderr is None:
            devnull = open(os.devnull, "w", encoding="utf-8")
            sys.stderr = devnull
        if sys.stdout is not None and not isinstance(sys.stdout, _Stdout):
            sys.stdout = _Stdout(sys.stdout)  # type: ignore[assignment]
        try:
            yield
        except BaseException:  # the command's own ending stands; what is buffered goes or is dropped
            try:
                _flush_stdout()
            except (StdoutClosed, OSError):
                _silence_stdout()
            raise
        _flush_stdout()  # what print() buffered: a closed pipe shows here, not at the interpreter's exit
    finally:
        sys.stdout, sys.stderr = before
        if devnull is not None:
            devnull.close()


def quiet_exit() -> NoReturn:
    """End the process after its standard output was closed: no message, :data:`STDOUT_CLOSED`.

    Standard output is pointed at ``/dev/null`` first, as Python's documentation on
    SIGPIPE advises: the interpreter's last flush of what is still buffered would
    otherwise fail and print ``Exception ignored ... BrokenPipeError``.
    """
    _silence_stdout()
    raise SystemExit(STDOUT_CLOSED)


def _flush_stdout() -> None:
    if sys.stdout is not None:
        sys.stdout.flush()


def _silence_stdout() -> None:
    """Point standard output's descriptor at ``/dev/null``: what is still buffered goes there."""
    stream = sys.stdout._stream if isinstance(sys.stdout, _Stdout) else sys.stdout
    if stream is None:
        return
    with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation, AttributeError):
        fd = stream.fileno()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """``count`` and ``noun`` in the right number.

    Examples
    --------
    >>> plural(1, "redescription"), plural(3, "redescription"), plural(0, "entity", "entities")
    ('1 redescription', '3 redescriptions', '0 entities')
    """
    word = noun if count == 1 else (plural_form or f"{noun}s")
    return f"{count:,} {word}"


def note(message: str) -> None:
    """One line ``note: <message>`` on standard error (nothing when it is closed)."""
    if sys.stderr is not None:
        print(f"note: {message}", file=sys.stderr, flush=True)


def fail(message: str, code: int = USER_ERROR) -> NoReturn:
    """End the command with one line ``error: <message>`` on stderr and exit ``code``.

    A file name in it that is not UTF-8 is shown with its bytes as ``\\xNN``
    (:func:`dprm.errors.printable_text`), as the reports show it.
    """
    from dprm.errors import printable_text

    text = printable_text(str(message)).strip()
    first_line = text.splitlines()[0] if text else "unknown error"
    if sys.stderr is not None:  # closed (2>&-): print() would write it on standard output
        with contextlib.suppress(OSError):
            print(f"error: {first_line}", file=sys.stderr, flush=True)
    raise SystemExit(code)


def exit_on(error: BaseException) -> NoReturn:
    """End the command for ``error`` with one line on stderr, whatever its kind.

    - the project's errors (:class:`~dprm.errors.DprmError`): their message, exit 2;
    - ``OSError`` (a full disk, a file that vanished): the file and the reason, exit 2;
    - ``MemoryError``: exit 1 with a hint to use smaller settings;
    - Ctrl-C: ``interrupted``, exit 130;
    - anything else is a bug: one line naming it, exit 1, and the traceback only
      with ``DPRM_TRACEBACK=1`` in the environment.
    """
    from dprm.errors import DprmError

    if isinstance(error, DprmError):
        fail(str(error))
    if isinstance(error, StdoutClosed):
        quiet_exit()
    if isinstance(error, KeyboardInterrupt):
        print("interrupted", file=sys.stderr, flush=True)
        raise SystemExit(INTERRUPTED) from None
    if isinstance(error, MemoryError):
        fail("out of memory: use smaller settings (e.g. --depth, --init-trials) or fewer rows", INTERNAL_ERROR)
    if isinstance(error, OSError):
        where = f"{error.filename}: " if error.filename else ""
        fail(f"{where}{error.strerror or error}")
    if os.environ.get("DPRM_TRACEBACK"):
        raise error
    fail(f"internal error ({type(error).__name__}: {error}); please report it, "
         "with DPRM_TRACEBACK=1 for the traceback", INTERNAL_ERROR)
