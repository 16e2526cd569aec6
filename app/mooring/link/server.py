"""The engine's end of the link: faces connect, call the host, hear its events.

:class:`LinkServer` listens on the data folder's socket. Each connected face is a
:class:`Face`: its calls run as tasks of their own with :data:`~mooring.core.faces.CURRENT_FACE`
set to it (so a question the call raises goes back to that face), its callbacks are
:class:`RemoteCallback` objects that call back across the link, and every event the engine
publishes reaches it in order, after the changes it describes were stored and interleaved
with the results exactly as they happened.

A face that goes away takes nothing with it: the calls it made run on to their end (a tool
call whose request is out is never cut off halfway), only their answers are dropped, and a
question it was being asked is withdrawn (its callbacks raise :class:`~mooring.link.wire.
LinkClosed`).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import itertools
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mooring.core.errors import KnownError
from mooring.core.faces import CURRENT_FACE, NOBODY, Askers
from mooring.link import wire
from mooring.link.address import peer_pid, reachable, same_user
from mooring.link.wire import Hello, Welcome

log = logging.getLogger("mooring.link")

WRITE_BUFFER_LIMIT = 256 * 1024 * 1024
"""A face that lets this much go unread (a stopped process) is disconnected."""


class RemoteCallback:
    """A face's function, called from the engine: a coroutine function is awaited across the
    link (its result or exception comes back); a plain one is called and not waited for."""

    __slots__ = ("_face", "_handle", "is_async")

    def __init__(self, face: Face, handle: int, is_async: bool) -> None:
        self._face = face
        self._handle = handle
        self.is_async = is_async

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.is_async:
            return self._face.invoke(self._handle, args, kwargs)
        self._face.notify(self._handle, args, kwargs)
        return None

    def __repr__(self) -> str:
        return f"<callback {self._handle} of {self._face}>"


class Face:
    """One connected face, as the engine sees it."""

    def __init__(self, number: int, writer: asyncio.StreamWriter, pid: int | None) -> None:
        self.number = number
        self.pid = pid
        self.kind = "?"
        self.version = ""
        self.askers: Askers = NOBODY
        self.hooks: dict[str, Callable[..., Any]] = {}
        """The face's other callbacks (see :class:`~mooring.link.wire.Hello`)."""
        self.active = False
        """Whether the face is the active window (it says so as it changes)."""
        self.wants_events: bool | frozenset[str] = False
        self.connected = True
        self.calls = 0
        """Calls of this face still running."""
        self._writer = writer
        self._invoke_ids = itertools.count(1)
        self._replies: dict[int, asyncio.Future[Any]] = {}

    def __repr__(self) -> str:
        return f"<{self.kind} face {self.number} pid {self.pid}>"

    def greet(self, hello: Hello) -> None:
        self.kind = hello.face
        self.version = hello.version
        self.askers = hello.askers
        self.hooks = dict(hello.hooks)
        self.wants_events = hello.events

    # -- sending -------------------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        """Queue a frame (never waits); a face that reads nothing for long is dropped."""
        if not self.connected:
            return
        transport = self._writer.transport
        if transport.is_closing():
            return
        if transport.get_write_buffer_size() > WRITE_BUFFER_LIMIT:
            log.warning("%s reads nothing; disconnecting it", self)
            self.lost()
            transport.abort()
            return
        self._writer.write(data)

    def send_message(self, message: tuple[Any, ...]) -> None:
        try:
            data = wire.dumps(message)
        except Exception as exc:
            log.exception("a message to %s does not cross the link", self)
            if message[0] != wire.RESULT:
                return
            data = wire.dumps((wire.RESULT, message[1], False, wire.EngineBug(repr(exc))))
        self.send(data)

    async def drain(self) -> None:
        with contextlib.suppress(ConnectionError):
            await self._writer.drain()

    # -- callbacks -----------------------------------------------------------------------------

    def callback(self, pid: Any) -> RemoteCallback:
        """The engine's stand-in for a face's function (the unpickler's persistent load)."""
        kind, handle, is_async = pid
        if kind != "cb":
            raise ValueError(f"unknown persistent id {kind!r}")
        return RemoteCallback(self, int(handle), bool(is_async))

    async def invoke(self, handle: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Call a face's coroutine function and wait for its result."""
        if not self.connected:
            raise wire.LinkClosed("the face that was asked went away")
        invoke_id = next(self._invoke_ids)
        reply: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._replies[invoke_id] = reply
        try:
            self.send_message((wire.INVOKE, invoke_id, handle, args, kwargs, True))
            return await reply
        finally:
            self._replies.pop(invoke_id, None)

    def notify(self, handle: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Call a face's plain function (no reply awaited)."""
        self.send_message((wire.INVOKE, next(self._invoke_ids), handle, args, kwargs, False))

    def replied(self, invoke_id: int, ok: bool, value: Any) -> None:
        reply = self._replies.get(invoke_id)
        if reply is None or reply.done():
            return
        if ok:
            reply.set_result(value)
        else:
            reply.set_exception(value if isinstance(value, BaseException) else RuntimeError(value))

    def close(self) -> None:
        """Disconnect the face (the engine is closing)."""
        self.lost()
        self._writer.close()

    def lost(self) -> None:
        """The face went away: every question put to it is withdrawn."""
        if not self.connected:
            return
        self.connected = False
        for reply in self._replies.values():
            if not reply.done():
                reply.set_exception(wire.LinkClosed("the face that was asked went away"))


Resolve = Callable[[str], Callable[..., Any]]
"""The engine's lookup of a call's target by its dotted path (refuses what is not offered)."""


class LinkServer:
    """Serves the host to faces on one socket."""

    def __init__(
        self,
        resolve: Resolve,
        welcome: Welcome,
        *,
        on_change: Callable[[], None] = lambda: None,
    ) -> None:
        self._resolve = resolve
        self._welcome = welcome
        self._on_change = on_change
        self._server: asyncio.Server | None = None
        self._path: Path | None = None
        self._numbers = itertools.count(1)
        self.faces: list[Face] = []
        """Connected faces, oldest first."""
        self._tasks: set[asyncio.Task[Any]] = set()
        self._serving: set[asyncio.Task[None]] = set()

    @property
    def busy(self) -> bool:
        """Whether a face is connected or a call of one still runs."""
        return bool(self.faces) or bool(self._tasks)

    async def start(self, path: Path) -> None:
        """Listen on ``path`` (a stale socket file left by an engine that died is replaced:
        the caller holds the data folder's engine lock)."""
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # noqa: ASYNC240  # one unlink, before anything is served
        previous = os.umask(0o177)  # the socket file is created 0600
        try:
            with reachable(path) as address:
                self._server = await asyncio.start_unix_server(
                    self._serve, path=address, limit=1024 * 1024
                )
        finally:
            os.umask(previous)
        os.chmod(path, 0o600)
        self._path = path
        log.info("engine link listening on %s", path)

    def publish(self, event: Any) -> None:
        """Tell every face that listens (pickled once for all of them)."""
        listening = [
            f for f in self.faces if f.connected and wire.wants_event(f.wants_events, event)
        ]
        if not listening:
            return
        try:
            data = wire.dumps((wire.EVENT, event))
        except Exception:
            log.exception("the event %s does not cross the link", type(event).__name__)
            return
        for face in listening:
            face.send(data)

    async def aclose(self) -> None:
        """Stop listening, disconnect every face, end the calls still running."""
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for face in list(self.faces):
            face.close()
        # Each face's reader sees the end and returns (cancelled instead, asyncio's stream
        # server would log the cancellation as an error).
        if self._serving:
            await asyncio.wait(list(self._serving), timeout=5)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None
        if self._path is not None:
            with contextlib.suppress(FileNotFoundError):
                self._path.unlink()
            self._path = None

    # -- one face ------------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        current = asyncio.current_task()
        if current is not None:
            self._serving.add(current)
        sock = writer.get_extra_info("socket")
        if sock is None or not same_user(sock):
            log.warning("refused a connection from another user")
            writer.close()
            return
        face = Face(next(self._numbers), writer, peer_pid(sock))
        try:
            await self._talk(face, reader)
        except Exception:
            log.exception("the link to %s failed", face)
        finally:
            face.lost()
            if face in self.faces:
                self.faces.remove(face)
                log.info("%s disconnected", face)
                self._on_change()
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
            if current is not None:
                self._serving.discard(current)

    async def _talk(self, face: Face, reader: asyncio.StreamReader) -> None:
        first = await wire.read_frame(reader)
        if first is None:
            return
        message = wire.loads(first, face.callback)
        if not (isinstance(message, tuple) and message[0] == wire.HELLO):
            log.warning("%s did not say hello first; disconnecting it", face)
            return
        try:
            face.greet(message[1])
        except (AttributeError, TypeError):  # another version's hello: say who we are, go
            log.warning("%s speaks another version (%r); disconnecting it", face, message[1])
            face.send_message((wire.WELCOME, self._welcome))
            await face.drain()
            return
        self.faces.append(face)
        log.info("%s connected", face)
        face.send_message((wire.WELCOME, self._welcome))
        self._on_change()
        while True:
            payload = await wire.read_frame(reader)
            if payload is None:
                return
            message = wire.loads(payload, face.callback)
            kind = message[0]
            if kind == wire.CALL:
                _, call_id, path, args, kwargs = message
                self._start_call(face, call_id, path, args, kwargs)
            elif kind == wire.REPLY:
                _, invoke_id, ok, value = message
                face.replied(invoke_id, ok, value)
            else:
                log.warning("%s sent an unknown message %r", face, kind)

    def _start_call(
        self, face: Face, call_id: int, path: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> None:
        context = contextvars.copy_context()
        context.run(CURRENT_FACE.set, face)
        task = asyncio.get_running_loop().create_task(
            self._call(face, call_id, path, args, kwargs), name=f"link-call:{path}", context=context
        )
        face.calls += 1
        self._tasks.add(task)

        def done(finished: asyncio.Task[Any]) -> None:
            self._tasks.discard(finished)
            face.calls -= 1
            self._on_change()

        task.add_done_callback(done)

    async def _call(
        self, face: Face, call_id: int, path: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> None:
        try:
            target = self._resolve(path)
            result = target(*args, **kwargs)
            if inspect.isawaitable(result):
                result = await result
        except KnownError as exc:
            face.send_message((wire.RESULT, call_id, False, exc))
        except Exception as exc:
            log.exception("%s of %s failed", path, face)
            face.send_message((wire.RESULT, call_id, False, exc))
        else:
            face.send_message((wire.RESULT, call_id, True, result))
        await face.drain()
