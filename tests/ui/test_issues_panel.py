"""The Issues panel over a real host: servers whose connections fail are open issues, shown
neutralised with what the user can do, until they connect — the same issues `mooring issues`
lists, raised by the host, not by the window."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from mooring.core.issues import IssueAction
from mooring.core.views import ServerSpec
from mooring.ui.models.issues import IssueRole
from tests.mcp.servers import DemoServer, free_port
from tests.ui.conftest import until
from tests.ui.test_window_flows import open_window

pytestmark = pytest.mark.anyio


async def test_failing_servers_are_open_issues_in_the_window_until_they_connect(
    tmp_path: Path, qtbot: QtBot
) -> None:
    demo = DemoServer(tmp_path / "web")
    demo.root.mkdir()
    demo.port = free_port()  # nothing listens there yet
    try:
        async with open_window(tmp_path, qtbot) as (window, ui_host):
            host = ui_host.host
            panel = window.issues
            assert panel.model.rowCount() == 0
            assert not panel.empty_label.isHidden()
            web = await host.server_desk.add(
                ServerSpec(alias="\u202eweb", url=f"http://127.0.0.1:{demo.port}/mcp")
            )
            crashing = await host.server_desk.add(
                ServerSpec(
                    alias="crashing",
                    command=sys.executable,
                    args=("-c", "import sys; print('no config', file=sys.stderr); sys.exit(2)"),
                )
            )
            for server in (web, crashing):
                assert await host.server_desk.tools(server) is None  # connects, and fails

            await until(lambda: panel.model.rowCount() == 2, panel.count_changed)
            assert panel.empty_label.isHidden()
            assert window.tabs.tabText(window.tabs.indexOf(panel)) == "&Issues (2)"
            titles = sorted(panel.model.index(r, 0).data() for r in range(2))
            assert titles == ["<U+202E>web cannot be reached", "crashing cannot be reached"]
            # The same issues the CLI lists: they are the host's, kept in the database.
            assert {v.issue.title for v in await host.open_issues()} == {
                "\u202eweb cannot be reached",
                "crashing cannot be reached",
            }

            row = next(
                r
                for r in range(2)
                if panel.model.index(r, 0).data(IssueRole.VIEW).issue.subject == crashing.id
            )
            panel.list_view.setCurrentIndex(panel.model.index(row, 0))
            assert "exited before it answered: no config" in panel.detail_label.text()
            offered = [b.text() for b in panel.buttons.values() if not b.isHidden()]
            assert offered == ["Show server", "Dismiss"]
            panel.buttons[IssueAction.CHECK_SERVER].click()
            await until(lambda: window.tabs.currentWidget() is window.servers, panel.count_changed)
            chosen = window.servers.selected()
            assert chosen is not None
            assert chosen.server.id == crashing.id

            # The web server comes up; its connection's next attempt reaches it: resolved.
            demo.start_http()
            connection = await host.gateway.connect(web)
            assert await connection.list_tools()
            await until(lambda: panel.model.rowCount() == 1, panel.count_changed)
            assert panel.model.index(0, 0).data() == "crashing cannot be reached"
            assert [v.issue.subject for v in await host.open_issues()] == [crashing.id]
    finally:
        demo.stop_all()
