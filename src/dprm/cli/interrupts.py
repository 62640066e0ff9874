"""SIGTERM ends a command as Ctrl-C does: one line ``interrupted``, exit code 130, the ``finally`` blocks run.

Python's default SIGTERM stops the process at once: no ``finally`` block or context
manager runs, so a local Ray started for the command would be left to die with it and
its session directory would stay in ``$TMPDIR``. :func:`terminate_as_interrupt` turns
SIGTERM into :class:`KeyboardInterrupt` while a block runs, so that the command ends
through the path Ctrl-C takes (:func:`dprm.cli.console.exit_on`): the engine is
closed (its Ray stopped, its directory removed), nothing is written (outputs are
written all or none at the end, :mod:`dprm.cli.outputs`), and the command prints
``interrupted`` and exits with code 130.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType
from typing import NoReturn

__all__ = ["terminate_as_interrupt"]


def _interrupt(signum: int, frame: FrameType | None) -> NoReturn:
    raise KeyboardInterrupt


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM raises :class:`KeyboardInterrupt` in the main thread while the block runs.

    Examples
    --------
    >>> import os
    >>> try:
    ...     with terminate_as_interrupt():
    ...         os.kill(os.getpid(), signal.SIGTERM)
    ... except KeyboardInterrupt:
    ...     print("interrupted")
    interrupted
    >>> signal.getsignal(signal.SIGTERM) is _interrupt
    False
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before if before is not None else signal.SIG_DFL)
