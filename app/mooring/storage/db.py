"""The SQLite database: opening it safely, migrating it, and the single writer thread.

Opening is careful, in this order, so a file we must not change is never changed:

1. inspect it through a *read-only* connection (is it a database? which schema?);
2. refuse a schema newer than this Mooring knows, untouched;
3. check that a write lock can be taken (read-only files, locked files);
4. only then switch on WAL and run the Alembic migrations, holding the write lock: a second
   Mooring starting on the same new file at the same moment waits, then finds it current.

All work then runs on one dedicated thread (one writer, never the GUI thread), one transaction
per call; SQLite failures come out as :class:`StorageError` with a hint for the user.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from mooring.storage.errors import StorageError, classify
from mooring.storage.schema_file import (
    SchemaState,
    inspect_file,
    known_revisions,
    storage_error,
)
from mooring.storage.schema_file import head_revision as head_revision  # re-exported

if TYPE_CHECKING:
    from alembic.config import Config

log = logging.getLogger("mooring.storage")

T = TypeVar("T")
MIGRATIONS = Path(__file__).parent / "migrations"


def alembic_config() -> Config:
    """Alembic's configuration for Mooring's migrations (imports Alembic)."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


def _check_writable(path: Path, busy_timeout_ms: int) -> None:
    """Take and release a write lock, without writing, to fail early and cleanly."""
    try:
        conn = sqlite3.connect(path, timeout=busy_timeout_ms / 1000, isolation_level=None)
    except sqlite3.Error as exc:
        raise storage_error(exc, path) from exc
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
    except sqlite3.Error as exc:
        raise storage_error(exc, path) from exc
    finally:
        conn.close()


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return (info.st_dev, info.st_ino)


class Database:
    """A migrated Mooring database and the one thread that talks to it."""

    def __init__(self, path: Path, engine: Engine, schema: SchemaState) -> None:
        self.path = path
        self.engine = engine
        self.schema = schema
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="mooring-db"
        )
        self._identity = _identity(path)

    def lost(self) -> str | None:
        """Why the file this database writes to is no longer the one at its path (deleted,
        or replaced by another file), or ``None`` while it is. Writing on would put every
        change into a file nobody can open again."""
        now = _identity(self.path)
        if now is None:
            return f"the database file {self.path} was deleted"
        if self._identity is not None and now != self._identity:
            return f"the database file {self.path} was replaced by another file"
        return None

    async def save_copy(self, target: Path) -> None:
        """Copy what this database holds (the file it opened, even one deleted since) to
        ``target``, a new SQLite file, on the writer thread."""

        def copy(conn: sqlite3.Connection) -> None:
            dest = sqlite3.connect(target)
            try:
                conn.backup(dest)
            finally:
                dest.close()

        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._raw, copy)

    def _raw(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        pooled = self.engine.raw_connection()
        try:
            conn = pooled.driver_connection
            assert isinstance(conn, sqlite3.Connection)
            return fn(conn)
        finally:
            pooled.close()

    @classmethod
    def open(
        cls,
        path: Path,
        *,
        busy_timeout_ms: int = 5_000,
        migrate: bool = True,
        from_snapshot: bool = True,
    ) -> Database:
        """Open (creating and migrating when needed) the database at ``path``.

        A new, empty file gets the head schema in one script (``from_snapshot``; see
        :mod:`mooring.storage.migrations.snapshot`); other files go through the migrations.

        Raises :class:`StorageError` when the file is newer, damaged, read-only or locked; in
        each of those cases the file is left byte-for-byte as it was.
        """
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(
                f"Cannot create the data directory {path.parent}: {exc.strerror}.",
                hint="Choose another data directory with --data-dir.",
                code="database_unavailable",
            ) from exc
        if path.exists() and not (
            os.access(path, os.R_OK | os.W_OK) and os.access(path.parent, os.W_OK | os.X_OK)
        ):
            raise StorageError(
                f"The database {path} is read-only for you; it was left untouched.",
                hint="Check the permissions of the file and its folder, or choose another "
                "data directory with --data-dir.",
                code="database_read_only",
            )
        state = inspect_file(path)
        if state.current is not None and state.current not in known_revisions():
            raise StorageError(
                f"The database {path} was written by a newer Mooring "
                f"(schema {state.current}); this one knows up to {state.head}. "
                "It was left untouched.",
                hint="Update Mooring, or use another data directory with --data-dir.",
                code="database_newer",
            )
        if state.exists:
            _check_writable(path, busy_timeout_ms)
        engine = create_engine(f"sqlite:///{path}")
        event.listen(engine, "connect", functools.partial(_pragmas, busy_ms=busy_timeout_ms))
        db = cls(path, engine, state)
        if migrate and not state.up_to_date:
            db.call_sync(functools.partial(_migrate, from_snapshot=from_snapshot))
            db.schema = SchemaState(current=state.head, head=state.head, exists=True)
            log.info("database %s migrated from %s to %s", path, state.current, state.head)
        return db

    def close(self) -> None:
        """Finish queued work and release the file."""
        self._executor.shutdown(wait=True)
        self.engine.dispose()

    # -- running work on the writer thread ---------------------------------------------------

    def _in_transaction(self, fn: Callable[[Session], T]) -> T:
        try:
            with Session(self.engine) as session, session.begin():
                return fn(session)
        except SQLAlchemyError as exc:
            known = classify(exc, self.path)
            if known is None:
                raise
            log.warning("storage problem: %s", known.message)
            raise known from exc

    async def run(self, fn: Callable[[Session], T]) -> T:
        """Run ``fn`` in one transaction on the writer thread, from async code."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._in_transaction, fn)

    async def run_on_driver(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` on the writer thread on the plain ``sqlite3`` connection, in one write
        transaction (``BEGIN IMMEDIATE``), committed when it returns and rolled back when it
        raises. For the few hot writes where SQLAlchemy's cost per statement shows: a chat
        turn's first write is on the way to every model request. ``fn`` must leave the
        connection's own settings (its ``row_factory``) as they were."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._on_driver, fn)

    def _on_driver(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        try:
            pooled = self.engine.raw_connection()
            try:
                conn = pooled.driver_connection
                assert isinstance(conn, sqlite3.Connection)
                conn.execute("BEGIN IMMEDIATE")
                try:
                    result = fn(conn)
                except BaseException:
                    conn.rollback()
                    raise
                conn.commit()
                return result
            finally:
                pooled.close()  # back to the pool, which rolls back anything left open
        except (sqlite3.Error, SQLAlchemyError) as exc:
            known = classify(exc, self.path)
            if known is None:
                raise
            log.warning("storage problem: %s", known.message)
            raise known from exc

    def call_sync(self, fn: Callable[[Session], T]) -> T:
        """Run ``fn`` in one transaction on the writer thread and wait (CLI, start-up)."""
        return self._executor.submit(self._in_transaction, fn).result()

    def integrity_check(self) -> str:
        """SQLite's own verdict on the file ("ok" when healthy)."""

        def check(session: Session) -> str:
            rows = session.connection().exec_driver_sql("PRAGMA integrity_check").fetchall()
            return "; ".join(str(r[0]) for r in rows)

        return self.call_sync(check)


def begin_write(session: Session) -> None:
    """Open ``session``'s SQLite transaction now, as a writer (``BEGIN IMMEDIATE``: it waits
    for the write lock up to the busy timeout, as a first ``UPDATE`` would).

    The ``sqlite3`` module opens a transaction by itself only before an ``INSERT``, ``UPDATE``
    or ``DELETE``: work that starts with a savepoint has none, and releasing that savepoint
    commits. Savepoints one after another would then each be a transaction of their own."""
    driver = session.connection().connection.driver_connection
    if isinstance(driver, sqlite3.Connection) and not driver.in_transaction:
        session.connection().exec_driver_sql("BEGIN IMMEDIATE")


def begin_read(session: Session) -> None:
    """Open ``session``'s SQLite transaction now, as a reader (``BEGIN``, deferred): every
    ``SELECT`` after it sees the same snapshot of the file. Without it the ``sqlite3`` module
    runs each ``SELECT`` in a transaction of its own, and another process's commit can land
    between two reads of the same batch. Only for work that does not write: a deferred
    transaction that later writes fails at once if another process wrote meanwhile."""
    driver = session.connection().connection.driver_connection
    if isinstance(driver, sqlite3.Connection) and not driver.in_transaction:
        session.connection().exec_driver_sql("BEGIN")


def _pragmas(dbapi_conn: Any, _record: Any, *, busy_ms: int) -> None:
    cursor = dbapi_conn.cursor()
    cursor.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")
    _enable_wal(cursor, deadline=time.monotonic() + busy_ms / 1000)
    cursor.execute("PRAGMA synchronous = NORMAL")
    cursor.execute("PRAGMA foreign_keys = ON")
    cursor.close()


def _enable_wal(cursor: Any, *, deadline: float) -> None:
    """Put the file in WAL mode, waiting while other processes hold it.

    Switching a new file to WAL takes an exclusive lock, and SQLite answers "database is locked"
    at once, without the busy handler, while other processes are opening the same new file:
    try again, briefly, until ``deadline`` (the busy timeout)."""
    pause = 0.005
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


def _migrate(session: Session, *, from_snapshot: bool = True) -> None:
    # Under the write lock before Alembic reads the revision: two processes that both found the
    # file behind would otherwise both create its tables ("table ... already exists").
    begin_write(session)
    if from_snapshot and _build_from_snapshot(session):
        return
    from alembic import command

    cfg = alembic_config()
    cfg.attributes["connection"] = session.connection()
    command.upgrade(cfg, "head")


def _build_from_snapshot(session: Session) -> bool:
    """Give an empty file the head schema in one script, stamped at the head (no Alembic
    import, no replay of every migration); ``False`` when the file has any schema already."""
    from mooring.storage.migrations import head_schema

    connection = session.connection()
    if head_revision() != head_schema.REVISION:  # a stale snapshot: the tests say so too
        return False
    if connection.exec_driver_sql("SELECT count(*) FROM sqlite_master").scalar():
        return False
    for statement in head_schema.STATEMENTS:
        connection.exec_driver_sql(statement)
    connection.exec_driver_sql(
        "INSERT INTO alembic_version (version_num) VALUES (?)", (head_schema.REVISION,)
    )
    return True
