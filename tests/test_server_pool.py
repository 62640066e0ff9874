"""The primitives' process pool when one of its processes dies.

A pool process killed (SIGKILL, the out-of-memory killer, a crash) breaks the whole
:class:`~concurrent.futures.ProcessPoolExecutor`: Python fails every call not yet
answered with ``BrokenProcessPool``, the one that was running and those still
waiting in the queue alike. Until session 58 the server answered all of them
``500 worker_died`` and kept their charges, so a statistics request that only
waited behind the one that died was charged for rows it never read. Now a call
says when it starts (:mod:`dprm.server.pool`): one that had started keeps its charge
as before, one that had not is run again on the new pool.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sqlalchemy")

from sqlalchemy import select  # noqa: E402

from dprm.server.database import Database  # noqa: E402
from dprm.server.datasets import DatasetRecord  # noqa: E402
from dprm.server.errors import ApiError  # noqa: E402
from dprm.server.pool import PrimitivePool  # noqa: E402
from dprm.server.tables import datasets  # noqa: E402
from dprm.server.units import epsilon_units  # noqa: E402
from server_support import setup_server_db  # noqa: E402


def _task(record: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "redescription-statistics", "dataset": record, "epsilon_units": epsilon_units("0.1"),
            "request": {"left": {"attr": "a", "eq": True}, "right": {"attr": "b", "eq": True}, "confidence": 0.95},
            "dummy": False, "dummy_rows": None}


def _reads(pool: PrimitivePool, path: Path) -> bool:
    """Whether the pool's process has ``path`` open (it started a call on it)."""
    for process in list(pool._executor._processes.values()):
        try:
            for entry in os.listdir(f"/proc/{process.pid}/fd"):
                if os.readlink(f"/proc/{process.pid}/fd/{entry}") == str(path):
                    return True
        except OSError:  # the process or the descriptor ended meanwhile
            continue
    return False


def test_calls_that_waited_behind_a_killed_process_are_run_again_and_the_running_one_fails(
        tmp_path: Path) -> None:
    setup_server_db(str(tmp_path / "server.db"), tmp_path)
    db = Database(str(tmp_path / "server.db"))
    with db.read() as connection:
        record = DatasetRecord.from_row(connection.execute(select(datasets)).one()).to_json()
    db.dispose()
    fifo = tmp_path / "blocking.csv"
    os.mkfifo(fifo)
    writer = os.open(fifo, os.O_RDWR)  # a writer that writes nothing: a hash of the FIFO waits for ever
    blocked = dict(record, left_path=str(fifo))

    pool = PrimitivePool(1, timeout=120)
    pool.start()
    answers: dict[str, Any] = {}

    def call(name: str, task: dict[str, Any]) -> None:
        try:
            answers[name] = pool.run(task)
        except ApiError as error:
            answers[name] = error.code

    try:
        first = threading.Thread(target=call, args=("running", _task(blocked)))
        first.start()
        deadline = time.monotonic() + 60
        while not _reads(pool, fifo):  # the pool's process is hashing the FIFO: it started the call
            assert time.monotonic() < deadline, "the blocking call did not start"
            time.sleep(0.05)
        waiting = [threading.Thread(target=call, args=(f"waiting {i}", _task(record))) for i in range(4)]
        for thread in waiting:
            thread.start()
        time.sleep(1.0)  # all four submitted, queued behind the blocked one
        assert not answers
        (process,) = pool._executor._processes.values()  # the one process, busy with the first call
        os.kill(process.pid, signal.SIGKILL)
        for thread in [first, *waiting]:
            thread.join(timeout=120)
    finally:
        pool.stop()
        os.close(writer)
    assert answers["running"] == "worker_died"  # it had started: it may have read rows (its charge is kept)
    for i in range(4):
        answer = answers[f"waiting {i}"]
        assert isinstance(answer, dict) and answer["ok"], answer  # never started: run on the new pool
        assert [release[2] for release in answer["releases"]] == ["0.1"]


def test_a_call_still_waiting_for_a_process_at_its_timeout_is_cancelled_and_touched_nothing(
        tmp_path: Path) -> None:
    """The timeout counts from the submission: a call queued behind slow ones for that long
    was answered ``computation_failed`` "the charge is kept", although it had not started,
    and it ran later all the same (reading the rows for nobody). Now it is cancelled and
    answered as a refusal that touched no row (the service refunds its charge); a call that
    had started keeps its charge as before."""
    setup_server_db(str(tmp_path / "server.db"), tmp_path)
    db = Database(str(tmp_path / "server.db"))
    with db.read() as connection:
        record = DatasetRecord.from_row(connection.execute(select(datasets)).one()).to_json()
    db.dispose()
    fifo = tmp_path / "blocking.csv"
    os.mkfifo(fifo)
    writer = os.open(fifo, os.O_RDWR)
    blocked = dict(record, left_path=str(fifo))
    pool = PrimitivePool(1, timeout=4.0)
    pool.start()
    answers: dict[str, Any] = {}

    def call(name: str, task: dict[str, Any]) -> None:
        try:
            answers[name] = pool.run(task)
        except ApiError as error:
            answers[name] = error.code

    try:
        first = threading.Thread(target=call, args=("running", _task(blocked)))
        first.start()
        deadline = time.monotonic() + 60
        while not _reads(pool, fifo):
            assert time.monotonic() < deadline, "the blocking call did not start"
            time.sleep(0.05)
        # the executor moves calls to its processes' queue (up to one more than it has processes,
        # counting the one taken out: the first two waiting ones) where they cannot be cancelled;
        # the others wait in the executor's own list
        waiting = []
        for i in range(4):
            waiting.append(threading.Thread(target=call, args=(f"waiting {i}", _task(record))))
            waiting[-1].start()
            time.sleep(0.3)
        for thread in [first, *waiting]:
            thread.join(timeout=60)
    finally:
        (process,) = pool._executor._processes.values()
        os.kill(process.pid, signal.SIGKILL)  # still blocked on the FIFO
        pool.stop()
        os.close(writer)
    assert answers["running"] == "computation_failed"  # it had started: its charge is kept
    assert answers["waiting 0"] == answers["waiting 1"] == "computation_failed"  # handed on: perhaps started
    for i in (2, 3):
        answer = answers[f"waiting {i}"]
        assert isinstance(answer, dict) and answer["touched"] is False and answer["code"] == "computation_failed"
        assert "nothing was charged" in answer["message"]
