"""Alembic environment: always run by Mooring itself on a connection it passes in."""

from __future__ import annotations

from alembic import context

from mooring.storage.tables import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("Mooring runs its migrations itself; use `mooring doctor` to migrate.")

context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=True,
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
