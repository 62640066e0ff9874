"""The primitives' process pool: [inv] calls run in worker processes, never in the API.

A :class:`concurrent.futures.ProcessPoolExecutor` (``spawn``: no fork of the
threaded API process) whose processes keep the rows of recently used datasets
(:func:`dprm.server.primitives.run_primitive` caches them per file digest), so a
primitive costs a hash of the files and the counting, not a load. A process that
dies breaks the pool: the calls in flight answer ``worker_died`` (their charges
are kept: they may have read rows) and the pool is made again.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from dprm.server.errors import ApiError

__all__ = ["PrimitivePool"]

log = logging.getLogger("dprm.server")


class PrimitivePool:
    """Processes that run primitives.

    Parameters
    ----------
    processes : int
        Number of processes (≥ 1).
    timeout : float
        Seconds a primitive may take.
    """

    def __init__(self, processes: int = 1, *, timeout: float = 300.0) -> None:
        self.processes = max(1, int(processes))
        self.timeout = timeout
        self._lock = threading.Lock()
        self._executor: ProcessPoolExecutor | None = None

    def _make(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(self.processes, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_initialise, initargs=(os.getpid(),))

    def start(self) -> None:
        """Start the processes now (they import numpy and the miners: seconds)."""
        from dprm.server.primitives import warm

        with self._lock:
            if self._executor is None:
                self._executor = self._make()
            executor = self._executor
        for future in [executor.submit(warm) for _ in range(self.processes)]:
            future.result(timeout=120)

    def run(self, task: dict[str, Any]) -> dict[str, Any]:
        """Run :func:`~dprm.server.primitives.run_primitive` on ``task`` in a process."""
        from dprm.server.primitives import run_primitive

        with self._lock:
            if self._executor is None:
                self._executor = self._make()
            executor = self._executor
        try:
            future = executor.submit(run_primitive, task)
            return future.result(timeout=self.timeout)
        except BrokenProcessPool:
            log.error("a primitive's process died; the pool is made again")
            with self._lock:
                if self._executor is executor:
                    self._executor = None
            executor.shutdown(wait=False, cancel_futures=True)
            raise ApiError("worker_died") from None
        except TimeoutError:
            log.error("a primitive took longer than %s s", self.timeout)
            raise ApiError("computation_failed", "the computation took too long; the charge is kept") from None

    def stop(self) -> None:
        """Stop the processes (those still busy after 5 s are killed)."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is None:
            return
        processes = list(getattr(executor, "_processes", {}).values())
        executor.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + 5.0
        for process in processes:
            process.join(timeout=max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join(timeout=5.0)


def _initialise(parent: int) -> None:
    """A pool process's start: import what primitives need; exit when the server dies.

    A server killed outright (SIGKILL, out of memory) cannot stop its pool; each
    process checks once a second that its parent is still the server and exits if not.
    """
    from dprm.server.primitives import warm

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, name="dprm-parent-watch", daemon=True).start()
    warm()
