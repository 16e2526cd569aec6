"""Long plain calls through the services: progress is persisted before anyone is told, and the
user's stop ends the round "stopped by you"."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

import anyio
import pytest

from mooring.core.events import Event, TaskDidChange
from mooring.core.ids import new_id
from mooring.core.servers import ServerDefinition, Transport
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState
from tests.services.conftest import HostFactory

pytestmark = pytest.mark.anyio

PEER = Path(__file__).resolve().parents[1] / "mcp" / "peers" / "legacy_tasks_server.py"


def peer(tmp_path: Path) -> ServerDefinition:
    return ServerDefinition(
        id=new_id(),
        alias="peer",
        transport=Transport.STDIO,
        command=sys.executable,
        args=(str(PEER), f"--store={tmp_path / 'store.json'}"),
        created_at=datetime.now(UTC),
    )


async def test_progress_is_stored_before_it_is_shown_and_the_user_can_stop_the_call(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    server = peer(tmp_path)
    await host.store.add_server(server)
    stored_when_told: list[TaskRecord | None] = []
    progressed = anyio.Event()

    def listen(event: Event) -> None:
        if isinstance(event, TaskDidChange) and event.note == "progress":
            progressed.set()
            stored_when_told.append(event.record)

    host.events.subscribe(listen)
    finals: list[TaskRecord] = []

    async def call() -> None:
        finals.append(await host.runner.call(server, "progress_job", {"seconds": 30, "every": 0.1}))

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            await progressed.wait()
            [running] = await host.store.list_records()
            stored = await host.store.get(running.id)
            assert stored is not None
            assert stored.progress is not None  # written, then told
            assert stored.progress_message is not None
            assert stored.last_sign_of_life_at is not None
            assert host.runner.stop(running.id)
    [final] = finals
    assert final.state is LocalState.CANCELLED
    assert final.reason is not None
    assert final.reason.startswith("Stopped by you")
    assert stored_when_told
