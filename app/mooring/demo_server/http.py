"""Streamable HTTP serving: the SDK's app behind a thin ASGI layer for the HTTP fault switches."""

from __future__ import annotations

import logging
import os
import socket
import sys
from collections.abc import Awaitable, Callable

import uvicorn
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mooring.demo_server.config import Faults, ServerConfig
from mooring.demo_server.middleware import RequestLog
from mooring.demo_server.wire import iso_ms, now_ms

logger = logging.getLogger("mooring.demo_server.http")


class DroppedReplyError(Exception):
    """Raised after the response head was sent, so the server aborts the connection mid-response."""


class _QuietDroppedReplies(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, DroppedReplyError)


class FaultLayer:
    """ASGI middleware for the faults that live at the HTTP layer.

    * ``token_expires_after``: a bearer token used for more than N requests gets 401
      ``invalid_token`` from then on, as if it expired.
    * dropped replies: the response carrying a task id in ``drop_task_ids`` is cut off after
      its head, so the client sees the connection drop although the task was created.

    With a request log, a client ending its session (HTTP ``DELETE``) is logged too, as
    ``{"method": "http:DELETE", "session": ...}``.
    """

    def __init__(
        self,
        app: ASGIApp,
        faults: Faults,
        drop_task_ids: set[str],
        request_log: RequestLog | None = None,
    ) -> None:
        self.app = app
        self.faults = faults
        self.drop_task_ids = drop_task_ids
        self.request_log = request_log
        self._token_uses: dict[bytes, int] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Apply the HTTP faults, then hand the request to the MCP app."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        if self.request_log is not None and scope.get("method") == "DELETE":
            session = headers.get(b"mcp-session-id", b"").decode("latin-1")
            self.request_log.write(
                {
                    "ts": iso_ms(now_ms()),
                    "pid": os.getpid(),
                    "transport": "http",
                    "method": "http:DELETE",
                    "session": session,
                }
            )
        authorization = headers.get(b"authorization", b"")
        if self.faults.token_expires_after is not None and authorization.lower().startswith(
            b"bearer "
        ):
            uses = self._token_uses.get(authorization, 0) + 1
            self._token_uses[authorization] = uses
            if uses > self.faults.token_expires_after:
                await _unauthorized(send)
                return
        if self.faults.drop_create_reply == 0:
            await self.app(scope, receive, send)
            return
        # The task id to drop is only known once the handler created the task: watch every reply.
        await self.app(scope, receive, self._dropping(send))

    def _dropping(self, send: Send) -> Callable[[Message], Awaitable[None]]:
        head: list[Message] = []

        async def wrapped(message: Message) -> None:
            if message["type"] == "http.response.start":
                head.append(message)
                return
            if message["type"] == "http.response.body" and head:
                body: bytes = message.get("body", b"")
                dropped = next((t for t in self.drop_task_ids if t.encode() in body), None)
                await send(head.pop())
                if dropped is not None:
                    self.drop_task_ids.discard(dropped)
                    logger.warning("fault: dropping the reply that carries task %s", dropped)
                    raise DroppedReplyError(dropped)
            await send(message)

        return wrapped


async def _unauthorized(send: Send) -> None:
    body = b'{"error":"invalid_token","error_description":"The access token expired"}'
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (
                    b"www-authenticate",
                    b'Bearer error="invalid_token", error_description="The access token expired"',
                ),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def bind(host: str, port: int) -> socket.socket:
    """Bind the listening socket up front, so ``--port 0`` can report the port it got."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def endpoint_url(config: ServerConfig, sock: socket.socket) -> str:
    """The ``/mcp`` URL a bound socket serves."""
    port = sock.getsockname()[1]
    host = f"[{config.host}]" if ":" in config.host else config.host
    return f"http://{host}:{port}/mcp"


async def serve_http(
    app: ASGIApp,
    config: ServerConfig,
    drop_task_ids: set[str],
    sock: socket.socket | None = None,
) -> None:
    """Serve until SIGINT/SIGTERM; prints ``listening on <url>`` on stdout once bound.

    ``sock`` is a socket already bound by :func:`bind` (when the app needs its own URL).
    """
    if sock is None:
        sock = bind(config.host, config.port)
    logging.getLogger("uvicorn.error").addFilter(_QuietDroppedReplies())
    server = uvicorn.Server(
        uvicorn.Config(
            FaultLayer(
                app,
                config.faults,
                drop_task_ids,
                RequestLog(config.request_log) if config.request_log is not None else None,
            ),
            log_level=config.log_level.lower(),
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=2,
        )
    )
    sys.stdout.write(f"mooring-demo-server listening on {endpoint_url(config, sock)}\n")
    sys.stdout.flush()
    try:
        await server.serve(sockets=[sock])
    finally:
        sock.close()
