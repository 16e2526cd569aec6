"""A face's end of the link for a command that sends a few requests and prints: no event loop.

:class:`BlockingLink` speaks the same frames as :class:`~mooring.link.client.EngineLink`
(:mod:`mooring.link.wire`) over a plain blocking socket: :meth:`BlockingLink.call` sends one
call and reads what the engine says until its result, telling each event to ``on_event`` and
running each callback as it comes (a coroutine function's, a question to the person, under an
event loop started for it alone). It loads neither asyncio (nor the ssl it brings) nor
``typing``: ``mooring call --detach`` with the engine running costs mostly what its process
imports (``bench``: ``detached_call``).

What the engine sends is handled in its order, as :class:`EngineLink` does: an event a call
caused is told before the call's result. Ctrl-C (``KeyboardInterrupt``) while a call is out
stops the waiting only: the call's id stays known, and :meth:`BlockingLink.result` waits for
it again (what arrived meanwhile is kept).
"""

from __future__ import annotations

import contextlib
import itertools
import socket

from mooring.link import wire
from mooring.link.address import reachable, same_user
from mooring.link.wire import FrameBuffer, LinkClosed, Welcome

TYPE_CHECKING = False  # not typing's (see above)
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from mooring.link.wire import Hello

CHUNK = 256 * 1024
"""Bytes read from the socket at a time."""


class BlockingLink:
    """One blocking connection from a face to its engine."""

    def __init__(self, sock: socket.socket, on_event: Callable[[Any], None] | None = None) -> None:
        self._sock = sock
        self._frames = FrameBuffer()
        self.on_event = on_event
        """Told each event the engine sends, in its order (``None``: not heard)."""
        self.welcome = Welcome(pid=0, version="", data_dir="")
        self._calls = itertools.count(1)
        self._handle_ids = itertools.count(1)
        self._handles: dict[int, Callable[..., Any]] = {}
        self._call_handles: dict[int, list[int]] = {}
        self._results: dict[int, tuple[bool, Any]] = {}
        self._closed = False

    @classmethod
    def connect(cls, path: Path, hello: Hello, *, timeout: float = 10.0) -> BlockingLink:
        """Connect to the engine listening on ``path`` and say hello (as
        :meth:`EngineLink.connect <mooring.link.client.EngineLink.connect>`: ``OSError`` when
        none listens there, ``TimeoutError`` when one does not answer in time)."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(timeout)
            with reachable(path) as address:
                sock.connect(address)
            if not same_user(sock):
                raise ConnectionRefusedError(f"{path} is served by another user")
            link = cls(sock)
            sock.sendall(wire.dumps((wire.HELLO, hello), link._permanent_handle))
            message = link._next_message()
            if not (isinstance(message, tuple) and message[0] == wire.WELCOME):
                raise ConnectionRefusedError(f"{path} did not answer as an engine")
            sock.settimeout(None)  # a call waits as long as the engine works on it
        except BaseException:
            sock.close()
            raise
        link.welcome = message[1]
        return link

    # -- calling -------------------------------------------------------------------------------

    def call(self, path: str, /, *args: Any, **kwargs: Any) -> Any:
        """Run the host's ``path`` in the engine; its result (or its error, raised)."""
        return self.result(self.send_call(path, *args, **kwargs))

    def send_call(self, path: str, /, *args: Any, **kwargs: Any) -> int:
        """Send a call without waiting for it; its id, for :meth:`result`."""
        if self._closed:
            raise LinkClosed("the link is closed")
        call_id = next(self._calls)
        handles = self._call_handles[call_id] = []

        def callback_id(fn: Callable[..., Any]) -> tuple[str, int, bool]:
            handle = next(self._handle_ids)
            self._handles[handle] = fn
            handles.append(handle)
            return ("cb", handle, wire.is_async_callable(fn))

        data = wire.dumps((wire.CALL, call_id, path, args, kwargs), callback_id)
        try:
            self._sock.sendall(data)
        except OSError as exc:
            self._forget(call_id)
            raise LinkClosed(str(exc)) from exc
        return call_id

    def result(self, call_id: int) -> Any:
        """Wait for the call ``call_id``'s result (handling whatever arrives first)."""
        while call_id not in self._results:
            self._receive(self._next_message())
        ok, value = self._results.pop(call_id)
        self._forget(call_id)
        if ok:
            return value
        raise value if isinstance(value, BaseException) else wire.EngineBug(repr(value))

    def _forget(self, call_id: int) -> None:
        for handle in self._call_handles.pop(call_id, ()):
            self._handles.pop(handle, None)

    def _permanent_handle(self, fn: Callable[..., Any]) -> tuple[str, int, bool]:
        handle = next(self._handle_ids)
        self._handles[handle] = fn
        return ("cb", handle, wire.is_async_callable(fn))

    # -- receiving -----------------------------------------------------------------------------

    def _next_message(self) -> Any:
        while True:
            payload = self._frames.next_frame()
            if payload is not None:
                return wire.loads(payload)
            try:
                chunk = self._sock.recv(CHUNK)
            except ConnectionError:  # as wire.read_frame: a reset is the engine gone
                chunk = b""
            if not chunk:
                self.close()
                raise LinkClosed("the engine closed the link")
            self._frames.feed(chunk)

    def _receive(self, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == wire.RESULT:
            _, call_id, ok, value = message
            if call_id in self._call_handles:
                self._results[call_id] = (ok, value)
        elif kind == wire.EVENT:
            if self.on_event is not None:
                self.on_event(message[1])
        elif kind == wire.INVOKE:
            _, invoke_id, handle, args, kwargs, wants_reply = message
            self._invoked(invoke_id, handle, args, kwargs, wants_reply)

    def _invoked(
        self,
        invoke_id: int,
        handle: int,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        wants_reply: bool,
    ) -> None:
        fn = self._handles.get(handle)
        if fn is None:
            if wants_reply:
                self._reply(invoke_id, False, LinkClosed("the face no longer waits for it"))
            return
        if not wants_reply:
            fn(*args, **kwargs)  # as the face's own code: an error in it is this command's
            return
        try:
            result = fn(*args, **kwargs)
            if wire.is_async_callable(fn):  # a question to the person: an event loop for it
                import asyncio

                result = asyncio.run(result)
        except KeyboardInterrupt:
            self._reply(invoke_id, False, EOFError("the question was withdrawn"))
            raise
        except Exception as exc:  # noqa: BLE001  # the engine's question fails with it
            self._reply(invoke_id, False, exc)
        else:
            self._reply(invoke_id, True, result)

    def _reply(self, invoke_id: int, ok: bool, value: Any) -> None:
        data, _error = wire.reply_frame(invoke_id, ok, value)  # a bug the engine hears of
        if self._closed:
            return
        with contextlib.suppress(OSError):  # the engine went away: the next read says so
            self._sock.sendall(data)

    def close(self) -> None:
        """Close the link (the engine goes on)."""
        if not self._closed:
            self._closed = True
            self._sock.close()
