"""Engines for SQLite (WAL) and PostgreSQL, transactions, and the alembic migrations.

One schema (:mod:`dprm.server.tables`), two databases:

* **SQLite** (the default: ``--db server.db`` or ``sqlite:///server.db``) in WAL mode
  with ``synchronous=FULL`` (a committed charge survives a power cut) and a 30 s busy
  timeout. A transaction that writes starts with ``BEGIN IMMEDIATE``: it takes the
  write lock at once, so two writers never deadlock on a read-to-write upgrade (which
  the busy timeout cannot resolve); reads start with a plain ``BEGIN`` and run beside
  the writer (WAL).
* **PostgreSQL** by URL (``postgresql+psycopg://user@host:port/db``), READ COMMITTED.
  The budget's conditional ``UPDATE ... WHERE total - spent >= :e`` is safe there:
  concurrent updates of one row wait for each other and re-check the condition on
  the committed row.

:func:`migrate` brings a database to the newest schema with alembic (the migration
scripts ship inside the package); ``dprm serve`` and ``dprm admin`` call it on start.

A database that cannot be used (a file that is not SQLite, a directory, a server
that does not answer, a URL that does not parse) is a one-line
:class:`~dprm.errors.ParameterError` naming it without its password. A missing SQLite
file is created only when asked (``create=True``, the default of the library; the
command line asks only in the commands that add something: ``dprm admin ... dataset
add``, ``analyst add``, ``owner add``), so that a mistyped path is refused instead of
silently becoming a new, empty database.
"""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

from dprm.errors import ParameterError

__all__ = ["Database", "normalise_url", "shown_url", "migrate", "failure_reason", "MIGRATIONS"]

#: The folder of the alembic environment and its versions.
MIGRATIONS = Path(__file__).with_name("migrations")

T = TypeVar("T")


def normalise_url(url: str) -> str:
    """A SQLAlchemy URL from what a user types: a URL, or a path to a SQLite file.

    Examples
    --------
    >>> normalise_url("postgresql+psycopg://dprm@127.0.0.1:5432/dprm")
    'postgresql+psycopg://dprm@127.0.0.1:5432/dprm'
    >>> normalise_url("/srv/dprm/server.db")
    'sqlite:////srv/dprm/server.db'
    >>> normalise_url("postgres://x@h/db")
    'postgresql+psycopg://x@h/db'
    """
    text = str(url).strip()
    if not text:
        raise ParameterError("--db must name a database (a SQLite file or a URL)")
    if "://" not in text:
        return "sqlite:///" + str(Path(text).expanduser().resolve())
    scheme, rest = text.split("://", 1)
    if scheme in ("postgres", "postgresql"):
        return f"postgresql+psycopg://{rest}"
    if scheme.startswith("sqlite") or scheme.startswith("postgresql+"):
        return text
    raise ParameterError(f"--db: unsupported database {scheme!r}; use a SQLite file or postgresql+psycopg://...")


def shown_url(url: str) -> str:
    """``url`` as messages show it: a SQLite file's path, any other URL without its password.

    Examples
    --------
    >>> shown_url("postgresql+psycopg://dprm:secret@127.0.0.1:5432/dprm")
    'postgresql+psycopg://dprm:***@127.0.0.1:5432/dprm'
    >>> shown_url("postgresql+psycopg://dprm:secret@127.0.0.1:notaport/dprm")
    'postgresql+psycopg://127.0.0.1:notaport/dprm'
    >>> shown_url("sqlite:////srv/dprm/server.db")
    '/srv/dprm/server.db'
    """
    text = str(url)
    scheme, _, rest = text.partition("://")
    if scheme.startswith("sqlite"):
        return rest[1:] if rest.startswith("/") else rest
    try:
        from sqlalchemy.engine import make_url

        return make_url(text).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - too broken to parse: leave every credential out
        return f"{scheme}://{rest.rsplit('@', 1)[-1]}"


def _reason(error: BaseException) -> str:
    """The first line of what the database driver said."""
    text = str(getattr(error, "orig", None) or error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def failure_reason(error: BaseException) -> str:
    """The first line of what the database driver said of ``error`` (for one-line messages).

    Examples
    --------
    >>> from sqlalchemy.exc import InternalError
    >>> failure_reason(InternalError("INSERT ...", {}, Exception("cannot execute INSERT in a read-only transaction\\n")))
    'cannot execute INSERT in a read-only transaction'
    """
    return _reason(error)


def _engine(url: str, **options: Any) -> Any:
    """SQLAlchemy's engine for ``url``; a URL it cannot use is a ParameterError."""
    from sqlalchemy import create_engine
    from sqlalchemy.exc import ArgumentError

    try:
        return create_engine(url, **options)
    except (ArgumentError, ValueError, TypeError, ImportError) as error:
        raise ParameterError(f"--db {shown_url(url)}: not a database URL dprm can use ({_reason(error)})") from None


class Database:
    """The server's database: engines, transactions and the migration.

    Parameters
    ----------
    url : str
        A SQLAlchemy URL or a path to a SQLite file (:func:`normalise_url`).
    pool_size : int
        Connections kept open (PostgreSQL and SQLite files alike).
    create : bool
        Whether a missing SQLite file may be created; if not, it is a ParameterError.
        The folder must exist either way; a directory or an in-memory database is
        always refused (the server's processes could not share it).

    Examples
    --------
    >>> import tempfile, os
    >>> db = Database(os.path.join(tempfile.mkdtemp(), "s.db"))
    >>> db.migrate()
    >>> from sqlalchemy import select, func
    >>> from dprm.server.tables import jobs
    >>> with db.read() as conn:
    ...     conn.execute(select(func.count()).select_from(jobs)).scalar()
    0
    >>> db.dispose()
    """

    def __init__(self, url: str, *, pool_size: int = 20, create: bool = True) -> None:
        from sqlalchemy import event

        self.url = normalise_url(url)
        self.is_sqlite = self.url.startswith("sqlite")
        if self.is_sqlite:
            path = self.url.split(":///", 1)[1] if ":///" in self.url else ""
            if "uri=true" in path:  # sqlite:///file:PATH?mode=ro&uri=true: the file is PATH
                path = path.split("?", 1)[0].removeprefix("file:")
            if not path or path == ":memory:":
                raise ParameterError(f"--db {self.url}: an in-memory SQLite database keeps nothing; give a file")
            parent = Path(path).parent
            if not parent.is_dir():
                raise ParameterError(f"--db: the folder {str(parent)!r} of the SQLite file does not exist")
            if Path(path).is_dir():
                raise ParameterError(f"--db {path}: is a directory, not a SQLite file")
            if not create and not Path(path).exists():
                raise ParameterError(f"--db {path}: no such SQLite file (dprm admin --db FILE dataset add, "
                                     "analyst add or owner add creates one)")
            engine = _engine(self.url, connect_args={"timeout": 30, "check_same_thread": False},
                             pool_size=pool_size, max_overflow=2 * pool_size, pool_timeout=60)

            @event.listens_for(engine, "connect")
            def _pragmas(dbapi_connection: Any, record: Any) -> None:
                dbapi_connection.isolation_level = None  # transactions are begun below
                cursor = dbapi_connection.cursor()
                for pragma in ("journal_mode=WAL", "synchronous=FULL", "foreign_keys=ON", "busy_timeout=30000"):
                    cursor.execute(f"PRAGMA {pragma}")
                cursor.close()

            @event.listens_for(engine, "begin")
            def _begin(connection: Any) -> None:
                write = connection.get_execution_options().get("dprm_write", False)
                connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")
        else:
            # No pre-ping (a round trip per checkout): a connection lost to a database
            # restart fails one request with 503 and is replaced.
            engine = _engine(self.url, pool_size=pool_size, max_overflow=2 * pool_size, pool_timeout=60,
                             pool_recycle=1800)
        self.engine = engine
        self.write_engine = engine.execution_options(dprm_write=True)

    def __repr__(self) -> str:
        return f"Database({shown_url(self.url)!r})"

    @contextmanager
    def read(self) -> Iterator[Any]:
        """A connection in a read transaction (rolled back at the end)."""
        with self.engine.connect() as connection:
            yield connection

    async def aread(self, work: Callable[[Any], T]) -> T:
        """``work(connection)`` in a read transaction, from a coroutine.

        On SQLite it runs at once (a WAL read never waits for the writer and costs less
        than a thread hop); on PostgreSQL in the thread pool, so that the round trips of
        concurrent requests overlap.
        """
        if self.is_sqlite:
            with self.read() as connection:
                return work(connection)
        from starlette.concurrency import run_in_threadpool

        def run() -> T:
            with self.read() as connection:
                return work(connection)

        return await run_in_threadpool(run)

    @contextmanager
    def write(self) -> Iterator[Any]:
        """A connection in a write transaction: committed at the end, rolled back on error."""
        with self.write_engine.begin() as connection:
            yield connection

    def transaction(self, work: Callable[[Any], T], *, attempts: int = 5) -> T:
        """Run ``work(connection)`` in one write transaction, retrying a transient failure.

        A PostgreSQL deadlock or serialization failure, or a SQLite lock that outlived
        the busy timeout, rolls the whole transaction back; it is then run again (up to
        ``attempts`` times), so ``work`` must only touch the database.
        """
        from sqlalchemy.exc import OperationalError

        for attempt in range(attempts):
            try:
                with self.write() as connection:
                    return work(connection)
            except OperationalError as error:
                if attempt + 1 == attempts or not _transient(error):
                    raise
                time.sleep(0.05 * (attempt + 1))
        raise AssertionError("unreachable")

    def probe_write(self) -> str | None:
        """Whether a write commits: None if it does, else the driver's one-line reason.

        The probe rewrites the one row of alembic's ``alembic_version`` table with its
        own value in a write transaction (SQLite: ``BEGIN IMMEDIATE``, a page in the
        WAL; PostgreSQL: a new row version in the WAL): it fails on a read-only file,
        folder, mount, role or transaction, and on a full disk where SQLite or
        PostgreSQL cannot grow their log. ``dprm serve`` refuses to start on a failure;
        ``/health`` answers 503 ``database_unwritable``.
        """
        from sqlalchemy.exc import DBAPIError

        try:
            with self.write() as connection:
                connection.exec_driver_sql("UPDATE alembic_version SET version_num = version_num")
        except DBAPIError as error:
            return _reason(error)
        return None

    def migrate(self) -> None:
        """Bring the database to the newest schema (alembic ``upgrade head``).

        A database that cannot be opened or migrated (not a SQLite file, no server
        answering, a schema newer than this dprm's) is a one-line ParameterError.
        """
        migrate(self)

    def dispose(self) -> None:
        """Close every pooled connection (call before a fork, and at the end)."""
        self.engine.dispose()


def _transient(error: Exception) -> bool:
    text = str(getattr(error, "orig", error)).lower()
    return any(word in text for word in ("database is locked", "deadlock", "could not serialize", "busy"))


def migrate(database: Database) -> None:
    """Run the packaged alembic migrations up to ``head`` on ``database``."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["dprm_engine"] = database.write_engine
    config.attributes["dprm_sqlite"] = database.is_sqlite
    if os.environ.get("DPRM_MIGRATION_SQL"):  # pragma: no cover - offline SQL for owners who want it
        config.set_main_option("sqlalchemy.url", database.url)
    from alembic.util import CommandError
    from sqlalchemy.exc import DBAPIError

    try:
        command.upgrade(config, "head")
    except (DBAPIError, CommandError) as error:
        raise ParameterError(f"--db {shown_url(database.url)}: cannot use the database ({_reason(error)})") from None
