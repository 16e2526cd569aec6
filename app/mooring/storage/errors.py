"""Turning SQLite failures into errors a user can act on, where the I/O happens."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from mooring.core.errors import KnownError


class StorageError(KnownError):
    """The database cannot be used; the message says why and what to do."""


def classify(exc: BaseException, path: Path) -> StorageError | None:
    """A :class:`StorageError` for an environment problem, or ``None`` if it looks like a bug."""
    # SQLAlchemy wraps the driver's error as ``DBAPIError.orig`` (not imported: the plain
    # sqlite3 read path loads no SQLAlchemy).
    original = exc if isinstance(exc, sqlite3.Error) else getattr(exc, "orig", exc)
    if not isinstance(original, sqlite3.Error):
        return None
    text = str(original).lower()
    if "locked" in text or "busy" in text:
        return StorageError(
            f"The database {path} is locked by another program.",
            hint="Close other Mooring windows or commands using it, then try again.",
            code="database_locked",
        )
    if "readonly" in text or "read-only" in text:
        return StorageError(
            f"The database {path} is read-only.",
            hint="Check the permissions of the file and its folder, or choose another "
            "data directory with --data-dir.",
            code="database_read_only",
        )
    if "full" in text:
        return StorageError(
            f"The disk holding {path} is full; nothing new could be saved.",
            hint="Free some space and try again. What was saved before is intact.",
            code="database_full",
        )
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return StorageError(
            f"The database {path} is damaged and was left untouched.",
            hint="Move it aside to start afresh, or restore it from a backup.",
            code="database_corrupt",
        )
    if "unable to open" in text or "disk i/o" in text:
        return StorageError(
            f"The database {path} cannot be opened.",
            hint="Check that its folder exists and is writable, or use --data-dir.",
            code="database_unavailable",
        )
    return None
