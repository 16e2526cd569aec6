"""The Streamable HTTP session of one connection: remembered before anything needs it, resumed
after a crash, ended with ``DELETE``.

MCP servers on the 2025 wire keep state per session (``Mcp-Session-Id``): the official Python
SDK 1.x and TypeScript SDK 1.x keep a session's tasks in it. A connection remembers its session
(:class:`~mooring.core.ports.HttpSessions`) before any request in it leaves, so an engine that
crashed leaves the next one a session to resume, whose tasks are still reachable.

Servers take a resumed session in one of three ways, all handled by
:class:`SessionKeepingTransport`, which sends the connection's first ``initialize`` in it:

- the Python SDK routes the ``initialize`` to the live session and answers it;
- the TypeScript SDK refuses a second ``initialize`` in a session it holds ("Invalid Request:
  Server already initialized", 400): the session is live, so it is adopted with the answer the
  server gave the ``initialize`` that began it (kept beside the session id, taken from the
  bytes the SDK read);
- a server that does not know the session (404: restarted, or it expired the session) or
  refuses it otherwise has handled nothing: the same ``initialize`` goes again without it,
  beginning a new session.

Only an ``initialize`` is ever sent twice, never another request. Session ids reach the server
and the database, never a log line or a trace: they let whoever holds them act in the session.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Final

import anyio
import httpx2

from mooring.core.servers import ServerDefinition

if TYPE_CHECKING:
    from mooring.core.ports import HttpSessions, RememberedSession

logger = logging.getLogger("mooring.mcp.transport")

SESSION_END_S: Final = 2.0
"""How long a closing connection waits for its server to take the end of its session."""

GREETING_MAX_BYTES: Final = 1 << 20
"""The most of an ``initialize`` answer kept to resume its session with (a larger one is not
kept: that session can then only be resumed by a server that answers a second ``initialize``)."""

ALREADY_INITIALIZED: Final = b"already initialized"
"""What the TypeScript SDK says when an ``initialize`` comes in a session it holds."""


class HttpSession:
    """The Streamable HTTP session a connection holds (the ``Mcp-Session-Id`` its requests
    carry), remembered before any request that needs it is sent, and ended with ``DELETE``
    when the connection closes, however it closes.

    ``remembered`` is the session a crashed engine left open for this server and account: the
    connection's ``initialize`` is sent in it (:class:`SessionKeepingTransport`)."""

    def __init__(
        self,
        server: ServerDefinition,
        profile_id: str | None,
        book: HttpSessions | None,
        remembered: RememberedSession | None,
    ) -> None:
        self.id: str | None = None
        self.protocol_version: str | None = None
        self.resume = remembered.session_id if remembered is not None else None
        """Still to try: the session to send the ``initialize`` in (``None``: tried, or none)."""
        self.greeting = remembered.initialized if remembered is not None else None
        """The server's answer to the ``initialize`` that began the session (JSON), if known."""
        self.answer: _Captured | None = None
        """The bytes of this connection's ``initialize`` answer, as the SDK reads them."""
        self._server = server
        self._profile_id = profile_id
        self._book = book
        self._remembered = self.resume

    async def note(self, request: httpx2.Request) -> None:
        """An ``httpx2`` request hook: remember the session the SDK's requests name, durably
        before the first request in it leaves (the ``initialize`` that began it came back with
        it; whatever follows, a ``tools/call`` among them, goes out after this write)."""
        session = request.headers.get("mcp-session-id")
        if not session:
            return
        self.id = session
        self.protocol_version = request.headers.get("mcp-protocol-version")
        if session != self._remembered and self._book is not None:
            self._remembered = session
            greeting = self.answer.greeting() if self.answer is not None else None
            try:
                await self._book.remember(self._server.id, self._profile_id, session, greeting)
            except Exception as exc:  # noqa: BLE001  (the session works; only a resume is lost)
                logger.warning("%s: its session could not be remembered: %s", self._alias, exc)

    async def refused(self, session: str, status: int) -> None:
        """The server does not know ``session`` (any more), or refused it: it is forgotten."""
        said = "no longer knows" if status == 404 else f"refused ({status})"
        logger.info("%s: the server %s its earlier session; a new one", self._alias, said)
        await self._forget(session)

    async def end(self, http: httpx2.AsyncClient, url: str, alias: str) -> None:
        """Tell the server the session is over: shielded from the cancellation that closes
        the connection, bounded by :data:`SESSION_END_S`; a server that cannot be reached
        or refuses it (405: it ends sessions itself) changes nothing. Once the server has
        answered, the session is forgotten; one it never heard of ending stays remembered."""
        if self.id is None:
            return
        headers = {"mcp-session-id": self.id}
        if self.protocol_version:
            headers["mcp-protocol-version"] = self.protocol_version
        status: int | None = None
        with anyio.CancelScope(shield=True) as ending:
            ending.deadline = anyio.current_time() + SESSION_END_S
            try:
                status = (await http.delete(url, headers=headers)).status_code
            except httpx2.HTTPError as exc:
                logger.info("%s: its session could not be ended: %s", alias, exc)
                return
            if status is not None:
                await self._forget(self.id)
        if status is None:
            logger.info("%s: its session's end was not answered in time", alias)
        elif status not in (200, 202, 204, 404, 405):
            logger.info("%s: ending its session answered %s", alias, status)

    @property
    def _alias(self) -> str:
        return self._server.alias

    async def _forget(self, session: str) -> None:
        if self._book is None:
            return
        if self._remembered == session:
            self._remembered = None
        try:
            await self._book.forget(self._server.id, self._profile_id, session)
        except Exception as exc:  # noqa: BLE001  (a stale session is only tried, then dropped)
            logger.warning("%s: its ended session could not be forgotten: %s", self._alias, exc)


class SessionKeepingTransport(httpx2.AsyncBaseTransport):
    """Under a connection's HTTP client: keeps the bytes of the server's answer to its
    ``initialize`` (for a later resume), and sends that ``initialize`` in the session a
    crashed engine left open, as the module's docstring tells."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, session: HttpSession) -> None:
        self._inner = inner
        self._session = session

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        session = self._session
        named = request.headers.get("mcp-session-id")
        if session.answer is not None or (named and named != session.resume):
            return await self._inner.handle_async_request(request)  # past the initialize
        message = await _initialize(request)
        if message is None:
            return await self._inner.handle_async_request(request)
        resume = session.resume
        if resume is None:
            return self._keep(await self._inner.handle_async_request(request))
        request.headers["mcp-session-id"] = resume
        response = await self._inner.handle_async_request(request)
        if response.is_redirect:
            return response  # followed (same origin, same headers): the server answers there
        session.resume = None  # one try
        if response.is_success:
            return self._keep(response)
        body = await response.aread()
        await response.aclose()
        if session.greeting is not None and ALREADY_INITIALIZED in body.lower():
            return _adopted(request, resume, message.get("id"), session.greeting)
        await session.refused(resume, response.status_code)
        del request.headers["mcp-session-id"]
        return self._keep(await self._inner.handle_async_request(request))

    def _keep(self, response: httpx2.Response) -> httpx2.Response:
        """Keep what the SDK reads of an ``initialize`` answer (only a successful one)."""
        if response.is_success:
            captured = _Captured(response.stream, response.headers.get("content-type", ""))
            self._session.answer = captured
            response.stream = captured
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


class _Captured(httpx2.AsyncByteStream):
    """A response stream that keeps a copy of what is read through it (up to
    :data:`GREETING_MAX_BYTES`)."""

    def __init__(self, inner: Any, content_type: str) -> None:
        self._inner = inner
        self._content_type = content_type.lower()
        self._kept = bytearray()
        self._whole = True

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            if self._whole:
                if len(self._kept) + len(chunk) > GREETING_MAX_BYTES:
                    self._whole = False
                    self._kept.clear()
                else:
                    self._kept += chunk
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()

    def greeting(self) -> str | None:
        """The ``initialize`` result read so far (JSON), if it is whole."""
        if not self._whole:
            return None
        return greeting_in(bytes(self._kept), self._content_type)


def greeting_in(body: bytes, content_type: str) -> str | None:
    """The ``initialize`` result in an answer's body (JSON, or the events of an SSE stream),
    as JSON; ``None`` when there is none."""
    if content_type.startswith("text/event-stream"):
        texts = [
            "\n".join(
                line[5:].removeprefix(" ")
                for line in event.splitlines()
                if line.startswith("data:")
            )
            for event in body.decode("utf-8", "replace").replace("\r\n", "\n").split("\n\n")
        ]
    else:
        texts = [body.decode("utf-8", "replace")]
    for text in texts:
        try:
            message = json.loads(text)
        except ValueError:
            continue
        result = message.get("result") if isinstance(message, dict) else None
        if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
            return json.dumps(result, separators=(",", ":"))
    return None


def _adopted(
    request: httpx2.Request, session: str, request_id: Any, greeting: str
) -> httpx2.Response:
    """The answer to a resumed ``initialize`` that its server refused because the session is
    already initialized: the answer that server gave when it began the session."""
    body = f'{{"jsonrpc":"2.0","id":{json.dumps(request_id)},"result":{greeting}}}'
    return httpx2.Response(
        200,
        headers={"content-type": "application/json", "mcp-session-id": session},
        content=body.encode(),
        request=request,
    )


async def _initialize(request: httpx2.Request) -> dict[str, Any] | None:
    """The ``initialize`` request ``request`` posts (its body is one JSON-RPC message), if so."""
    if request.method != "POST":
        return None
    body = await request.aread()
    if b"initialize" not in body:
        return None  # not worth parsing (a poll, a call)
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if isinstance(message, dict) and message.get("method") == "initialize":
        return message
    return None
