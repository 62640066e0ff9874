"""The web forms' one-time answers, kept in the database (every API process sees them).

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-04

A frozen copy of the ``one_time_answers`` table of :mod:`dprm.server.tables` at this
revision. Until 0002 the statistics form's answers were kept in each API process's
memory; nothing is carried over (a key answered before the upgrade is forgotten, as a
restart forgot it).
"""

from alembic import op
import sqlalchemy as sa

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "one_time_answers",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("analyst_id", sa.Integer, sa.ForeignKey("analysts.id"), nullable=False),
        sa.Column("one_time_key", sa.String(32), nullable=False),
        sa.Column("request_digest", sa.String(64), nullable=False),
        sa.Column("claim", sa.String(32), nullable=False),
        sa.Column("answer", sa.Text, nullable=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.UniqueConstraint("analyst_id", "one_time_key", name="uq_one_time_answers_key"),
    )
    op.create_index("ix_one_time_answers_created", "one_time_answers", ["created_at"])
    op.create_index("ix_one_time_answers_analyst", "one_time_answers", ["analyst_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_one_time_answers_analyst", table_name="one_time_answers")
    op.drop_index("ix_one_time_answers_created", table_name="one_time_answers")
    op.drop_table("one_time_answers")
