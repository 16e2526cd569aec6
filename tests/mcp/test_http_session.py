"""How a connection's HTTP session is resumed after a crash, one answer of the server at a time.

The servers' real answers are exercised end to end (``tests/e2e/test_peer_matrix.py``: the
Python SDK answers a second ``initialize``; ``tests/e2e/test_everything_http.py``: the
TypeScript SDK refuses it). Here each answer is scripted at the HTTP level, to pin down what
is sent, in which session, and what is remembered."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx2
import pytest

from mooring.core.ports import RememberedSession
from mooring.core.servers import ServerDefinition, Transport
from mooring.mcp.http_session import HttpSession, SessionKeepingTransport, greeting_in

GREETING = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tasks": {"requests": {"tools": {"call": {}}}}},
    "serverInfo": {"name": "peer", "version": "1"},
}
pytestmark = pytest.mark.anyio

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}


@dataclass
class Book:
    """An in-memory ``HttpSessions`` (the SQL one is exercised end to end)."""

    rows: dict[str, tuple[str, str | None]] = field(default_factory=dict)

    async def remembered(self, server_id: str, profile_id: str | None) -> RememberedSession | None:
        row = self.rows.get(server_id)
        return None if row is None else RememberedSession(*row)

    async def remember(
        self,
        server_id: str,
        profile_id: str | None,
        session_id: str,
        initialized: str | None = None,
    ) -> None:
        self.rows[server_id] = (session_id, initialized)

    async def forget(self, server_id: str, profile_id: str | None, session_id: str) -> None:
        if self.rows.get(server_id, ("",))[0] == session_id:
            del self.rows[server_id]


SERVER = ServerDefinition(
    id="s1",
    alias="peer",
    transport=Transport.HTTP,
    url="http://127.0.0.1:9/mcp",
    created_at=datetime.now(UTC),
)


def sse(message: dict[str, Any]) -> bytes:
    return f"event: message\ndata: {json.dumps(message)}\n\n".encode()


class Streamed(httpx2.AsyncByteStream):
    """A body read as it arrives, in small pieces, as from a socket (``content=`` would be
    read whole before anything under the client sees it)."""

    def __init__(self, body: bytes) -> None:
        self._body = body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for at in range(0, len(self._body), 16):
            yield self._body[at : at + 16]


class Server:
    """Answers as scripted, and keeps what it was sent (method, session)."""

    def __init__(self, refuse_resume: tuple[int, bytes] | None) -> None:
        self.refuse_resume = refuse_resume
        self.seen: list[tuple[str, str | None]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        message = json.loads(request.content)
        session = request.headers.get("mcp-session-id")
        self.seen.append((message["method"], session))
        if message["method"] != "initialize":
            return httpx2.Response(202)
        if session is not None and self.refuse_resume is not None:
            status, body = self.refuse_resume
            return httpx2.Response(status, content=body)
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": GREETING}
        return httpx2.Response(
            200,
            headers={"content-type": "text/event-stream", "mcp-session-id": session or "fresh"},
            stream=Streamed(sse(answer)),
        )


async def connect(server: Server, book: Book) -> tuple[dict[str, Any], str | None]:
    """One connection's initialize and initialized notification; the initialize's result and
    the session the notification went in."""
    session = HttpSession(SERVER, None, book, await book.remembered(SERVER.id, None))
    transport = SessionKeepingTransport(httpx2.MockTransport(server), session)
    async with httpx2.AsyncClient(
        transport=transport, event_hooks={"request": [session.note]}
    ) as http:
        answered = await http.post(SERVER.url or "", json=INITIALIZE)
        text = answered.text
        result = json.loads(greeting_in(text.encode(), answered.headers["content-type"]) or "{}")
        named = answered.headers.get("mcp-session-id")
        headers = {"mcp-session-id": named} if named else {}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await http.post(SERVER.url or "", json=note, headers=headers)
    return result, named


async def test_a_new_session_is_remembered_with_the_answer_that_began_it() -> None:
    book, server = Book(), Server(refuse_resume=None)
    result, named = await connect(server, book)
    assert result == GREETING
    assert named == "fresh"
    session, initialized = book.rows["s1"]
    assert session == "fresh"
    assert json.loads(initialized or "") == GREETING


async def test_a_server_that_refuses_a_second_initialize_has_its_session_adopted() -> None:
    book = Book({"s1": ("left-open", json.dumps(GREETING))})
    refusal = (
        b'{"jsonrpc":"2.0","error":{"code":-32600,'
        b'"message":"Invalid Request: Server already initialized"},"id":null}'
    )
    server = Server(refuse_resume=(400, refusal))
    result, named = await connect(server, book)
    assert result == GREETING
    assert named == "left-open"
    assert server.seen == [("initialize", "left-open"), ("notifications/initialized", "left-open")]
    assert book.rows["s1"][0] == "left-open"  # still remembered, with its answer


@pytest.mark.parametrize(
    "refusal", [(404, b"Session not found"), (400, b"Bad Request: No valid session ID provided")]
)
async def test_a_session_the_server_does_not_take_gives_way_to_a_new_one(
    refusal: tuple[int, bytes],
) -> None:
    book = Book({"s1": ("left-open", json.dumps(GREETING))})
    server = Server(refuse_resume=refusal)
    result, named = await connect(server, book)
    assert result == GREETING
    assert named == "fresh"
    assert server.seen == [
        ("initialize", "left-open"),
        ("initialize", None),  # only the initialize is sent again
        ("notifications/initialized", "fresh"),
    ]
    assert book.rows["s1"][0] == "fresh"


async def test_without_the_first_answer_a_refused_session_is_not_adopted() -> None:
    # Remembered by an engine before the answers were kept: nothing to adopt it with.
    book = Book({"s1": ("left-open", None)})
    refusal = b'{"error":{"message":"Invalid Request: Server already initialized"}}'
    result, named = await connect(Server(refuse_resume=(400, refusal)), book)
    assert result == GREETING
    assert named == "fresh"


def test_the_answer_is_found_in_json_and_in_server_sent_events() -> None:
    answer = {"jsonrpc": "2.0", "id": 0, "result": GREETING}
    as_json = greeting_in(json.dumps(answer).encode(), "application/json")
    ping = {"jsonrpc": "2.0", "method": "notifications/message", "params": {}}
    as_events = greeting_in(b": comment\r\n\r\n" + sse(ping) + sse(answer), "text/event-stream")
    assert as_json
    assert as_events
    assert json.loads(as_json) == json.loads(as_events) == GREETING
    assert greeting_in(b"event: message\ndata: {\n\n", "text/event-stream") is None
