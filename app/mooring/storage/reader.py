"""A read-only view of the task ledger over plain ``sqlite3``, for quick read-only commands.

Loading SQLAlchemy costs far more than a listing does, so ``mooring tasks list`` reads through
this instead, with the same record mapping (:mod:`mooring.storage.records`). It opens only a
database that Mooring would use as it is: one that exists, is readable and writable (as the full
path checks) and is at this Mooring's newest schema. Anything else (a missing, older, newer or
foreign file) gets ``None`` from :func:`open_reader`, and the caller takes the full path, which
creates, migrates or refuses the file as usual.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import TERMINAL_STATES, LocalState
from mooring.storage.errors import StorageError
from mooring.storage.records import record_from
from mooring.storage.schema_file import opens_as_is

TYPE_CHECKING = False  # not typing's: the quick listing loads no typing (docs/architecture.md)
if TYPE_CHECKING:
    from typing import Any


class LedgerReader:
    """Task records, server aliases and tool results, read without writing a byte."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        conn.row_factory = sqlite3.Row

    def close(self) -> None:
        """Release the file."""
        self._conn.close()

    def list_records(self, *, limit: int | None = None) -> list[TaskRecord]:
        """Records, newest first (as ``TaskLedger.list_records``)."""
        query = "SELECT * FROM task_records ORDER BY created_at DESC, id"
        params: tuple[Any, ...] = ()
        if limit is not None:
            query += " LIMIT ?"
            params = (limit,)
        return [record_from(row, raw=True) for row in self._conn.execute(query, params)]

    def unfinished(self) -> list[TaskRecord]:
        """Every record that is not terminal, oldest first (as ``TaskLedger.unfinished``)."""
        active = sorted(s.value for s in LocalState if s not in TERMINAL_STATES)
        marks = ", ".join("?" * len(active))
        rows = self._conn.execute(
            f"SELECT * FROM task_records WHERE state IN ({marks}) ORDER BY created_at", active
        )
        return [record_from(row, raw=True) for row in rows]

    def server_alias(self, server_id: str) -> str | None:
        """A server's alias, even a removed server's (its tasks still name it)."""
        row = self._conn.execute("SELECT alias FROM servers WHERE id = ?", (server_id,)).fetchone()
        return str(row["alias"]) if row else None

    def tool_result(self, round_id: str) -> dict[str, Any] | None:
        """The stored ``CallToolResult`` of a tool round (``None``: none yet, or no round)."""
        row = self._conn.execute(
            "SELECT result FROM tool_rounds WHERE id = ?", (round_id,)
        ).fetchone()
        if row is None or row["result"] is None:
            return None
        result = json.loads(row["result"])
        return result if isinstance(result, dict) else None

    def builtin_servers(self) -> list[tuple[str, str | None, tuple[str, ...]]]:
        """Every built-in server ever configured: (transport, command, args)."""
        rows = self._conn.execute(
            "SELECT transport, command, args FROM servers WHERE builtin = 1 ORDER BY created_at"
        )
        return [
            (str(r["transport"]), r["command"], tuple(json.loads(r["args"] or "[]"))) for r in rows
        ]


def open_reader(path: Path) -> LedgerReader | None:
    """A reader over the database at ``path``, or ``None`` when the full path must handle the
    file (missing, not at the newest schema, not writable for us, or unreadable)."""
    if not opens_as_is(path):
        return None
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5.0)
    except (sqlite3.Error, OSError, StorageError):  # the full path reports it the usual way
        return None
    return LedgerReader(conn)
