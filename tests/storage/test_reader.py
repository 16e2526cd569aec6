"""The plain-sqlite3 read path gives exactly the records the SQLAlchemy repositories give, and
leaves every file that needs work (missing, older, foreign) to the full path."""

from __future__ import annotations

import dataclasses
import sqlite3
from datetime import timedelta
from pathlib import Path

from sqlalchemy.orm import Session

from mooring.core.conversation import RoundOutcome
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState, TaskFlag
from mooring.core.tasks.wire import TaskWire
from mooring.storage import repositories as repo
from mooring.storage.db import Database
from mooring.storage.reader import open_reader
from tests.core.tasks.factories import T0
from tests.storage.test_repositories import a_server, an_operation, begin

S = LocalState


def every_field_set(record: TaskRecord) -> TaskRecord:
    return dataclasses.replace(
        record,
        state=S.COMPLETED,
        task_id="task-1",
        server_status="completed",
        status_message="done: 3 rows",
        flags=frozenset({TaskFlag.STATUS_UNAVAILABLE, TaskFlag.AUTH_REQUIRED}),
        server_created_at=T0 + timedelta(seconds=1),
        server_updated_at=T0 + timedelta(seconds=2),
        sent_at=T0 + timedelta(microseconds=5),
        last_checked_at=T0 + timedelta(seconds=3),
        next_poll_at=T0 + timedelta(seconds=4),
        ttl_ms=60_000,
        poll_interval_ms=250,
        poll_count=7,
        poll_failures=1,
        poll_errors=2,
        anomaly_count=1,
        cancel_requested=True,
        owner="host:1",
        reason="why not",
        wire=TaskWire.EXTENSION,
        progress=2.5,
        progress_total=10.0,
        progress_message="copying",
        last_sign_of_life_at=T0 + timedelta(seconds=5),
        updated_at=T0 + timedelta(seconds=6),
    )


def test_records_read_alike_through_both_paths(db: Database, db_path: Path) -> None:
    server = a_server("demo")
    db.call_sync(lambda s: repo.add_server(s, server))
    tool_round, plain = an_operation(server)
    begin(db, tool_round, plain)
    full = every_field_set(plain)
    _, other = an_operation(server)
    other = dataclasses.replace(other, created_at=T0 + timedelta(minutes=1), tool_round_id=None)
    result = {"content": [{"type": "text", "text": "bad"}], "isError": True}

    def write(session: Session) -> None:
        repo.save_task_record(session, full)
        repo.add_task_record(session, other)
        repo.finish_tool_round(
            session, tool_round.id, outcome=RoundOutcome.RESULT, at=T0, result=result
        )

    db.call_sync(write)
    stored = db.call_sync(lambda s: repo.list_task_records(s))
    unfinished = db.call_sync(repo.list_unfinished_task_records)

    reader = open_reader(db_path)
    assert reader is not None
    try:
        assert reader.list_records() == stored
        assert reader.list_records(limit=1) == stored[:1]
        assert reader.unfinished() == unfinished == [other]
        assert db.call_sync(repo.unfinished_task_ids) == {other.id}  # the cheap look agrees
        assert reader.server_alias(server.id) == "demo"
        assert reader.server_alias("nobody") is None
        assert reader.tool_result(tool_round.id) == result
        assert reader.builtin_servers() == []
    finally:
        reader.close()
    assert stored[1] == full  # every field survived the round trip, as the full path reads it


def test_files_that_need_work_are_left_to_the_full_path(tmp_path: Path) -> None:
    missing = tmp_path / "missing.sqlite3"
    assert open_reader(missing) is None
    assert not missing.exists()

    foreign = tmp_path / "foreign.sqlite3"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE notes (body TEXT)")
    assert open_reader(foreign) is None

    older = tmp_path / "older.sqlite3"
    Database.open(older).close()
    with sqlite3.connect(older) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0001'")
    assert open_reader(older) is None
    with sqlite3.connect(older) as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchone() == ("0001",)
