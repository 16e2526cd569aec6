"""Launch reconciliation asks a server about many tasks at once, within a bound."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest

from mooring.core.tasks.states import LocalState
from mooring.services.host import ServerSpec
from tests.helpers.authserver import AuthServer, running_auth_server
from tests.mcp.servers import DemoServer
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


@pytest.fixture
def auth() -> Iterator[AuthServer]:
    with running_auth_server() as server:
        yield server


async def browser(address: str) -> None:
    """What the system browser does: follow the redirects to the loopback listener."""
    async with httpx2.AsyncClient(timeout=10) as client:
        page = await client.get(address, follow_redirects=True)
    assert page.status_code == 200, page.text


async def test_two_accounts_on_one_server_share_its_bound_and_each_asks_with_its_own_token(
    hosts: HostFactory, tmp_path: Path, auth: AuthServer
) -> None:
    """The bound is the server's, not each account's: two accounts with more tasks each than
    the bound still have at most the bound in flight to the server between them."""
    demo = DemoServer(tmp_path / "web")
    demo.root.mkdir()
    try:
        url = demo.start_http("--oauth-issuer", auth.issuer, "--fault-slow-get-ms", "150")
        host = await hosts()
        server = await host.host.server_desk.add(ServerSpec(alias="web", url=url, trusted=True))
        owners: dict[str, str] = {}  # record id -> account label
        for label in ("alice", "bob"):
            await host.host.account_desk.add("web", label)
            with anyio.fail_after(60):
                await host.host.account_desk.sign_in("web", label, browser)
            profile = await host.host.account_desk.account_id("web", label)
            for n in range(BOUND + 2):  # more than the bound, each
                record = await host.host.call(
                    server,
                    "import_suppliers",
                    {"path": str(SAMPLES / "suppliers_ambiguous_id.csv")},
                    profile_id=profile,
                )
                assert record.task_id is not None, (label, n, record.state)
                owners[record.id] = label
        await host.host.stop()
        created = demo.log.entries()
        client_of = {  # the OAuth client each account signed in as (one per account)
            owners[record_id]: entry["client"]
            for record_id, entry in zip(
                owners, [e for e in created if e["method"] == "tools/call"], strict=True
            )
        }
        assert client_of["alice"] != client_of["bob"]

        later = await hosts()  # the app again, after a restart
        report = await later.host.reconcile()

        assert sorted(r.id for r in report.refreshed) == sorted(owners)
        task_owner = {str(r.task_id): owners[r.id] for r in report.refreshed}
        gets = [e for e in demo.log.entries()[len(created) :] if e["method"] == "tasks/get"]
        assert sorted(g["taskId"] for g in gets) == sorted(task_owner)
        for get in gets:  # each task asked about with its own account's token only
            assert get["client"] == client_of[task_owner[get["taskId"]]]
        assert Counter(task_owner[g["taskId"]] for g in gets) == {"alice": 10, "bob": 10}
        most = max(g["inflight"] for g in gets)
        assert 1 < most <= BOUND
        assert sum(1 for e in demo.log.entries() if e["method"] == "tools/call") == len(owners)
    finally:
        demo.stop_all()
