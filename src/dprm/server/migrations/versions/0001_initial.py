"""The first schema: datasets, analysts, budgets, charges, jobs, ledger, audit.

Revision ID: 0001
Revises:
Create Date: 2025-01-01

A frozen copy of :mod:`dprm.server.tables` at this revision (a later change of the
tables gets its own migration; ``tests/test_server_db.py`` checks that the migrated
database matches the tables).
"""

from alembic import op
import sqlalchemy as sa

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "datasets",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("active_name", sa.String(128), nullable=True, unique=True),
        sa.Column("left_path", sa.Text, nullable=False),
        sa.Column("right_path", sa.Text, nullable=False),
        sa.Column("left_sha256", sa.String(64), nullable=False),
        sa.Column("right_sha256", sa.String(64), nullable=False),
        sa.Column("types_path", sa.Text, nullable=False),
        sa.Column("types_sha256", sa.String(64), nullable=False),
        sa.Column("types_json", sa.Text, nullable=False),
        sa.Column("id_column", sa.String(256), nullable=True),
        sa.Column("load_options", sa.Text, nullable=False),
        sa.Column("public_schema", sa.Text, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("removed_at", sa.Float, nullable=True),
    )
    op.create_table(
        "analysts",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(128), nullable=False, unique=True),
        sa.Column("token_id", sa.String(32), nullable=False, unique=True),
        sa.Column("token_salt", sa.String(64), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("disabled", sa.Boolean, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("rotated_at", sa.Float, nullable=True),
    )
    op.create_table(
        "budgets",
        sa.Column("analyst_id", sa.Integer, sa.ForeignKey("analysts.id"), primary_key=True),
        sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), primary_key=True),
        sa.Column("total_units", sa.BigInteger, nullable=False),
        sa.Column("spent_units", sa.BigInteger, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.CheckConstraint("total_units >= 0", name="ck_budgets_total"),
        sa.CheckConstraint("spent_units >= 0", name="ck_budgets_spent"),
    )
    op.create_table(
        "charges",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("analyst_id", sa.Integer, sa.ForeignKey("analysts.id"), nullable=False),
        sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("action", sa.String(64), nullable=False),
        sa.Column("epsilon_units", sa.BigInteger, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("settled_at", sa.Float, nullable=True),
        sa.CheckConstraint("epsilon_units > 0", name="ck_charges_epsilon"),
        sa.CheckConstraint("status IN ('reserved', 'spent', 'refunded')", name="ck_charges_status"),
    )
    op.create_index("ix_charges_status", "charges", ["status"])
    op.create_index("ix_charges_analyst_dataset", "charges", ["analyst_id", "dataset_id"])
    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("public_id", sa.String(40), nullable=False, unique=True),
        sa.Column("analyst_id", sa.Integer, sa.ForeignKey("analysts.id"), nullable=False),
        sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), nullable=False),
        sa.Column("charge_id", sa.Integer, sa.ForeignKey("charges.id"), nullable=True),
        sa.Column("idempotency_key", sa.String(128), nullable=True),
        sa.Column("request_digest", sa.String(64), nullable=False),
        sa.Column("algorithm", sa.String(64), nullable=False),
        sa.Column("parameters", sa.Text, nullable=False),
        sa.Column("epsilon_units", sa.BigInteger, nullable=False),
        sa.Column("dummy", sa.Boolean, nullable=False),
        sa.Column("dummy_rows", sa.Integer, nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("progress", sa.Float, nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("started_at", sa.Float, nullable=True),
        sa.Column("finished_at", sa.Float, nullable=True),
        sa.Column("heartbeat_at", sa.Float, nullable=True),
        sa.Column("worker_pid", sa.Integer, nullable=True),
        sa.Column("worker_token", sa.String(64), nullable=True),
        sa.Column("data_touched", sa.Boolean, nullable=False),
        sa.Column("error_code", sa.String(64), nullable=True),
        sa.Column("error_message", sa.Text, nullable=True),
        sa.Column("owner_error", sa.Text, nullable=True),
        sa.Column("result", sa.Text, nullable=True),
        sa.UniqueConstraint("analyst_id", "idempotency_key", name="uq_jobs_idempotency"),
        sa.CheckConstraint("status IN ('queued', 'running', 'done', 'failed', 'cancelled')", name="ck_jobs_status"),
    )
    op.create_index("ix_jobs_status", "jobs", ["status", "id"])
    op.create_index("ix_jobs_analyst", "jobs", ["analyst_id", "id"])
    op.create_table(
        "ledger",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("charge_id", sa.Integer, sa.ForeignKey("charges.id"), nullable=False),
        sa.Column("analyst_id", sa.Integer, sa.ForeignKey("analysts.id"), nullable=False),
        sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), nullable=False),
        sa.Column("job_id", sa.Integer, sa.ForeignKey("jobs.id"), nullable=True),
        sa.Column("step", sa.Text, nullable=False),
        sa.Column("mechanism", sa.Text, nullable=False),
        sa.Column("epsilon_exact", sa.String(128), nullable=False),
        sa.Column("epsilon", sa.Float, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_index("ix_ledger_charge", "ledger", ["charge_id"])
    op.create_index("ix_ledger_analyst_dataset", "ledger", ["analyst_id", "dataset_id", "id"])
    op.create_table(
        "audit",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("at", sa.Float, nullable=False),
        sa.Column("analyst_id", sa.Integer, nullable=True),
        sa.Column("action", sa.String(128), nullable=False),
        sa.Column("method", sa.String(16), nullable=False),
        sa.Column("path", sa.String(512), nullable=False),
        sa.Column("dataset", sa.String(128), nullable=True),
        sa.Column("epsilon_units", sa.BigInteger, nullable=True),
        sa.Column("status", sa.Integer, nullable=False),
        sa.Column("outcome", sa.String(64), nullable=False),
        sa.Column("detail", sa.Text, nullable=True),
        sa.Column("client", sa.String(128), nullable=True),
        sa.Column("duration_ms", sa.Float, nullable=True),
    )
    op.create_index("ix_audit_analyst", "audit", ["analyst_id", "id"])


def downgrade() -> None:
    for table in ("audit", "ledger", "jobs", "charges", "budgets", "analysts", "datasets"):
        op.drop_table(table)
