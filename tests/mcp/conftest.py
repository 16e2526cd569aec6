"""Fixtures for the wire tests: demo servers on temporary stores, connections torn down."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import anyio
import pytest

from mooring.core.servers import ServerDefinition
from mooring.mcp.connection import ConnectionSettings, McpConnection
from mooring.mcp.transport import HeadersFor
from tests.mcp.servers import DemoServer

Connect = Callable[..., McpConnection]


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[DemoServer]:
    """A demo server's state directory; every instance it starts is stopped afterwards."""
    server = DemoServer(tmp_path / "demo")
    server.root.mkdir()
    try:
        yield server
    finally:
        server.stop_all()


@pytest.fixture
def settings(tmp_path: Path) -> ConnectionSettings:
    """Short deadlines and retries, so failures show quickly; server stderr in a temp dir."""
    return ConnectionSettings(
        connect_timeout=20.0,
        request_timeout=10.0,
        call_timeout=20.0,
        backoff_initial=0.05,
        backoff_max=0.5,
        min_retry_interval=0.05,
        stderr_dir=tmp_path / "server-logs",
    )


@pytest.fixture
async def connect(settings: ConnectionSettings) -> AsyncIterator[Connect]:
    """Start connections; every one is closed at teardown."""
    opened: list[McpConnection] = []

    def start(
        server: ServerDefinition,
        *,
        profile_id: str | None = None,
        headers_for: HeadersFor | None = None,
        connection_settings: ConnectionSettings | None = None,
    ) -> McpConnection:
        connection = McpConnection(
            server,
            profile_id,
            settings=connection_settings or settings,
            headers_for=headers_for,
        )
        connection.start()
        opened.append(connection)
        return connection

    try:
        yield start
    finally:
        with anyio.fail_after(30):
            for connection in opened:
                await connection.aclose()
