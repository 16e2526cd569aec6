"""Task records name the process that started them (so another process leaves live work alone).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("task_records", schema=None) as batch_op:
        batch_op.add_column(sa.Column("owner", sa.String(length=200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("task_records", schema=None) as batch_op:
        batch_op.drop_column("owner")
