"""Opening the database: migrations, and refusing files we must not touch."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import event

from mooring.core.clock import SystemClock
from mooring.core.conversation import Conversation, Message, Role, ToolRound
from mooring.core.ids import argument_digest, new_id
from mooring.core.servers import ServerDefinition, Transport
from mooring.storage import repositories as repo
from mooring.storage.conversations import SqlConversations
from mooring.storage.db import Database, head_revision
from mooring.storage.errors import StorageError
from mooring.storage.migrations import head_schema
from mooring.storage.migrations.snapshot import migrated_schema, schema_rows
from mooring.storage.tables import is_declared_here, metadata
from tests.core.tasks.factories import T0


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def add_demo_server(db: Database, alias: str = "demo") -> ServerDefinition:
    server = ServerDefinition(
        id=new_id(), alias=alias, transport=Transport.STDIO, command="demo", created_at=T0
    )
    db.call_sync(lambda s: repo.add_server(s, server))
    return server


def checkpoint(path: Path) -> None:
    """Fold the WAL into the main file so byte comparisons see everything."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def test_a_new_database_is_created_at_the_newest_schema(db_path: Path) -> None:
    db = Database.open(db_path)
    try:
        assert db.schema.current == head_revision()
        assert db.integrity_check() == "ok"
        mode = db.call_sync(
            lambda s: s.connection().exec_driver_sql("PRAGMA journal_mode").scalar()
        )
        assert mode == "wal"
        keys = db.call_sync(
            lambda s: s.connection().exec_driver_sql("PRAGMA foreign_keys").scalar()
        )
        assert keys == 1
    finally:
        db.close()


def test_migrations_build_exactly_the_declared_tables(db: Database) -> None:
    def diff(session: Any) -> list[Any]:
        context = MigrationContext.configure(
            session.connection(),
            opts={"include_name": lambda name, kind, _: kind != "table" or is_declared_here(name)},
        )
        return list(compare_metadata(context, metadata))

    assert db.call_sync(diff) == []


def test_a_new_file_gets_from_the_snapshot_exactly_the_schema_the_migrations_build(
    tmp_path: Path,
) -> None:
    """A new data folder's database is built by one script, not by replaying every migration;
    it must be the very schema the migrations build, at the same revision."""
    by_snapshot, by_migrations = tmp_path / "snapshot.sqlite3", tmp_path / "migrations.sqlite3"
    Database.open(by_snapshot).close()
    Database.open(by_migrations, from_snapshot=False).close()
    built = {}
    for path in (by_snapshot, by_migrations):
        conn = sqlite3.connect(path)
        built[path] = (
            schema_rows(conn),
            conn.execute("SELECT version_num FROM alembic_version").fetchall(),
        )
        conn.close()
    assert built[by_snapshot] == built[by_migrations]
    assert built[by_snapshot][1] == [(head_revision(),)]
    revision, statements = migrated_schema()
    stale = "the schema snapshot is stale: run python -m mooring.storage.migrations.snapshot"
    assert (revision, tuple(statements)) == (head_schema.REVISION, head_schema.STATEMENTS), stale


def test_a_new_file_is_made_without_importing_alembic(tmp_path: Path) -> None:
    """Files at an older revision still go through Alembic (the upgrade tests below)."""
    script = (
        "import sys; from pathlib import Path; from mooring.storage.db import Database; "
        "Database.open(Path(sys.argv[1])).close(); print('alembic' in sys.modules)"
    )
    made = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "new.sqlite3")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert made.stdout.strip() == "False"


def test_reopening_keeps_everything(db_path: Path) -> None:
    first = Database.open(db_path)
    server = add_demo_server(first)
    first.close()
    second = Database.open(db_path)
    try:
        assert second.call_sync(repo.list_servers) == [server]
    finally:
        second.close()


OPEN_ON_GO = """
import sys
from pathlib import Path
from mooring.storage.db import Database
print("ready", flush=True)
sys.stdin.readline()
db = Database.open(Path(sys.argv[1]))
db.close()
print("opened", flush=True)
"""


def test_several_processes_creating_one_database_at_once_all_open_it(db_path: Path) -> None:
    """The window and a CLI command (or several scripted commands) starting together on a new
    data folder: each one opens the database; none fails on the others' migration."""
    starting = [
        subprocess.Popen(
            [sys.executable, "-c", OPEN_ON_GO, str(db_path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    for process in starting:  # all imported and waiting: the opens start together
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "ready"
    for process in starting:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    outcomes = [process.communicate(timeout=120) for process in starting]
    assert [
        (p.returncode, out.strip()) for p, (out, _) in zip(starting, outcomes, strict=True)
    ] == [(0, "opened")] * 4, [err for _, err in outcomes]
    db = Database.open(db_path)
    assert db.schema.up_to_date
    db.close()


def test_a_newer_schema_is_refused_and_left_untouched(db_path: Path) -> None:
    db = Database.open(db_path)
    add_demo_server(db)
    db.close()
    conn = sqlite3.connect(db_path)
    conn.execute("UPDATE alembic_version SET version_num = '9999_from_the_future'")
    conn.commit()
    conn.close()
    checkpoint(db_path)
    before = digest(db_path)

    with pytest.raises(StorageError, match="newer Mooring") as caught:
        Database.open(db_path)
    assert caught.value.code == "database_newer"
    assert digest(db_path) == before


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: os.urandom(len(data)), id="random-bytes"),
        pytest.param(lambda data: data[:100] + os.urandom(len(data) - 100), id="header-only"),
    ],
)
def test_a_corrupt_database_is_a_clear_error_and_left_untouched(db_path: Path, damage: Any) -> None:
    db = Database.open(db_path)
    add_demo_server(db)
    db.close()
    checkpoint(db_path)
    db_path.write_bytes(damage(db_path.read_bytes()))
    before = digest(db_path)

    with pytest.raises(StorageError) as caught:
        Database.open(db_path)
    assert caught.value.code in {"database_corrupt", "database_foreign"}
    assert "untouched" in caught.value.message
    assert digest(db_path) == before


def test_a_database_of_another_program_is_refused_untouched(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    conn = sqlite3.connect(db_path)
    conn.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY)")
    conn.commit()
    conn.close()
    before = digest(db_path)
    with pytest.raises(StorageError) as caught:
        Database.open(db_path)
    assert caught.value.code == "database_foreign"
    assert digest(db_path) == before


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[None]:
    """Make ``path`` unwritable for this process, root included (``chattr +i``)."""
    if os.geteuid() != 0:
        path.chmod(0o444)
        path.parent.chmod(0o555)
        try:
            yield
        finally:
            path.parent.chmod(0o755)
            path.chmod(0o644)
        return
    chattr = shutil.which("chattr")
    if chattr is None:
        pytest.fail("running as root needs chattr (e2fsprogs) to make a file read-only")
    subprocess.run([chattr, "+i", str(path)], check=True)
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", str(path)], check=True)


def test_a_read_only_database_is_a_clear_error_and_left_untouched(db_path: Path) -> None:
    db = Database.open(db_path)
    add_demo_server(db)
    db.close()
    checkpoint(db_path)
    for side in ("-wal", "-shm"):
        Path(f"{db_path}{side}").unlink(missing_ok=True)
    before = digest(db_path)

    with read_only(db_path), pytest.raises(StorageError) as caught:
        Database.open(db_path)
    assert caught.value.code == "database_read_only"
    assert digest(db_path) == before


def test_a_locked_database_is_a_clear_error(db_path: Path) -> None:
    db = Database.open(db_path)
    server = add_demo_server(db)
    db.close()
    holder = sqlite3.connect(db_path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StorageError) as caught:
            Database.open(db_path, busy_timeout_ms=0)
        assert caught.value.code == "database_locked"
        assert "locked" in caught.value.message
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    reopened = Database.open(db_path)
    try:
        assert reopened.call_sync(repo.list_servers) == [server]
    finally:
        reopened.close()


def test_a_write_blocked_by_another_writer_is_a_clear_error_and_loses_nothing(
    db_path: Path,
) -> None:
    db = Database.open(db_path, busy_timeout_ms=0)
    server = add_demo_server(db)
    holder = sqlite3.connect(db_path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StorageError) as caught:
            add_demo_server(db, alias="second")
        assert caught.value.code == "database_locked"
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert db.call_sync(repo.list_servers) == [server]
    db.close()


@pytest.mark.anyio
async def test_a_turn_blocked_by_another_writer_is_a_clear_error_and_stores_nothing(
    db_path: Path,
) -> None:
    """A chat turn's first write runs on the plain driver connection: the same clear error, and
    the connection goes back to the pool usable."""
    db = Database.open(db_path, busy_timeout_ms=0)
    book = SqlConversations(db, SystemClock())
    conversation = Conversation(id=new_id(), title="t", created_at=T0, updated_at=T0)
    await book.create_conversation(conversation)
    message = Message(
        id=new_id(), conversation_id=conversation.id, role=Role.USER, content="hi", created_at=T0
    )
    holder = sqlite3.connect(db_path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StorageError) as caught:
            await book.open_turn(message, with_provider=False)
        assert caught.value.code == "database_locked"
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert await book.messages(conversation.id) == []
    opening = await book.open_turn(message, with_provider=False)
    assert opening is not None
    assert opening.stored == [message]
    db.close()


def test_a_full_disk_is_a_clear_error_and_what_was_saved_stays(db_path: Path) -> None:
    db = Database.open(db_path)
    server = add_demo_server(db)
    pages = db.call_sync(
        lambda s: int(s.connection().exec_driver_sql("PRAGMA page_count").scalar_one())
    )
    db.engine.dispose()

    @event.listens_for(db.engine, "connect")
    def _cap(dbapi_conn: Any, _record: Any) -> None:
        # SQLite's own page cap behaves exactly like a full disk (SQLITE_FULL).
        dbapi_conn.execute(f"PRAGMA max_page_count = {int(pages)}")

    big = ToolRound(
        id=new_id(),
        server_id=server.id,
        tool="import_suppliers",
        arguments={"blob": "x" * 2_000_000},
        argument_digest=argument_digest({"blob": "x"}),
        created_at=T0,
    )
    with pytest.raises(StorageError) as caught:
        db.call_sync(lambda s: repo.add_tool_round(s, big))
    assert caught.value.code == "database_full"
    db.close()

    reopened = Database.open(db_path)
    try:
        assert reopened.call_sync(repo.list_servers) == [server]
        assert reopened.call_sync(lambda s: repo.get_tool_round(s, big.id)) is None
        assert reopened.integrity_check() == "ok"
    finally:
        reopened.close()


def test_an_uncreatable_data_directory_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the folder should be")
    with pytest.raises(StorageError, match="Cannot create the data directory"):
        Database.open(blocker / "mooring.sqlite3")


def test_an_older_database_is_upgraded_and_keeps_its_rows(db_path: Path) -> None:
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import create_engine

    from mooring.storage.db import MIGRATIONS

    db_path.parent.mkdir(parents=True)
    engine = create_engine(f"sqlite:///{db_path}")
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0001")
        conn.exec_driver_sql(
            "INSERT INTO servers (id, alias, transport, command, args, env, headers, trusted,"
            " enabled, builtin, created_at) VALUES ('s1', 'old', 'stdio', 'demo', '[]', '{}',"
            " '{}', 0, 1, 0, '2026-01-01T00:00:00.000000+00:00')"
        )
    engine.dispose()

    db = Database.open(db_path)
    try:
        assert db.schema.current == head_revision() != "0001"
        [server] = db.call_sync(repo.list_servers)
        assert (server.alias, server.hidden_tools, server.allowed_tools) == ("old", (), None)
    finally:
        db.close()


def test_the_revision_list_matches_the_migration_scripts() -> None:
    from alembic.script import ScriptDirectory

    from mooring.storage.db import alembic_config
    from mooring.storage.migrations import HEAD, REVISIONS

    script = ScriptDirectory.from_config(alembic_config())
    walked = [rev.revision for rev in script.walk_revisions()]
    assert tuple(reversed(walked)) == REVISIONS
    assert script.get_current_head() == HEAD
