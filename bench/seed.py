"""A big, lived-in data folder for the window benchmarks, written through the storage layer.

Seeding is not what is measured (the window's read path is), so rows go in by the repository
functions inside a few large transactions rather than through the services one call at a time.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy.orm import Session

from mooring.core.conversation import Conversation, Message, Role
from mooring.core.ids import new_id
from mooring.core.servers import ServerDefinition, Transport
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState
from mooring.storage import conversations as conv_repo
from mooring.storage.db import Database
from mooring.storage.repositories import servers as server_repo
from mooring.storage.repositories import tasks as task_repo

MESSAGES_PER_CONVERSATION = 500
UNREACHABLE = "http://127.0.0.1:9/mcp"
"""Where the seeded tasks' server is said to live: nothing listens there (connections are
refused at once), so the window's launch work ends quickly and polls nothing."""

_WORDS = (
    "The import of suppliers_large.csv finished: 199,988 rows saved, 12 rejected because their "
    "country code was not ISO 3166 alpha-2. Shall I export the rejected rows for review?"
)


def seed(database: Path, *, messages: int, records: int, working: int) -> list[str]:
    """Write ``messages`` chat messages (in conversations of 500) and ``records`` task records
    (the newest ``working`` of them unfinished) into ``database``; returns the unfinished ids."""
    db = Database.open(database)
    start = datetime(2026, 6, 1, tzinfo=UTC)
    server = ServerDefinition(
        id=new_id(), alias="seeded", transport=Transport.HTTP, url=UNREACHABLE, created_at=start
    )
    unfinished: list[str] = []

    def write_server(session: Session) -> None:
        server_repo.add_server(session, server)

    db.call_sync(write_server)
    n = 0
    while n < messages:
        count = min(MESSAGES_PER_CONVERSATION, messages - n)
        at = start + timedelta(minutes=n)
        conversation = Conversation(
            id=new_id(),
            title=f"Supplier import {n // MESSAGES_PER_CONVERSATION}",
            created_at=at,
            updated_at=at,
        )

        def write_conversation(
            session: Session, c: Conversation = conversation, k: int = count, first: int = n
        ) -> None:
            conv_repo.add_conversation(session, c)
            for i in range(k):
                conv_repo.append_message(
                    session,
                    Message(
                        id=new_id(),
                        conversation_id=c.id,
                        role=Role.USER if i % 2 == 0 else Role.ASSISTANT,
                        content=f"{first + i}: {_WORDS}",
                        created_at=c.created_at + timedelta(seconds=i),
                    ),
                )

        db.call_sync(write_conversation)
        n += count

    batch: list[TaskRecord] = []
    for i in range(records):
        at = start + timedelta(seconds=i)
        live = i >= records - working
        record = TaskRecord(
            id=new_id(),
            server_id=server.id,
            tool="import_suppliers",
            argument_digest="d" * 16,
            state=LocalState.WORKING if live else LocalState.COMPLETED,
            created_at=at,
            updated_at=at,
            task_id=f"seeded-task-{i}",
            server_status="working" if live else "completed",
            status_message=f"validated {i * 10:,} of 200,000 rows",
        )
        if live:
            unfinished.append(record.id)
        batch.append(record)

    def write_records(session: Session) -> None:
        for record in batch:
            task_repo.add_task_record(session, record)

    db.call_sync(write_records)
    db.close()
    return unfinished
