"""The server's database layer: migrations, exact budgets, charges that never overspend.

The concurrency tests fire 200 submissions that together ask for 3× an analyst's
budget, through the HTTP API (a served app, jobs left queued) and straight at the
database from several processes, on SQLite and on a throw-away PostgreSQL cluster.
"""

from __future__ import annotations

import asyncio
import multiprocessing
from fractions import Fraction
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy")
pytest.importorskip("fastapi")

from sqlalchemy import func, select  # noqa: E402

from dprm.server import accounts, budget  # noqa: E402
from dprm.server.database import Database  # noqa: E402
from dprm.server.tables import budgets, charges, ledger, metadata  # noqa: E402
from dprm.server.units import epsilon_units, units_fraction  # noqa: E402
from server_support import postgres_server, postgres_url, serve_in_thread, setup_server_db  # noqa: E402,F401

DATABASES = ["sqlite", "postgresql"]


@pytest.fixture(params=DATABASES)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "server.db")
    return request.getfixturevalue("postgres_url")


def _schema_differences(url: str) -> list:
    from alembic.migration import MigrationContext
    from alembic.autogenerate import compare_metadata

    db = Database(url)
    db.migrate()
    db.migrate()  # a second start changes nothing
    with db.engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), metadata)
    db.dispose()
    return differences


def test_migrations_create_exactly_the_tables(db_url: str) -> None:
    assert _schema_differences(db_url) == []


def test_sqlite_runs_in_wal_mode(tmp_path: Path) -> None:
    db = Database(str(tmp_path / "s.db"))
    db.migrate()
    with db.read() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
    db.dispose()


def _one_analyst(db: Database, total: str) -> tuple[int, int]:
    from dprm.server.tables import datasets

    with db.write() as connection:
        accounts.add_analyst(connection, "alice")
        who = accounts.find_analyst(connection, "alice")
        connection.execute(datasets.insert().values(
            name="d", active_name="d", left_path="/l", right_path="/r", left_sha256="0" * 64, right_sha256="0" * 64,
            types_path="/t", types_sha256="0" * 64, types_json="{}", id_column=None, load_options="{}",
            public_schema="{}", created_at=0.0))
        budget.set_budget(connection, who.id, 1, epsilon_units(total))
    return who.id, 1


def test_reserve_keep_refund_are_exact(db_url: str) -> None:
    db = Database(db_url)
    db.migrate()
    analyst, dataset = _one_analyst(db, "0.3")
    with db.write() as c:
        first = budget.reserve(c, analyst, dataset, epsilon_units(0.1), kind="job", action="x")
        second = budget.reserve(c, analyst, dataset, epsilon_units(0.2), kind="job", action="x")
        assert budget.reserve(c, analyst, dataset, 1, kind="job", action="x") is None  # 1e-9 more: refused
    with db.write() as c:
        thirds = [budget.Release(f"s{i}", "m", Fraction(1, 30)) for i in range(3)]
        assert budget.keep(c, first, thirds)
        assert not budget.keep(c, first, [])  # settles once
        assert budget.refund(c, second)
        assert not budget.refund(c, second)
        assert budget.remaining(c, analyst, dataset) == (epsilon_units("0.3"), epsilon_units("0.1"))
        assert budget.ledger_sum(c, first) == Fraction(1, 10)  # three exact thirds of 0.1
        assert [r.epsilon_exact for r in c.execute(select(ledger).order_by(ledger.c.id))] == ["1/30"] * 3
    with db.write() as c:  # a charge the algorithm did not spend in full gets a rest row
        third = budget.reserve(c, analyst, dataset, epsilon_units(0.2), kind="job", action="x")
        assert budget.keep(c, third, [budget.Release("only", "m", Fraction(1, 7))])
        assert budget.ledger_sum(c, third) == Fraction(1, 5)
        budget.set_budget(c, analyst, dataset, epsilon_units(1))
        small = budget.reserve(c, analyst, dataset, 1, kind="job", action="x")
        with pytest.raises(ValueError):  # releases beyond the charge: a bug, never written
            budget.keep(c, small, [budget.Release("too much", "m", Fraction(1))])
    db.dispose()


def test_orphaned_primitive_charges_are_kept(db_url: str) -> None:
    db = Database(db_url)
    db.migrate()
    analyst, dataset = _one_analyst(db, "1")
    with db.write() as c:
        charge = budget.reserve(c, analyst, dataset, epsilon_units(0.25), kind="primitive", action="p")
    assert db.transaction(lambda c: budget.keep_orphans(c)) == 1
    with db.read() as c:
        assert c.execute(select(charges.c.status).where(charges.c.id == charge)).scalar() == "spent"
        assert budget.ledger_sum(c, charge) == Fraction(1, 4)
        assert budget.remaining(c, analyst, dataset)[1] == epsilon_units(0.25)
    db.dispose()


def test_a_restarted_server_keeps_the_orphan_charges_at_once(db_url: str) -> None:
    """A primitive's charge reserved by a server that died is kept when the next one starts, not 600 s later."""
    from dprm.server.supervisor import Supervisor

    db = Database(db_url)
    db.migrate()
    analyst, dataset = _one_analyst(db, "1")
    with db.write() as c:
        charge = budget.reserve(c, analyst, dataset, epsilon_units(0.25), kind="primitive", action="p")
    Supervisor(db, workers=0, warm=False).recover()
    with db.read() as c:
        assert c.execute(select(charges.c.status).where(charges.c.id == charge)).scalar() == "spent"
        spent = c.execute(select(budgets.c.spent_units)).scalar_one()
        assert Fraction(spent, 10**9) == budget.ledger_sum(c, charge) == Fraction(1, 4)
    db.dispose()


def test_an_audit_record_with_a_nul_byte_loses_nothing(db_url: str) -> None:
    """A path with NUL (PostgreSQL's text refuses it) is written escaped, and a bad record only loses itself."""
    from dprm.server.audit import AuditLog
    from dprm.server.tables import audit

    db = Database(db_url)
    db.migrate()
    log = AuditLog(db)
    for i in range(10):
        log.record(action="request", method="GET", path=f"/v1/x{i}\x00" if i % 3 == 0 else f"/v1/ok{i}", status=404)
    log.record(action="request", method="GET", path="/v1/overflow", status=10**30)  # fails alone
    log.flush()
    with db.read() as c:
        paths = sorted(c.execute(select(audit.c.path)).scalars())
    assert len(paths) == 10
    assert "/v1/x0\\x00" in paths and not any("\x00" in p for p in paths)
    db.dispose()


def _hammer(args: tuple[str, int, int, int, int]) -> int:
    """One process: ``count`` reservations of ``units``, each its own transaction."""
    url, analyst, dataset, units, count = args
    db = Database(url, pool_size=2)
    accepted = 0
    for _ in range(count):
        accepted += db.transaction(
            lambda c: budget.reserve(c, analyst, dataset, units, kind="job", action="hammer")) is not None
    db.dispose()
    return accepted


def _assert_budget_honest(db: Database, analyst: int, dataset: int, total: int, units: int, accepted: int) -> None:
    with db.read() as c:
        spent = c.execute(select(budgets.c.spent_units)).scalar_one()
        charged = c.execute(select(func.coalesce(func.sum(charges.c.epsilon_units), 0))
                            .where(charges.c.status != "refunded")).scalar_one()
    assert spent == charged == accepted * units
    assert spent <= total
    assert accepted == total // units  # every affordable request got through, none more


def test_concurrent_reservations_from_processes_never_overspend(db_url: str) -> None:
    db = Database(db_url)
    db.migrate()
    analyst, dataset = _one_analyst(db, "1")
    total, units = epsilon_units(1), epsilon_units("0.015")  # 200 × 0.015 = 3 × the budget
    context = multiprocessing.get_context("spawn")
    with context.Pool(4) as pool:
        accepted = sum(pool.map(_hammer, [(db.url, analyst, dataset, units, 50)] * 4))
    _assert_budget_honest(db, analyst, dataset, total, units, accepted)
    db.dispose()


async def _submit_all(url: str, token: str, n: int, epsilon: str) -> list[int]:
    import httpx

    limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits,
                                 headers={"Authorization": f"Bearer {token}"}) as client:
        async def one(i: int) -> int:
            response = await client.post("/v1/jobs", json={
                "dataset": "tiny", "algorithm": "alt-expm", "epsilon": epsilon, "parameters": {"init_trials": 1}})
            return response.status_code

        return list(await asyncio.gather(*(one(i) for i in range(n))))


def test_200_concurrent_submissions_never_overspend(db_url: str, tmp_path: Path) -> None:
    tokens = setup_server_db(db_url, tmp_path, budgets={"alice": "1"})
    with serve_in_thread(db_url, workers=0, rate=1000.0, burst=1000, max_active_jobs=1000) as url:
        statuses = asyncio.run(_submit_all(url, tokens["alice"], 200, "0.015"))
    assert sorted(set(statuses)) == [201, 403]
    assert statuses.count(201) == 66  # 66 × 0.015 = 0.99 ≤ 1 < 67 × 0.015
    db = Database(db_url)
    _assert_budget_honest(db, 1, 1, epsilon_units(1), epsilon_units("0.015"), statuses.count(201))
    with db.read() as c:
        from dprm.server.tables import jobs

        assert c.execute(select(func.count()).select_from(jobs)).scalar() == 66
    db.dispose()


def test_concurrent_submissions_never_exceed_the_active_jobs_cap(db_url: str, tmp_path: Path) -> None:
    """40 free dummy submissions at once against a cap of 7: exactly 7 are queued."""
    import httpx

    tokens = setup_server_db(db_url, tmp_path, budgets={"alice": "1"})
    with serve_in_thread(db_url, workers=0, rate=1000.0, burst=1000, max_active_jobs=7) as url:
        async def submit_all() -> list[int]:
            async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {tokens['alice']}"},
                                         timeout=60) as client:
                async def one() -> int:
                    response = await client.post("/v1/jobs", json={
                        "dataset": "tiny", "algorithm": "alt-expm", "epsilon": "0.5", "dummy": True,
                        "dummy_rows": 20, "parameters": {"init_trials": 1}})
                    return response.status_code

                return list(await asyncio.gather(*(one() for _ in range(40))))

        statuses = asyncio.run(submit_all())
    assert (statuses.count(201), statuses.count(429)) == (7, 33)
    db = Database(db_url)
    with db.read() as c:
        from dprm.server.tables import jobs

        assert c.execute(select(func.count()).select_from(jobs)).scalar() == 7
    db.dispose()


def test_units_are_exact_and_bounded() -> None:
    from dprm.errors import ParameterError

    assert epsilon_units(0.1) + epsilon_units(0.2) == epsilon_units(0.3)
    assert units_fraction(epsilon_units("0.000000001")) == Fraction(1, 10**9)
    for bad in (0, -1, 1e-10, "1/3", float("nan"), float("inf"), True, "x", 10**7, "1" * 80):
        with pytest.raises(ParameterError):
            epsilon_units(bad)


def test_jobs_and_primitives_on_each_database(db_url: str, tmp_path: Path) -> None:
    """The whole path on SQLite and PostgreSQL: a primitive, a job in a worker, a refund, the ledger."""
    from dprm.client import Client

    tokens = setup_server_db(db_url, tmp_path, budgets={"alice": "2"})
    with serve_in_thread(db_url, workers=1) as url, Client(url, tokens["alice"]) as client:
        stats = client.redescription_statistics("tiny", {"attr": "a", "eq": True}, {"attr": "b", "eq": True}, "0.25")
        assert stats["budget"]["exact"]["spent"] == "0.25"
        job = client.submit("tiny", "alt-expm", "0.5", {"init_trials": 1, "depth": 2})
        document = client.wait(job["id"], timeout=120)
        assert document["privacy"]["private"] is True
        queued = client.submit("tiny", "alt-expm", "1", {"init_trials": 1}, dummy=False)
        client.cancel(queued["id"])  # may have started: refunded only if no row was read
        spent = Fraction(client.budget("tiny")[0]["exact"]["spent"])
        rows = client.ledger("tiny")
        ledger_total = sum(Fraction(row["epsilon_exact"]) for row in rows)
    assert spent == ledger_total  # every charge not refunded is in the ledger, exactly
    assert spent in (Fraction(3, 4), Fraction(7, 4))
    # charges named by their place in alice's own list (the refunded third has no row)
    assert {row["charge"] for row in rows} == ({1, 2} if spent == Fraction(3, 4) else {1, 2, 3})


def test_one_analysts_jobs_and_primitives_at_once_never_deadlock(db_url: str, tmp_path: Path) -> None:
    """12 submissions and 48 primitives of one analyst at the same time: all answered, books exact.

    On PostgreSQL a submission locked the analyst's row ``FOR UPDATE`` and then the
    budget row, while a primitive updated the budget row and then inserted a charge,
    whose foreign key takes ``FOR KEY SHARE`` on the analyst's row: a deadlock, 503
    after five retries. The submission's lock is ``FOR NO KEY UPDATE`` now.
    """
    import httpx

    tokens = setup_server_db(db_url, tmp_path, budgets={"alice": "10"})
    with serve_in_thread(db_url, workers=0, rate=1000.0, burst=1000, max_active_jobs=1000) as url:
        async def race() -> list[int]:
            limits = httpx.Limits(max_connections=60, max_keepalive_connections=60)
            async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits,
                                         headers={"Authorization": f"Bearer {tokens['alice']}"}) as client:
                async def submission() -> int:
                    response = await client.post("/v1/jobs", json={
                        "dataset": "tiny", "algorithm": "alt-expm", "epsilon": "0.1",
                        "parameters": {"init_trials": 1}})
                    return response.status_code

                async def primitive() -> int:
                    response = await client.post("/v1/primitives/redescription-statistics", json={
                        "dataset": "tiny", "left": {"attr": "a", "eq": True}, "right": {"attr": "b", "eq": True},
                        "epsilon": "0.05"})
                    return response.status_code

                calls = [submission() for _ in range(12)] + [primitive() for _ in range(48)]
                return list(await asyncio.gather(*calls))

        statuses = asyncio.run(race())
    assert statuses[:12] == [201] * 12 and statuses[12:] == [200] * 48, statuses
    db = Database(db_url)
    with db.read() as c:
        spent = c.execute(select(budgets.c.spent_units)).scalar_one()
        charged = c.execute(select(func.sum(charges.c.epsilon_units))).scalar_one()
        kept = c.execute(select(func.count()).select_from(charges).where(charges.c.status == "spent")).scalar_one()
        in_ledger = c.execute(select(func.count(func.distinct(ledger.c.charge_id)))).scalar_one()
    assert spent == charged == 12 * epsilon_units("0.1") + 48 * epsilon_units("0.05")
    assert kept == in_ledger == 48  # every primitive settled with its ledger rows; the jobs wait, reserved
    db.dispose()
