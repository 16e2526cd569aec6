"""Task records count failed status requests over their life (traces report it).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("task_records", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("poll_errors", sa.Integer(), server_default="0", nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("task_records", schema=None) as batch_op:
        batch_op.drop_column("poll_errors")
