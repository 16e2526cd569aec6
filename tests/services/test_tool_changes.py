"""A server that changes its tools says so (``notifications/tools/list_changed``): the host's
tool index reads the new list at once and tells its listeners, with no reconnect."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server.mcpserver import Context, MCPServer

from mooring.core.events import ToolsDidChange
from mooring.core.ids import new_id
from mooring.core.servers import ServerDefinition, Transport
from tests.helpers.inprocess import InProcessServers, inprocess_definition
from tests.services.conftest import HostFactory

pytestmark = pytest.mark.anyio

PEER = Path(__file__).resolve().parents[1] / "mcp" / "peers" / "legacy_tasks_server.py"


def growing_server() -> MCPServer[Any]:
    """A server whose ``grow`` tool adds a tool and announces the change."""
    server: MCPServer[Any] = MCPServer("growing")

    @server.tool()
    async def grow(name: str, ctx: Context) -> str:
        """Add a tool called ``name``."""

        def added() -> str:
            return "new"

        server.add_tool(added, name=name, description="Added while running")
        await ctx.notify_tools_changed()
        return f"added {name}"

    return server


async def test_a_changed_tool_list_is_read_again_and_announced(hosts: HostFactory) -> None:
    servers = InProcessServers()
    definition = inprocess_definition("growing")
    servers.serve(definition, growing_server())
    host = await hosts(open_transport=servers)
    await host.store.add_server(definition)
    host.host.start_monitoring()  # a long-lived face (the window): it listens for changes
    tool_index = host.host.tools

    before = await tool_index.tools(definition)
    assert before is not None
    assert [t.name for t in before] == ["grow"]

    changed = anyio.Event()
    host.events.on(ToolsDidChange, lambda _event: changed.set())
    await host.host.call(definition, "grow", {"name": "fresh"})
    with anyio.fail_after(10):
        await changed.wait()

    after = await tool_index.tools(definition)  # the kept list: no refresh asked for
    assert after is not None
    assert sorted(t.name for t in after) == ["fresh", "grow"]
    assert servers.opened == 1  # read on the same session, not after a reconnect


async def test_a_2025_server_s_changed_tool_list_is_read_again_too(
    hosts: HostFactory, tmp_path: Path
) -> None:
    host = await hosts()
    definition = ServerDefinition(
        id=new_id(),
        alias="legacy",
        transport=Transport.STDIO,
        command=sys.executable,
        args=(str(PEER), f"--store={tmp_path / 'store.json'}", "--grow"),
        created_at=datetime.now(UTC),
    )
    await host.store.add_server(definition)
    tool_index = host.host.tools
    before = await tool_index.tools(definition)
    assert before is not None
    assert "fresh" not in {t.name for t in before}

    changed = anyio.Event()
    host.events.on(ToolsDidChange, lambda _event: changed.set())
    await host.host.call(definition, "grow_tools", {"name": "fresh"})
    with anyio.fail_after(30):
        await changed.wait()
    after = await tool_index.tools(definition)
    assert after is not None
    assert "fresh" in {t.name for t in after}
