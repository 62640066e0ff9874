"""What every command prints with: the consoles, notes, and the one-line error.

Results go to standard output (:data:`console`); notes, warnings and errors go to
standard error, so that ``dprm mine ... > table.txt`` keeps only the table. Every
user error becomes exactly one line ``error: <message>`` and exit code 2
(:func:`fail`); :func:`exit_on` applies that rule to whatever ended a command, also to
the errors that are not the project's own (a full disk, an interrupted run, a bug).
"""

from __future__ import annotations

import os
import sys
from typing import NoReturn

from rich.console import Console

__all__ = ["console", "err_console", "note", "fail", "exit_on", "plural", "USER_ERROR", "INTERNAL_ERROR"]

#: Exit code of a user error (bad input, bad option, refused budget).
USER_ERROR = 2
#: Exit code of an error that is not the user's (a bug, an exhausted machine).
INTERNAL_ERROR = 1
#: Exit code after Ctrl-C (128 + SIGINT).
INTERRUPTED = 130

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


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
    """One line ``note: <message>`` on standard error."""
    print(f"note: {message}", file=sys.stderr, flush=True)


def fail(message: str, code: int = USER_ERROR) -> NoReturn:
    """End the command with one line ``error: <message>`` on stderr and exit ``code``."""
    text = str(message).strip()
    first_line = text.splitlines()[0] if text else "unknown error"
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
