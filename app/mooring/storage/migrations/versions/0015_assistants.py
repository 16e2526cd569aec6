"""Assistants: saved presets for new conversations (name, system prompt, provider and model,
the servers and tools offered); a conversation keeps the assistant it started from and the
tools it offers the model.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "assistants",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("system_prompt", sa.Text(), server_default="", nullable=False),
        sa.Column("provider_id", sa.String(64), nullable=True),
        sa.Column("model", sa.Text(), nullable=True),
        sa.Column("servers", sa.JSON(), nullable=True),
        sa.Column("tools", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.String(32), nullable=False),
        sa.Column("updated_at", sa.String(32), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_assistants")),
        sa.UniqueConstraint("name", name=op.f("uq_assistants_name")),
    )
    # A plain ADD COLUMN (no table rebuild: the conversations' search triggers stay); SQLite
    # accepts a foreign key on an added column whose default is NULL.
    op.execute(
        "ALTER TABLE conversations ADD COLUMN assistant_id VARCHAR(64)"
        " CONSTRAINT fk_conversations_assistant_id_assistants"
        " REFERENCES assistants (id) ON DELETE SET NULL"
    )
    op.execute("ALTER TABLE conversations ADD COLUMN offered_tools TEXT")


def downgrade() -> None:
    with op.batch_alter_table("conversations", schema=None) as batch_op:
        batch_op.drop_column("offered_tools")
        batch_op.drop_column("assistant_id")
    op.drop_table("assistants")
