"""The web pages: data owners and browser sessions.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-24

A frozen copy of the ``owners`` and ``web_sessions`` tables of
:mod:`dprm.server.tables` at this revision.
"""

from alembic import op
import sqlalchemy as sa

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "owners",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(128), nullable=False, unique=True),
        sa.Column("token_id", sa.String(32), nullable=False, unique=True),
        sa.Column("token_salt", sa.String(64), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("disabled", sa.Boolean, nullable=False, default=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("rotated_at", sa.Float, nullable=True),
    )
    op.create_table(
        "web_sessions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("cookie_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("principal_id", sa.Integer, nullable=False),
        sa.Column("token_id", sa.String(32), nullable=False),
        sa.Column("csrf_token", sa.String(64), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
        sa.CheckConstraint("role IN ('analyst', 'owner')", name="ck_web_sessions_role"),
    )


def downgrade() -> None:
    op.drop_table("web_sessions")
    op.drop_table("owners")
