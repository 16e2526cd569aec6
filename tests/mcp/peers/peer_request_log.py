"""Every request and notification an ``mcp`` 1.x server session receives, one JSON line each.

Imported by the peer scripts that run in ``tests/peers_py``'s own interpreter (mcp 1.30,
fastmcp 3.4): it wraps ``mcp.server.session.ServerSession`` (which FastMCP's session subclasses)
before any request arrives, so the tests can count ``tools/call`` at the server.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mcp.server.session import ServerSession


def _append(log: Path, entry: dict[str, Any]) -> None:
    line = json.dumps(entry) + "\n"
    with log.open("a") as out:  # one write per line: whole lines, even from two processes
        out.write(line)


def record_requests(log: Path) -> None:
    """Append ``{"method", "tool", "task", "pid"}`` to ``log`` for everything received."""
    received_request = ServerSession._received_request
    received_notification = ServerSession._received_notification

    async def logged_request(self: ServerSession, responder: Any) -> Any:
        root = responder.request.root
        params = getattr(root, "params", None)
        _append(
            log,
            {
                "method": root.method,
                "tool": getattr(params, "name", None),
                "task": getattr(params, "taskId", None),
                "pid": os.getpid(),
            },
        )
        return await received_request(self, responder)

    async def logged_notification(self: ServerSession, notification: Any) -> Any:
        _append(log, {"method": notification.root.method, "pid": os.getpid()})
        return await received_notification(self, notification)

    ServerSession._received_request = logged_request  # type: ignore[method-assign]
    ServerSession._received_notification = logged_notification  # type: ignore[method-assign]


def logged_deletes(app: Any, log: Path) -> Any:
    """``app``, with every HTTP ``DELETE`` (a client ending its session) appended to ``log`` as
    ``{"method": "http:DELETE", "session": ...}``."""

    async def logged(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") == "http" and scope.get("method") == "DELETE":
            headers = dict(scope.get("headers") or [])
            session = headers.get(b"mcp-session-id", b"").decode("latin-1")
            _append(log, {"method": "http:DELETE", "session": session, "pid": os.getpid()})
        await app(scope, receive, send)

    return logged


def serve_asgi(app: Any, port: int = 0) -> None:
    """Bind 127.0.0.1 on ``port`` (0: a free one), say ``listening on URL`` (the caller waits
    for the line), then serve ``app`` with uvicorn until stopped."""
    import socket
    import sys

    import anyio
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart on the same port
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    sys.stdout.write(f"listening on http://127.0.0.1:{port}/mcp\n")
    sys.stdout.flush()
    anyio.run(uvicorn.Server(config).serve, [sock])
