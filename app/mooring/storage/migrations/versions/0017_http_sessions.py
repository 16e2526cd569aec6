"""The Streamable HTTP session of each server and account, remembered until the engine ends it:
one a crashed engine left open is resumed by the next (its tasks live on in it).

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "http_sessions",
        sa.Column("server_id", sa.String(64), nullable=False),
        sa.Column("profile_key", sa.String(64), nullable=False),
        sa.Column("session_id", sa.Text(), nullable=False),
        sa.Column("recorded_at", sa.String(32), nullable=False),
        sa.ForeignKeyConstraint(
            ["server_id"], ["servers.id"], name=op.f("fk_http_sessions_server_id_servers")
        ),
        sa.PrimaryKeyConstraint("server_id", "profile_key", name=op.f("pk_http_sessions")),
    )


def downgrade() -> None:
    op.drop_table("http_sessions")
