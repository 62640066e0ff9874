"""The server's database schema: one set of tables for SQLite and PostgreSQL.

SQLAlchemy Core tables (no ORM: every statement that touches a budget is written
out, so that it can be read and checked). The alembic migrations in
``dprm/server/migrations`` create exactly these tables; a test compares them.

Exactness: budgets, charges and ledger rows hold ε as integers of 10⁻⁹
(:mod:`dprm.server.units`, ``BIGINT``); a release inside a job whose cost is not a
whole number of units (``ε/3``) keeps its exact rational as text beside the units.
Times are seconds since the epoch (``float``): they order events and measure
heartbeats, nothing is paid with them.

Tables
------
``datasets``
    A registered two-view dataset: files, their SHA-256, the types file (content and
    hash), the id column, the loading options and the public schema. ``active_name``
    is the name while the dataset is registered and NULL after removal (the row stays
    for the ledger), so a name can be registered again.
``analysts``
    Name, token id, salted token hash, disabled flag, optional expiry.
``budgets``
    Per (analyst, dataset): ``total_units`` granted, ``spent_units`` charged.
``charges``
    One reservation per paid request (job or primitive): ``reserved`` when taken from
    the budget, then ``spent`` (kept: data was or may have been touched) or
    ``refunded`` (no data was touched).
``jobs``
    The queue: status, parameters, progress, worker pid and heartbeat, result.
``ledger``
    One row per release of a spent charge (exact); their ε add up to the charge.
``audit``
    Every request: analyst, action, dataset, ε, HTTP status, outcome code; ``detail``
    is for the owner only.
``owners``
    Data owners who may use the web pages' owner side (``dprm admin owner add``):
    name, token id, salted token hash, disabled flag (tokens as analysts' ones).
``web_sessions``
    Signed-in browsers of the web pages (:mod:`dprm.server.web.sessions`): the SHA-256
    of the session cookie (never the cookie), who (``analyst`` or ``owner`` and its
    id), the token id it was opened with (a rotated token ends the session), the
    form token against cross-site requests, creation and expiry.
``one_time_answers``
    The answers of the web forms' one-time keys (:mod:`dprm.server.web.resubmission`):
    per (analyst, key) the digest of what the form asked, a random ``claim`` of the
    post that runs it, the answer (JSON: ``{"status": ..., "body": ...}``; NULL while
    that post runs) and when it was claimed. The unique (analyst, key) decides which
    of several processes' posts runs; rows older than a session's lifetime, and an
    analyst's answered rows beyond the newest 4096, are deleted.
"""

from __future__ import annotations

from sqlalchemy import (BigInteger, Boolean, CheckConstraint, Column, Float, ForeignKey, Index, Integer,
                        MetaData, String, Table, Text, UniqueConstraint)

__all__ = ["metadata", "datasets", "analysts", "budgets", "charges", "jobs", "ledger", "audit",
           "owners", "web_sessions", "one_time_answers", "JOB_STATES", "CHARGE_STATES"]

#: The states of a job. ``queued`` → ``running`` → ``done`` | ``failed``; a queued or
#: running job may become ``cancelled``.
JOB_STATES = ("queued", "running", "done", "failed", "cancelled")

#: The states of a charge.
CHARGE_STATES = ("reserved", "spent", "refunded")

metadata = MetaData()

datasets = Table(
    "datasets", metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(128), nullable=False),
    Column("active_name", String(128), nullable=True, unique=True),
    Column("left_path", Text, nullable=False),
    Column("right_path", Text, nullable=False),
    Column("left_sha256", String(64), nullable=False),
    Column("right_sha256", String(64), nullable=False),
    Column("types_path", Text, nullable=False),
    Column("types_sha256", String(64), nullable=False),
    Column("types_json", Text, nullable=False),
    Column("id_column", String(256), nullable=True),
    Column("load_options", Text, nullable=False),
    Column("public_schema", Text, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("removed_at", Float, nullable=True),
)


def _token_holders(name: str, *more: Column) -> Table:
    """A table of principals who sign in with a token (analysts, owners).

    Parameters
    ----------
    name : str
        The table's name.
    *more : Column
        Columns of this kind of principal only, after the disabled flag.

    Returns
    -------
    Table
        Id, unique name, unique token id, token salt and hash, disabled flag,
        ``more``, creation and rotation times.
    """
    return Table(
        name, metadata,
        Column("id", Integer, primary_key=True),
        Column("name", String(128), nullable=False, unique=True),
        Column("token_id", String(32), nullable=False, unique=True),
        Column("token_salt", String(64), nullable=False),
        Column("token_hash", String(64), nullable=False),
        Column("disabled", Boolean, nullable=False, default=False),
        *more,
        Column("created_at", Float, nullable=False),
        Column("rotated_at", Float, nullable=True),
    )


analysts = _token_holders("analysts", Column("expires_at", Float, nullable=True))

budgets = Table(
    "budgets", metadata,
    Column("analyst_id", Integer, ForeignKey("analysts.id"), primary_key=True),
    Column("dataset_id", Integer, ForeignKey("datasets.id"), primary_key=True),
    Column("total_units", BigInteger, nullable=False),
    Column("spent_units", BigInteger, nullable=False, default=0),
    Column("updated_at", Float, nullable=False),
    CheckConstraint("total_units >= 0", name="ck_budgets_total"),
    CheckConstraint("spent_units >= 0", name="ck_budgets_spent"),
)

charges = Table(
    "charges", metadata,
    Column("id", Integer, primary_key=True),
    Column("analyst_id", Integer, ForeignKey("analysts.id"), nullable=False),
    Column("dataset_id", Integer, ForeignKey("datasets.id"), nullable=False),
    Column("kind", String(32), nullable=False),
    Column("action", String(64), nullable=False),
    Column("epsilon_units", BigInteger, nullable=False),
    Column("status", String(16), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("settled_at", Float, nullable=True),
    CheckConstraint("epsilon_units > 0", name="ck_charges_epsilon"),
    CheckConstraint("status IN ('reserved', 'spent', 'refunded')", name="ck_charges_status"),
    Index("ix_charges_status", "status"),
    Index("ix_charges_analyst_dataset", "analyst_id", "dataset_id"),
)

jobs = Table(
    "jobs", metadata,
    Column("id", Integer, primary_key=True),
    Column("public_id", String(40), nullable=False, unique=True),
    Column("analyst_id", Integer, ForeignKey("analysts.id"), nullable=False),
    Column("dataset_id", Integer, ForeignKey("datasets.id"), nullable=False),
    Column("charge_id", Integer, ForeignKey("charges.id"), nullable=True),
    Column("idempotency_key", String(128), nullable=True),
    Column("request_digest", String(64), nullable=False),
    Column("algorithm", String(64), nullable=False),
    Column("parameters", Text, nullable=False),
    Column("epsilon_units", BigInteger, nullable=False),
    Column("dummy", Boolean, nullable=False, default=False),
    Column("dummy_rows", Integer, nullable=True),
    Column("status", String(16), nullable=False),
    Column("progress", Float, nullable=True),
    Column("created_at", Float, nullable=False),
    Column("started_at", Float, nullable=True),
    Column("finished_at", Float, nullable=True),
    Column("heartbeat_at", Float, nullable=True),
    Column("worker_pid", Integer, nullable=True),
    Column("worker_token", String(64), nullable=True),
    Column("data_touched", Boolean, nullable=False, default=False),
    Column("error_code", String(64), nullable=True),
    Column("error_message", Text, nullable=True),
    Column("owner_error", Text, nullable=True),
    Column("result", Text, nullable=True),
    UniqueConstraint("analyst_id", "idempotency_key", name="uq_jobs_idempotency"),
    CheckConstraint("status IN ('queued', 'running', 'done', 'failed', 'cancelled')", name="ck_jobs_status"),
    Index("ix_jobs_status", "status", "id"),
    Index("ix_jobs_analyst", "analyst_id", "id"),
)

ledger = Table(
    "ledger", metadata,
    Column("id", Integer, primary_key=True),
    Column("charge_id", Integer, ForeignKey("charges.id"), nullable=False),
    Column("analyst_id", Integer, ForeignKey("analysts.id"), nullable=False),
    Column("dataset_id", Integer, ForeignKey("datasets.id"), nullable=False),
    Column("job_id", Integer, ForeignKey("jobs.id"), nullable=True),
    Column("step", Text, nullable=False),
    Column("mechanism", Text, nullable=False),
    Column("epsilon_exact", String(128), nullable=False),
    Column("epsilon", Float, nullable=False),
    Column("created_at", Float, nullable=False),
    Index("ix_ledger_charge", "charge_id"),
    Index("ix_ledger_analyst_dataset", "analyst_id", "dataset_id", "id"),
)

audit = Table(
    "audit", metadata,
    Column("id", Integer, primary_key=True),
    Column("at", Float, nullable=False),
    Column("analyst_id", Integer, nullable=True),
    Column("action", String(128), nullable=False),
    Column("method", String(16), nullable=False),
    Column("path", String(512), nullable=False),
    Column("dataset", String(128), nullable=True),
    Column("epsilon_units", BigInteger, nullable=True),
    Column("status", Integer, nullable=False),
    Column("outcome", String(64), nullable=False),
    Column("detail", Text, nullable=True),
    Column("client", String(128), nullable=True),
    Column("duration_ms", Float, nullable=True),
    Index("ix_audit_analyst", "analyst_id", "id"),
)

owners = _token_holders("owners")

web_sessions = Table(
    "web_sessions", metadata,
    Column("id", Integer, primary_key=True),
    Column("cookie_hash", String(64), nullable=False, unique=True),
    Column("role", String(16), nullable=False),
    Column("principal_id", Integer, nullable=False),
    Column("token_id", String(32), nullable=False),
    Column("csrf_token", String(64), nullable=False),
    Column("created_at", Float, nullable=False),
    Column("expires_at", Float, nullable=False),
    CheckConstraint("role IN ('analyst', 'owner')", name="ck_web_sessions_role"),
)

one_time_answers = Table(
    "one_time_answers", metadata,
    Column("id", Integer, primary_key=True),
    Column("analyst_id", Integer, ForeignKey("analysts.id"), nullable=False),
    Column("one_time_key", String(32), nullable=False),
    Column("request_digest", String(64), nullable=False),
    Column("claim", String(32), nullable=False),
    Column("answer", Text, nullable=True),
    Column("created_at", Float, nullable=False),
    UniqueConstraint("analyst_id", "one_time_key", name="uq_one_time_answers_key"),
    Index("ix_one_time_answers_created", "created_at"),
    Index("ix_one_time_answers_analyst", "analyst_id", "id"),
)
