"""The server end to end: ``dprm admin``, ``dprm serve``, the Python client and ``dprm remote``.

* The issue's acceptance test: a fresh SQLite file, mammals registered with a
  complete types file, two analysts, a job and a primitive for each through the
  Python client and through ``dprm remote``, and isolation (B gets 404 for A's job
  and result).
* A worker killed with SIGKILL mid-job, once under a running server (its supervisor
  notices) and once together with the server (noticed at the restart): the job is
  failed, its charge is in the ledger, no result leaks, the other jobs finish.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from fractions import Fraction
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

from sqlalchemy import select  # noqa: E402

from dprm.client import Client, RemoteError  # noqa: E402
from dprm.queries import BooleanLiteral, NumericLiteral  # noqa: E402
from dprm.server.database import Database  # noqa: E402
from dprm.server.tables import charges, jobs, ledger  # noqa: E402
from server_support import (DPRM, MAMMALS, MAMMALS_TYPES, Served, alive, children, require_mammals,  # noqa: E402
                            setup_server_db)
from test_cli import run  # noqa: E402

SMALL_JOB = {"init_trials": 1, "depth": 2}
#: A job that runs for seconds on mammals (the killed worker's).
LONG_JOB = {"init_trials": 8, "depth": 4, "mcmc_iterations": 200_000}


def dprm(*args: str, check: bool = True, process: bool = True) -> subprocess.CompletedProcess:
    """``dprm args`` in a real process, or with ``process=False`` in this one (test_cli's ``run``).

    The owner's ``dprm admin`` commands run in-process (each process would pay dprm's
    imports); the analysts' ``dprm remote`` commands are real processes talking to the server.
    """
    if process:
        result = subprocess.run(DPRM + list(args), capture_output=True, text=True, timeout=300)
    else:
        code, out, err = run(list(args))
        result = subprocess.CompletedProcess(["dprm", *args], code, out, err)
    if check and result.returncode != 0:
        raise AssertionError(f"dprm {' '.join(args)} failed ({result.returncode}): {result.stderr}")
    return result


def test_end_to_end_two_analysts_client_and_remote(tmp_path: Path) -> None:
    require_mammals()
    db = str(tmp_path / "server.db")
    added = dprm("admin", "--db", db, "dataset", "add", "mammals", str(MAMMALS / "left.csv"),
                 str(MAMMALS / "right.csv"), "--types", str(MAMMALS_TYPES), process=False)
    assert "194 left and 48 right attributes" in added.stdout
    tokens = {}
    for name in ("alice", "bob"):
        out = dprm("admin", "--db", db, "analyst", "add", name, process=False).stdout
        assert len(out.splitlines()) == 1  # the token, alone on one line
        tokens[name] = out.strip()
        (tmp_path / f"{name}.token").write_text(tokens[name] + "\n")
        dprm("admin", "--db", db, "budget", "set", name, "mammals", "3", process=False)
    with Served(db, workers=1) as server:
        # -- the Python client, for both analysts
        jobs_of: dict[str, str] = {}
        for name in ("alice", "bob"):
            with Client(server.url, tokens[name]) as client:
                [mammals] = client.datasets()
                assert len(mammals["views"]["left"]) == 194 and "rows" not in json.dumps(mammals)
                job = client.submit("mammals", "alt-expm", 0.5, SMALL_JOB)
                jobs_of[name] = job["id"]
                document = client.wait(job["id"], timeout=120)
                assert document["format"] == "dprm.redescriptions/1" and document["privacy"]["private"] is True
                stats = client.redescription_statistics("mammals", BooleanLiteral("Moose"),
                                                        NumericLiteral("tmin_01", le=-5), "0.25")
                assert 0 < stats["noisy"]["jaccard"] <= 1 and stats["privacy"]["epsilon"] == 0.25
                assert client.budget("mammals")[0]["exact"]["spent"] == "0.75"
        # -- isolation: bob cannot see alice's job or its result
        with Client(server.url, tokens["bob"]) as bob:
            for call in (bob.status, bob.result, bob.cancel):
                with pytest.raises(RemoteError) as refused:
                    call(jobs_of["alice"])
                assert refused.value.code == "unknown_job" and refused.value.status == 404
            assert jobs_of["alice"] not in json.dumps(bob.jobs())
        # -- dprm remote, for both analysts
        for name in ("alice", "bob"):
            remote = ["remote", "--url", server.url, "--token-file", str(tmp_path / f"{name}.token")]
            output = tmp_path / f"{name}-remote.json"
            done = dprm(*remote, "submit", "mammals", "--algorithm", "alt-expm", "--epsilon", "0.5",
                        "--init-trials", "1", "--depth", "2", "--wait", "--output", str(output))
            assert json.loads(output.read_text())["algorithm"] == "alt-expm", done.stderr
            stats = dprm(*remote, "stats", "mammals", "--left", '{"attr": "Moose", "eq": true}',
                         "--right", '{"attr": "tmin_01", "le": -5}', "--epsilon", "0.25")
            assert json.loads(stats.stdout)["privacy"]["ledger"][0]["epsilon"] == 0.25
        remote_bob = ["remote", "--url", server.url, "--token-file", str(tmp_path / "bob.token")]
        refused = dprm(*remote_bob, "result", jobs_of["alice"], check=False)
        assert refused.returncode == 2 and refused.stderr.startswith("error: ") and "unknown_job" in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1
        over = dprm(*remote_bob, "submit", "mammals", "--algorithm", "alt-expm", "--epsilon", "5", check=False)
        assert over.returncode == 2 and "budget_exceeded" in over.stderr
        job_id = dprm(*remote_bob, "submit", "mammals", "--algorithm", "alt-expm", "--epsilon", "0.1",
                      "--init-trials", "1", "--depth", "2").stdout
        assert job_id.strip().startswith("job_") and len(job_id.splitlines()) == 1
        with Client(server.url, tokens["bob"]) as bob:
            bob.wait(job_id.strip(), timeout=120)
    # -- the owner's ledger adds up: 0.5 + 0.25 + 0.5 + 0.25 (+ 0.1 for bob)
    ledger_text = dprm("admin", "--db", db, "ledger", process=False).stdout
    assert "total alice on mammals: 1.5" in ledger_text and "total bob on mammals: 1.6" in ledger_text
    budgets = dprm("admin", "--db", db, "budget", "list", process=False).stdout
    assert "alice    mammals  3      1.5    1.5" in budgets
    audit = dprm("admin", "--db", db, "audit", "--limit", "1000", process=False).stdout
    assert "budget_exceeded" in audit and "unknown_job" in audit


def _wait_for(predicate, timeout: float = 120.0, what: str = "condition") -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _job_row(db: Database, public_id: str):
    with db.read() as c:
        return c.execute(select(jobs).where(jobs.c.public_id == public_id)).one()


def _touched_worker(db: Database, public_id: str):
    row = _job_row(db, public_id)
    return row if row.status == "running" and row.data_touched and row.worker_pid else None


def _check_killed(db: Database, client: Client, public_id: str, epsilon: Fraction) -> None:
    row = _job_row(db, public_id)
    assert row.status == "failed" and row.error_code == "worker_died" and row.result is None
    state = client.status(public_id)
    assert state["status"] == "failed" and state["error"]["code"] == "worker_died"
    with pytest.raises(RemoteError) as refused:
        client.result(public_id)
    assert refused.value.code == "job_failed"
    with db.read() as c:
        assert c.execute(select(charges.c.status).where(charges.c.id == row.charge_id)).scalar() == "spent"
        kept = [Fraction(t) for t in c.execute(select(ledger.c.epsilon_exact).where(ledger.c.charge_id == row.charge_id))
                .scalars()]
    assert sum(kept) == epsilon  # the charge is in the ledger: the rows were read


def test_a_worker_killed_mid_job(tmp_path: Path) -> None:
    require_mammals()
    url = str(tmp_path / "server.db")
    tokens = setup_server_db(url, tmp_path, mammals=True)
    db = Database(url)
    server = Served(url, workers=1).start()
    try:
        with Client(server.url, tokens["alice"]) as client:
            # 1. the worker dies, the server lives: its supervisor fails the job at once
            first = client.submit("mammals", "mcmc-tree-pair", 1, LONG_JOB)["id"]
            waiting = client.submit("tiny", "alt-expm", 1, SMALL_JOB)["id"]
            row = _wait_for(lambda: _touched_worker(db, first), what="the worker to read the rows")
            os.kill(row.worker_pid, signal.SIGKILL)
            _wait_for(lambda: client.status(first)["status"] == "failed", what="the job to fail")
            _check_killed(db, client, first, Fraction(1))
            assert client.wait(waiting, timeout=120)["algorithm"] == "alt-expm"  # the next job runs

            # 2. worker and server die together: the restarted server fails the job
            second = client.submit("mammals", "mcmc-tree-pair", 1, LONG_JOB)["id"]
            queued = client.submit("tiny", "alt-expm", 1, SMALL_JOB)["id"]
            row = _wait_for(lambda: _touched_worker(db, second), what="the worker to read the rows")
            pool = [pid for pid in children(server.process.pid) if pid != row.worker_pid]
            assert pool  # the primitives' processes
            os.kill(server.process.pid, signal.SIGKILL)
            os.kill(row.worker_pid, signal.SIGKILL)
            server.process.wait(timeout=30)
            server.stop()
            _wait_for(lambda: not any(alive(pid) for pid in pool), timeout=10,
                      what="the pool's processes to notice that the server died")
        server = Served(url, workers=1).start()
        with Client(server.url, tokens["alice"]) as client:
            _wait_for(lambda: client.status(second)["status"] == "failed", what="the restarted server to notice")
            _check_killed(db, client, second, Fraction(1))
            assert client.wait(queued, timeout=120)["algorithm"] == "alt-expm"  # survived the restart
            budget = client.budget("mammals")[0]["exact"]
            assert budget["spent"] == "2"
        pool = children(server.process.pid)
    finally:
        server.stop()
        db.dispose()
    _wait_for(lambda: not any(alive(pid) for pid in pool), timeout=10, what="a stopped server's pool to exit")
