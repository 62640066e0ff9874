"""The primitives' process pool: [inv] calls run in worker processes, never in the API.

A :class:`concurrent.futures.ProcessPoolExecutor` (``spawn``: no fork of the
threaded API process) whose processes keep the rows of recently used datasets
(:func:`dprm.server.primitives.run_primitive` caches them per file digest), so a
primitive costs a hash of the files and the counting, not a load. A process that
dies breaks the pool, and Python fails every call not yet answered, also those
that were still waiting in the queue: the pool is made again, and each call tells
by a marker whether it had started. A call whose process had started it answers
``worker_died`` (its charge is kept: it may have read rows); one that had not
started is run again on the new pool (it read nothing and released nothing; until
session 58 it too answered ``worker_died`` and its charge was kept). The marker is
an empty file in a folder of the pool's own (mode 0700), made by the pool's process
before it looks at anything of the call (:func:`_run_marked`).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import secrets
import shutil
import tempfile
import threading
import time
from concurrent.futures import CancelledError, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from dprm.server.errors import ApiError

__all__ = ["PrimitivePool", "START_ATTEMPTS"]

#: How many pools a call may see break before it started, before it is answered
#: ``worker_died`` without a charge (its answer then says it was not started: refunded).
START_ATTEMPTS = 3

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
        self._markers: str | None = None

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

    def _marker(self) -> str:
        """A new marker's path (not made: the pool's process makes it when the call starts)."""
        with self._lock:
            if self._markers is None:
                self._markers = tempfile.mkdtemp(prefix="dprm-pool-")  # mode 0700
            return os.path.join(self._markers, secrets.token_hex(16))

    def run(self, task: dict[str, Any]) -> dict[str, Any]:
        """Run :func:`~dprm.server.primitives.run_primitive` on ``task`` in a process.

        Its answer; ``ApiError("worker_died")`` if the process died while running it,
        ``ApiError("computation_failed")`` after :attr:`timeout` seconds. A call the pool
        never started is answered as a refusal that read no row (``touched`` False: its
        charge is refunded): its pool broke :data:`START_ATTEMPTS` times before, it was
        still waiting for a process after :attr:`timeout` seconds (it is cancelled; until
        session 58 it was ``computation_failed`` with its charge kept, and ran later all
        the same), or the pool was stopped.
        """
        for _ in range(START_ATTEMPTS):
            with self._lock:
                if self._executor is None:
                    self._executor = self._make()
                executor = self._executor
            marker = self._marker()
            try:
                future = executor.submit(_run_marked, marker, task)
                return future.result(timeout=self.timeout)
            except BrokenProcessPool:
                log.error("a primitive's process died; the pool is made again")
                with self._lock:
                    if self._executor is executor:
                        self._executor = None
                executor.shutdown(wait=False, cancel_futures=True)
                if os.path.exists(marker):  # it had started: rows may have been read
                    raise ApiError("worker_died") from None
                # it waited behind the call that died: it read nothing; run it on the new pool
            except CancelledError:  # the pool was stopped before the call started
                return {"ok": False, "code": "worker_died", "message": None, "touched": False,
                        "owner_error": "the primitives' pool was stopped before this call started"}
            except TimeoutError:
                if future.cancel():  # still waiting for a process: it never started (and now never will)
                    log.error("a primitive waited longer than %s s for a process", self.timeout)
                    return {"ok": False, "code": "computation_failed", "touched": False,
                            "message": "the server was too busy to start the computation in time; nothing was "
                                       "charged", "owner_error": f"waited {self.timeout:g} s for a pool process"}
                log.error("a primitive took longer than %s s", self.timeout)
                raise ApiError("computation_failed", "the computation took too long; the charge is kept") from None
            finally:
                try:
                    os.unlink(marker)
                except OSError:  # never made: the call did not start
                    pass
        return {"ok": False, "code": "worker_died", "message": None, "touched": False,
                "owner_error": f"the primitives' pool broke {START_ATTEMPTS} times before this call started"}

    def stop(self) -> None:
        """Stop the processes (those still busy after 5 s are killed)."""
        with self._lock:
            executor, self._executor = self._executor, None
            markers, self._markers = self._markers, None
        if markers is not None:
            shutil.rmtree(markers, ignore_errors=True)
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


def _run_marked(marker: str, task: dict[str, Any]) -> dict[str, Any]:
    """:func:`~dprm.server.primitives.run_primitive` in a pool process, after making ``marker``:
    the call has started (its files may be read from here on)."""
    from dprm.server.primitives import run_primitive

    os.close(os.open(marker, os.O_CREAT | os.O_WRONLY, 0o600))
    return run_primitive(task)


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
