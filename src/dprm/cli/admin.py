"""``dprm admin``: the data owner's side of the server, straight on its database.

::

    dprm admin --db URL dataset add NAME LEFT RIGHT --types TYPES [--id-column ID]
    dprm admin --db URL dataset remove NAME [--force] | list
    dprm admin --db URL analyst add NAME          # prints the new token, alone on one line
    dprm admin --db URL analyst disable|enable|rotate NAME | list
    dprm admin --db URL budget set ANALYST DATASET EPSILON | list
    dprm admin --db URL ledger [--analyst NAME] [--dataset NAME]
    dprm admin --db URL audit [--analyst NAME] [--limit N] [--details]
    dprm admin --db URL jobs [--analyst NAME] [--limit N] [--errors]

The database is migrated to the newest schema first. A missing SQLite file is
created only by the commands that add something (``dataset add``, ``analyst add``,
``owner add``), and removed again if that command fails; every other command
refuses it, so a mistyped ``--db`` is an error, not a new empty database. A token is
printed once and never stored: only its salted hash is (docs/server.md).
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Optional

import typer
from typer.core import TyperGroup

from dprm.cli.app import command_app
from dprm.errors import ParameterError


class _AdminCommands(TyperGroup):
    """``dprm admin``'s group: a database that fails a command is one line naming it, exit code 2.

    A database that cannot be written (a read-only PostgreSQL database, role or
    transaction; a read-only SQLite file, folder or mount; a full disk) or that stopped
    answering fails a command with the driver's error, which was an ``internal error``
    with its SQL; it is now ``error: --db URL: the database cannot be written (REASON)``
    (what ``dprm serve`` says at start, by the same write probe) or ``... the database
    failed (REASON)``. Any other error (a bug) is left as it is.
    """

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except Exception as error:  # noqa: BLE001 - only a database's failure is turned into one line
            problem = _database_failure(error)
            if problem is None:
                raise
            raise problem from None


def _database_failure(error: BaseException) -> Optional[ParameterError]:
    """The one-line error for a database that failed a command with ``error``, or None (not the database's)."""
    from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
    from sqlalchemy.exc import TimeoutError as PoolTimeout

    from dprm.server.database import failure_reason, shown_url

    database = _STATE.get("db")
    if database is None or not isinstance(error, (DBAPIError, PoolTimeout)):
        return None
    where = f"--db {shown_url(database.url)}"
    problem = database.probe_write()
    if problem is not None:
        return ParameterError(f"{where}: the database cannot be written ({problem})")
    sqlstate = getattr(getattr(error, "orig", None), "sqlstate", None)
    if sqlstate in ("25006", "42501"):  # read-only transaction; no privilege (on this table)
        return ParameterError(f"{where}: the database cannot be written ({failure_reason(error)})")
    if isinstance(error, (OperationalError, InterfaceError, PoolTimeout)):
        return ParameterError(f"{where}: the database failed ({failure_reason(error)})")
    return None


app = command_app("The data owner's administration of a dprm server's database.", cls=_AdminCommands)
dataset_app = command_app("Register, remove and list datasets.")
analyst_app = command_app("Add, disable, enable, rotate and list analysts.")
budget_app = command_app("Grant or change budgets.")
owner_app = command_app("Data owners of the web pages (/ui): add, rotate, disable, enable, list.")
app.add_typer(dataset_app, name="dataset")
app.add_typer(analyst_app, name="analyst")
app.add_typer(budget_app, name="budget")
app.add_typer(owner_app, name="owner")

_STATE: dict[str, Any] = {}


@app.callback()
def admin(
    db: Optional[str] = typer.Option(None, "--db", metavar="URL", envvar="DPRM_DB", show_default=False,
                                     help="The server's database: a SQLite file (created by dataset add, "
                                          "analyst add and owner add only), or "
                                          "postgresql+psycopg://user@host/db (required; checked when a "
                                          "command runs, so that 'dprm admin COMMAND -h' works without it)."),
) -> None:
    """Administer a dprm server's database (datasets, analysts, budgets, ledger, audit log)."""
    _STATE.clear()  # one invocation's database, never a previous one's (in-process callers)
    _STATE["url"] = db


def _db(*, create: bool = False) -> Any:
    """The database of ``--db``, migrated; a missing SQLite file only with ``create``."""
    from dprm.server.database import Database

    database = _STATE.get("db")
    if database is None:
        if not _STATE.get("url"):
            raise ParameterError("give the server's database: dprm admin --db URL ... (or DPRM_DB=URL)")
        database = Database(_STATE["url"], create=create)
        _STATE["db"] = database
        database.migrate()
    return database


@contextmanager
def _creating() -> Iterator[Any]:
    """The database for a command that adds something: a missing SQLite file is created,
    and removed again if the command fails (nothing is left at a mistyped path).

    SIGTERM ends the command as Ctrl-C does (:func:`~dprm.cli.interrupts.terminate_as_interrupt`):
    the new file and its ``-wal`` and ``-shm`` are removed, ``interrupted``, exit code 130
    (Python's default SIGTERM left them, migrated and empty).
    """
    from dprm.cli.interrupts import terminate_as_interrupt
    from dprm.server.database import normalise_url

    url = normalise_url(_STATE["url"]) if _STATE.get("url") else ""
    path = None
    if url.startswith("sqlite") and ":///" in url:
        named = url.split(":///", 1)[1]
        if "uri=true" in named:  # sqlite:///file:PATH?mode=ro&uri=true: the file is PATH
            named = named.split("?", 1)[0].removeprefix("file:")
        path = Path(named)
    fresh = path is not None and not path.exists()
    with terminate_as_interrupt():
        try:
            yield _db(create=True)
        except BaseException:
            if fresh and path is not None:
                database = _STATE.pop("db", None)
                if database is not None:
                    database.dispose()
                for suffix in ("", "-wal", "-shm", "-journal"):
                    Path(f"{path}{suffix}").unlink(missing_ok=True)
            raise


def _show_token(token: str, done: str) -> None:
    """Print a new token, alone on one line, and flush it, inside the transaction that saves it.

    A token is shown once and never stored: one that cannot be written (``> /dev/full``,
    a closed pipe, a closed standard output, which the command sees as ``/dev/null``)
    must not be saved either, or the analyst or owner would exist with a token nobody
    has (or, after a rotation, be locked out). Called before the commit: the
    ParameterError raised here rolls the change back, and ``done`` (``analyst gus was
    not added``) says so. (A reader that closes the pipe only after this write
    succeeded is beyond what the command can see.)
    """
    import sys

    from dprm.cli.console import StdoutClosed

    if sys.stdout is None or _discarded(sys.stdout):
        raise ParameterError(f"the token would be lost: standard output is closed or /dev/null; {done}")
    try:
        print(token, flush=True)
    except StdoutClosed:
        raise ParameterError(f"the token could not be written: standard output is closed; {done}") from None
    except OSError as error:
        raise ParameterError(f"the token could not be written to standard output ({error.strerror or error}); "
                             f"{done}") from None


def _discarded(stream: Any) -> bool:
    """Whether ``stream`` writes to ``/dev/null`` (a closed standard output is plugged with it)."""
    import io
    import os
    import stat

    try:
        written, null = os.fstat(stream.fileno()), os.stat(os.devnull)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return False
    return stat.S_ISCHR(written.st_mode) and written.st_rdev == null.st_rdev


def _expiry(days: Optional[float]) -> Optional[float]:
    """The expiry time of a token lasting ``days`` (None: never); at most MAX_EXPIRY_DAYS."""
    from dprm.server.accounts import MAX_EXPIRY_DAYS

    if days is None:
        return None
    if not (math.isfinite(days) and 0 < days <= MAX_EXPIRY_DAYS):
        raise ParameterError(f"--expires-in-days must be a number of days above 0 and at most "
                             f"{MAX_EXPIRY_DAYS:,}, not {days}")
    return time.time() + days * 86400.0


def _limit(limit: int) -> int:
    """``--limit`` if it is between 1 and 10,000,000."""
    if not 1 <= limit <= 10**7:
        raise ParameterError(f"--limit must be between 1 and 10,000,000, not {limit}")
    return limit


def _when(seconds: Optional[float]) -> str:
    if seconds is None:
        return "-"
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))
    except (OverflowError, OSError, ValueError):  # a time no calendar holds (stored by an older dprm)
        return f"{seconds:g}"


def _table(header: list[str], rows: list[list[Any]]) -> None:
    """A plain, aligned text table on standard output."""
    cells = [header] + [["" if v is None else str(v) for v in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    for row in cells:
        print("  ".join(value.ljust(width) for value, width in zip(row, widths)).rstrip())


def _analyst_id(connection: Any, name: Optional[str]) -> Optional[int]:
    from dprm.server.accounts import find_analyst

    return None if name is None else int(find_analyst(connection, name).id)


def _dataset_ids(connection: Any, name: str) -> list[int]:
    """Every registration of dataset ``name``: the active one and any removed before (a filter matches all)."""
    from sqlalchemy import select

    from dprm.server.tables import datasets

    ids = [int(r.id) for r in connection.execute(select(datasets.c.id).where(datasets.c.name == name))]
    if not ids:
        raise ParameterError(f"no dataset named {name!r}")
    return ids


def _shown_dataset(name: str, active_name: Optional[str]) -> str:
    """A dataset's name as the owner's tables show it: a removed registration says so."""
    from dprm.server.registrations import shown_name

    return shown_name(name, active_name)


# -- datasets ----------------------------------------------------------------------------------


@dataset_app.command("add")
def dataset_add(
    name: str = typer.Argument(..., metavar="NAME", help="The dataset's name for analysts."),
    left: Path = typer.Argument(..., metavar="LEFT", help="Left view: a CSV or Parquet file."),
    right: Path = typer.Argument(..., metavar="RIGHT", help="Right view: a CSV or Parquet file, rows aligned by id."),
    types: Path = typer.Option(..., "--types", metavar="FILE",
                               help="Types file declaring every column with its public domain (docs/data.md)."),
    id_column: Optional[str] = typer.Option(None, "--id-column", metavar="NAME", help="Id column of both views."),
    duplicate_columns: str = typer.Option("rename", "--duplicate-columns", metavar="rename|error",
                                          help="A column name twice in one file: 'rename' later ones or 'error'."),
    same_files_ok: bool = typer.Option(False, "--same-files-ok",
                                       help="Register files that another dataset holds already, as either view "
                                            "(the same SHA-256): budgets on the two names then add up on the same "
                                            "rows. Without it, refused."),
) -> None:
    """Register a dataset: loaded and checked as `dprm mine` does; the types file must be complete."""
    from sqlalchemy import select

    from dprm.cli.console import note
    from dprm.server.datasets import describe_shared, register_dataset, shared_files
    from dprm.server.tables import datasets

    with _creating() as database:
        schema = register_dataset(database, name, left, right, types, id_column=id_column,
                                  duplicate_names=duplicate_columns, same_files_ok=same_files_ok)
        with database.read() as connection:
            new = connection.execute(select(datasets).where(datasets.c.active_name == name)).one()
            earlier = shared_files(connection, new.left_sha256, new.right_sha256, removed=True)
            also = [s for s in shared_files(connection, new.left_sha256, new.right_sha256) if s.name != name]
    views = schema["views"]
    print(f"registered {name}: {len(views['left'])} left and {len(views['right'])} right attributes "
          f"(public schema: names, types, declared domains)")
    if also:  # (only with --same-files-ok)
        note(f"{describe_shared(also, when='too')} too: an analyst's budgets on {name} and {also[0].name} add up "
             f"on these rows; grant with the total in mind")
    if earlier:
        note(f"{describe_shared(earlier, when='before')}; budgets on {name} start afresh, so what analysts spent "
             f"on these rows there adds to what they spend here (dprm admin ledger --dataset {earlier[0].name})")


@dataset_app.command("remove")
def dataset_remove(
    name: str = typer.Argument(..., metavar="DATASET", help="The dataset."),
    force: bool = typer.Option(False, "--force", help="Remove it even while jobs on it are queued or running: "
                                                      "they end as failed (dataset_removed), a charge kept where "
                                                      "its job had read rows, else refunded."),
) -> None:
    """Unregister a dataset (its ledger rows stay); refused while jobs on it are active, unless --force."""
    from dprm.server.datasets import remove_dataset

    ended = _db().transaction(lambda connection: remove_dataset(connection, name, force=force))
    if not ended["ended"]:
        print(f"removed {name}")
        return
    kept, count = ended["kept"], ended["ended"]
    parts = [("1 charge kept (its job had read rows)" if kept == 1 else f"{kept} charges kept (their jobs had "
              f"read rows)") if kept else "",
             f"{ended['refunded']} refunded" if ended["refunded"] else "",
             f"{ended['free']} free (dummy)" if ended["free"] else ""]
    print(f"removed {name}; {count} active job{'s' if count != 1 else ''} ended as failed (dataset_removed): "
          + ", ".join(part for part in parts if part))


@dataset_app.command("list")
def dataset_list() -> None:
    """The registered datasets, their files and digests."""
    import json

    from dprm.server.datasets import list_datasets

    with _db().read() as connection:
        rows = list_datasets(connection)
    _table(["name", "left", "right", "attributes", "left sha256", "right sha256", "registered"],
           [[r.name, r.left_path, r.right_path,
             "+".join(str(len(v)) for v in json.loads(r.public_schema)["views"].values()),
             r.left_sha256[:12], r.right_sha256[:12], _when(r.created_at)] for r in rows])


# -- analysts ---------------------------------------------------------------------------------------


@analyst_app.command("add")
def analyst_add(
    name: str = typer.Argument(..., metavar="NAME", help="The analyst's name."),
    expires_in_days: Optional[float] = typer.Option(None, "--expires-in-days", metavar="DAYS",
                                                    help="The token stops working after this many days "
                                                         "(at most 36,500; default: never)."),
) -> None:
    """Add an analyst; prints the API token, alone on one line (it is not stored)."""
    from dprm.server.accounts import add_analyst

    expires_at = _expiry(expires_in_days)
    with _creating() as database, database.write() as connection:
        _show_token(add_analyst(connection, name, expires_at=expires_at), f"analyst {name} was not added")


@analyst_app.command("rotate")
def analyst_rotate(
    name: str = typer.Argument(..., metavar="NAME", help="The analyst's name."),
    expires_in_days: Optional[float] = typer.Option(None, "--expires-in-days", metavar="DAYS",
                                                    help="The new token stops working after this many days "
                                                         "(at most 36,500; default: when the old one would)."),
    never_expires: bool = typer.Option(False, "--never-expires", help="The new token never expires."),
) -> None:
    """Replace an analyst's token (the old one stops working); prints the new one, which keeps the old one's expiry
    unless --expires-in-days or --never-expires is given."""
    from dprm.server.accounts import KEEP_EXPIRY, rotate_token

    if never_expires and expires_in_days is not None:
        raise ParameterError("give --expires-in-days or --never-expires, not both")
    expires_at = None if never_expires else KEEP_EXPIRY if expires_in_days is None else _expiry(expires_in_days)
    with _db().write() as connection:
        _show_token(rotate_token(connection, name, expires_at=expires_at),
                    f"the token of analyst {name} was not changed: the old one stays")


def _switch(owner: bool, name: str, disabled: bool) -> None:
    """Disable or enable an analyst or (``owner``) a data owner, and say so."""
    if owner:
        from dprm.server.owners import set_owner_disabled as set_disabled
    else:
        from dprm.server.accounts import set_disabled

    with _db().write() as connection:
        set_disabled(connection, name, disabled)
    print(f"{'disabled' if disabled else 'enabled'}{' owner' if owner else ''} {name}")


def _list_accounts(owner: bool) -> None:
    """The table of the analysts or (``owner``) the data owners; never a token."""
    from sqlalchemy import select

    from dprm.server.tables import analysts, owners

    table = owners if owner else analysts
    with _db().read() as connection:
        rows = connection.execute(select(table).order_by(table.c.name)).all()
    if owner:
        _table(["name", "token id", "disabled", "created"],
               [[r.name, r.token_id, "yes" if r.disabled else "no", _when(r.created_at)] for r in rows])
    else:
        _table(["name", "token id", "disabled", "expires", "created"],
               [[r.name, r.token_id, "yes" if r.disabled else "no", _when(r.expires_at), _when(r.created_at)]
                for r in rows])


@analyst_app.command("disable")
def analyst_disable(name: str = typer.Argument(..., metavar="NAME", help="The analyst's name.")) -> None:
    """Disable an analyst: every request with its token is refused."""
    _switch(False, name, True)


@analyst_app.command("enable")
def analyst_enable(name: str = typer.Argument(..., metavar="NAME", help="The analyst's name.")) -> None:
    """Enable a disabled analyst again."""
    _switch(False, name, False)


@analyst_app.command("list")
def analyst_list() -> None:
    """The analysts (never a token)."""
    _list_accounts(False)


# -- owners (the web pages' owner side) -------------------------------------------------------------


@owner_app.command("add")
def owner_add(name: str = typer.Argument(..., metavar="NAME", help="The owner's name.")) -> None:
    """Add a data owner for the web pages (/ui/owner); prints the token, alone on one line (not stored)."""
    from dprm.server.owners import add_owner

    with _creating() as database, database.write() as connection:
        _show_token(add_owner(connection, name), f"owner {name} was not added")


@owner_app.command("rotate")
def owner_rotate(name: str = typer.Argument(..., metavar="NAME", help="The owner's name.")) -> None:
    """Replace an owner's token (the old one and its sessions stop working); prints the new one."""
    from dprm.server.owners import rotate_owner

    with _db().write() as connection:
        _show_token(rotate_owner(connection, name), f"the token of owner {name} was not changed: the old one stays")


@owner_app.command("disable")
def owner_disable(name: str = typer.Argument(..., metavar="NAME", help="The owner's name.")) -> None:
    """Disable an owner: its token and sessions are refused."""
    _switch(True, name, True)


@owner_app.command("enable")
def owner_enable(name: str = typer.Argument(..., metavar="NAME", help="The owner's name.")) -> None:
    """Enable a disabled owner again."""
    _switch(True, name, False)


@owner_app.command("list")
def owner_list() -> None:
    """The data owners (never a token)."""
    _list_accounts(True)


# -- budgets ----------------------------------------------------------------------------------------


# A negative EPSILON ("-1") is an argument to refuse by value, not an unknown option.
@budget_app.command("set", context_settings={"ignore_unknown_options": True})
def budget_set(
    analyst: str = typer.Argument(..., metavar="ANALYST", help="The analyst."),
    dataset: str = typer.Argument(..., metavar="DATASET", help="The dataset."),
    epsilon: str = typer.Argument(..., metavar="EPSILON", help="The total budget (a multiple of 1e-9); what was spent stays spent."),
) -> None:
    """Grant or change an analyst's total budget on a dataset."""
    from dprm.server import budget
    from dprm.server.units import epsilon_units

    units = epsilon_units(epsilon.strip(), "EPSILON", allow_zero=True)  # " 1" as the owner's grant form reads it
    with _db().write() as connection:
        total, spent = budget.grant(connection, analyst, dataset, units)
    print(budget.grant_notice(analyst, dataset, total, spent))


@budget_app.command("list")
def budget_list(
    analyst: Optional[str] = typer.Option(None, "--analyst", metavar="NAME", help="Only this analyst."),
    dataset: Optional[str] = typer.Option(None, "--dataset", metavar="NAME", help="Only this dataset."),
) -> None:
    """Every budget: total, spent (reserved charges included) and remaining, exact."""
    from sqlalchemy import select

    from dprm.server.tables import analysts, budgets, datasets
    from dprm.server.units import units_text

    with _db().read() as connection:
        query = (select(analysts.c.name.label("analyst"), datasets.c.name.label("dataset"), datasets.c.active_name,
                        budgets.c.total_units, budgets.c.spent_units)
                 .join(analysts, analysts.c.id == budgets.c.analyst_id)
                 .join(datasets, datasets.c.id == budgets.c.dataset_id))
        if analyst is not None:
            query = query.where(budgets.c.analyst_id == _analyst_id(connection, analyst))
        if dataset is not None:
            query = query.where(budgets.c.dataset_id.in_(_dataset_ids(connection, dataset)))
        rows = connection.execute(query.order_by(analysts.c.name, datasets.c.name, datasets.c.id)).all()
    _table(["analyst", "dataset", "total", "spent", "remaining"],
           [[r.analyst, _shown_dataset(r.dataset, r.active_name), units_text(r.total_units), units_text(r.spent_units),
             units_text(max(r.total_units - r.spent_units, 0))] for r in rows])


# -- ledger, audit, jobs -------------------------------------------------------------------------------


@app.command("ledger")
def ledger_command(
    analyst: Optional[str] = typer.Option(None, "--analyst", metavar="NAME", help="Only this analyst."),
    dataset: Optional[str] = typer.Option(None, "--dataset", metavar="NAME", help="Only this dataset."),
    limit: int = typer.Option(1000, "--limit", metavar="N", help="Newest rows shown."),
) -> None:
    """The ledger: one row per release, exact; and the sum per analyst and dataset."""
    from fractions import Fraction

    from sqlalchemy import select

    from dprm.server.tables import analysts, datasets, jobs, ledger
    from dprm.server.units import fraction_text

    _limit(limit)
    with _db().read() as connection:
        query = (select(ledger, analysts.c.name.label("analyst"), datasets.c.name.label("dataset"),
                        datasets.c.active_name, jobs.c.public_id)
                 .join(analysts, analysts.c.id == ledger.c.analyst_id)
                 .join(datasets, datasets.c.id == ledger.c.dataset_id)
                 .outerjoin(jobs, jobs.c.id == ledger.c.job_id))
        if analyst is not None:
            query = query.where(ledger.c.analyst_id == _analyst_id(connection, analyst))
        if dataset is not None:
            query = query.where(ledger.c.dataset_id.in_(_dataset_ids(connection, dataset)))
        rows = connection.execute(query.order_by(ledger.c.id)).all()
    _table(["when", "analyst", "dataset", "charge", "job", "step", "mechanism", "epsilon"],
           [[_when(r.created_at), r.analyst, _shown_dataset(r.dataset, r.active_name), r.charge_id,
             r.public_id or "-", r.step[:60], r.mechanism[:40], r.epsilon_exact] for r in rows[-limit:]])
    totals: dict[tuple[str, str], Fraction] = {}
    for r in rows:
        key = (r.analyst, _shown_dataset(r.dataset, r.active_name))
        totals[key] = totals.get(key, Fraction(0)) + Fraction(r.epsilon_exact)
    for (who, name), total in sorted(totals.items()):
        print(f"total {who} on {name}: {fraction_text(total)}")


@app.command("audit")
def audit_command(
    analyst: Optional[str] = typer.Option(None, "--analyst", metavar="NAME", help="Only this analyst."),
    limit: int = typer.Option(100, "--limit", metavar="N", help="Newest records shown."),
    details: bool = typer.Option(False, "--details", help="Also the owner-only detail of errors."),
) -> None:
    """The audit log: every request with analyst, action, epsilon and outcome."""
    from sqlalchemy import select

    from dprm.server.tables import analysts, audit
    from dprm.server.units import units_text

    _limit(limit)
    with _db().read() as connection:
        query = select(audit, analysts.c.name.label("analyst")).outerjoin(analysts, analysts.c.id == audit.c.analyst_id)
        if analyst is not None:
            query = query.where(audit.c.analyst_id == _analyst_id(connection, analyst))
        rows = connection.execute(query.order_by(audit.c.id.desc()).limit(limit)).all()[::-1]
    header = ["when", "analyst", "action", "dataset", "epsilon", "status", "outcome", "ms"]
    _table(header + (["detail"] if details else []),
           [[_when(r.at), r.analyst or "-", r.action, r.dataset or "-",
             "-" if r.epsilon_units is None else units_text(r.epsilon_units), r.status, r.outcome,
             f"{r.duration_ms:.1f}" if r.duration_ms is not None else "-"]
            + ([" ".join((r.detail or "").split())[:300]] if details else []) for r in rows])


@app.command("jobs")
def jobs_command(
    analyst: Optional[str] = typer.Option(None, "--analyst", metavar="NAME", help="Only this analyst."),
    limit: int = typer.Option(100, "--limit", metavar="N", help="Newest jobs shown."),
    errors: bool = typer.Option(False, "--errors", help="Also the owner-only error of failed jobs."),
) -> None:
    """The jobs of every analyst, with the worker and (--errors) why failed ones failed."""
    from sqlalchemy import select

    from dprm.server.tables import analysts, datasets, jobs
    from dprm.server.units import units_text

    _limit(limit)
    with _db().read() as connection:
        query = (select(jobs, analysts.c.name.label("analyst"), datasets.c.name.label("dataset"),
                        datasets.c.active_name)
                 .join(analysts, analysts.c.id == jobs.c.analyst_id).join(datasets, datasets.c.id == jobs.c.dataset_id))
        if analyst is not None:
            query = query.where(jobs.c.analyst_id == _analyst_id(connection, analyst))
        rows = connection.execute(query.order_by(jobs.c.id.desc()).limit(limit)).all()[::-1]
    header = ["job", "analyst", "dataset", "algorithm", "epsilon", "status", "pid", "error", "created"]
    _table(header + (["owner error"] if errors else []),
           [[r.public_id, r.analyst, _shown_dataset(r.dataset, r.active_name), r.algorithm,
             units_text(r.epsilon_units) + (" dummy" if r.dummy else ""),
             r.status, r.worker_pid or "-", r.error_code or "-", _when(r.created_at)]
            + ([" ".join((r.owner_error or "").split())[-300:]] if errors else []) for r in rows])
