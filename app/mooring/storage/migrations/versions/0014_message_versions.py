"""Versions of a conversation: editing a message or regenerating a reply keeps what followed
as a version the user can go back to (never deleted).

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "message_versions",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("conversation_id", sa.String(64), nullable=False),
        sa.Column("after_message_id", sa.String(64), nullable=True),
        sa.Column("created_at", sa.String(32), nullable=False),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name=op.f("fk_message_versions_conversation_id_conversations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_message_versions")),
    )
    op.create_index(
        op.f("ix_message_versions_conversation_id"),
        "message_versions",
        ["conversation_id"],
        unique=False,
    )
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.add_column(sa.Column("version_id", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("messages", schema=None) as batch_op:
        batch_op.drop_column("version_id")
    op.drop_index(op.f("ix_message_versions_conversation_id"), table_name="message_versions")
    op.drop_table("message_versions")
