"""Which schema a database file has, read through a read-only ``sqlite3`` connection (no
SQLAlchemy, no Alembic: a read-only command checks this before choosing its path)."""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from mooring.storage.errors import StorageError, classify
from mooring.storage.migrations import HEAD, REVISIONS


@dataclass(frozen=True, slots=True)
class SchemaState:
    """What is known about a database file's schema."""

    current: str | None
    head: str
    exists: bool

    @property
    def up_to_date(self) -> bool:
        """Whether the file is at this Mooring's newest schema."""
        return self.current == self.head


def head_revision() -> str:
    """The newest schema revision this Mooring knows."""
    return HEAD


def known_revisions() -> set[str]:
    return set(REVISIONS)


def inspect_file(path: Path) -> SchemaState:
    """Read a database's schema revision without writing a byte (read-only connection)."""
    head = head_revision()
    if not path.exists() or path.stat().st_size == 0:
        return SchemaState(current=None, head=head, exists=path.exists())
    uri = f"{path.resolve().as_uri()}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=0.5)
    except sqlite3.Error as exc:
        raise storage_error(exc, path) from exc
    try:
        has_version = conn.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'alembic_version'"
        ).fetchone()[0]
        current = None
        if has_version:
            row = conn.execute("SELECT version_num FROM alembic_version").fetchone()
            current = row[0] if row else None
        elif conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            raise StorageError(
                f"{path} is a database, but not one of Mooring's; it was left untouched.",
                hint="Point Mooring at another data directory with --data-dir.",
                code="database_foreign",
            )
    except sqlite3.Error as exc:
        raise storage_error(exc, path) from exc
    finally:
        conn.close()
    return SchemaState(current=current, head=head, exists=True)


def storage_error(exc: BaseException, path: Path) -> StorageError:
    known = classify(exc, path)
    if known is not None:
        return known
    return StorageError(
        f"The database {path} cannot be used: {exc}",
        hint="Check the file and its folder, or use --data-dir.",
        code="database_unavailable",
    )


def opens_as_is(path: Path) -> bool:
    """Whether the database at ``path`` needs nothing done before use: it exists, we may write
    it and its folder, and its schema is the newest. A read-only ``sqlite3`` look (no
    SQLAlchemy): the quick listing reads such a file directly, and the window opens it after its
    first paint. Anything else (missing, to migrate, not ours, unreadable) is for the full path,
    which reports it the usual way."""
    if not (
        path.is_file()
        and os.access(path, os.R_OK | os.W_OK)
        and os.access(path.parent, os.W_OK | os.X_OK)
    ):
        return False
    try:
        return inspect_file(path).up_to_date
    except (sqlite3.Error, OSError, StorageError):
        return False
