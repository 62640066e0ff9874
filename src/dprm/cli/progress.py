"""A progress bar for one long computation, drawn only if it lasts more than a second.

Miners report ``(done, total)`` in data-independent units of work (steps of the
chains, trials); :class:`WorkProgress` turns that into a rich bar on stderr with the
time left. Nothing is drawn for short runs, nor when stderr is not a terminal (a
log file gets no control characters).
"""

from __future__ import annotations

import time
from types import TracebackType
from typing import Optional

from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from dprm.cli.console import err_console

__all__ = ["WorkProgress"]


class WorkProgress:
    """Context manager and ``(done, total)`` callback: a bar after ``delay`` seconds.

    Examples
    --------
    >>> with WorkProgress("mining", delay=0.0) as report:
    ...     for step in range(3):
    ...         report(step + 1, 3)
    """

    def __init__(self, description: str, *, delay: float = 1.0) -> None:
        self.description = description
        self.delay = delay
        self._started = time.monotonic()
        self._bar: Optional[Progress] = None
        self._task: Optional[int] = None

    def __enter__(self) -> "WorkProgress":
        self._started = time.monotonic()
        return self

    def __call__(self, done: int, total: int) -> None:
        if self._bar is None:
            if not err_console.is_terminal or time.monotonic() - self._started < self.delay:
                return
            self._bar = Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
                                 TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(),
                                 console=err_console, transient=True)
            self._bar.start()
            self._task = self._bar.add_task(self.description, total=total)
        assert self._task is not None
        self._bar.update(self._task, completed=done, total=total)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.stop()
