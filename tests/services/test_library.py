"""The host's library over real in-memory MCP servers: a server that changes its prompts or
resources says so, and the lists are read again at once and told; an attached resource is cut
at the limit; a server without prompts or out of reach lists nothing, or says why."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server.mcpserver import Context, MCPServer

from mooring.core.errors import KnownError
from mooring.core.events import LibraryDidChange
from mooring.core.ids import new_id
from mooring.core.library import ATTACHMENT_LIMIT
from mooring.core.servers import ServerDefinition, Transport
from tests.helpers.inprocess import InProcessServers, inprocess_definition
from tests.services.conftest import HostFactory

pytestmark = pytest.mark.anyio

PEER = Path(__file__).resolve().parents[1] / "mcp" / "peers" / "legacy_tasks_server.py"


def shelf_server() -> MCPServer[Any]:
    """A server whose ``shelve`` tool adds a prompt and a resource and announces both."""
    server: MCPServer[Any] = MCPServer("shelf")

    @server.prompt(name="first", description="The first prompt")
    def first(topic: str) -> str:
        return f"About {topic}"

    @server.resource("shelf://long", name="long", mime_type="text/plain")
    def long() -> str:
        return "x" * (ATTACHMENT_LIMIT + 10)

    @server.tool()
    async def shelve(name: str, ctx: Context) -> str:
        """Add a prompt and a resource called ``name``."""

        def added() -> str:
            return f"the {name} prompt"

        server.prompt(name=name, description="Added while running")(added)
        server.resource(f"shelf://{name}", name=name)(lambda: f"the {name} resource")
        await ctx.notify_prompts_changed()
        await ctx.notify_resources_changed()
        return f"shelved {name}"

    return server


async def test_changed_prompts_and_resources_are_read_again_and_told(hosts: HostFactory) -> None:
    servers = InProcessServers()
    definition = inprocess_definition("shelf")
    servers.serve(definition, shelf_server())
    host = await hosts(open_transport=servers)
    await host.store.add_server(definition)
    host.host.start_monitoring()  # a long-lived face (the window): it listens for changes
    library = host.host.library

    [prompt] = await library.prompts()
    assert (prompt.label, [(a.name, a.required) for a in prompt.arguments]) == (
        "shelf/first",
        [("topic", True)],
    )
    assert [r.uri for r in await library.resources("shelf")] == ["shelf://long"]

    told: set[str] = set()
    both = anyio.Event()

    def on_change(event: LibraryDidChange) -> None:
        told.add(event.kind)
        if told == {"prompts", "resources"}:
            both.set()

    host.events.on(LibraryDidChange, on_change)
    await host.host.call(definition, "shelve", {"name": "fresh"})
    with anyio.fail_after(10):
        await both.wait()

    assert [p.name for p in await library.prompts("shelf")] == ["first", "fresh"]
    assert sorted(r.uri for r in await library.resources()) == ["shelf://fresh", "shelf://long"]
    assert (await library.get_prompt("shelf", "fresh")).text == "the fresh prompt"
    assert servers.opened == 1  # read on the same session, not after a reconnect


async def test_an_attached_resource_is_cut_at_the_limit(hosts: HostFactory) -> None:
    servers = InProcessServers()
    definition = inprocess_definition("shelf")
    servers.serve(definition, shelf_server())
    host = await hosts(open_transport=servers)
    await host.store.add_server(definition)

    attached = await host.host.library.attach("shelf", "shelf://long")
    assert attached.truncated
    assert attached.text == "x" * ATTACHMENT_LIMIT


async def test_a_server_without_prompts_lists_none_and_one_out_of_reach_says_why(
    hosts: HostFactory,
) -> None:
    servers = InProcessServers()
    bare = inprocess_definition("bare")
    plain: MCPServer[Any] = MCPServer("bare")

    @plain.tool()
    def noop() -> str:
        """Nothing."""
        return ""

    servers.serve(bare, plain)
    gone = inprocess_definition("gone")  # never served: its connection fails
    host = await hosts(open_transport=servers)
    await host.store.add_server(bare)
    await host.store.add_server(gone)

    assert await host.host.library.prompts() == []
    assert await host.host.library.prompts("bare") == []
    with pytest.raises(KnownError, match="gone: its prompts cannot be listed now"):
        await host.host.library.prompts("gone")
    with pytest.raises(KnownError, match="No prompt of bare called 'missing'"):
        await host.host.library.get_prompt("bare", "missing")


async def test_a_2025_server_s_changed_prompt_list_is_read_again_too(
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
    library = host.host.library
    assert await library.prompts("legacy") == []

    changed = anyio.Event()
    host.events.on(LibraryDidChange, lambda event: changed.set())
    await host.host.call(definition, "grow_tools", {"name": "fresh"})
    with anyio.fail_after(30):
        await changed.wait()  # notifications/prompts/list_changed
    assert [p.name for p in await library.prompts("legacy")] == ["fresh"]
