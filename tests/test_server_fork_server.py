"""The supervisor's warm fork server: each job a forked process of its own, a dead server replaced, kills exact.

An in-process :class:`~dprm.server.supervisor.Supervisor` on SQLite, driven round by
round (no HTTP server), with real worker processes mining the ``tiny`` dataset.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from dprm.server import jobs
from dprm.server.database import Database
from dprm.server import fork_server
from dprm.server.supervisor import ENDED_GRACE_SECONDS, Supervisor
from dprm.server.worker import JOB_NICENESS
from dprm.server.tables import jobs as jobs_table

from server_support import children, setup_server_db, submit_small_job

pytestmark = pytest.mark.skipif(not fork_server.available(), reason="needs Linux pidfds")


@pytest.fixture
def db(tmp_path: Path):
    url = str(tmp_path / "server.db")
    setup_server_db(url, tmp_path)
    database = Database(url)
    yield database
    database.dispose()


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


def _done(db: Database, supervisor: Supervisor, job_id: int) -> None:
    _rounds_until(supervisor, lambda: _job(db, job_id).status != "running")
    assert _job(db, job_id).status == "done"


def test_every_job_is_a_child_of_the_warm_fork_server_and_ends_with_its_job(db: Database) -> None:
    supervisor = Supervisor(db, workers=1)
    try:
        supervisor.round()  # nothing queued: the fork server is started
        server = supervisor.fork_server
        assert server is not None and server.alive()
        pids = []
        for _ in range(2):
            job_id = submit_small_job(db)
            supervisor.round()
            pid = _job(db, job_id).worker_pid
            process = supervisor.processes[job_id][0]
            assert isinstance(process, fork_server.ForkedWorker) and process.pid == pid
            assert pid in children(server.pid)  # forked by the warm server, not a new interpreter
            assert os.getsid(pid) == pid  # a session of its own: Ctrl-C at the server does not reach it
            _done(db, supervisor, job_id)
            assert process.wait(timeout=30) == 0  # the job's process ends with its job, exit code reported
            pids.append(pid)
        assert pids[0] != pids[1] and supervisor.fork_server is server  # one process per job, one server
    finally:
        supervisor.stop()
    assert server.process.wait(timeout=30) == 0  # its input closed: it left


def test_a_dead_fork_server_is_never_given_a_job_and_is_replaced_later(db: Database) -> None:
    supervisor = Supervisor(db, workers=1)
    try:
        supervisor.round()
        dead = supervisor.fork_server
        dead.process.send_signal(signal.SIGKILL)
        dead.process.wait(timeout=30)
        job_id = submit_small_job(db)
        supervisor.round()  # noticed dead before the job: a new interpreter runs it, no new server at once
        assert supervisor.fork_server is None
        process = supervisor.processes[job_id][0]
        assert not isinstance(process, fork_server.ForkedWorker) and process.pid not in children(dead.pid)
        _done(db, supervisor, job_id)
        supervisor._next_fork_server = 0.0  # the retry delay has passed
        supervisor.round()
        assert supervisor.fork_server is not None and supervisor.fork_server.pid != dead.pid
    finally:
        supervisor.stop(kill_workers=True)


def test_a_fork_server_that_dies_after_the_rounds_check_gets_no_job(db: Database) -> None:
    supervisor = Supervisor(db, workers=1)
    try:
        supervisor.round()
        server = supervisor.fork_server
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(timeout=30)
        job_id = submit_small_job(db)
        token = secrets.token_hex(16)
        assert jobs.claim_next(db, token).id == job_id
        supervisor._spawn(job_id, token)  # what the round's step 5 does after step 4 saw it alive
        process = supervisor.processes[job_id][0]
        assert not isinstance(process, fork_server.ForkedWorker)  # the handover failed: a new interpreter
        assert supervisor.fork_server is None and _job(db, job_id).worker_pid == process.pid
        _done(db, supervisor, job_id)
    finally:
        supervisor.stop(kill_workers=True)


def test_without_warm_every_job_starts_a_new_interpreter(db: Database) -> None:
    supervisor = Supervisor(db, workers=1, warm=False)
    try:
        supervisor.round()
        assert supervisor.fork_server is None
        job_id = submit_small_job(db)
        _done(db, supervisor, job_id)
        assert supervisor.fork_server is None
    finally:
        supervisor.stop(kill_workers=True)


def test_a_forked_job_runs_below_the_server_and_killed_is_a_dead_worker(db: Database) -> None:
    supervisor = Supervisor(db, workers=1)
    try:
        supervisor.round()
        job_id = submit_small_job(db)
        supervisor.round()
        process = supervisor.processes[job_id][0]
        assert isinstance(process, fork_server.ForkedWorker)
        deadline = time.monotonic() + 10
        lowered = min(19, os.getpriority(os.PRIO_PROCESS, 0) + JOB_NICENESS)  # 19: the lowest there is
        while os.getpriority(os.PRIO_PROCESS, process.pid) != lowered:
            assert time.monotonic() < deadline, "the job's process never lowered its priority"
            time.sleep(0.001)
        os.kill(process.pid, signal.SIGKILL)
        assert process.wait(timeout=30) == -signal.SIGKILL
        supervisor.round()
        row = _job(db, job_id)
        assert row.status == "failed" and row.error_code == "worker_died"
        assert job_id not in supervisor.processes
    finally:
        supervisor.stop(kill_workers=True)


def test_stopping_the_supervisor_leaves_a_running_forked_job_to_finish(db: Database) -> None:
    supervisor = Supervisor(db, workers=1)
    supervisor.round()
    job_id = submit_small_job(db)
    supervisor.round()
    process = supervisor.processes[job_id][0]
    server = supervisor.fork_server
    supervisor.stop()  # the fork server exits; the job's process goes on in its own session
    assert server.process.wait(timeout=30) == 0
    process.wait(timeout=120)
    assert _job(db, job_id).status == "done"


@pytest.mark.parametrize("ending", ["done", "failed", "cancelled"])
def test_a_worker_whose_job_ended_has_time_to_exit_unless_the_job_was_cancelled(db: Database, ending: str) -> None:
    """A worker publishes its answer and then exits: a round between the two must not SIGKILL it
    (its exit code then says killed for a job that succeeded); one that never exits is killed
    :data:`ENDED_GRACE_SECONDS` after its job ended, a cancelled job's worker at once."""
    supervisor = Supervisor(db, workers=1, warm=False)
    job_id, token = submit_small_job(db), secrets.token_hex(16)
    assert jobs.claim_next(db, token).id == job_id
    stand_in = subprocess.Popen(["sleep", "120"])  # a worker between its last write and its exit
    supervisor.processes[job_id] = (stand_in, token)
    try:
        if ending == "done":
            assert jobs.finish_done(db, job_id, token, [], {"redescriptions": []})
        elif ending == "failed":
            assert jobs.finish_failed(db, job_id, token, code="bad_data", message=None, owner_error=None,
                                      touched=False)
        else:
            jobs.cancel(db, 1, _job(db, job_id).public_id)
        supervisor.round()
        if ending == "cancelled":
            assert stand_in.wait(timeout=30) == -signal.SIGKILL and job_id not in supervisor.processes
            return
        assert stand_in.poll() is None and job_id in supervisor.processes  # left to exit by itself
        with db.write() as connection:  # the grace period has passed
            connection.execute(jobs_table.update().where(jobs_table.c.id == job_id)
                               .values(finished_at=time.time() - ENDED_GRACE_SECONDS - 1))
        supervisor.round()
        assert stand_in.wait(timeout=30) == -signal.SIGKILL and job_id not in supervisor.processes
        assert _job(db, job_id).status == ending  # killing it changes nothing of the job
    finally:
        stand_in.kill()
        stand_in.wait()
        supervisor.stop(kill_workers=True)
