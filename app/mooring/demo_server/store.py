"""The demo server's own SQLite store: durable tasks, supplier records and import row outcomes.

Every write that moves a running task forward is *fenced* by the task's lease: it only applies
while the writing instance still owns the task (``lease_owner``). Several server processes can
share one store file; SQLite's WAL mode and a busy timeout serialise their writes.

The methods are synchronous and short; async callers run them in a worker thread through
:meth:`Store.run` so a slow disk never stalls the event loop.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import anyio.to_thread

from mooring.demo_server.wire import TERMINAL_STATUSES, now_ms

P = ParamSpec("P")
T = TypeVar("T")

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tasks (
    task_id TEXT PRIMARY KEY,
    scope TEXT NOT NULL,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    status TEXT NOT NULL,
    status_message TEXT,
    input_requests TEXT NOT NULL DEFAULT '{}',
    input_responses TEXT NOT NULL DEFAULT '{}',
    result TEXT,
    error TEXT,
    state TEXT NOT NULL DEFAULT '{}',
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL,
    ttl_ms INTEGER,
    poll_interval_ms INTEGER NOT NULL,
    lease_owner TEXT,
    lease_expires_ms INTEGER NOT NULL DEFAULT 0,
    runs INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS tasks_active ON tasks (status, lease_expires_ms);
CREATE TABLE IF NOT EXISTS suppliers (
    supplier_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    country TEXT NOT NULL,
    email TEXT,
    phone TEXT,
    source_file TEXT,
    source_task_id TEXT,
    source_row INTEGER,
    saved_at_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS import_rows (
    task_id TEXT NOT NULL,
    row_number INTEGER NOT NULL,
    supplier_id TEXT,
    outcome TEXT NOT NULL,
    reason TEXT,
    PRIMARY KEY (task_id, row_number)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS import_rows_by_supplier ON import_rows (task_id, supplier_id, outcome);
"""


class LeaseLostError(Exception):
    """The task is no longer owned by this instance (another one claimed it, or it was deleted)."""


@dataclass
class TaskRow:
    """One task as stored."""

    task_id: str
    scope: str
    tool: str
    arguments: dict[str, Any]
    status: str
    status_message: str | None
    input_requests: dict[str, Any]
    input_responses: dict[str, Any]
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    state: dict[str, Any]
    cancel_requested: bool
    created_at_ms: int
    updated_at_ms: int
    ttl_ms: int | None
    poll_interval_ms: int
    lease_owner: str | None
    lease_expires_ms: int
    runs: int

    @property
    def terminal(self) -> bool:
        """Whether the task reached ``completed``, ``failed`` or ``cancelled``."""
        return self.status in TERMINAL_STATUSES

    def expired(self, at_ms: int) -> bool:
        """Whether the task's TTL (counted from creation) has run out at ``at_ms``."""
        return self.ttl_ms is not None and at_ms >= self.created_at_ms + self.ttl_ms


@dataclass
class NewTask:
    """What a task starts with."""

    task_id: str
    scope: str
    tool: str
    arguments: dict[str, Any]
    status_message: str
    ttl_ms: int | None
    poll_interval_ms: int
    lease_owner: str
    lease_ms: int
    created_at_ms: int = field(default_factory=now_ms)


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _row(raw: sqlite3.Row) -> TaskRow:
    return TaskRow(
        task_id=raw["task_id"],
        scope=raw["scope"],
        tool=raw["tool"],
        arguments=json.loads(raw["arguments"]),
        status=raw["status"],
        status_message=raw["status_message"],
        input_requests=json.loads(raw["input_requests"]),
        input_responses=json.loads(raw["input_responses"]),
        result=_loads(raw["result"]),
        error=_loads(raw["error"]),
        state=json.loads(raw["state"]),
        cancel_requested=bool(raw["cancel_requested"]),
        created_at_ms=raw["created_at_ms"],
        updated_at_ms=raw["updated_at_ms"],
        ttl_ms=raw["ttl_ms"],
        poll_interval_ms=raw["poll_interval_ms"],
        lease_owner=raw["lease_owner"],
        lease_expires_ms=raw["lease_expires_ms"],
        runs=raw["runs"],
    )


def _enable_wal(conn: sqlite3.Connection, *, deadline: float) -> None:
    """Put the file in WAL mode, waiting while other processes hold it.

    Switching a new file to WAL takes an exclusive lock, and SQLite answers "database is locked"
    at once, without its busy handler, when other connections are opening the same new file
    (several instances starting together on one store): try again, briefly, until ``deadline``.
    """
    pause = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


class Store:
    """SQLite-backed persistence shared by every instance that opens the same file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = self.connection()
        conn.executescript(_SCHEMA)  # idempotent; each statement commits on its own
        conn.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?)",
            (str(SCHEMA_VERSION),),
        )

    # -- plumbing -------------------------------------------------------------------------------

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (autocommit; transactions are explicit)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                self.path, timeout=30, isolation_level=None, check_same_thread=True
            )
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA busy_timeout=30000")
            _enable_wal(conn, deadline=time.monotonic() + 30)
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (``BEGIN IMMEDIATE``): committed on success, rolled back on error."""
        conn = self.connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    async def run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run one store method in a worker thread; it finishes even if the caller is cancelled."""
        return await anyio.to_thread.run_sync(partial(fn, *args, **kwargs))

    # -- tasks ----------------------------------------------------------------------------------

    def create_task(self, new: NewTask) -> TaskRow:
        """Insert a task owned by ``new.lease_owner``; committed before this returns."""
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO tasks (task_id, scope, tool, arguments, status, status_message,"
                " created_at_ms, updated_at_ms, ttl_ms, poll_interval_ms, lease_owner,"
                " lease_expires_ms)"
                " VALUES (?, ?, ?, ?, 'working', ?, ?, ?, ?, ?, ?, ?)",
                (
                    new.task_id,
                    new.scope,
                    new.tool,
                    _dumps(new.arguments),
                    new.status_message,
                    new.created_at_ms,
                    new.created_at_ms,
                    new.ttl_ms,
                    new.poll_interval_ms,
                    new.lease_owner,
                    new.created_at_ms + new.lease_ms,
                ),
            )
        task = self.get_task(new.task_id)
        assert task is not None
        return task

    def get_task(self, task_id: str) -> TaskRow | None:
        """The task, or None if there is no such task."""
        raw = (
            self.connection()
            .execute("SELECT * FROM tasks WHERE task_id = ?", (task_id,))
            .fetchone()
        )
        return None if raw is None else _row(raw)

    def delete_task(self, task_id: str) -> None:
        """Forget a task and its import row outcomes (saved suppliers stay)."""
        with self.transaction() as conn:
            conn.execute("DELETE FROM tasks WHERE task_id = ?", (task_id,))
            conn.execute("DELETE FROM import_rows WHERE task_id = ?", (task_id,))

    def active_tasks(self) -> list[TaskRow]:
        """Every task that is not terminal (candidates for claiming)."""
        rows = self.connection().execute(
            "SELECT * FROM tasks WHERE status IN ('working', 'input_required')"
        )
        return [_row(raw) for raw in rows.fetchall()]

    def expired_task_ids(self, at_ms: int, forget_after_ms: int | None) -> list[str]:
        """Tasks past their TTL (or, under the forget fault, older than ``forget_after_ms``)."""
        conn = self.connection()
        ids = [
            raw[0]
            for raw in conn.execute(
                "SELECT task_id FROM tasks"
                " WHERE ttl_ms IS NOT NULL AND created_at_ms + ttl_ms <= ?",
                (at_ms,),
            ).fetchall()
        ]
        if forget_after_ms is not None:
            ids += [
                raw[0]
                for raw in conn.execute(
                    "SELECT task_id FROM tasks WHERE created_at_ms + ? <= ?",
                    (forget_after_ms, at_ms),
                ).fetchall()
            ]
        return sorted(set(ids))

    def claim(
        self, task_id: str, owner: str, previous_owner: str | None, lease_ms: int
    ) -> TaskRow | None:
        """Take over a task whose lease expired or whose owner died (compare-and-swap)."""
        at = now_ms()
        with self.transaction() as conn:
            cursor = conn.execute(
                "UPDATE tasks SET lease_owner = ?, lease_expires_ms = ?, runs = runs + 1"
                " WHERE task_id = ? AND status IN ('working', 'input_required')"
                " AND lease_owner IS ?",
                (owner, at + lease_ms, task_id, previous_owner),
            )
            if cursor.rowcount != 1:
                return None
        return self.get_task(task_id)

    def heartbeat(self, task_id: str, owner: str, lease_ms: int) -> TaskRow:
        """Renew the lease; raises :class:`LeaseLostError` if the task is no longer ours."""
        with self.transaction() as conn:
            cursor = conn.execute(
                "UPDATE tasks SET lease_expires_ms = ? WHERE task_id = ? AND lease_owner = ?",
                (now_ms() + lease_ms, task_id, owner),
            )
            if cursor.rowcount != 1:
                raise LeaseLostError(task_id)
        task = self.get_task(task_id)
        if task is None:
            raise LeaseLostError(task_id)
        return task

    def release(self, task_id: str, owner: str) -> None:
        """Give the task up (on shutdown) so any instance may claim it at once."""
        with self.transaction() as conn:
            conn.execute(
                "UPDATE tasks SET lease_owner = NULL, lease_expires_ms = 0"
                " WHERE task_id = ? AND lease_owner = ?",
                (task_id, owner),
            )

    def _fenced(
        self, conn: sqlite3.Connection, task_id: str, owner: str, sql: str, args: tuple[Any, ...]
    ) -> None:
        cursor = conn.execute(
            f"UPDATE tasks SET {sql} WHERE task_id = ? AND lease_owner = ?"
            " AND status IN ('working', 'input_required')",
            (*args, task_id, owner),
        )
        if cursor.rowcount != 1:
            raise LeaseLostError(task_id)

    def set_status_message(self, task_id: str, owner: str, message: str) -> None:
        """Update ``statusMessage`` of a task this instance runs."""
        with self.transaction() as conn:
            self._fenced(
                conn, task_id, owner, "status_message = ?, updated_at_ms = ?", (message, now_ms())
            )

    def checkpoint(
        self,
        task_id: str,
        owner: str,
        build: Callable[[sqlite3.Connection], tuple[Mapping[str, Any], str | None]],
    ) -> Mapping[str, Any]:
        """Run ``build`` and record the job state and status message it returns, in one transaction.

        Either everything ``build`` wrote and the new state are committed together, or nothing
        is: a job resumed from this checkpoint never repeats or skips work. Returns the state.
        """
        with self.transaction() as conn:
            self._fenced(conn, task_id, owner, "updated_at_ms = ?", (now_ms(),))
            state, message = build(conn)
            conn.execute(
                "UPDATE tasks SET state = ? WHERE task_id = ?", (_dumps(dict(state)), task_id)
            )
            if message is not None:
                conn.execute(
                    "UPDATE tasks SET status_message = ? WHERE task_id = ?", (message, task_id)
                )
        return state

    def add_input_requests(
        self, task_id: str, owner: str, requests: Mapping[str, Any], message: str | None
    ) -> TaskRow:
        """Publish input requests (keys not yet answered); park the task in ``input_required``."""
        with self.transaction() as conn:
            task = self.get_task(task_id)
            if task is None or task.lease_owner != owner or task.terminal:
                raise LeaseLostError(task_id)
            outstanding = dict(task.input_requests)
            for key, request in requests.items():
                if key not in task.input_responses:
                    outstanding[key] = request
            if outstanding != task.input_requests or (
                outstanding and task.status != "input_required"
            ):
                status = "input_required" if outstanding else task.status
                sets = "input_requests = ?, status = ?, updated_at_ms = ?"
                args: tuple[Any, ...] = (_dumps(outstanding), status, now_ms())
                if message is not None:
                    sets += ", status_message = ?"
                    args = (*args, message)
                self._fenced(conn, task_id, owner, sets, args)
        task = self.get_task(task_id)
        if task is None:
            raise LeaseLostError(task_id)
        return task

    def apply_input_responses(self, task_id: str, responses: Mapping[str, Any]) -> bool:
        """Record answers to outstanding keys (others are ignored).

        The task goes back to ``working`` when no request remains outstanding.

        Any instance may apply answers; the instance running the task picks them up.
        Returns whether anything changed.
        """
        with self.transaction() as conn:
            task = self.get_task(task_id)
            if task is None or task.status != "input_required":
                return False
            accepted = {
                key: value for key, value in responses.items() if key in task.input_requests
            }
            if not accepted:
                return False
            outstanding = {k: v for k, v in task.input_requests.items() if k not in accepted}
            answered = {**task.input_responses, **accepted}
            status = "input_required" if outstanding else "working"
            conn.execute(
                "UPDATE tasks SET input_requests = ?, input_responses = ?, status = ?,"
                " updated_at_ms = ? WHERE task_id = ?",
                (_dumps(outstanding), _dumps(answered), status, now_ms(), task_id),
            )
        return True

    def request_cancel(self, task_id: str) -> None:
        """Flag a cancel request; the instance running the task acts on it at its next check."""
        with self.transaction() as conn:
            conn.execute(
                "UPDATE tasks SET cancel_requested = 1"
                " WHERE task_id = ? AND status IN ('working', 'input_required')",
                (task_id,),
            )

    def finish(
        self,
        task_id: str,
        owner: str | None,
        status: str,
        message: str,
        *,
        result: Mapping[str, Any] | None = None,
        error: Mapping[str, Any] | None = None,
    ) -> bool:
        """Move a task to a terminal status (terminal statuses never change again).

        ``owner`` is the expected current lease owner: the instance running the task, or the
        dead/absent owner of an orphan that is being cancelled.
        """
        with self.transaction() as conn:
            cursor = conn.execute(
                "UPDATE tasks SET status = ?, status_message = ?, result = ?, error = ?,"
                " input_requests = '{}', updated_at_ms = ?, lease_owner = NULL,"
                " lease_expires_ms = 0"
                " WHERE task_id = ? AND status IN ('working', 'input_required')"
                " AND lease_owner IS ?",
                (
                    status,
                    message,
                    None if result is None else _dumps(dict(result)),
                    None if error is None else _dumps(dict(error)),
                    now_ms(),
                    task_id,
                    owner,
                ),
            )
            return cursor.rowcount == 1

    # -- suppliers ------------------------------------------------------------------------------

    def list_suppliers(
        self, limit: int, after: str | None, query: str | None
    ) -> tuple[list[dict[str, Any]], int]:
        """A page of suppliers ordered by id, and the total matching ``query``."""
        conn = self.connection()
        where = "WHERE 1 = 1"
        args: list[Any] = []
        if query:
            where += " AND (supplier_id LIKE ? OR name LIKE ?)"
            args += [f"%{query}%", f"%{query}%"]
        total = int(conn.execute(f"SELECT COUNT(*) FROM suppliers {where}", args).fetchone()[0])
        if after is not None:
            where += " AND supplier_id > ?"
            args.append(after)
        rows = conn.execute(
            "SELECT supplier_id, name, country, email, phone, source_file, source_task_id,"
            f" source_row FROM suppliers {where} ORDER BY supplier_id LIMIT ?",
            [*args, limit],
        ).fetchall()
        return [dict(row) for row in rows], total

    def delete_supplier(self, supplier_id: str) -> bool:
        """Delete one supplier; returns whether it existed."""
        with self.transaction() as conn:
            return (
                conn.execute("DELETE FROM suppliers WHERE supplier_id = ?", (supplier_id,)).rowcount
                == 1
            )

    def supplier_page(self, after: str | None, limit: int) -> list[tuple[Any, ...]]:
        """Suppliers after ``after`` in id order, as tuples (for export)."""
        rows = self.connection().execute(
            "SELECT supplier_id, name, country, email, phone FROM suppliers"
            " WHERE (? IS NULL OR supplier_id > ?) ORDER BY supplier_id LIMIT ?",
            (after, after, limit),
        )
        return [tuple(row) for row in rows.fetchall()]

    def import_report(self, task_id: str) -> dict[str, Any]:
        """Every row outcome of an import task: saved ids, skipped ids and rejected rows."""
        rows = self.connection().execute(
            "SELECT row_number, supplier_id, outcome, reason FROM import_rows"
            " WHERE task_id = ? ORDER BY row_number",
            (task_id,),
        )
        saved: list[str] = []
        skipped: list[str] = []
        rejected: list[dict[str, Any]] = []
        for row_number, supplier_id, outcome, reason in rows.fetchall():
            if outcome == "saved":
                saved.append(supplier_id)
            elif outcome == "skipped":
                skipped.append(supplier_id)
            else:
                rejected.append({"row": row_number, "supplierId": supplier_id, "reason": reason})
        return {"savedIds": saved, "skippedIds": skipped, "rejectedRows": rejected}
