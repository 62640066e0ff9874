"""The supervisor's warm spare worker: it takes the next job, is replaced, and dies cleanly.

An in-process :class:`~dprm.server.supervisor.Supervisor` on SQLite, driven round by
round (no HTTP server), with real worker processes mining the ``tiny`` dataset.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from dprm.server import jobs
from dprm.server.database import Database
from dprm.server.supervisor import Supervisor
from dprm.server.tables import jobs as jobs_table
from dprm.server.units import epsilon_units

from server_support import setup_server_db

SMALL_JOB = {"init_trials": 1, "depth": 2}


@pytest.fixture
def db(tmp_path: Path):
    url = str(tmp_path / "server.db")
    setup_server_db(url, tmp_path)
    database = Database(url)
    yield database
    database.dispose()


def _submit(db: Database) -> int:
    body = {"dataset": "tiny", "algorithm": "alt-expm", "epsilon": "0.5", "parameters": SMALL_JOB}
    row, created = jobs.submit(db, 1, 1, algorithm="alt-expm", parameters=SMALL_JOB, units=epsilon_units("0.5"),
                               dummy=False, dummy_rows=None, idempotency_key=None, digest=jobs.request_digest(body))
    assert created
    return row.id


def _job(db: Database, job_id: int) -> Any:
    with db.read() as connection:
        return connection.execute(select(jobs_table).where(jobs_table.c.id == job_id)).one()


def _rounds_until(supervisor: Supervisor, condition, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        supervisor.round()
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError("timed out")


def test_the_next_job_runs_in_the_warm_spare_and_a_fresh_spare_follows(db: Database) -> None:
    supervisor = Supervisor(db, workers=1)
    try:
        supervisor.round()  # nothing queued: a spare is started
        spare = supervisor.spare
        assert spare is not None and spare.poll() is None
        job_id = _submit(db)
        supervisor.round()
        assert _job(db, job_id).worker_pid == spare.pid  # the spare took it: one process, this one job
        assert supervisor.processes[job_id][0] is spare
        assert supervisor.spare is not None and supervisor.spare.pid != spare.pid
        _rounds_until(supervisor, lambda: _job(db, job_id).status != "running")
        assert _job(db, job_id).status == "done"
        spare.wait(timeout=30)  # the job's process ends with its job (TimeoutExpired otherwise)
    finally:
        waiting = supervisor.spare
        supervisor.stop()
    assert waiting is not None and waiting.wait(timeout=30) == 0  # its input closed: it left without a job


def test_a_dead_spare_is_replaced_and_never_given_the_job(db: Database) -> None:
    supervisor = Supervisor(db, workers=1)
    try:
        supervisor.round()
        dead = supervisor.spare
        dead.send_signal(signal.SIGKILL)
        dead.wait(timeout=30)
        job_id = _submit(db)
        supervisor.round()
        pid = _job(db, job_id).worker_pid
        assert pid is not None and pid != dead.pid
        _rounds_until(supervisor, lambda: _job(db, job_id).status != "running")
        assert _job(db, job_id).status == "done"
    finally:
        supervisor.stop(kill_workers=True)


def test_a_spare_that_dies_waiting_is_not_restarted_every_round(db: Database) -> None:
    supervisor = Supervisor(db, workers=1)
    try:
        supervisor.round()
        supervisor.spare.send_signal(signal.SIGKILL)
        supervisor.spare.wait(timeout=30)
        supervisor.round()
        assert supervisor.spare is None  # replaced after SPARE_RETRY_SECONDS, not at once
        job_id = _submit(db)
        supervisor.round()  # the queued job does not wait for a spare
        assert _job(db, job_id).worker_pid is not None
    finally:
        supervisor.stop(kill_workers=True)


def test_without_a_spare_every_job_starts_a_new_process(db: Database) -> None:
    supervisor = Supervisor(db, workers=1, spare=False)
    try:
        supervisor.round()
        assert supervisor.spare is None
        job_id = _submit(db)
        _rounds_until(supervisor, lambda: _job(db, job_id).status != "running")
        assert _job(db, job_id).status == "done" and supervisor.spare is None
    finally:
        supervisor.stop(kill_workers=True)


def test_a_spare_killed_with_its_job_is_a_dead_worker(db: Database) -> None:
    supervisor = Supervisor(db, workers=1)
    try:
        supervisor.round()
        spare = supervisor.spare
        job_id = _submit(db)
        supervisor.round()
        assert _job(db, job_id).worker_pid == spare.pid
        spare.send_signal(signal.SIGKILL)
        spare.wait(timeout=30)
        supervisor.round()
        row = _job(db, job_id)
        assert row.status == "failed" and row.error_code == "worker_died"
    finally:
        supervisor.stop(kill_workers=True)
