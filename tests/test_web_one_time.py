"""The web forms' one-time keys in the database: one charge across API processes and restarts.

:class:`dprm.server.web.resubmission.OneTimeAnswers` on SQLite and on a throw-away
PostgreSQL cluster: two objects on two engines (as two API processes have), two
spawned processes racing for one key, a first post that fails or dies, retention;
the migration 0002 → 0003 of a database in use; and the statistics form posted to
two app objects on one database, and to a restarted one.
"""

from __future__ import annotations

import multiprocessing
import re
import threading
import time
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterator

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("jinja2")

from fastapi.testclient import TestClient  # noqa: E402
from sqlalchemy import func, select  # noqa: E402

from dprm.server import accounts, budget  # noqa: E402
from dprm.server.app import create_app  # noqa: E402
from dprm.server.database import MIGRATIONS, Database  # noqa: E402
from dprm.server.errors import ApiError  # noqa: E402
from dprm.server.tables import audit, charges, ledger, metadata, one_time_answers, web_sessions  # noqa: E402
from dprm.server.units import epsilon_units  # noqa: E402
from dprm.server.web.resubmission import OneTimeAnswers  # noqa: E402
from server_support import postgres_server, postgres_url, setup_server_db  # noqa: E402,F401

KEY = "0123456789abcdef01234567"


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "server.db")
    return request.getfixturevalue("postgres_url")


@pytest.fixture()
def books(db_url: str, tmp_path: Path) -> Iterator[tuple[str, int]]:
    """A migrated database with ``tiny`` and alice (10 ε): its URL and alice's id."""
    setup_server_db(db_url, tmp_path)
    db = Database(db_url)
    with db.read() as connection:
        alice = accounts.find_analyst(connection, "alice").id
    db.dispose()
    yield db_url, alice


def _charge(url: str, analyst: int, epsilon: str = "0.5") -> int:
    """A primitive's charge, spent with one ledger row (what a first post does); its id."""
    db = Database(url)
    try:
        def work(connection: Any) -> int:
            taken = budget.reserve(connection, analyst, 1, epsilon_units(epsilon), kind="primitive", action="t")
            assert taken is not None
            budget.keep(connection, taken, [budget.Release("stats", "laplace", Fraction(epsilon))])
            return taken

        return db.transaction(work)
    finally:
        db.dispose()


def _books(url: str) -> tuple[int, int]:
    """(charges, ledger rows) of the database."""
    db = Database(url)
    with db.read() as connection:
        counts = (connection.execute(select(func.count()).select_from(charges)).scalar(),
                  connection.execute(select(func.count()).select_from(ledger)).scalar())
    db.dispose()
    return counts


def _rows(url: str) -> list[Any]:
    db = Database(url)
    with db.read() as connection:
        rows = connection.execute(select(one_time_answers).order_by(one_time_answers.c.id)).all()
    db.dispose()
    return rows


# -- OneTimeAnswers ------------------------------------------------------------------------------


def test_a_repeat_on_another_engine_waits_for_the_first_answer_and_is_not_charged(books: tuple[str, int]) -> None:
    url, alice = books
    first_db, second_db = Database(url), Database(url)  # two engines: two API processes' pools
    started, release = threading.Event(), threading.Event()
    runs: list[int] = []
    results: dict[str, Any] = {}

    def slow() -> tuple[int, dict[str, Any]]:
        started.set()
        assert release.wait(30)
        runs.append(_charge(url, alice))
        return 200, {"stats": {"charge": runs[-1], "noisy": [1.5, 2]}}

    def repeat() -> tuple[int, dict[str, Any]]:
        runs.append(-1)
        return 200, {"stats": "charged again"}

    first = threading.Thread(target=lambda: results.update(
        first=OneTimeAnswers(first_db).once(alice, KEY, "d", slow)))
    second = threading.Thread(target=lambda: results.update(
        second=OneTimeAnswers(second_db).once(alice, KEY, "d", repeat)))
    first.start()
    assert started.wait(30)
    second.start()
    time.sleep(0.5)
    assert second.is_alive() and "second" not in results  # it waits for the first's answer
    release.set()
    first.join(30)
    second.join(30)
    answer = (200, {"stats": {"charge": runs[0], "noisy": [1.5, 2]}})
    assert results == {"first": (answer, False), "second": (answer, True)}
    assert runs == [runs[0]] and _books(url) == (1, 1)
    with pytest.raises(ApiError) as refused:  # the key with other values
        OneTimeAnswers(second_db).once(alice, KEY, "other", repeat)
    assert (refused.value.status, refused.value.code) == (409, "idempotency_key_reused")
    with second_db.read() as connection:
        bob = accounts.find_analyst(connection, "bob").id
    assert OneTimeAnswers(second_db).once(bob, KEY, "d", lambda: (200, {}))[1] is False  # bob's key is his own
    first_db.dispose()
    second_db.dispose()


def _race(url: str, analyst: int, barrier: Any) -> tuple[tuple[int, dict[str, Any]], bool]:
    """One spawned process's post of the key (run: a charge, then a pause so the other finds it running)."""
    db = Database(url)

    def run() -> tuple[int, dict[str, Any]]:
        charge = _charge(url, analyst)
        time.sleep(0.3)
        return 200, {"stats": {"charge": charge}}

    try:
        barrier.wait(60)
        return OneTimeAnswers(db).once(analyst, KEY, "d", run)
    finally:
        db.dispose()


def test_two_processes_posting_one_key_at_once_charge_it_once(books: tuple[str, int]) -> None:
    url, alice = books
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager:
        barrier = manager.Barrier(2)
        with context.Pool(2) as pool:
            results = pool.starmap(_race, [(url, alice, barrier)] * 2)
    assert sorted(replayed for _, replayed in results) == [False, True]
    assert results[0][0] == results[1][0] and _books(url) == (1, 1)
    [row] = _rows(url)
    assert row.answer is not None and row.analyst_id == alice and row.one_time_key == KEY


def test_a_first_post_that_fails_frees_its_key_for_the_next(books: tuple[str, int]) -> None:
    url, alice = books
    db, other = Database(url), Database(url)
    answers = OneTimeAnswers(db)
    started, release = threading.Event(), threading.Event()
    results: dict[str, Any] = {}

    def failing() -> tuple[int, dict[str, Any]]:
        started.set()
        assert release.wait(30)
        raise ApiError("unknown_dataset")  # e.g. removed meanwhile: no answer

    def fine() -> tuple[int, dict[str, Any]]:
        return 200, {"stats": {"charge": _charge(url, alice)}}

    def first() -> None:
        try:
            answers.once(alice, KEY, "d", failing)
        except ApiError as error:  # raised again to the page, which answers it
            results["first"] = error.code

    def waiter() -> None:
        results["waiter"] = OneTimeAnswers(other).once(alice, KEY, "d", fine)

    threads = [threading.Thread(target=first), threading.Thread(target=waiter)]
    threads[0].start()
    assert started.wait(30)
    threads[1].start()
    time.sleep(0.3)
    release.set()
    for thread in threads:
        thread.join(30)
    # the waiter found the key free again and ran it: one charge, its answer kept
    (outcome, replayed) = results["waiter"]
    assert results["first"] == "unknown_dataset" and replayed is False and _books(url) == (1, 1)
    assert answers.once(alice, KEY, "d", fine) == (outcome, True) and _books(url) == (1, 1)
    db.dispose()
    other.dispose()


def test_a_key_whose_post_died_is_taken_over_after_stale_after(books: tuple[str, int]) -> None:
    """The first post hangs (its process died, or it is stuck) past ``stale_after``: the next post runs it;
    a late answer of the first does not overwrite the one the repeats get."""
    url, alice = books
    db, other = Database(url), Database(url)
    stuck, release = threading.Event(), threading.Event()
    results: dict[str, Any] = {}

    def hanging() -> tuple[int, dict[str, Any]]:
        stuck.set()
        assert release.wait(30)
        return 200, {"stats": "late"}

    first = threading.Thread(target=lambda: results.update(
        first=OneTimeAnswers(db, stale_after=0.5).once(alice, KEY, "d", hanging)))
    began = time.monotonic()  # before the first post claims the key: its row turns stale 0.5 s after the claim
    first.start()
    assert stuck.wait(30)
    taken = OneTimeAnswers(other, stale_after=0.5).once(alice, KEY, "d", lambda: (200, {"stats": "ran"}))
    assert taken == ((200, {"stats": "ran"}), False) and time.monotonic() - began >= 0.45
    release.set()
    first.join(30)
    assert results["first"] == ((200, {"stats": "late"}), False)  # its own answer, not written
    assert OneTimeAnswers(db).once(alice, KEY, "d", lambda: (200, {})) == ((200, {"stats": "ran"}), True)
    db.dispose()
    other.dispose()


def test_a_repeat_waits_a_bounded_time_then_says_submission_pending(books: tuple[str, int]) -> None:
    url, alice = books
    db = Database(url)
    release = threading.Event()
    claimed = threading.Event()

    def hanging() -> tuple[int, dict[str, Any]]:
        claimed.set()
        assert release.wait(30)
        return 200, {"stats": "first"}

    first = threading.Thread(target=lambda: OneTimeAnswers(db).once(alice, KEY, "d", hanging))
    first.start()
    assert claimed.wait(30)
    began = time.monotonic()
    with pytest.raises(ApiError) as pending:
        OneTimeAnswers(db, wait=0.4).once(alice, KEY, "d", lambda: (200, {"stats": "second"}))
    assert pending.value.code == "submission_pending" and pending.value.status == 409
    assert 0.4 <= time.monotonic() - began < 5
    release.set()
    first.join(30)
    assert OneTimeAnswers(db).once(alice, KEY, "d", lambda: (200, {})) == ((200, {"stats": "first"}), True)
    db.dispose()


def test_answers_are_kept_a_session_lifetime_and_at_most_capacity_per_analyst(books: tuple[str, int]) -> None:
    url, alice = books
    db = Database(url)
    answers = OneTimeAnswers(db, capacity=3)
    keys = [f"{i:024x}" for i in range(5)]
    for key in keys:
        answers.once(alice, key, "d", lambda: (200, {}))
    assert [row.one_time_key for row in _rows(url)] == keys[2:]  # the newest three
    assert answers.once(alice, keys[0], "d", lambda: (201, {}))[1] is False  # forgotten: runs again
    with db.write() as connection:  # a day later
        connection.execute(one_time_answers.update().values(created_at=one_time_answers.c.created_at - 86400))
    answers.once(alice, "f" * 24, "d", lambda: (200, {}))
    assert [row.one_time_key for row in _rows(url)] == ["f" * 24]
    db.dispose()


# -- the migration 0002 → 0003 ----------------------------------------------------------------------


def _alembic(db: Database, command_name: str, revision: str) -> None:
    """``alembic upgrade|downgrade REVISION`` on ``db`` (:func:`dprm.server.database.migrate` goes to head)."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["dprm_engine"] = db.write_engine
    config.attributes["dprm_sqlite"] = db.is_sqlite
    getattr(command, command_name)(config, revision)


def test_a_database_at_0002_upgrades_to_the_one_time_answers(db_url: str) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext
    from sqlalchemy import inspect

    from dprm.server.web.sessions import open_session

    db = Database(db_url)
    _alembic(db, "upgrade", "0002")
    with db.read() as connection:
        assert "one_time_answers" not in inspect(connection).get_table_names()
    with db.write() as connection:
        accounts.add_analyst(connection, "ann")
        ann = accounts.find_analyst(connection, "ann")
    cookie, _ = open_session(db, "analyst", ann.id, ann.token_id)
    db.migrate()  # what dprm serve does on start: 0002 → 0003
    with db.read() as connection:
        assert connection.exec_driver_sql("SELECT version_num FROM alembic_version").scalar() == "0003"
        assert connection.execute(select(func.count()).select_from(web_sessions)).scalar() == 1  # kept
        assert compare_metadata(MigrationContext.configure(connection), metadata) == []
        columns = {c["name"]: c for c in inspect(connection).get_columns("one_time_answers")}
        unique = inspect(connection).get_unique_constraints("one_time_answers")
    assert columns["answer"]["nullable"] and not columns["request_digest"]["nullable"]
    assert [u["column_names"] for u in unique] == [["analyst_id", "one_time_key"]]
    # the upgraded database keeps one-time answers for two engines (two processes)
    other = Database(db_url)
    assert OneTimeAnswers(db).once(ann.id, KEY, "d", lambda: (200, {"stats": 1})) == ((200, {"stats": 1}), False)
    assert OneTimeAnswers(other).once(ann.id, KEY, "d", lambda: (200, {"stats": 2})) == ((200, {"stats": 1}), True)
    other.dispose()
    _alembic(db, "downgrade", "0002")  # and back
    with db.read() as connection:
        assert "one_time_answers" not in inspect(connection).get_table_names()
    db.dispose()


# -- the statistics form on two apps, and after a restart ---------------------------------------------


def _csrf(text: str) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', text)
    assert match, text[:2000]
    return match.group(1)


def _stats_key(text: str) -> str:
    return re.search(r'id="stats-submission" name="submission" value="([0-9a-f]{24})"', text).group(1)


def _table(text: str) -> str:
    return re.search(r"<tbody>.*?</tbody>", text, re.S).group(0)


def test_a_statistics_form_posted_to_two_apps_and_a_restarted_one_is_charged_once(
        db_url: str, tmp_path: Path) -> None:
    """``dprm serve --processes 2`` or a restart: a repeat of the form's key was charged again."""
    tokens = setup_server_db(db_url, tmp_path)
    one, two = create_app(db_url, background=False), create_app(db_url, background=False)
    with TestClient(one, base_url="http://127.0.0.1") as first, TestClient(two, base_url="http://127.0.0.1") as second:
        page = first.get("/ui/signin")
        first.post("/ui/signin", data={"csrf": _csrf(page.text), "token": tokens["alice"]})
        page = first.get("/ui/datasets/tiny")
        second.cookies = first.cookies  # one browser, its posts reaching either process
        form = {"csrf": _csrf(page.text), "left": "[a]", "right": "[b]", "epsilon": "0.5", "action": "run",
                "submission": _stats_key(page.text)}
        answered = first.post("/ui/datasets/tiny/statistics", data=form)
        again = second.post("/ui/datasets/tiny/statistics", data=form)
        assert answered.status_code == again.status_code == 200
        assert _table(answered.text) == _table(again.text)
        assert _books(db_url) == (1, 1)
        # the key with other values (changed after the back button put the key back): a new request
        changed = second.post("/ui/datasets/tiny/statistics", data={**form, "epsilon": "0.25"})
        assert changed.status_code == 200 and _books(db_url) == (2, 2)
        cookies = first.cookies
    restarted = create_app(db_url, background=False)
    with TestClient(restarted, base_url="http://127.0.0.1") as third:
        third.cookies = cookies
        after = third.post("/ui/datasets/tiny/statistics", data=form)
        assert after.status_code == 200 and _table(after.text) == _table(answered.text)
        again = third.post("/ui/datasets/tiny/statistics", data={**form, "epsilon": "0.25"})
        assert again.status_code == 200 and _table(again.text) == _table(changed.text)
    assert _books(db_url) == (2, 2)
    db = Database(db_url)
    with db.read() as connection:
        outcomes = connection.execute(select(audit.c.outcome).where(audit.c.path == "/ui/datasets/tiny/statistics")
                                      .order_by(audit.c.at)).scalars().all()
        spent = budget.remaining(connection, 1, 1)
    db.dispose()
    assert outcomes == ["ok", "idempotent_replay", "ok", "idempotent_replay", "idempotent_replay"]
    assert spent[1] == epsilon_units("0.75")
