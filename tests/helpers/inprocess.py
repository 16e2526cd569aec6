"""In-process MCP servers for the fast service tier: real server code, real ``Client``, no
subprocess.

:class:`InProcessServers` is a :class:`~mooring.mcp.transport.TransportOpener`: a connection to a
registered server definition gets the SDK's in-memory transport to that server (the JSON-RPC
stream loop, the handshake and every notification, just no pipe). Where no public seam exists:
``InMemoryTransport`` lives in the SDK's private ``mcp.client._memory`` (``Client(server)``, the
public seam, drives a stream-less path a connection cannot watch for its end).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
from mcp.client import Transport
from mcp.client._memory import InMemoryTransport
from mcp.server.mcpserver import MCPServer

from mooring.core.ids import new_id
from mooring.core.servers import ServerDefinition
from mooring.core.servers import Transport as TransportKind
from mooring.demo_server.app import DemoServer, build_server
from mooring.demo_server.config import ServerConfig
from mooring.mcp.transport import StderrLog

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "resources" / "samples"


def inprocess_definition(alias: str = "demo") -> ServerDefinition:
    """A server definition the in-process opener serves (its command is never run)."""
    return ServerDefinition(
        id=new_id(),
        alias=alias,
        transport=TransportKind.STDIO,
        command="in-process",
        created_at=datetime.now(UTC),
    )


@dataclass
class InProcessServers:
    """Serves registered in-process servers to connections (a ``TransportOpener``)."""

    servers: dict[str, MCPServer[Any]] = field(default_factory=dict)
    opened: int = 0
    """How many transports were opened (one per connection attempt)."""

    def serve(self, definition: ServerDefinition, server: MCPServer[Any]) -> None:
        """Answer connections to ``definition`` with ``server`` (replacing any before)."""
        self.servers[definition.id] = server

    def stop(self, definition: ServerDefinition) -> None:
        """Refuse later connections to ``definition`` (as a server that will not start)."""
        self.servers.pop(definition.id, None)

    async def __call__(
        self,
        stack: AsyncExitStack,
        server: ServerDefinition,
        profile_id: str | None,
        stderr: StderrLog,
    ) -> Transport:
        found = self.servers.get(server.id)
        if found is None:
            raise OSError(f"no in-process server is serving {server.alias!r}")
        self.opened += 1
        return InMemoryTransport(found)


@asynccontextmanager
async def running_demo(store: Path, **config: Any) -> AsyncIterator[DemoServer]:
    """The bundled demo server with fast test settings, its task runner running."""
    demo = build_server(
        ServerConfig(
            store=store,
            poll_interval_ms=50,
            lease_ms=400,
            samples_dir=SAMPLES,
            conformance_fixtures=True,
            **config,
        )
    )
    async with anyio.create_task_group() as tg:
        await tg.start(demo.runner.serve)
        try:
            yield demo
        finally:
            tg.cancel_scope.cancel()
