"""Values read from the environment: a provider's API key and a server's environment values may
name an environment variable that is read at each use, instead of a secret in the keyring (for
machines with no keyring: CI, containers, headless servers). Only the variable's *name* is
stored.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    with op.batch_alter_table("providers", schema=None) as batch_op:
        batch_op.add_column(sa.Column("api_key_env", sa.String(200), nullable=True))
    with op.batch_alter_table("servers", schema=None) as batch_op:
        batch_op.add_column(sa.Column("env_refs", sa.JSON(), server_default="{}", nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("servers", schema=None) as batch_op:
        batch_op.drop_column("env_refs")
    with op.batch_alter_table("providers", schema=None) as batch_op:
        batch_op.drop_column("api_key_env")
