"""The data owner's side: registration refusals, ``dprm admin`` and ``dprm serve`` options.

A private dataset needs a complete types file; ``dprm admin`` answers a refused
command with one line ``error: ...`` and exit code 2, prints a new token alone on one
line, and never shows a token again.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy")

from dprm.errors import DataError, ParameterError  # noqa: E402
from dprm.server.database import Database  # noqa: E402
from dprm.server.datasets import list_datasets, register_dataset  # noqa: E402
from server_support import DPRM, postgres_server, postgres_url, setup_server_db, tiny_views  # noqa: E402,F401
from test_cli import run  # noqa: E402


def dprm(*args: str) -> subprocess.CompletedProcess:
    """``dprm args`` in this process (test_cli's ``run``: exit code, stdout, stderr), as a completed process.

    In-process: each of the admin commands below would otherwise pay a Python start-up with
    dprm's imports; the real processes' exit codes are checked by :func:`dprm_process`.
    """
    code, out, err = run(list(args))
    return subprocess.CompletedProcess(["dprm", *args], code, out, err)


def dprm_process(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(DPRM + list(args), capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("columns, reason", [
    ({"a": "boolean", "b": "boolean", "state": {"type": "categorical", "categories": ["CA", "NY", "TX"]}},
     "'x' (right) is not declared"),
    ({"a": "boolean", "b": "boolean", "state": "categorical", "x": {"type": "numeric", "bounds": [0, 100]}},
     "'state' (left) is categorical without categories"),
    ({"a": "boolean", "b": "boolean", "state": {"type": "categorical", "categories": ["CA", "NY", "TX"]},
      "x": "numeric"}, "'x' (right) is numeric without bounds"),
])
def test_an_incomplete_types_file_is_refused_with_the_reason(tmp_path: Path, columns: dict, reason: str) -> None:
    left, right, _ = tiny_views(tmp_path)
    types = tmp_path / "partial.json"
    types.write_text(json.dumps({"id_column": "id", "columns": columns}))
    db = Database(str(tmp_path / "s.db"))
    db.migrate()
    with pytest.raises(DataError, match="complete types file") as refused:
        register_dataset(db, "tiny", left, right, types)
    assert reason in str(refused.value)
    assert refused.value.data_dependent is False
    db.dispose()


def test_registration_checks_names_files_and_duplicates(tmp_path: Path) -> None:
    left, right, types = tiny_views(tmp_path)
    db = Database(str(tmp_path / "s.db"))
    db.migrate()
    for bad in ("bad name!", "tiny\n", "\ntiny"):  # a name ending in a newline passed '$' (two 'eve' rows)
        with pytest.raises(ParameterError):
            register_dataset(db, bad, left, right, types)
    with pytest.raises(DataError, match="no such file"):
        register_dataset(db, "tiny", tmp_path / "missing.csv", right, types)
    for bad in (str(tmp_path / ("a" * 5000)), "/proc/self/mem"):  # too long a name; a file that fails to read
        with pytest.raises(DataError, match="cannot be read") as refused:
            register_dataset(db, "tiny", bad, right, types)
        assert refused.value.data_dependent is False and len(str(refused.value)) < 300
    schema = register_dataset(db, "tiny", left, right, types)
    assert schema["views"]["left"][0] == {"name": "a", "type": "boolean"}
    with pytest.raises(ParameterError, match="registered already"):
        register_dataset(db, "tiny", left, right, types)
    db.dispose()


def test_registration_refuses_one_id_column_under_two_names(tmp_path: Path) -> None:
    """The loader's rule holds for a registered dataset too: ids named 'pid' and 'id', the right's rows in
    another order, would have been paired by position. Refused with the stable code; nothing registered."""
    left, right, types = tiny_views(tmp_path, rows=50)
    lines = left.read_text().splitlines()
    left.write_text("\n".join(["pid," + lines[0].split(",", 1)[1], *lines[1:]]) + "\n")
    header, *rows = right.read_text().splitlines()
    right.write_text("\n".join([header, *rows[::-1]]) + "\n")
    mapping = json.loads(types.read_text())
    del mapping["id_column"]
    types.write_text(json.dumps(mapping))
    db = Database(str(tmp_path / "s.db"))
    db.migrate()
    with pytest.raises(DataError) as refused:
        register_dataset(db, "tiny", left, right, types)
    assert refused.value.code == "id_names_differ" and refused.value.data_dependent
    assert refused.value.public_message() == (f"{left}: column 'pid': the views' first columns look like one id "
                                              f"column with two names (id_names_differ)")
    with db.read() as connection:
        assert list_datasets(connection) == []
    db.dispose()
    added = dprm("admin", "--db", str(tmp_path / "s.db"), "dataset", "add", "tiny", str(left), str(right),
                 "--types", str(types))
    assert added.returncode == 2 and added.stdout == ""
    assert added.stderr.startswith("error: ") and added.stderr.count("\n") == 1 and "'pid' and 'id'" in added.stderr


def test_a_dataset_removed_and_added_again_keeps_its_history_apart(tmp_path: Path) -> None:
    """The owner's tables say which registration a budget or a charge belongs to, and adding the
    same files again says that budgets start afresh on rows analysts may have spent on."""
    left, right, types = tiny_views(tmp_path)
    db = str(tmp_path / "server.db")
    add = ("admin", "--db", db, "dataset", "add", "tiny", str(left), str(right), "--types", str(types))
    first = dprm(*add)
    assert first.returncode == 0 and "note:" not in first.stdout + first.stderr
    assert dprm("admin", "--db", db, "analyst", "add", "alice").returncode == 0
    assert dprm("admin", "--db", db, "budget", "set", "alice", "tiny", "1").returncode == 0
    assert dprm("admin", "--db", db, "dataset", "remove", "tiny").returncode == 0
    again = dprm(*add)
    assert again.returncode == 0
    assert "note: the same files were registered before as tiny (removed); budgets on tiny start afresh" \
        in again.stderr
    assert dprm("admin", "--db", db, "budget", "set", "alice", "tiny", "2").returncode == 0
    listed = dprm("admin", "--db", db, "budget", "list", "--dataset", "tiny").stdout
    rows = [line for line in listed.splitlines() if "alice" in line]
    assert len(rows) == 2 and sum("tiny (removed)" in line for line in rows) == 1, listed


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh server database's URL: a SQLite file, or a database on the session's PostgreSQL server."""
    if request.param == "sqlite":
        return str(tmp_path / "server.db")
    return request.getfixturevalue("postgres_url")


def test_a_dataset_with_active_jobs_is_removed_only_with_force(database: str, tmp_path: Path) -> None:
    """``dataset remove`` took a dataset away under its queued and running jobs. It refuses in one
    line (exit code 2, the dataset and its active jobs named, nothing changed); ``--force`` ends
    them as failed with ``dataset_removed``, a queued one refunded, a running one that read rows
    with its charge kept, and the running job's worker then finds the job no longer its own."""
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient
    from sqlalchemy import select

    from dprm.server import jobs as queue
    from dprm.server.app import create_app
    from dprm.server.tables import charges, jobs, ledger
    from dprm.server.worker import run_job

    tokens = setup_server_db(database, tmp_path)
    job = {"dataset": "tiny", "algorithm": "alt-expm", "parameters": {"init_trials": 1, "depth": 2}}
    headers = {"Authorization": f"Bearer {tokens['alice']}"}
    db = Database(database)
    with TestClient(create_app(database, workers=0, background=False)) as client:
        running = client.post("/v1/jobs", json={**job, "epsilon": 2}, headers=headers).json()["id"]
        claimed = queue.claim_next(db, "worker-1")
        assert claimed.public_id == running and queue.touch(db, claimed.id, "worker-1")  # it is reading the rows
        queued = client.post("/v1/jobs", json={**job, "epsilon": 1}, headers=headers).json()["id"]
        dummy = client.post("/v1/jobs", json={**job, "epsilon": 1, "dummy": True}, headers=headers).json()["id"]
        cancelled = client.post("/v1/jobs", json={**job, "epsilon": "0.5"}, headers=headers).json()["id"]
        client.post(f"/v1/jobs/{cancelled}/cancel", headers=headers)

        refused = dprm("admin", "--db", database, "dataset", "remove", "tiny")
        assert refused.returncode == 2 and refused.stdout == "" and len(refused.stderr.splitlines()) == 1
        assert refused.stderr.startswith("error: dataset 'tiny' has 3 active jobs (1 running, 2 queued)")
        assert "--force" in refused.stderr
        assert "tiny" in dprm("admin", "--db", database, "dataset", "list").stdout  # still registered
        states = {j["id"]: j["status"] for j in client.get("/v1/jobs", headers=headers).json()["jobs"]}
        assert states == {running: "running", queued: "queued", dummy: "queued", cancelled: "cancelled"}
        assert client.get("/v1/budget", headers=headers).json()["budgets"][0]["exact"]["spent"] == "3"

        forced = dprm("admin", "--db", database, "dataset", "remove", "tiny", "--force")
        assert forced.returncode == 0, forced.stderr
        assert forced.stdout.strip() == ("removed tiny; 3 active jobs ended as failed (dataset_removed): 1 charge "
                                         "kept (its job had read rows), 1 refunded, 1 free (dummy)")
        assert "tiny" not in dprm("admin", "--db", database, "dataset", "list").stdout
        for job_id in (running, queued, dummy):
            state = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
            assert state["status"] == "failed" and state["error"]["code"] == "dataset_removed", state
            assert "removed" in state["error"]["message"]
        assert client.get(f"/v1/jobs/{cancelled}", headers=headers).json()["status"] == "cancelled"
    # the books: the running job's charge kept with one ledger row, the queued one refunded
    with db.read() as connection:
        statuses = dict(connection.execute(select(jobs.c.public_id, charges.c.status)
                                           .join(charges, charges.c.id == jobs.c.charge_id)).all())
        rows = connection.execute(select(ledger.c.step, ledger.c.epsilon_exact)).all()
    assert statuses == {running: "spent", queued: "refunded", cancelled: "refunded"}
    assert [(r.step, r.epsilon_exact) for r in rows] == [
        ("job failed (dataset_removed) after reading the rows: no result", "2")]
    # the running job's worker: no crash, it publishes nothing and stops
    assert queue.heartbeat(db, claimed.id, "worker-1") is False
    assert queue.finish_done(db, claimed.id, "worker-1", [], {"format": "x"}) is False
    assert run_job(db, claimed.id, "worker-1") == "not-mine"
    assert queue.claim_next(db, "worker-2") is None  # nothing left to run
    db.dispose()


def test_a_dataset_without_active_jobs_is_removed_as_before(tmp_path: Path) -> None:
    left, right, types = tiny_views(tmp_path)
    db = str(tmp_path / "server.db")
    assert dprm("admin", "--db", db, "dataset", "add", "tiny", str(left), str(right), "--types", str(types)).returncode == 0
    removed = dprm("admin", "--db", db, "dataset", "remove", "tiny", "--force")
    assert removed.returncode == 0 and removed.stdout == "removed tiny\n"


def test_admin_command_line(tmp_path: Path) -> None:
    left, right, types = tiny_views(tmp_path)
    db = str(tmp_path / "server.db")
    assert dprm("admin", "--db", db, "dataset", "add", "tiny", str(left), str(right), "--types", str(types)).returncode == 0
    added = dprm("admin", "--db", db, "analyst", "add", "alice")
    token = added.stdout.strip()
    assert added.returncode == 0 and added.stdout.count("\n") == 1 and token.startswith("dprm_")
    for args, message in [
        (("budget", "set", "alice", "tiny", "1e-10"), "multiple of 1e-9"),
        (("budget", "set", "alice", "tiny", "-1"), "EPSILON must be 0 or more, got '-1'"),
        (("budget", "set", "nobody", "tiny", "1"), "no analyst named 'nobody'"),
        (("budget", "set", "alice", "nope", "1"), "no dataset named 'nope'"),
        (("analyst", "add", "alice"), "exists already"),
        (("dataset", "remove", "nope"), "no dataset named 'nope'"),
    ]:
        refused = dprm("admin", "--db", db, *args)
        assert refused.returncode == 2 and refused.stderr.startswith("error: ") and message in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1 and refused.stdout == ""
    assert "remaining 0" in dprm("admin", "--db", db, "budget", "set", "alice", "tiny", "0.0").stdout  # withdrawn
    assert "remaining 1.5" in dprm("admin", "--db", db, "budget", "set", "alice", "tiny", "1.5").stdout
    rotated = dprm("admin", "--db", db, "analyst", "rotate", "alice").stdout.strip()
    assert rotated != token and rotated.startswith("dprm_")
    listed = dprm("admin", "--db", db, "analyst", "list").stdout
    assert "alice" in listed and token not in listed and rotated not in listed
    assert "disabled alice" in dprm("admin", "--db", db, "analyst", "disable", "alice").stdout
    assert "yes" in dprm("admin", "--db", db, "analyst", "list").stdout
    assert "tiny" in dprm("admin", "--db", db, "dataset", "list").stdout
    # serve in a real process (a refusal that did not happen would serve, not hang the tests)
    bad = dprm_process("serve", "--db", str(tmp_path / "no" / "such" / "folder.db"))
    assert bad.returncode == 2 and "does not exist" in bad.stderr
    assert dprm_process("serve", "--db", db, "--port", "0").returncode == 2


def test_names_and_tokens_are_matched_whole() -> None:
    """A name followed by a newline (or a space) is not the name: refused."""
    from dprm.server.accounts import check_name

    assert check_name("eve", "analyst") == "eve"
    for bad in ("eve\n", "eve\r\n", "eve "):
        with pytest.raises(ParameterError, match="analyst name"):
            check_name(bad, "analyst")


def test_a_long_bad_name_is_quoted_short(tmp_path: Path) -> None:
    """A refused name of 1 MB is quoted cut short (short_repr), in check_name and by ``dprm admin``."""
    from dprm.server.accounts import check_name

    long_bad = "x" * 1_000_000 + "!"
    with pytest.raises(ParameterError) as refused:
        check_name(long_bad, "analyst")
    assert len(str(refused.value)) < 200 and "'xxxx" in str(refused.value)
    refused_cli = dprm("admin", "--db", str(tmp_path / "server.db"), "analyst", "add", long_bad)
    assert refused_cli.returncode == 2 and "analyst name" in refused_cli.stderr
    assert len(refused_cli.stderr) < 300 and "Traceback" not in refused_cli.stderr
