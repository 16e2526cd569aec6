"""What opening a transport does on which thread: nothing that may block (the keyring, the
system's certificates) runs on the event loop's thread, which in the window paints."""

from __future__ import annotations

import threading
from contextlib import AsyncExitStack
from pathlib import Path

import httpx2
import pytest

from mooring.core.servers import ServerDefinition
from mooring.mcp.transport import SdkTransports, StderrLog
from tests.mcp.servers import http_definition

pytestmark = pytest.mark.anyio


async def test_an_http_connection_asks_the_keyring_off_the_event_loop(tmp_path: Path) -> None:
    # Both the secret headers and the OAuth provider (its stored client registration) come
    # from the keyring, which may block on D-Bus or an unlock prompt.
    asked_on: dict[str, str] = {}

    def headers_for(_server: ServerDefinition, _profile: str | None) -> dict[str, str]:
        asked_on["headers"] = threading.current_thread().name
        return {}

    def auth_for(_server: ServerDefinition, _profile: str | None) -> httpx2.Auth | None:
        asked_on["auth"] = threading.current_thread().name
        return None

    server = http_definition("http://127.0.0.1:9/mcp")
    opener = SdkTransports(headers_for=headers_for, auth_for=auth_for)
    async with AsyncExitStack() as stack:
        await opener(stack, server, None, StderrLog(server, tmp_path))
    loop_thread = threading.current_thread().name
    assert set(asked_on) == {"headers", "auth"}
    assert loop_thread not in asked_on.values()
