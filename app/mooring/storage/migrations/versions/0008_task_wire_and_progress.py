"""Task records remember which Tasks wire created them, and a plain call's last progress.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    # Existing task ids were all created by the 2026 extension: NULL reads as that.
    with op.batch_alter_table("task_records", schema=None) as batch_op:
        batch_op.add_column(sa.Column("wire", sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column("progress", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("progress_total", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("progress_message", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("last_sign_of_life_at", sa.String(length=32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("task_records", schema=None) as batch_op:
        for column in ("last_sign_of_life_at", "progress_message", "progress_total", "progress"):
            batch_op.drop_column(column)
        batch_op.drop_column("wire")
