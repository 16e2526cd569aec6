"""Task records remember when tools/call was handed to the connection.

A record left in ``creating`` without ``sent_at`` was never sent, so after a crash it can be
failed honestly instead of becoming an unknown outcome.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("task_records", schema=None) as batch_op:
        batch_op.add_column(sa.Column("sent_at", sa.String(length=32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("task_records", schema=None) as batch_op:
        batch_op.drop_column("sent_at")
