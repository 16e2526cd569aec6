"""Where the time goes per status poll: the pure decision versus persisting it.

Prints, for one observation of one task: the cost of ``reconcile`` + ``next_poll`` (pure) and of
applying the result to a real SQLite file through the writer thread, and their ratio.
"""

from __future__ import annotations

import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy.orm import Session

from mooring.core.conversation import ToolRound
from mooring.core.ids import argument_digest, new_id
from mooring.core.servers import ServerDefinition, Transport
from mooring.core.tasks.polling import PollPolicy, next_poll
from mooring.core.tasks.reconcile import Reconciliation, ServerTask, reconcile
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState
from mooring.storage import repositories as repo
from mooring.storage.db import Database

ROUNDS = 2_000


def main() -> None:
    """Measure both paths on the same records and print the ratio."""
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    with tempfile.TemporaryDirectory() as tmp:
        db = Database.open(Path(tmp) / "bench.sqlite3")
        server = ServerDefinition(
            id=new_id(), alias="b", transport=Transport.STDIO, command="x", created_at=t0
        )
        db.call_sync(lambda s: repo.add_server(s, server))
        tool_round = ToolRound(
            id=new_id(),
            server_id=server.id,
            tool="t",
            arguments={},
            argument_digest=argument_digest({}),
            created_at=t0,
        )
        record = TaskRecord(
            id=new_id(),
            server_id=server.id,
            tool="t",
            argument_digest=tool_round.argument_digest,
            state=LocalState.WORKING,
            task_id="task",
            created_at=t0,
            updated_at=t0,
            tool_round_id=tool_round.id,
        )

        def begin(session: Session) -> None:
            repo.add_tool_round(session, tool_round)
            repo.add_task_record(session, record)

        db.call_sync(begin)
        policy = PollPolicy()
        rng = random.Random(1)
        decisions = []
        start = time.perf_counter()
        current = record
        for i in range(ROUNDS):
            now = t0 + timedelta(seconds=i)
            seen = ServerTask(task_id="task", status="working", status_message=f"step {i}")
            rec = reconcile(current, seen, now=now)
            plan = next_poll(
                now=now,
                policy=policy,
                poll_interval_ms=None,
                poll_count=rec.record.poll_count,
                failures=0,
                jitter=rng.random(),
            )
            current = rec.record.evolve(at=now, next_poll_at=plan.at)
            decisions.append(rec)
        pure = (time.perf_counter() - start) / ROUNDS

        start = time.perf_counter()
        for rec in decisions:

            def apply(session: Session, r: Reconciliation = rec) -> None:
                repo.apply_reconciliation(session, r)

            db.call_sync(apply)
        write = (time.perf_counter() - start) / ROUNDS
        db.close()

    print(f"per poll: decision {pure * 1e6:.1f} µs, persist {write * 1e6:.1f} µs")
    print(f"ratio persist/decision: {write / pure:.1f}x over {ROUNDS} polls")
