"""A server whose connection fails is an open issue (what ``mooring issues`` and the window's
Issues panel list) until it connects — with real servers, real connections and a real SQLite
file, the issue raised and resolved by the host as the connection's state changes."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from mooring.core.events import IssueDidChange
from mooring.core.issues import IssueAction, IssueKind
from mooring.core.servers import ServerDefinition
from mooring.core.views import IssueView
from mooring.services.host import ServerSpec
from tests.mcp.servers import DemoServer, free_port
from tests.services.conftest import Host, HostFactory

pytestmark = pytest.mark.anyio

TOKEN = "s3cret-query-token-77"
HEADER_VALUE = "Bearer hdr-s3cret-88"
ENV_VALUE = "env-s3cret-api-key-99"


async def issues_until(
    host: Host, check: Callable[[list[IssueView]], bool], limit: float = 30
) -> list[IssueView]:
    """The open issues, once ``check`` holds (re-read at every ``IssueDidChange``)."""
    changed = asyncio.Event()
    unsubscribe = host.events.on(IssueDidChange, lambda _e: changed.set())
    try:
        with anyio.fail_after(limit):
            while True:
                changed.clear()
                views = await host.host.open_issues()
                if check(views):
                    return views
                await changed.wait()
    finally:
        unsubscribe()


def about(views: list[IssueView], server: ServerDefinition) -> list[IssueView]:
    return [
        v
        for v in views
        if v.issue.subject == server.id and v.issue.kind is IssueKind.SERVER_UNAVAILABLE
    ]


async def test_a_server_that_fails_to_connect_is_an_open_issue_until_it_connects(
    hosts: HostFactory, tmp_path: Path
) -> None:
    demo = DemoServer(tmp_path / "web")
    demo.root.mkdir()
    demo.port = free_port()  # nothing listens there yet
    try:
        host = await hosts()
        web = await host.host.server_desk.add(
            ServerSpec(
                alias="web",
                url=f"http://127.0.0.1:{demo.port}/mcp?token={TOKEN}",
                headers={"Authorization": HEADER_VALUE},
            )
        )
        assert await host.host.open_issues() == []
        assert await host.host.server_desk.tools(web) is None  # connects, and fails

        [view] = about(await issues_until(host, lambda v: bool(about(v, web))), web)
        assert view.issue.title == "web cannot be reached"
        assert "could not reach http://127.0.0.1" in view.issue.detail
        assert "Mooring keeps trying" in view.issue.detail
        assert view.actions == (IssueAction.CHECK_SERVER, IssueAction.DISMISS)
        for secret in (TOKEN, HEADER_VALUE):
            assert secret not in view.issue.title + view.issue.detail
        # Another process on the same data (`mooring issues`) lists the same issue.
        other = await hosts()
        assert [v.issue.id for v in about(await other.host.open_issues(), web)] == [view.issue.id]

        # The server comes up; the next attempt connects and the issue is resolved.
        demo.start_http()
        connection = await host.gateway.connect(await host.host.server("web"))
        assert [t.name for t in await connection.list_tools()]
        await issues_until(host, lambda v: not about(v, web))
        assert about(await other.host.open_issues(), web) == []
    finally:
        demo.stop_all()


async def test_a_dismissed_failure_is_not_raised_again_by_every_retry_and_a_removed_server_has_none(
    hosts: HostFactory,
) -> None:
    host = await hosts()
    port = free_port()
    web = await host.host.server_desk.add(
        ServerSpec(alias="web", url=f"http://127.0.0.1:{port}/mcp")
    )
    assert await host.host.server_desk.tools(web) is None
    [view] = about(await issues_until(host, lambda v: bool(about(v, web))), web)
    await host.host.dismiss_issue(view.issue.id)

    # The connection tries again (and fails again): the user already said they know.
    connection = await host.gateway.connect(web)
    assert await connection.list_tools() == []
    assert connection.status.state.value == "failed"
    await host.host.reachability.settled()
    assert about(await host.host.open_issues(), web) == []

    # Edited (pointed elsewhere, still failing): a new problem, a new issue.
    await host.host.server_desk.update(
        "web", ServerSpec(alias="web", url=f"http://127.0.0.1:{port}/other")
    )
    assert await host.host.server_desk.tools(await host.host.server("web")) is None
    await issues_until(host, lambda v: bool(about(v, web)))

    # Removed: nothing is left to fix.
    await host.host.server_desk.remove("web")
    await host.host.reachability.settled()
    assert about(await host.host.open_issues(), web) == []


async def test_a_secret_the_failing_server_printed_stays_out_of_its_issue(
    hosts: HostFactory,
) -> None:
    host = await hosts()
    script = (
        "import os, sys; "
        "print('refused: bad key ' + os.environ['API_KEY'], file=sys.stderr); sys.exit(3)"
    )
    leaky = await host.host.server_desk.add(
        ServerSpec(
            alias="leaky",
            command=sys.executable,
            args=("-c", script),
            env={"API_KEY": ENV_VALUE},
        )
    )
    assert await host.host.server_desk.tools(leaky) is None
    status = (await host.gateway.connect(leaky)).status
    assert ENV_VALUE in status.reason  # what the server printed, as it printed it

    [view] = about(await issues_until(host, lambda v: bool(about(v, leaky))), leaky)
    text = view.issue.title + view.issue.detail
    assert ENV_VALUE not in text
    assert "refused: bad key [redacted]" in text
