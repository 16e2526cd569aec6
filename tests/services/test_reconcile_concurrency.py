"""Launch reconciliation asks a server about many tasks at once, within a bound."""

from __future__ import annotations

from pathlib import Path

import pytest

from mooring.core.tasks.states import LocalState
from tests.services.conftest import SAMPLES, HostFactory, demo_definition, logged

pytestmark = pytest.mark.anyio

TASKS = 20
BOUND = 8  # the reconciler's default per server


async def test_reconcile_asks_one_server_about_many_tasks_at_once_but_never_above_the_bound(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    log = tmp_path / "requests.log"
    # Each status answer takes a while, so requests sent together overlap on the server.
    server = demo_definition(tmp_path / "store.sqlite3", log, fault_slow_get_ms=150)
    await host.store.add_server(server)
    started = [
        await host.host.call(
            server, "import_suppliers", {"path": str(SAMPLES / "suppliers_ambiguous_id.csv")}
        )
        for _ in range(TASKS)
    ]
    await host.host.stop()
    gets_before = len(logged(log, "tasks/get"))

    later = await hosts()  # the app again, after a restart
    report = await later.host.reconcile()

    assert sorted(r.id for r in report.refreshed) == sorted(r.id for r in started)
    for record in started:
        stored = await later.store.get(record.id)
        assert stored is not None
        assert stored.state in (LocalState.WORKING, LocalState.INPUT_REQUIRED)
        assert stored.last_checked_at is not None
    gets = logged(log, "tasks/get")[gets_before:]
    assert sorted(g["taskId"] for g in gets) == sorted(r.task_id or "" for r in started)
    most = max(g["inflight"] for g in gets)
    assert 1 < most <= BOUND
    assert len(logged(log, "tools/call")) == TASKS  # nothing was sent again
