"""Each remembered HTTP session keeps the server's answer to the ``initialize`` that began it:
a server that refuses a second ``initialize`` in a session it still holds (the TypeScript SDK:
"Server already initialized") is resumed with the answer it gave then.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("http_sessions") as batch:
        batch.add_column(sa.Column("initialized", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("http_sessions") as batch:
        batch.drop_column("initialized")
