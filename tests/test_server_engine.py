"""``dprm serve --engine ray``: the workers shard the rows of the private miners on Ray.

An in-process :class:`~dprm.server.supervisor.Supervisor` on SQLite, driven round by
round, with real worker processes: each starts its own local Ray on loopback, whose
shard actors read their parts of the registered files; only counts come back, noise
is drawn in the worker, the charge and the ledger are the server's as ever.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from dprm.server import jobs
from dprm.server.database import Database
from dprm.server.supervisor import Supervisor
from dprm.server.tables import jobs as jobs_table, ledger
from dprm.server.units import epsilon_units

from server_support import setup_server_db

if importlib.util.find_spec("ray") is None:  # not imported here: dprm imports it with its environment
    pytest.skip("Ray is not installed (the ray extra)", allow_module_level=True)


@pytest.fixture
def db(tmp_path: Path):
    url = str(tmp_path / "server.db")
    setup_server_db(url, tmp_path)
    database = Database(url)
    yield database
    database.dispose()


def _submit(db: Database, algorithm: str, parameters: dict[str, Any], epsilon: str, dummy: bool = False) -> int:
    body = {"dataset": "tiny", "algorithm": algorithm, "epsilon": epsilon, "parameters": parameters, "dummy": dummy}
    row, created = jobs.submit(db, 1, 1, algorithm=algorithm, parameters=parameters, units=epsilon_units(epsilon),
                               dummy=dummy, dummy_rows=300 if dummy else None, idempotency_key=None,
                               digest=jobs.request_digest(body))
    assert created
    return row.id


def _run(supervisor: Supervisor, db: Database, job_id: int, timeout: float = 240.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        supervisor.round()
        with db.read() as connection:
            job = connection.execute(select(jobs_table).where(jobs_table.c.id == job_id)).one()
            spent = [Fraction(row.epsilon_exact) for row in
                     connection.execute(select(ledger).where(ledger.c.job_id == job_id))]
        if job.status not in ("queued", "running"):
            return job, spent
        time.sleep(0.2)
    raise AssertionError("the job did not finish in time")


# One job: the worker's sharded path (a RayEngine over the registered files, the miner counting through
# it, the ledger charged) is the same for every miner that counts through the engine, and which miners
# give their in-process output on Ray is checked in tests/test_engine_ray.py. A tree miner: its shards
# also build workers on their rows (a greedy one only counts); a second job (serenade-es) started a
# second worker with its own Ray and added nothing the first did not check.
@pytest.mark.ray
def test_a_private_job_is_counted_on_ray_shards_and_charged_as_ever(db: Database) -> None:
    supervisor = Supervisor(db, workers=1, warm=False, engine="", shards=2)
    try:
        job_id = _submit(db, "alt-expm", {"init_trials": 1, "depth": 2}, "1")
        job, spent = _run(supervisor, db, job_id)
    finally:
        supervisor.stop()
    assert job.status == "done", job.owner_error
    document = json.loads(job.result)
    assert document["parameters"]["engine"] == "ray" and document["parameters"]["shards"] == 2
    assert document["privacy"]["private"] is True
    assert sum(spent) == 1  # every release in the ledger, adding up to the charged epsilon


@pytest.mark.ray
def test_a_dummy_job_runs_on_its_synthetic_rows_in_its_worker(db: Database) -> None:
    supervisor = Supervisor(db, workers=1, warm=False, engine="", shards=2)
    try:
        job_id = _submit(db, "serenade-es", {}, "0.5", dummy=True)
        job, _ = _run(supervisor, db, job_id)
    finally:
        supervisor.stop()
    assert job.status == "done", job.owner_error
    parameters = json.loads(job.result)["parameters"]
    assert parameters["dummy"] is True and "engine" not in parameters


def test_serve_refuses_a_bad_engine_before_touching_the_database(tmp_path: Path) -> None:
    database = tmp_path / "server.db"
    done = subprocess.run([sys.executable, "-m", "dprm", "serve", "--db", str(database), "--engine", "spark"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == ["error: --engine must be 'in-process', 'ray' or 'ray://HOST:PORT', "
                                                "not 'spark'"]
    assert not database.exists()


def _session(leader: int) -> list[Any]:
    """The processes of the session ``leader`` leads (the worker and what it started), but the leader."""
    import psutil

    found = []
    for process in psutil.process_iter(["pid", "name", "cmdline"]):
        try:
            if process.pid != leader and os.getsid(process.pid) == leader:
                found.append(process)
        except (ProcessLookupError, psutil.Error):
            pass
    return found


@pytest.mark.ray
def test_a_cancelled_ray_job_leaves_no_process_of_its_ray_behind(db: Database) -> None:
    """A worker killed while its local Ray runs (cancel, timeout) took only itself: Ray's dashboard and
    runtime-environment agents, in the worker's session, stayed, orphaned, for good."""
    pytest.importorskip("psutil")
    supervisor = Supervisor(db, workers=1, warm=False, engine="", shards=2)
    try:
        job_id = _submit(db, "mcmc-tree-pair", {"init_trials": 4, "mcmc_iterations": 2_000_000}, "1")
        deadline, leader = time.monotonic() + 120, None
        while time.monotonic() < deadline:  # until the worker's Ray is up (its shard actors run)
            supervisor.round()
            if job_id in supervisor.processes:
                leader = supervisor.processes[job_id][0].pid
                if any("ray::ShardActor" in " ".join(p.info["cmdline"] or ()) for p in _session(leader)):
                    break
            time.sleep(0.5)
        else:
            raise AssertionError("the job's Ray did not start in time")
        with db.read() as connection:
            public_id = connection.execute(select(jobs_table.c.public_id).where(jobs_table.c.id == job_id)).scalar()
        assert jobs.cancel(db, 1, public_id).status == "cancelled"
        supervisor.round()  # kills the worker
        deadline = time.monotonic() + 30
        while _session(leader) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert [p.info["cmdline"] for p in _session(leader)] == []
        assert list(Path(tempfile.gettempdir()).glob(f"dprm-ray-{leader}-*")) == []  # its Ray's session folder
    finally:
        supervisor.stop(kill_workers=True)


def test_a_killed_session_leaves_no_process_in_another_process_group(tmp_path: Path) -> None:
    """A local Ray's workers run in process groups of their own within the worker's session: the
    kill reaches them too, and the session folder is removed after they are gone."""
    from dprm.engine.ray_engine import local_folder_prefix
    from dprm.server.supervisor import kill_session, session_members

    script = ("import os, subprocess, sys, time\n"
              "subprocess.Popen([sys.executable, '-c', 'import os, time; os.setpgid(0, 0); time.sleep(60)'])\n"
              "time.sleep(60)\n")
    leader = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    folder = Path(tempfile.gettempdir()) / (local_folder_prefix(leader.pid) + "test")
    folder.mkdir()
    deadline = time.monotonic() + 30
    members: list[int] = []
    while time.monotonic() < deadline:   # until the grandchild has moved to a group of its own
        members = session_members(leader.pid)
        if len(members) == 1 and os.getpgid(members[0]) != leader.pid:
            break
        time.sleep(0.05)
    assert len(members) == 1 and os.getpgid(members[0]) != leader.pid
    kill_session(leader)
    assert session_members(leader.pid) == [] and not folder.exists()
