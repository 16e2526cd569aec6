"""Scripted model endpoints: the one thing the tests fake is the model, never the SDK.

A :class:`ModelEndpoint` is a small HTTP server on 127.0.0.1 (ephemeral port, in-process on a
thread) that speaks, byte for byte as the real services do:

- the **OpenAI chat-completions** wire: ``POST /v1/chat/completions`` streaming
  ``data: {chat.completion.chunk}`` server-sent events (role chunk, ``content`` deltas,
  ``tool_calls`` deltas with ``index``/``id``/``function.arguments`` fragments, a
  ``finish_reason`` chunk, a usage chunk when ``stream_options.include_usage``, ``data: [DONE]``);
  errors as ``{"error": {"message", "type", "param", "code"}}``;
- the **Anthropic Messages** wire: ``POST /v1/messages`` streaming ``message_start``,
  ``content_block_start`` / ``ping`` / ``content_block_delta`` (``text_delta``,
  ``input_json_delta``) / ``content_block_stop``, ``message_delta`` (stop reason, usage),
  ``message_stop`` and ``error`` events; errors as ``{"type": "error", "error": {...}}``;
- ``GET /v1/models`` in each wire's shape (told apart by the ``anthropic-version`` header).

Non-streaming requests (``"stream": false``) get the whole reply as one JSON object.

**A script is a queue of replies**, taken one per model request, whichever wire asks::

    from tests.helpers.model_endpoints import (
        Broken, HttpError, ModelEndpoint, Slow, StreamError, Text, ToolCall, ToolCalls,
    )

    def test_something(model_endpoint: ModelEndpoint) -> None:   # the fixture
        model_endpoint.script(
            ToolCalls([ToolCall("lookup", {"q": "x"})]),          # first request
            Text("All done."),                                     # second request
        )
        base_url = model_endpoint.openai_url       # http://127.0.0.1:PORT/v1 (openai SDK)
        base_url = model_endpoint.anthropic_url    # http://127.0.0.1:PORT (anthropic SDK)
        ...
        sent = model_endpoint.requests[-1]         # every request is recorded
        assert sent.body["tools"][0]["function"]["name"] == "lookup"
        assert sent.headers["authorization"] == "Bearer sk-canary"   # header names lowercased

Replies:

- :class:`Text` — text streamed in small deltas (``chunk`` characters each); ``truncated=True``
  ends it as cut off by the token limit;
- :class:`ToolCalls` — optional text, then tool calls whose arguments arrive in ``fragments``
  pieces; ``ToolCall(arguments="{not json")`` sends a raw (malformed) arguments text verbatim;
- :class:`HttpError` — a status, a body (rendered in the asking wire's error shape unless
  ``body`` is given raw) and headers such as ``retry-after``;
- :class:`Broken` — some text, then the connection drops mid-body (``clean=True``: the body
  ends properly but without ``[DONE]`` / ``message_stop``);
- :class:`StreamError` — some text, then an in-stream error event;
- :class:`Slow` — text, then the stream holds until ``reply.gate`` is set (for stop tests: no
  sleeps); if the client goes away meanwhile, ``endpoint.disconnected`` is set.

With the script empty, a request gets HTTP 500 ``"the test script has no reply left"``.
``endpoint.models`` is what ``/v1/models`` lists (``None``: that path answers 404);
``endpoint.api_key = "sk-…"`` makes every request without that key a 401.

Outside pytest, ``with ModelEndpoint.running() as endpoint: ...`` starts and stops one (the
benchmarks use this).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import select
import socket
import threading
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

_ids = itertools.count(1)


def _next_id(prefix: str) -> str:
    return f"{prefix}{next(_ids):06d}"


# -- replies ----------------------------------------------------------------------------------


@dataclass
class Text:
    """A plain text reply, streamed ``chunk`` characters per delta."""

    text: str
    chunk: int = 4
    input_tokens: int = 12
    truncated: bool = False
    """End as cut off by the token limit (``length`` / ``max_tokens``)."""


@dataclass
class ToolCall:
    """One tool call; ``arguments`` as a dict is sent as JSON, as a str verbatim."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str = ""
    fragments: int = 3
    """How many pieces the arguments text is streamed in."""

    @property
    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


@dataclass
class ToolCalls:
    """Optional text, then one or more tool calls (stop reason: tool calls)."""

    calls: Sequence[ToolCall]
    text: str = ""
    chunk: int = 4
    input_tokens: int = 12


_OPENAI_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "permission_error",
    404: "invalid_request_error",
    429: "requests",
}
_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


@dataclass
class HttpError:
    """An HTTP error answer.

    ``body`` given: sent as is (a dict as JSON, a str as text). Otherwise built in the asking
    wire's shape from ``message``, ``code`` (OpenAI) and ``error_type`` (both; a default by
    status).
    """

    status: int
    message: str = "error"
    code: str | None = None
    error_type: str | None = None
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass
class Broken:
    """``text`` streams, then the connection drops without finishing the body.

    ``clean=True``: the body ends properly, but without ``[DONE]`` / ``message_stop`` (and
    without a finish reason).
    """

    text: str
    chunk: int = 4
    clean: bool = False


@dataclass
class StreamError:
    """``text`` streams, then an error arrives inside the stream (HTTP status stays 200)."""

    text: str = ""
    message: str = "Overloaded"
    error_type: str = "overloaded_error"
    chunk: int = 4


@dataclass
class Slow:
    """``before`` streams, then the stream waits for ``gate``; then ``after`` and the end."""

    before: str
    after: str = ""
    chunk: int = 4
    gate: threading.Event = field(default_factory=threading.Event)


Reply = Text | ToolCalls | HttpError | Broken | StreamError | Slow


@dataclass(frozen=True)
class RecordedRequest:
    """What a client sent: method, path, headers (names lowercased) and the JSON body."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any


# -- the server -------------------------------------------------------------------------------


class _ClientGone(Exception):
    """The client closed the connection while the reply was being written."""


class ModelEndpoint:
    """A scripted model server on 127.0.0.1 speaking the OpenAI and Anthropic wires."""

    def __init__(self, models: Sequence[str] | None = ("model-small", "model-large")) -> None:
        self.models: list[str] | None = None if models is None else list(models)
        self.requests: list[RecordedRequest] = []
        self.api_key: str | None = None
        """When set, every request without this key (``Authorization: Bearer`` or
        ``x-api-key``) is refused with 401, as a real service does."""
        self.disconnected = threading.Event()
        """Set when a client closed its connection in the middle of a streamed reply."""
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.endpoint = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="model-endpoint",
            daemon=True,
        )
        self._slow: list[Slow] = []

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def openai_url(self) -> str:
        """The ``base_url`` for the openai SDK (it appends ``/chat/completions``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_url(self) -> str:
        """The ``base_url`` for the anthropic SDK (it appends ``/v1/messages``)."""
        return f"http://127.0.0.1:{self.port}"

    def script(self, *replies: Reply) -> None:
        """Queue replies, one per model request, in order."""
        with self._lock:
            self._script.extend(replies)
            self._slow.extend(r for r in replies if isinstance(r, Slow))

    @property
    def pending(self) -> int:
        """Replies not yet taken."""
        with self._lock:
            return len(self._script)

    @property
    def model_requests(self) -> list[RecordedRequest]:
        """The recorded chat requests (not ``/v1/models``)."""
        with self._lock:
            return [r for r in self.requests if r.method == "POST"]

    @property
    def last(self) -> RecordedRequest:
        """The latest chat request."""
        return self.model_requests[-1]

    def start(self) -> ModelEndpoint:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; release any held :class:`Slow` stream."""
        for reply in self._slow:
            reply.gate.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    @classmethod
    @contextlib.contextmanager
    def running(cls, **kwargs: Any) -> Iterator[ModelEndpoint]:
        """An endpoint for the duration of a ``with`` block."""
        endpoint = cls(**kwargs).start()
        try:
            yield endpoint
        finally:
            endpoint.stop()

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _take(self) -> Reply | None:
        with self._lock:
            return self._script.popleft() if self._script else None


@pytest.fixture
def model_endpoint() -> Iterator[ModelEndpoint]:
    """A running scripted model endpoint, stopped after the test."""
    with ModelEndpoint.running() as endpoint:
        yield endpoint


def _pieces(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _split(text: str, parts: int) -> list[str]:
    if not text:
        return [""]
    parts = max(1, min(parts, len(text)))
    step = -(-len(text) // parts)
    return [text[i : i + step] for i in range(0, len(text), step)]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Each event is its own small write, as on a real streaming server: without TCP_NODELAY,
    # Nagle plus the client's delayed ACK would hold the second write back ~40 ms.
    disable_nagle_algorithm = True

    @property
    def endpoint(self) -> ModelEndpoint:
        endpoint: ModelEndpoint = self.server.endpoint  # type: ignore[attr-defined]
        return endpoint

    def log_message(self, format: str, *args: Any) -> None:
        return None  # quiet: tests read ``endpoint.requests`` instead

    # -- plumbing ------------------------------------------------------------------------

    def _headers_dict(self) -> dict[str, str]:
        return {k.lower(): v for k, v in self.headers.items()}

    def _json(self, status: int, payload: Any, headers: Mapping[str, str] | None = None) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        if isinstance(payload, str):
            data = payload.encode()
        self.send_response(status)
        self.send_header(
            "Content-Type", "text/plain" if isinstance(payload, str) else "application/json"
        )
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()

    def _chunk(self, data: bytes) -> None:
        try:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError) as exc:
            self.endpoint.disconnected.set()
            raise _ClientGone from exc

    def _end_stream(self) -> None:
        try:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError) as exc:
            self.endpoint.disconnected.set()
            raise _ClientGone from exc

    def _drop(self) -> None:
        """End the connection in the middle of the body (an incomplete chunk)."""
        with contextlib.suppress(OSError):
            self.wfile.write(b'400\r\n{"partial')
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        self.close_connection = True

    def _hold(self, gate: threading.Event) -> None:
        """Wait for ``gate`` while watching for the client to hang up."""
        sock = self.connection
        while not gate.is_set():
            readable, _, _ = select.select([sock], [], [], 0.02)
            if readable:
                try:
                    peeked = sock.recv(1, socket.MSG_PEEK)
                except OSError:
                    peeked = b""
                if not peeked:
                    self.endpoint.disconnected.set()
                    raise _ClientGone

    def _key_ok(self, headers: Mapping[str, str]) -> bool:
        key = self.endpoint.api_key
        if key is None:
            return True
        return key in (headers.get("x-api-key"), headers.get("authorization", "")[7:])

    # -- requests ------------------------------------------------------------------------

    def do_GET(self) -> None:
        headers = self._headers_dict()
        self.endpoint._record(RecordedRequest("GET", self.path, headers, None))
        anthropic = "anthropic-version" in headers
        if not self._key_ok(headers):
            self._error(HttpError(401, "Invalid API key"), anthropic=anthropic)
            return
        models = self.endpoint.models
        if not self.path.split("?")[0].endswith("/models") or models is None:
            self._error(HttpError(404, "Not found"), anthropic=anthropic)
            return
        if anthropic:
            data = [
                {
                    "type": "model",
                    "id": m,
                    "display_name": m,
                    "created_at": "2026-01-01T00:00:00Z",
                }
                for m in models
            ]
            self._json(
                200,
                {
                    "data": data,
                    "has_more": False,
                    "first_id": models[0] if models else None,
                    "last_id": models[-1] if models else None,
                },
            )
        else:
            self._json(
                200,
                {
                    "object": "list",
                    "data": [
                        {"id": m, "object": "model", "created": 1767225600, "owned_by": "test"}
                        for m in models
                    ],
                },
            )

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        headers = self._headers_dict()
        self.endpoint._record(RecordedRequest("POST", self.path, headers, body))
        path = self.path.split("?")[0]
        anthropic = path.endswith("/messages")
        if not anthropic and not path.endswith("/chat/completions"):
            self._error(
                HttpError(404, f"no route {path}"), anthropic="anthropic-version" in headers
            )
            return
        if not self._key_ok(headers):
            self._error(HttpError(401, "Invalid API key"), anthropic=anthropic)
            return
        reply = self.endpoint._take()
        if reply is None:
            self._error(HttpError(500, "the test script has no reply left"), anthropic=anthropic)
            return
        if isinstance(reply, HttpError):
            self._error(reply, anthropic=anthropic)
            return
        model = str(body.get("model", "")) if isinstance(body, dict) else ""
        streaming = isinstance(body, dict) and bool(body.get("stream"))
        try:
            if anthropic:
                wire: _Wire = _AnthropicWire(self, model)
            else:
                usage = isinstance(body, dict) and bool(
                    (body.get("stream_options") or {}).get("include_usage")
                )
                wire = _OpenAIWire(self, model, include_usage=usage)
            if streaming:
                wire.stream(reply)
            else:
                wire.whole(reply)
        except _ClientGone:
            self.close_connection = True

    def _error(self, error: HttpError, *, anthropic: bool) -> None:
        if error.body is not None:
            payload = error.body
        elif anthropic:
            payload = {
                "type": "error",
                "error": {
                    "type": error.error_type
                    or _ANTHROPIC_ERROR_TYPES.get(error.status, "api_error"),
                    "message": error.message,
                },
                "request_id": _next_id("req_"),
            }
        else:
            payload = {
                "error": {
                    "message": error.message,
                    "type": error.error_type
                    or _OPENAI_ERROR_TYPES.get(error.status, "server_error"),
                    "param": None,
                    "code": error.code,
                }
            }
        self._json(error.status, payload, error.headers)


class _Wire:
    """How one wire renders each kind of reply."""

    def __init__(self, handler: _Handler, model: str) -> None:
        self.h = handler
        self.model = model or "model-small"

    def stream(self, reply: Reply) -> None:
        raise NotImplementedError

    def whole(self, reply: Reply) -> None:
        raise NotImplementedError


class _OpenAIWire(_Wire):
    def __init__(self, handler: _Handler, model: str, *, include_usage: bool) -> None:
        super().__init__(handler, model)
        self.include_usage = include_usage
        self.id = _next_id("chatcmpl-")
        self.created = 1767225600

    def _chunk(self, choices: list[dict[str, Any]], usage: dict[str, int] | None = None) -> None:
        payload: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": "fp_scripted",
            "choices": choices,
        }
        if self.include_usage:
            payload["usage"] = usage
        self.h._chunk(b"data: " + json.dumps(payload).encode() + b"\n\n")

    def _delta(self, delta: dict[str, Any], finish: str | None = None) -> None:
        self._chunk([{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}])

    def _text(self, text: str, size: int) -> None:
        for piece in _pieces(text, size):
            self._delta({"content": piece})

    def _finish(self, reason: str, text: str, input_tokens: int) -> None:
        self._delta({}, reason)
        if self.include_usage:
            out = max(1, len(text) // 4)
            self._chunk(
                [],
                {
                    "prompt_tokens": input_tokens,
                    "completion_tokens": out,
                    "total_tokens": input_tokens + out,
                },
            )
        self.h._chunk(b"data: [DONE]\n\n")
        self.h._end_stream()

    def stream(self, reply: Reply) -> None:
        self.h._start_stream()
        self._delta({"role": "assistant", "content": "", "refusal": None})
        if isinstance(reply, Text):
            self._text(reply.text, reply.chunk)
            self._finish("length" if reply.truncated else "stop", reply.text, reply.input_tokens)
        elif isinstance(reply, ToolCalls):
            self._text(reply.text, reply.chunk)
            for index, call in enumerate(reply.calls):
                call_id = call.id or _next_id("call_")
                self._delta(
                    {
                        "tool_calls": [
                            {
                                "index": index,
                                "id": call_id,
                                "type": "function",
                                "function": {"name": call.name, "arguments": ""},
                            }
                        ]
                    }
                )
                for piece in _split(call.arguments_text, call.fragments):
                    self._delta(
                        {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
                    )
            self._finish("tool_calls", reply.text, reply.input_tokens)
        elif isinstance(reply, Broken):
            self._text(reply.text, reply.chunk)
            if reply.clean:
                self.h._end_stream()
            else:
                self.h._drop()
        elif isinstance(reply, StreamError):
            self._text(reply.text, reply.chunk)
            error = {
                "error": {
                    "message": reply.message,
                    "type": reply.error_type,
                    "param": None,
                    "code": None,
                }
            }
            self.h._chunk(b"data: " + json.dumps(error).encode() + b"\n\n")
            self.h._end_stream()
        elif isinstance(reply, Slow):
            self._text(reply.before, reply.chunk)
            self.h._hold(reply.gate)
            self._text(reply.after, reply.chunk)
            self._finish("stop", reply.before + reply.after, 12)

    def whole(self, reply: Reply) -> None:
        message: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
        finish = "stop"
        if isinstance(reply, Text | Broken | StreamError):
            message["content"] = reply.text
        elif isinstance(reply, Slow):
            self.h._hold(reply.gate)
            message["content"] = reply.before + reply.after
        elif isinstance(reply, ToolCalls):
            message["content"] = reply.text or None
            message["tool_calls"] = [
                {
                    "id": call.id or _next_id("call_"),
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_text},
                }
                for call in reply.calls
            ]
            finish = "tool_calls"
        self.h._json(
            200,
            {
                "id": self.id,
                "object": "chat.completion",
                "created": self.created,
                "model": self.model,
                "choices": [
                    {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
                ],
                "usage": {"prompt_tokens": 12, "completion_tokens": 4, "total_tokens": 16},
            },
        )


class _AnthropicWire(_Wire):
    def __init__(self, handler: _Handler, model: str) -> None:
        super().__init__(handler, model)
        self.id = _next_id("msg_")
        self.index = 0

    def _event(self, name: str, payload: dict[str, Any]) -> None:
        data = json.dumps({"type": name, **payload}).encode()
        self.h._chunk(b"event: " + name.encode() + b"\ndata: " + data + b"\n\n")

    def _message_start(self, input_tokens: int) -> None:
        self._event(
            "message_start",
            {
                "message": {
                    "id": self.id,
                    "type": "message",
                    "role": "assistant",
                    "model": self.model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": input_tokens,
                        "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 0,
                        "output_tokens": 1,
                    },
                }
            },
        )

    def _text_block(self, text: str, size: int, *, close: bool = True) -> None:
        if not text:
            return
        self._event(
            "content_block_start",
            {"index": self.index, "content_block": {"type": "text", "text": ""}},
        )
        if self.index == 0:
            self._event("ping", {})
        for piece in _pieces(text, size):
            self._event(
                "content_block_delta",
                {"index": self.index, "delta": {"type": "text_delta", "text": piece}},
            )
        if close:
            self._event("content_block_stop", {"index": self.index})
            self.index += 1

    def _finish(self, reason: str, text: str) -> None:
        self._event(
            "message_delta",
            {
                "delta": {"stop_reason": reason, "stop_sequence": None},
                "usage": {"output_tokens": max(1, len(text) // 4)},
            },
        )
        self._event("message_stop", {})
        self.h._end_stream()

    def stream(self, reply: Reply) -> None:
        self.h._start_stream()
        self._message_start(getattr(reply, "input_tokens", 12))
        if isinstance(reply, Text):
            self._text_block(reply.text, reply.chunk)
            self._finish("max_tokens" if reply.truncated else "end_turn", reply.text)
        elif isinstance(reply, ToolCalls):
            self._text_block(reply.text, reply.chunk)
            for call in reply.calls:
                self._event(
                    "content_block_start",
                    {
                        "index": self.index,
                        "content_block": {
                            "type": "tool_use",
                            "id": call.id or _next_id("toolu_"),
                            "name": call.name,
                            "input": {},
                        },
                    },
                )
                for piece in _split(call.arguments_text, call.fragments):
                    self._event(
                        "content_block_delta",
                        {
                            "index": self.index,
                            "delta": {"type": "input_json_delta", "partial_json": piece},
                        },
                    )
                self._event("content_block_stop", {"index": self.index})
                self.index += 1
            self._finish("tool_use", reply.text)
        elif isinstance(reply, Broken):
            self._text_block(reply.text, reply.chunk, close=False)
            if reply.clean:
                self.h._end_stream()
            else:
                self.h._drop()
        elif isinstance(reply, StreamError):
            self._text_block(reply.text, reply.chunk, close=False)
            self._event("error", {"error": {"type": reply.error_type, "message": reply.message}})
            self.h._end_stream()
        elif isinstance(reply, Slow):
            self._text_block(reply.before, reply.chunk, close=False)
            self.h._hold(reply.gate)
            for piece in _pieces(reply.after, reply.chunk):
                self._event(
                    "content_block_delta",
                    {"index": self.index, "delta": {"type": "text_delta", "text": piece}},
                )
            self._event("content_block_stop", {"index": self.index})
            self._finish("end_turn", reply.before + reply.after)

    def whole(self, reply: Reply) -> None:
        content: list[dict[str, Any]] = []
        stop = "end_turn"
        if isinstance(reply, Slow):
            self.h._hold(reply.gate)
            content.append({"type": "text", "text": reply.before + reply.after})
        elif isinstance(reply, Text | Broken | StreamError):
            content.append({"type": "text", "text": reply.text})
        elif isinstance(reply, ToolCalls):
            if reply.text:
                content.append({"type": "text", "text": reply.text})
            for call in reply.calls:
                try:
                    arguments = json.loads(call.arguments_text)
                except ValueError:
                    arguments = {}
                content.append(
                    {
                        "type": "tool_use",
                        "id": call.id or _next_id("toolu_"),
                        "name": call.name,
                        "input": arguments,
                    }
                )
            stop = "tool_use"
        self.h._json(
            200,
            {
                "id": self.id,
                "type": "message",
                "role": "assistant",
                "model": self.model,
                "content": content,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": {"input_tokens": 12, "output_tokens": 4},
            },
        )
