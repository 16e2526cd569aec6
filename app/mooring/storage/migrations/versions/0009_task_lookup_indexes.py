"""Indexes for the task ledger's hot lookups: by server task id, and newest first.

``find`` asks ``id = ? OR task_id = ?``: without an index that begins with ``task_id`` (the
unique one begins with ``server_id``) SQLite scanned the whole table. The task list reads newest
first; its index matches that order exactly, so a page needs no sort of the whole ledger.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_index("ix_task_records_task_id", "task_records", ["task_id"])
    op.create_index("ix_task_records_newest", "task_records", [sa.text("created_at DESC"), "id"])


def downgrade() -> None:
    op.drop_index("ix_task_records_newest", table_name="task_records")
    op.drop_index("ix_task_records_task_id", table_name="task_records")
