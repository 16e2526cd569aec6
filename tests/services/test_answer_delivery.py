"""A saved answer reaches the server once, however many checks of its task run at the same time."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from mooring.core.events import AnswerDidSettle
from mooring.core.tasks.states import LocalState
from tests.services.conftest import SAMPLES, HostFactory, demo_definition, logged, run_until

pytestmark = pytest.mark.anyio


async def test_a_saved_answer_is_sent_once_when_two_checks_hold_the_same_old_snapshot(
    hosts: HostFactory, tmp_path: Path
) -> None:
    """A launch reconciliation reads every task's inputs before it asks any server, while the
    monitor may already be polling the same task. Both see the answer as not yet delivered;
    only one may send it, and the other must not then call it late."""
    host = await hosts()
    log = tmp_path / "requests.log"
    server = demo_definition(tmp_path / "store.sqlite3", log)
    await host.store.add_server(server)
    started = await host.host.call(
        server, "import_suppliers", {"path": str(SAMPLES / "suppliers_ambiguous_id.csv")}
    )
    await run_until(host, started.id, lambda r: r.state is LocalState.INPUT_REQUIRED)
    [question] = await host.store.inputs(started.id)
    # Saved but never sent, as when Mooring stopped between the two.
    await host.store.save_answer(started.id, question.key, {"column": "vendor_code"})
    snapshot = (await host.store.inputs_of([started.id]))[started.id]
    assert [item.awaiting_delivery for item in snapshot] == [True]
    record = await host.store.get(started.id)
    assert record is not None
    settled: list[AnswerDidSettle] = []
    host.events.on(AnswerDidSettle, settled.append)

    await asyncio.gather(
        host.monitor.refresh(record, inputs=snapshot),
        host.monitor.refresh(record, inputs=snapshot),
    )

    assert len(logged(log, "tasks/update")) == 1
    assert [(s.key, s.delivered) for s in settled] == [(question.key, True)]
    [stored] = await host.store.inputs(started.id)
    assert stored.acknowledged_at is not None
    assert stored.outcome is None  # not "came too late"
