"""Faults of the secured server found by a fuzzing round, each pinned by a test.

- API processes of ``dprm serve --processes N`` end with their parent, even when it is
  killed by SIGKILL (they went on serving on the address for ever).
- Jobs still running in a previous server's workers hold ``--workers`` slots after a
  restart (``--workers 1`` ran the orphan and a new job at once).
"""

from __future__ import annotations

import os
import signal
import socket
import time
from pathlib import Path

import subprocess

import pytest

pytest.importorskip("fastapi")

from sqlalchemy import select  # noqa: E402

from dprm.server import jobs  # noqa: E402
from dprm.server.database import Database  # noqa: E402
from dprm.server.supervisor import Supervisor  # noqa: E402
from dprm.server.tables import jobs as jobs_table  # noqa: E402
from dprm.server.units import epsilon_units  # noqa: E402
from server_support import Served, alive, children, setup_server_db  # noqa: E402


def _wait_for(condition, seconds: float) -> bool:
    """Poll ``condition`` until it holds or ``seconds`` have passed (a bound, not a timing)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


# -- F1: API processes end with their parent -----------------------------------------------------


def test_api_processes_stop_when_their_parent_is_killed(tmp_path: Path) -> None:
    url = str(tmp_path / "server.db")
    setup_server_db(url, tmp_path)
    server = Served(url, workers=1, extra=["--processes", "2"]).start()
    apis: list[int] = []
    try:
        own = Path(f"/proc/{server.process.pid}/cmdline").read_bytes()
        apis = [pid for pid in children(server.process.pid) if Path(f"/proc/{pid}/cmdline").read_bytes() == own]
        assert len(apis) == 2
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(timeout=30)
        assert _wait_for(lambda: not any(alive(pid) for pid in apis), 60), "the API processes outlived their parent"
        with socket.socket() as probe:  # the address is free for the next server
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(("127.0.0.1", server.port))
    finally:
        for pid in apis:  # the old code's orphans: never leave them serving
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        server.stop()


# -- F2: a previous server's running jobs hold worker slots ----------------------------------------


def _submit(db: Database) -> int:
    parameters = {"init_trials": 1, "depth": 2}
    body = {"dataset": "tiny", "algorithm": "alt-expm", "epsilon": "0.5", "parameters": parameters}
    row, created = jobs.submit(db, 1, 1, algorithm="alt-expm", parameters=parameters, units=epsilon_units("0.5"),
                               dummy=False, dummy_rows=None, idempotency_key=None, digest=jobs.request_digest(body))
    assert created
    return row.id


def _status(db: Database, job_id: int) -> str:
    with db.read() as connection:
        return connection.execute(select(jobs_table.c.status).where(jobs_table.c.id == job_id)).scalar_one()


def test_a_previous_servers_running_job_holds_a_worker_slot_until_it_ends(tmp_path: Path) -> None:
    url = str(tmp_path / "server.db")
    setup_server_db(url, tmp_path)
    db = Database(url)
    orphan = subprocess.Popen(["sleep", "600"], start_new_session=True)  # the dead server's worker, still running
    supervisor = Supervisor(db, workers=1, warm=False)
    try:
        first, second = _submit(db), _submit(db)
        claimed = jobs.claim_next(db, "old-token")
        assert claimed.id == first
        jobs.set_pid(db, first, "old-token", orphan.pid)
        supervisor.recover()  # the new server starts: the orphan's job runs on
        supervisor.round()
        assert _status(db, first) == "running"
        assert _status(db, second) == "queued" and not supervisor.processes  # one slot, taken by the orphan
        orphan.kill()
        orphan.wait(timeout=10)
        supervisor.round()  # the orphan's job fails (its worker is gone): the slot is free
        assert _status(db, first) == "failed"
        assert _status(db, second) == "running" and list(supervisor.processes) == [second]
    finally:
        supervisor.stop(kill_workers=True)
        if orphan.poll() is None:
            orphan.kill()
            orphan.wait(timeout=10)
        db.dispose()
