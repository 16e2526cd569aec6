"""The transport half of a server connection: how bytes reach a server, and how their end is seen.

:class:`~mooring.mcp.connection.McpConnection` asks a :class:`TransportOpener` for a fresh SDK
``Transport`` on every connection attempt and wraps it in a :class:`WatchedTransport`, whose
read stream reports EOF to a :class:`SessionWatch` (the SDK's ``Client`` itself never says that
its transport died). :class:`SdkTransports` is the real opener (stdio subprocesses and
Streamable HTTP with headers from the keyring and OAuth); tests hand the connection an opener
that serves an in-process server over memory streams instead.

Also here: which HTTP statuses a request saw (:func:`http_trace`, for classifying failures),
which failures kill a ``Client`` (:func:`kills_session`), and where a stdio server's stderr
goes (:class:`StderrLog`).
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import ssl
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import AsyncExitStack
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Protocol, TextIO, cast

import anyio
import httpx2
from mcp.client import Transport
from mcp.client._transport import TransportStreams
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._stream_protocols import ReadStream
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from mooring.core.ids import short_id
from mooring.core.servers import ServerDefinition
from mooring.core.servers import Transport as TransportKind
from mooring.mcp import translate
from mooring.mcp.http_session import HttpSession, SessionKeepingTransport

if TYPE_CHECKING:
    from mooring.core.ports import HttpSessions

logger = logging.getLogger("mooring.mcp.transport")

HeadersFor = Callable[[ServerDefinition, str | None], Mapping[str, str]]
"""Extra HTTP headers for a server and credential profile (secret values from the keyring)."""

AuthFor = Callable[[ServerDefinition, str | None], httpx2.Auth | None]
"""An ``httpx2.Auth`` (e.g. the SDK's OAuth provider) for a server and credential profile."""

_STDERR_ROTATE_BYTES: Final = 1_000_000
_STDERR_TAIL_BYTES: Final = 4096


class TransportOpener(Protocol):
    """Opens one SDK transport for one connection attempt (not yet entered).

    Resources that must outlive the attempt's transport (an HTTP client) go on ``stack``, which
    the connection exits when the attempt ends; ``stderr`` is where a subprocess writes.
    """

    async def __call__(
        self,
        stack: AsyncExitStack,
        server: ServerDefinition,
        profile_id: str | None,
        stderr: StderrLog,
    ) -> Transport: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class SdkTransports:
    """The real transports: a stdio subprocess, or Streamable HTTP (implements
    :class:`TransportOpener`)."""

    connect_timeout: float = 20.0
    """Deadline of an HTTP connect (the read timeout is long: keep-alives keep it alive)."""
    headers_for: HeadersFor | None = None
    auth_for: AuthFor | None = None
    sessions: HttpSessions | None = None
    """Where each HTTP session is remembered until it is ended: one a crashed engine left open
    is resumed (``None``: none is remembered, each connection begins a new one)."""

    async def __call__(
        self,
        stack: AsyncExitStack,
        server: ServerDefinition,
        profile_id: str | None,
        stderr: StderrLog,
    ) -> Transport:
        if server.transport is TransportKind.STDIO:
            assert server.command is not None  # ServerDefinition guarantees it
            params = StdioServerParameters(
                command=server.command,
                args=list(server.args),
                env=dict(server.env) or None,  # merged over the SDK's safe default environment
                cwd=server.cwd,
            )
            return stdio_client(params, errlog=stderr.open())
        assert server.url is not None
        headers = dict(server.headers)
        if self.headers_for is not None:
            # Secret values come from the OS keyring, which may block (D-Bus, an unlock
            # prompt): ask it off the event loop, inside the connect deadline.
            extra = await anyio.to_thread.run_sync(self.headers_for, server, profile_id)
            headers.update(extra)

        remembered = None
        if self.sessions is not None:
            remembered = await self.sessions.remembered(server.id, profile_id)
        session = HttpSession(server, profile_id, self.sessions, remembered)

        def build() -> httpx2.AsyncClient:
            # Off the event loop, which may be a window's GUI thread: the OAuth provider reads
            # its stored client registration from the keyring (D-Bus, maybe an unlock prompt),
            # and a client loads the system's certificates (tens of milliseconds).
            auth = self.auth_for(server, profile_id) if self.auth_for is not None else None
            keeping = None
            if self.sessions is not None:  # the client's own transport, under the session's
                inner = httpx2.AsyncHTTPTransport(verify=tls_context())
                keeping = SessionKeepingTransport(inner, session)
            return httpx2.AsyncClient(
                headers=headers,
                auth=auth,
                verify=tls_context(),
                transport=keeping,
                timeout=httpx2.Timeout(self.connect_timeout, read=300.0),
                event_hooks={"request": [session.note], "response": [_record_http_status]},
            )

        http = await anyio.to_thread.run_sync(build)
        await stack.enter_async_context(http)
        # Runs once the transport has exited, before the client closes (the stack is LIFO).
        stack.push_async_callback(session.end, http, server.url, server.alias)
        # The SDK's own end of the session runs in the transport's exit, inside the scope
        # that was cancelled to close the connection: nothing would be sent.
        return streamable_http_client(server.url, http_client=http, terminate_on_close=False)


_tls_lock = threading.Lock()
_tls: ssl.SSLContext | None = None


def tls_context() -> ssl.SSLContext:
    """The one TLS context of every HTTP server connection: httpx2's default (the system's
    trusted certificates, hostnames checked), built once per process. A client built without
    it loads the certificates again, at every connection and every reconnect.

    Connections open side by side, each building its client on a worker thread: the lock
    makes the first build the only one (``functools.cache`` lets every thread that asks
    before the first answer build its own, ~60 ms of CPU each)."""
    global _tls
    with _tls_lock:
        if _tls is None:
            _tls = httpx2.create_ssl_context()
        return _tls


HTTP_MODULES: Final = ("httpcore2", "httpcore2._backends.anyio", "h11", "truststore")
"""What httpx2 imports only when its first client is built or first connects."""


def warm_http() -> None:
    """Load what the first HTTP connection would: :data:`HTTP_MODULES` and the TLS context
    (~50 ms of CPU loading the system's certificates). For a worker thread, ahead of a
    window's first HTTP connection, which would otherwise do it beside the live window."""
    for name in HTTP_MODULES:
        importlib.import_module(name)
    tls_context()


# HTTP statuses seen while one request is in flight. The SDK's HTTP transport runs each POST
# in a task spawned under the sender's contextvars (its context-carrying streams), so a list set
# here by the requesting task is the one the response hook appends to.
_HTTP_TRACE: ContextVar[list[int] | None] = ContextVar("mooring_mcp_http_trace", default=None)


async def _record_http_status(response: httpx2.Response) -> None:
    trace = _HTTP_TRACE.get()
    if trace is not None:
        trace.append(response.status_code)


@contextlib.contextmanager
def http_trace(trace: list[int]) -> Iterator[list[int]]:
    """Collect into ``trace`` the HTTP statuses of the requests made inside this block."""
    token = _HTTP_TRACE.set(trace)
    try:
        yield trace
    finally:
        _HTTP_TRACE.reset(token)


class SessionWatch:
    """Whether the current ``Client``'s transport is over (EOF, or a request saw it closed)."""

    def __init__(self, on_end: Callable[[], None]) -> None:
        self.over = False
        self.reason = ""
        self._on_end = on_end

    def end(self, reason: str) -> None:
        """Mark the transport over (the first reason wins) and tell the owner."""
        if not self.over:
            self.over = True
            self.reason = reason
            self._on_end()


class _WatchedReadStream:
    """The transport's read stream, reporting its end to a :class:`SessionWatch`."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception], watch: SessionWatch) -> None:
        self._inner = inner
        self._watch = watch

    @property
    def last_context(self) -> Any:
        # The dispatcher duck-types this to run handlers under the sender's contextvars.
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._watch.end("the server closed the connection")
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _WatchedReadStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


class WatchedTransport:
    """An SDK transport whose read stream reports EOF (a ``Transport`` for ``Client``)."""

    def __init__(
        self,
        inner: contextlib.AbstractAsyncContextManager[TransportStreams],
        watch: SessionWatch,
    ) -> None:
        self._inner = inner
        self._watch = watch

    async def __aenter__(self) -> TransportStreams:
        read_stream, write_stream = await self._inner.__aenter__()
        return _WatchedReadStream(read_stream, self._watch), write_stream

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        return await self._inner.__aexit__(exc_type, exc_val, exc_tb)


def kills_session(exc: BaseException) -> bool:
    """Whether a request failure means this ``Client`` is dead (it would answer -32000 to every
    later request: see docs/stack.md)."""
    cause = translate.root_cause(exc)
    if isinstance(cause, MCPError):
        return cause.code == translate.CONNECTION_CLOSED
    return isinstance(
        cause,
        OSError
        | httpx2.TransportError
        | anyio.BrokenResourceError
        | anyio.ClosedResourceError
        | anyio.EndOfStream,
    )


class StderrLog:
    """Where a stdio server's stderr goes, and its last words for failure reasons."""

    def __init__(self, server: ServerDefinition, directory: Path | None) -> None:
        self._server = server
        self._directory = directory
        self._file: TextIO | None = None
        self._start = 0

    def open(self) -> TextIO:
        """The file the server's stderr is written to (one per server; rotated when large)."""
        if self._directory is None:
            self._file = cast(
                TextIO,
                # Closed by close(): the file outlives this call (the server writes to it).
                tempfile.TemporaryFile("a+", encoding="utf-8", errors="replace"),  # noqa: SIM115
            )
        else:
            self._directory.mkdir(parents=True, exist_ok=True)
            path = (
                self._directory
                / f"{_safe_name(self._server.alias)}-{short_id(self._server.id)}.log"
            )
            with contextlib.suppress(OSError):
                if path.stat().st_size > _STDERR_ROTATE_BYTES:
                    path.replace(path.with_suffix(".log.1"))
            # O_APPEND: the child shares this file description; appends never clobber.
            self._file = cast(TextIO, path.open("a+", encoding="utf-8", errors="replace"))
        self._file.flush()
        self._start = os.fstat(self._file.fileno()).st_size
        return self._file

    def tail(self) -> str:
        """The last non-empty stderr line written since :meth:`open`, shortened."""
        if self._file is None:
            return ""
        try:
            fd = self._file.fileno()
            end = os.fstat(fd).st_size
            start = max(self._start, end - _STDERR_TAIL_BYTES)
            data = os.pread(fd, end - start, start).decode("utf-8", errors="replace")
        except (OSError, ValueError):
            return ""
        lines = [line.strip() for line in data.splitlines() if line.strip()]
        if not lines:
            return ""
        last = lines[-1]
        return last if len(last) <= 300 else last[:297] + "..."

    def close(self) -> None:
        """Close the file (the server's process has ended or is ending)."""
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None


def _safe_name(alias: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "-_." else "_" for c in alias)
    return cleaned.strip("._") or "server"
