"""Registrations that share a view's file (session 56), each fault pinned here.

The protected unit is a person, a row of both views. Budgets are per (analyst, dataset
name): two active registrations that hold the same file of one view (by its SHA-256,
whatever its path, side or name) let an analyst with a budget on each spend both on
the same people. Since session 55 only the same *pair* of files was refused:

- one view's file registered again (beside another file, on either side; a copy, a
  symbolic or a hard link) was registered without a word;
- two registrations of the same files at once on PostgreSQL could both pass the check
  (each transaction checked before either had inserted).
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sqlalchemy")

from sqlalchemy import select  # noqa: E402

from dprm.server.database import Database  # noqa: E402
from dprm.server.tables import datasets  # noqa: E402
from server_support import postgres_server, postgres_url, tiny_views  # noqa: E402,F401
from test_cli import assert_one_error_line, run  # noqa: E402


def admin(db: str, *args: object) -> tuple[int, str, str]:
    return run(["admin", "--db", db, *map(str, args)])


def _active(db: str) -> list[str]:
    database = Database(db, create=False)
    with database.read() as connection:
        names = connection.execute(select(datasets.c.active_name).where(datasets.c.active_name.is_not(None))
                                   .order_by(datasets.c.active_name)).scalars().all()
    database.dispose()
    return list(names)


def _other(view: Path) -> Path:
    """The view's file with one value changed (other rows: another SHA-256), beside it as ``other-NAME``."""
    lines = view.read_text().splitlines(keepends=True)
    fields = lines[1].rstrip("\n").split(",")
    states = ["CA", "NY", "TX"]
    fields[-1] = states[(states.index(fields[-1]) + 1) % 3] if fields[-1] in states else \
        ("50.5" if fields[-1] != "50.5" else "49.5")
    other = view.parent / f"other-{view.name}"
    other.write_text(lines[0] + ",".join(fields) + "\n" + "".join(lines[2:]))
    return other


# -- one view's file under a second name ------------------------------------------------------------------------


def test_a_file_of_one_view_under_a_second_name_is_refused_unless_asked(tmp_path: Path) -> None:
    """A = (left, right); B holding left or right (on either side, or a copy, a symbolic or a hard
    link of it, under another path and name) beside a file of other rows was registered: an analyst
    with a budget on A and on B spent both on the same people. Now refused in one line naming A and
    the view, exit code 2, nothing registered; ``--same-files-ok`` registers it with a note."""
    left, right, types = tiny_views(tmp_path)
    other_left, other_right = _other(left), _other(right)
    db = str(tmp_path / "server.db")
    assert admin(db, "dataset", "add", "tiny", left, right, "--types", types)[0] == 0
    links = tmp_path / "links"
    links.mkdir()
    copy = links / "copied.csv"
    copy.write_bytes(left.read_bytes())
    symlink = links / "symlink.csv"
    symlink.symlink_to(right)
    hardlink = links / "hardlink.csv"
    os.link(left, hardlink)
    cases = [
        ((left, other_right), "the left file is registered already as the left view of 'tiny'"),
        ((other_left, right), "the right file is registered already as the right view of 'tiny'"),
        ((right, left), "the same files are registered already as 'tiny'"),  # (since session 55)
        ((other_right, left), "the right file is registered already as the left view of 'tiny'"),
        ((right, other_left), "the left file is registered already as the right view of 'tiny'"),
        ((copy, other_right), "the left file is registered already as the left view of 'tiny'"),
        ((other_left, symlink), "the right file is registered already as the right view of 'tiny'"),
        ((hardlink, other_right), "the left file is registered already as the left view of 'tiny'"),
    ]
    for files, says in cases:
        code, out, err = admin(db, "dataset", "add", "tiny2", *files, "--types", types)
        assert code == 2 and out == "", (files, err)
        assert_one_error_line(err, says, "the same rows", "add up", "grant more on 'tiny' instead",
                              "dprm admin dataset add tiny2 ... --same-files-ok")
        assert _active(db) == ["tiny"]
    code, out, err = admin(db, "dataset", "add", "tiny2", copy, other_right, "--types", types, "--same-files-ok")
    assert code == 0 and out.startswith("registered tiny2"), err
    assert err == ("note: the left file is registered as the left view of tiny too: an analyst's budgets on "
                   "tiny2 and tiny add up on these rows; grant with the total in mind\n")
    code, out, err = admin(db, "dataset", "add", "tiny3", other_right, left, "--types", types)  # held by both
    assert code == 2 and out == ""
    assert_one_error_line(err, "the left file is registered already as the right view of 'tiny2'; the right file "
                               "as the left view of 'tiny' and the left view of 'tiny2'",
                          "grant more on 'tiny' instead")
    code, out, err = admin(db, "dataset", "add", "tiny3", other_left, _other(other_right), "--types", types)
    assert code == 0 and err == "", err  # files of other rows: no refusal, no note
    assert _active(db) == ["tiny", "tiny2", "tiny3"]


def test_a_file_of_a_removed_registration_is_noted(tmp_path: Path) -> None:
    """A view's file that a removed registration held is registered (budgets start afresh), with a
    note that what analysts spent on these rows there adds to what they spend here (it said nothing
    unless both files were the same, in the same order)."""
    left, right, types = tiny_views(tmp_path)
    db = str(tmp_path / "server.db")
    assert admin(db, "dataset", "add", "tiny", left, right, "--types", types)[0] == 0
    assert admin(db, "dataset", "remove", "tiny")[0] == 0
    code, out, err = admin(db, "dataset", "add", "again", _other(right), left, "--types", types)
    assert code == 0 and out.startswith("registered again"), err
    assert err == ("note: the right file was registered before as the left view of tiny (removed); budgets on again "
                   "start afresh, so what analysts spent on these rows there adds to what they spend here "
                   "(dprm admin ledger --dataset tiny)\n")


def test_the_owner_s_web_form_refuses_a_file_of_one_view_too(tmp_path: Path) -> None:
    """The web form registers through :func:`register_dataset` without ``same_files_ok``."""
    from dprm.errors import ParameterError
    from dprm.server.datasets import register_dataset

    left, right, types = tiny_views(tmp_path)
    other = _other(left)
    database = Database(str(tmp_path / "server.db"))
    database.migrate()
    register_dataset(database, "tiny", left, right, types)
    with pytest.raises(ParameterError, match="the right file is registered already as the right view of 'tiny'"):
        register_dataset(database, "tiny2", other, right, types)
    register_dataset(database, "tiny2", other, right, types, same_files_ok=True)
    database.dispose()
    assert _active(str(tmp_path / "server.db")) == ["tiny", "tiny2"]


# -- two registrations at once --------------------------------------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "server.db")
    return request.getfixturevalue("postgres_url")


def _another_waits_for_a_lock(monitor: Database) -> bool:
    from sqlalchemy import text

    with monitor.read() as connection:
        return bool(connection.execute(text(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
            "AND datname = current_database()")).scalar())


@pytest.mark.parametrize("second_files", ["same", "one view", "same name"])
def test_two_registrations_of_the_same_rows_at_once_are_one(db_url: str, tmp_path: Path, monkeypatch: Any,
                                                             second_files: str) -> None:
    """Two ``dataset add`` of the same rows under two names at once: each checked in its own
    transaction, and on PostgreSQL (read committed) neither saw the other's row before inserting its
    own, so both were registered. A hook holds each registration just before its insert until the
    other has reached its own insert too (the fault: both there) or waits for a lock (PostgreSQL) or
    half a second has passed (SQLite: ``BEGIN IMMEDIATE`` waits unseen). Exactly one is registered
    now; the other is refused naming it, and on PostgreSQL it waited for the first. (Two at once
    under one name ended on PostgreSQL in ``IntegrityError`` on the unique name, an internal error.)"""
    import dprm.server.datasets as module
    from dprm.errors import ParameterError

    left, right, types = tiny_views(tmp_path)
    second = (left, right) if second_files == "same" else (_other(left), right)
    db = Database(db_url)
    db.migrate()
    monitor = Database(db_url)
    real_insert = module.insert
    arrived: list[str] = []
    waited: list[bool] = []
    lock = threading.Lock()

    def held_insert(*args: Any, **kwargs: Any) -> Any:
        if args and args[0] is datasets:
            with lock:
                arrived.append(threading.current_thread().name)
            deadline = time.monotonic() + (0.5 if db.is_sqlite else 30.0)
            while time.monotonic() < deadline:
                if len(arrived) >= 2:
                    break
                if not db.is_sqlite and _another_waits_for_a_lock(monitor):
                    waited.append(True)
                    break
                time.sleep(0.02)
        return real_insert(*args, **kwargs)

    monkeypatch.setattr(module, "insert", held_insert)
    outcome: dict[str, Any] = {}

    def register(name: str, files: tuple[Path, Path]) -> None:
        try:
            outcome[threading.current_thread().name] = module.register_dataset(db, name, *files, types)
        except Exception as error:  # noqa: BLE001 - recorded, asserted below
            outcome[threading.current_thread().name] = error

    second_name = "one" if second_files == "same name" else "two"
    if second_files == "same name":
        second = (_other(left), _other(right))
    threads = [threading.Thread(target=register, args=("one", (left, right)), name="one"),
               threading.Thread(target=register, args=(second_name, second), name="two")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    monitor.dispose()
    with db.read() as connection:
        active = connection.execute(select(datasets.c.active_name).where(datasets.c.active_name.is_not(None))
                                    ).scalars().all()
    db.dispose()
    assert len(active) == 1, (active, outcome)  # the fault: both were registered
    assert len(arrived) == 1, (arrived, outcome)  # the refused one never reached its insert
    refused = outcome["two" if arrived == ["one"] else "one"]
    assert isinstance(refused, ParameterError), refused
    says = {"same": f"the same files are registered already as {active[0]!r}",
            "one view": f"the right file is registered already as the right view of {active[0]!r}",
            "same name": "a dataset named 'one' is registered already"}[second_files]
    assert says in str(refused), refused
    if not db.is_sqlite:
        assert waited == [True]  # it was at once, not one after the other


#: ``dprm admin ARGS...`` with a hook that holds the registration just before its insert until the
#: other command's registration has reached its insert too or the test saw a session wait for a lock.
HELD_ADMIN = """
import os, sys, time
import dprm.server.datasets as module
from dprm.server.tables import datasets

folder, me, other = sys.argv[1:4]
real_insert = module.insert

def held_insert(*args, **kwargs):
    if args and args[0] is datasets:
        open(os.path.join(folder, "arrived-" + me), "w").close()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(
                os.path.exists(os.path.join(folder, f)) for f in ("arrived-" + other, "a-session-waits")):
            time.sleep(0.02)
    return real_insert(*args, **kwargs)

module.insert = held_insert
from dprm.cli import main
main(sys.argv[4:])
"""


def test_two_admin_commands_registering_the_same_rows_at_once_on_postgresql(postgres_url: str,
                                                                           tmp_path: Path) -> None:
    """The same race through ``dprm admin dataset add``, two processes: exactly one registers, the
    other is one line naming it, exit code 2 (both exited 0 before)."""
    import subprocess
    import sys

    left, right, types = tiny_views(tmp_path)
    db = Database(postgres_url)
    db.migrate()
    signals = tmp_path / "signals"
    signals.mkdir()
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    commands = {me: subprocess.Popen(
        [sys.executable, "-c", HELD_ADMIN, str(signals), me, other, "admin", "--db", postgres_url, "dataset", "add",
         me, str(left), str(right), "--types", str(types)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env) for me, other in (("one", "two"), ("two", "one"))}
    deadline = time.monotonic() + 120
    while any(p.poll() is None for p in commands.values()) and time.monotonic() < deadline:
        if not (signals / "a-session-waits").exists() and _another_waits_for_a_lock(db):
            (signals / "a-session-waits").touch()
        time.sleep(0.02)
    done = {me: (p.wait(10), *p.communicate()) for me, p in commands.items()}
    db.dispose()
    codes = sorted(code for code, _, _ in done.values())
    assert codes == [0, 2], done  # the fault: [0, 0]
    registered = next(me for me, (code, _, _) in done.items() if code == 0)
    refused = "two" if registered == "one" else "one"
    assert done[registered][1].startswith(f"registered {registered}:") and done[registered][2] == "", done
    assert done[refused][1] == ""
    assert_one_error_line(done[refused][2], f"the same files are registered already as {registered!r}",
                          "--same-files-ok")
    assert sorted(p.name for p in signals.iterdir()) == sorted([f"arrived-{registered}", "a-session-waits"])
    assert _active(postgres_url) == [registered]
