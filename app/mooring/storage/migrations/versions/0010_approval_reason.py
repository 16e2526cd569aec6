"""The approval audit keeps why the policy decided or asked, and what the user remembered.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    # Older entries have no reason recorded: NULL reads as "not recorded".
    with op.batch_alter_table("approval_audit", schema=None) as batch_op:
        batch_op.add_column(sa.Column("reason", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("remembered", sa.String(length=16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("approval_audit", schema=None) as batch_op:
        batch_op.drop_column("remembered")
        batch_op.drop_column("reason")
