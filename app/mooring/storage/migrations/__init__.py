"""Alembic migrations for Mooring's database."""
