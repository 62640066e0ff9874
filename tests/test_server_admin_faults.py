"""Faults of ``dprm admin`` found by a fuzzing round (session 55), each fixed and pinned here.

- ``analyst rotate`` silently removed an expiry given at ``analyst add``;
- the same files could be registered under several active names without a word
  (budgets on both names add up on the same rows);
- two ``budget set`` racing on a first grant (PostgreSQL) ended in ``IntegrityError``;
- a write on a read-only PostgreSQL database was an internal error;
- a token that could not be printed was lost after the change was committed;
- SIGTERM during a ``dataset add`` that creates the SQLite file left it behind;
- small ones: ``jobs`` did not label a removed registration, ``budget set`` refused
  `` 1`` as "not a finite number".
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sqlalchemy")

from sqlalchemy import select  # noqa: E402

from dprm.server.database import Database  # noqa: E402
from dprm.server.tables import analysts  # noqa: E402
from server_support import postgres_server, postgres_url, tiny_views  # noqa: E402,F401
from test_cli import assert_one_error_line, run  # noqa: E402


def admin(db: str, *args: str) -> tuple[int, str, str]:
    return run(["admin", "--db", db, *args])


def _analyst(db: str, name: str) -> Any:
    database = Database(db, create=False)
    with database.read() as connection:
        row = connection.execute(select(analysts).where(analysts.c.name == name)).one()
    database.dispose()
    return row


# -- F5: rotate keeps the expiry ------------------------------------------------------------------------


def test_rotating_a_token_keeps_its_expiry_unless_a_new_one_is_given(tmp_path: Path) -> None:
    db = str(tmp_path / "server.db")
    code, token, err = admin(db, "analyst", "add", "gus", "--expires-in-days", "30")
    assert code == 0, err
    expires = _analyst(db, "gus").expires_at
    assert abs(expires - (time.time() + 30 * 86400)) < 60
    code, rotated, err = admin(db, "analyst", "rotate", "gus")
    assert code == 0 and rotated != token, err
    assert _analyst(db, "gus").expires_at == expires  # kept (it was dropped: the new token never expired)
    code, _, err = admin(db, "analyst", "rotate", "gus", "--expires-in-days", "10")
    assert code == 0 and abs(_analyst(db, "gus").expires_at - (time.time() + 10 * 86400)) < 60, err
    code, _, err = admin(db, "analyst", "rotate", "gus", "--never-expires")
    assert code == 0 and _analyst(db, "gus").expires_at is None, err
    code, _, err = admin(db, "analyst", "rotate", "gus")
    assert code == 0 and _analyst(db, "gus").expires_at is None, err
    code, out, err = admin(db, "analyst", "rotate", "gus", "--never-expires", "--expires-in-days", "3")
    assert code == 2 and out == "" and "not both" in assert_one_error_line(err)


def test_an_expired_token_is_not_rotated_into_one_expired_at_once(tmp_path: Path) -> None:
    from sqlalchemy import update

    db = str(tmp_path / "server.db")
    assert admin(db, "analyst", "add", "gus", "--expires-in-days", "1")[0] == 0
    database = Database(db)
    with database.write() as connection:
        connection.execute(update(analysts).values(expires_at=time.time() - 3600))
    database.dispose()
    before = _analyst(db, "gus")
    code, out, err = admin(db, "analyst", "rotate", "gus")
    assert code == 2 and out == ""
    assert_one_error_line(err, "expired on", "--expires-in-days", "--never-expires")
    assert _analyst(db, "gus").token_id == before.token_id  # nothing changed
    code, token, err = admin(db, "analyst", "rotate", "gus", "--expires-in-days", "7")
    assert code == 0 and token.startswith("dprm_") and _analyst(db, "gus").expires_at > time.time(), err


# -- F8: two first grants at once ----------------------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "server.db")
    return request.getfixturevalue("postgres_url")


def _waiting_for_a_lock(db: Database, seconds: float = 30.0) -> None:
    """Until another session of ``db`` waits for a lock (PostgreSQL); a short pause on SQLite."""
    if db.is_sqlite:
        time.sleep(0.5)
        return
    from sqlalchemy import text

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with db.read() as connection:
            if connection.execute(text("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                       "AND datname = current_database()")).scalar():
                return
        time.sleep(0.02)
    raise AssertionError("the second grant never waited for the first")


def test_two_first_grants_at_once_are_one_budget_set_twice(db_url: str, tmp_path: Path) -> None:
    """The first grant's transaction holds its new row; a second grant of the same budget waits for
    it and then sets its total over it (it found no row to update, inserted, and failed with
    IntegrityError on budgets_pkey). What was spent is kept by a later change."""
    import threading

    from dprm.server import accounts, budget
    from dprm.server.datasets import register_dataset
    from dprm.server.tables import budgets

    db = Database(db_url)
    db.migrate()
    register_dataset(db, "tiny", *tiny_views(tmp_path))
    with db.write() as connection:
        accounts.add_analyst(connection, "bob")
    other = Database(db_url)
    outcome: list[Any] = []

    def second() -> None:
        try:
            with other.write() as connection:
                outcome.append(budget.grant(connection, "bob", "tiny", 2_000_000_000))
        except Exception as error:  # noqa: BLE001 - the fault: recorded, asserted below
            outcome.append(error)

    with db.write() as connection:
        assert budget.grant(connection, "bob", "tiny", 1_000_000_000) == (1_000_000_000, 0)
        thread = threading.Thread(target=second)
        thread.start()
        _waiting_for_a_lock(db)
    thread.join(60)
    assert outcome == [(2_000_000_000, 0)]
    with db.write() as connection:
        assert budget.reserve(connection, 1, 1, 500_000_000, kind="primitive", action="t") is not None
        assert budget.grant(connection, "bob", "tiny", 3_000_000_000) == (3_000_000_000, 500_000_000)
    with db.read() as connection:
        assert connection.execute(select(budgets.c.total_units, budgets.c.spent_units)).all() == [
            (3_000_000_000, 500_000_000)]
    other.dispose()
    db.dispose()


# -- F11: a database that cannot be written ------------------------------------------------------------


def _read_only(url: str) -> str:
    """The URL of the same database, read-only: PostgreSQL's default_transaction_read_only, SQLite's mode=ro."""
    if "://" not in url:
        return f"sqlite:///file:{url}?mode=ro&uri=true"
    return url + "?options=-c%20default_transaction_read_only%3Don"


@pytest.mark.parametrize("command", [
    ("analyst", "add", "gus"),
    ("analyst", "rotate", "alice"),
    ("analyst", "disable", "alice"),
    ("owner", "add", "olga"),
    ("budget", "set", "alice", "tiny", "2"),
    ("dataset", "remove", "tiny"),
])
def test_a_write_on_a_read_only_database_is_one_line(db_url: str, tmp_path: Path, command: tuple[str, ...]) -> None:
    """It was ``internal error (InternalError: cannot execute INSERT in a read-only transaction ...)``,
    exit code 1; now one line as ``dprm serve`` says it, exit code 2, nothing changed; reading works."""
    from server_support import setup_server_db

    setup_server_db(db_url, tmp_path, budgets={"alice": "1"})
    read_only = _read_only(db_url)
    code, out, err = admin(read_only, *command)
    assert code == 2 and out == "", err
    line = assert_one_error_line(err, "the database cannot be written (")
    assert "read-only" in line or "readonly" in line, line
    assert "INSERT" not in line.split("(", 1)[0] and "[SQL" not in line
    code, out, err = admin(read_only, "budget", "list")
    assert code == 0 and "alice" in out and " 1 " in f" {out} ", err
    code, out, err = admin(db_url, "analyst", "list")
    assert code == 0 and "gus" not in out and "yes" not in out


# -- F12: a token that cannot be written is not saved ------------------------------------------------------


def _dprm_to(stdout: Any, *args: str, shell_suffix: str = "") -> Any:
    """``dprm ARGS`` in a process of its own with standard output ``stdout``."""
    import shlex
    import subprocess

    from server_support import DPRM

    if shell_suffix:
        return subprocess.run(["bash", "-c", shlex.join(DPRM + list(args)) + shell_suffix], capture_output=True,
                              text=True, timeout=120)
    return subprocess.run(DPRM + list(args), stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120)


def _closed_pipe() -> int:
    """The write end of a pipe whose reader has gone (``| head -c0`` once head has exited)."""
    import os

    read, write = os.pipe()
    os.close(read)
    return write


@pytest.mark.parametrize("where", ["/dev/full", "closed pipe", "closed"])
def test_a_token_that_cannot_be_written_is_not_saved(tmp_path: Path, where: str) -> None:
    """``analyst add gus > /dev/full`` exited 2 with gus saved and a token nobody had; ``| head -c0``
    exited 141 silently, gus saved. Now the change is rolled back and one line says so; ``rotate``
    keeps the old token, which still works; ``owner add`` the same."""
    import os

    from dprm.server.accounts import authenticate
    from dprm.server.tables import owners
    from server_support import setup_server_db

    db = str(tmp_path / "server.db")
    tokens = setup_server_db(db, tmp_path, budgets={"alice": "1"})
    before = _analyst(db, "alice").token_id
    for args, said in ((("analyst", "add", "gus"), "analyst gus was not added"),
                       (("analyst", "rotate", "alice"), "the token of analyst alice was not changed"),
                       (("owner", "add", "olga"), "owner olga was not added")):
        if where == "/dev/full":
            with open("/dev/full", "w") as full:
                done = _dprm_to(full, "admin", "--db", db, *args)
        elif where == "closed pipe":
            pipe = _closed_pipe()
            try:
                done = _dprm_to(pipe, "admin", "--db", db, *args)
            finally:
                os.close(pipe)
        else:
            done = _dprm_to(None, "admin", "--db", db, *args, shell_suffix=" >&-")
        assert done.returncode == 2, (args, done.stderr)
        line = assert_one_error_line(done.stderr, "the token", said)
        assert "could not be written" in line or "would be lost" in line
    database = Database(db)
    with database.read() as connection:
        assert [r.name for r in connection.execute(select(analysts)).all()] == ["alice"]
        assert connection.execute(select(owners)).all() == []
        assert authenticate(connection, tokens["alice"])[0] is not None  # the old token still works
    database.dispose()
    assert _analyst(db, "alice").token_id == before


def test_a_new_file_is_not_left_behind_when_the_first_token_cannot_be_written(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    with open("/dev/full", "w") as full:
        done = _dprm_to(full, "admin", "--db", str(db), "analyst", "add", "gus")
    assert done.returncode == 2 and "analyst gus was not added" in done.stderr
    assert list(tmp_path.iterdir()) == []


# -- F13: SIGTERM while dataset add creates the database ------------------------------------------------------


def test_sigterm_while_dataset_add_creates_the_file_leaves_nothing(tmp_path: Path) -> None:
    """Ctrl-C removed the new file; SIGTERM (Python's default: the process ends at once) left it
    migrated and empty, with its -wal and -shm. Now SIGTERM is Ctrl-C: nothing left, exit code 130.
    The signal arrives (deterministically) while the files are being registered, the database made."""
    import subprocess
    import sys
    import textwrap

    left, right, types = tiny_views(tmp_path)
    folder = tmp_path / "db"
    folder.mkdir()
    db = folder / "new.db"
    script = textwrap.dedent(f"""
        import os, signal, time
        import dprm.server.datasets as datasets

        def registering(database, *args, **kwargs):
            assert os.path.exists({str(db)!r})  # created and migrated by now
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(60)

        datasets.register_dataset = registering
        from dprm.cli.app import main
        main(["admin", "--db", {str(db)!r}, "dataset", "add", "tiny", {str(left)!r}, {str(right)!r},
              "--types", {str(types)!r}])
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 130, (done.returncode, done.stderr)
    assert done.stderr == "interrupted\n" and done.stdout == ""
    assert list(folder.iterdir()) == []


# -- F6: the same files under a second name ----------------------------------------------------------------------


def test_the_same_files_under_a_second_name_are_refused_unless_asked(tmp_path: Path) -> None:
    """They were registered without a word, and budgets on both names added up on the same rows.
    Now refused in one line naming the registration that holds them (either view order), nothing
    registered; ``--same-files-ok`` registers them, with a note naming the other name."""
    from dprm.errors import ParameterError
    from dprm.server.datasets import register_dataset

    left, right, types = tiny_views(tmp_path)
    db = str(tmp_path / "server.db")
    assert admin(db, "dataset", "add", "tiny", str(left), str(right), "--types", str(types))[0] == 0
    for files in ((left, right), (right, left)):
        code, out, err = admin(db, "dataset", "add", "tiny2", *map(str, files), "--types", str(types))
        assert code == 2 and out == ""
        assert_one_error_line(err, "the same files are registered already as 'tiny'", "add up", "--same-files-ok")
    copy = tmp_path / "copy"
    copy.mkdir()
    copied = [copy / p.name for p in (left, right)]
    for source, target in zip((left, right), copied):
        target.write_bytes(source.read_bytes())  # other paths, the same rows: refused too
    code, _, err = admin(db, "dataset", "add", "tiny2", *map(str, copied), "--types", str(types))
    assert code == 2 and "'tiny'" in err
    database = Database(db)
    with pytest.raises(ParameterError, match="registered already as 'tiny'"):  # the owner's web form's path too
        register_dataset(database, "tiny3", left, right, types)
    database.dispose()
    assert [line.split()[0] for line in admin(db, "dataset", "list")[1].splitlines()[1:]] == ["tiny"]
    code, out, err = admin(db, "dataset", "add", "tiny2", str(left), str(right), "--types", str(types),
                           "--same-files-ok")
    assert code == 0 and out.startswith("registered tiny2"), err
    assert err == ("note: the same files are registered as tiny too: an analyst's budgets on tiny2 and tiny add up "
                   "on these rows; grant with the total in mind\n")
    code, _, err = admin(db, "dataset", "add", "tiny", str(left), str(right), "--types", str(types))
    assert code == 2 and "a dataset named 'tiny' is registered already" in err  # the name's own refusal first


# -- the small ones ---------------------------------------------------------------------------------------------------


def test_the_jobs_of_a_removed_registration_are_labelled_so_and_spaces_around_a_budget_are_read(
        tmp_path: Path) -> None:
    """``dprm admin jobs`` (and the owner's jobs pages) said plain ``tiny`` for a job of a removed
    registration, where ``ledger`` and ``budget list`` say ``tiny (removed)``; ``budget set bob tiny " 1"``
    said "EPSILON must be a finite number"."""
    import re

    from fastapi.testclient import TestClient

    from dprm.server.app import create_app
    from server_support import setup_server_db, submit_small_job

    db = str(tmp_path / "server.db")
    setup_server_db(db, tmp_path, budgets={"alice": "1"})
    database = Database(db)
    job = submit_small_job(database)
    database.dispose()
    assert admin(db, "dataset", "remove", "tiny", "--force")[0] == 0
    again = tmp_path / "again"
    again.mkdir()
    left, right, types = tiny_views(again, rows=150)
    assert admin(db, "dataset", "add", "tiny", str(left), str(right), "--types", str(types))[0] == 0
    code, out, err = admin(db, "jobs")
    assert code == 0 and "tiny (removed)" in out, err
    code, owner, _ = admin(db, "owner", "add", "olga")
    with TestClient(create_app(db, workers=0, background=False)) as client:
        form = re.search(r'name="csrf" value="([^"]+)"', client.get("/ui/signin").text).group(1)
        client.post("/ui/signin", data={"csrf": form, "token": owner.strip()})
        page = client.get("/ui/owner/jobs")
        assert page.status_code == 200 and "tiny (removed)" in page.text
    assert job
    code, out, err = admin(db, "budget", "set", "alice", "tiny", " 1 ")
    assert code == 0 and out == "alice on tiny: total 1, spent 0, remaining 1\n", err


def test_dummy_rows_are_checked_on_dummy_requests_only(tmp_path: Path) -> None:
    """``dummy_rows: 0`` beside ``dummy: false`` (``dprm remote submit ... --dummy-rows 0``) was refused
    (``Input should be greater than or equal to 10``), though a real request reads no dummy row."""
    from fastapi.testclient import TestClient

    from dprm.server.app import create_app
    from server_support import setup_server_db

    db = str(tmp_path / "server.db")
    tokens = setup_server_db(db, tmp_path, budgets={"alice": "1"})
    headers = {"Authorization": f"Bearer {tokens['alice']}"}
    job = {"dataset": "tiny", "algorithm": "alt-expm", "epsilon": "0.5", "parameters": {"init_trials": 1},
           "dry_run": True}
    stats = {"dataset": "tiny", "epsilon": "0.5", "left": {"attr": "a", "eq": True},
             "right": {"attr": "b", "eq": True}, "dry_run": True}
    with TestClient(create_app(db, workers=0, background=False)) as client:
        for path, body in (("/v1/jobs", job), ("/v1/primitives/redescription-statistics", stats)):
            assert client.post(path, json={**body, "dummy_rows": 0}, headers=headers).status_code == 200
            refused = client.post(path, json={**body, "dummy": True, "dummy_rows": 0}, headers=headers)
            assert refused.status_code == 422 and refused.json()["error"]["message"] == (
                "dummy_rows: Input should be between 10 and 20000 with dummy: true")
            wrong = client.post(path, json={**body, "dummy_rows": "0"}, headers=headers)
            assert wrong.status_code == 422 and "dummy_rows" in wrong.json()["error"]["message"]
            assert client.post(path, json={**body, "dummy": True, "dummy_rows": 10}, headers=headers).status_code == 200
