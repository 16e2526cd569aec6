"""A face's end of the link: calls into the engine's host, its events, callbacks back.

:class:`EngineLink` is one connection to a data folder's engine. :meth:`EngineLink.call` runs
one of the host's methods there and returns its result (or raises its error, a
:class:`~mooring.core.errors.KnownError` as the host raised it). Every event the engine tells
arrives on :attr:`EngineLink.events`, a local :class:`~mooring.core.events.EventBus`, in the
order the engine told them and interleaved with the results as they happened: an event that
a call caused comes before the call's result.

A function passed as an argument (``on_persisted=``, ``confirm=``) or as one of the face's
askers is called back here when the engine calls its stand-in; a coroutine function's result
(or error) goes back to the engine. Cancelling a call here stops only the waiting: what the
engine started runs on to its end (a tool call is never cut off halfway by a face that went
away), and a question it asks this face afterwards is answered "withdrawn".

:class:`Remote` makes a link look like the host: ``await remote.tasks(active=True)`` is
``await link.call("tasks", active=True)``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import itertools
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mooring.core.events import EventBus
from mooring.link import wire
from mooring.link.address import reachable, same_user
from mooring.link.wire import Hello, LinkClosed, Welcome

log = logging.getLogger("mooring.link")

READ_TURN_S = 0.004
"""The longest the link reads and hands on frames before the loop's other work has a turn.
Frames already received are read without a pause, so a burst (1,000 tasks' changes during a
reconciliation) would otherwise be handled in one go, while a window neither paints nor takes
input."""

READ_LIMIT = 1024 * 1024


class EngineLink:
    """One connection from a face to its engine."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        events: EventBus | None = None,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self.events = events if events is not None else EventBus()
        """The engine's events, told here in the engine's order."""
        self.welcome = Welcome(pid=0, version="", data_dir="")
        self._calls = itertools.count(1)
        self._handle_ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._handles: dict[int, Callable[..., Any]] = {}
        self._answering: set[asyncio.Task[None]] = set()
        self._read_task: asyncio.Task[None] | None = None
        self._closed = False
        self.lost_reason = ""
        """Why the link ended (empty while it is up, or after :meth:`aclose`)."""
        self.on_lost: list[Callable[[str], None]] = []
        """Called with the reason when the engine goes away (not after :meth:`aclose`)."""

    @classmethod
    async def connect(
        cls,
        path: Path,
        hello: Hello,
        *,
        timeout: float = 10.0,  # noqa: ASYNC109  # one bound for the connect and the hello
        events: EventBus | None = None,
    ) -> EngineLink:
        """Connect to the engine listening on ``path`` and say hello.

        Raises ``OSError`` (``FileNotFoundError``, ``ConnectionRefusedError``) when no engine
        listens there, ``TimeoutError`` when one does not answer in time. The engine's events
        are told on ``events`` (a new bus by default).
        """
        with reachable(path) as address:
            reader, writer = await asyncio.wait_for(
                asyncio.open_unix_connection(address, limit=READ_LIMIT), timeout
            )
        sock = writer.get_extra_info("socket")
        if sock is None or not same_user(sock):
            writer.close()
            raise ConnectionRefusedError(f"{path} is served by another user")
        link = cls(reader, writer, events)
        try:
            writer.write(wire.dumps((wire.HELLO, hello), link._permanent_handle))
            payload = await asyncio.wait_for(wire.read_frame(reader), timeout)
        except BaseException:
            writer.close()
            raise
        message = wire.loads(payload) if payload is not None else None
        if not (isinstance(message, tuple) and message[0] == wire.WELCOME):
            writer.close()
            raise ConnectionRefusedError(f"{path} did not answer as an engine")
        link.welcome = message[1]
        link._read_task = asyncio.get_running_loop().create_task(
            link._read_loop(), name="engine-link-reader"
        )
        return link

    @property
    def connected(self) -> bool:
        """Whether the link is up."""
        return not self._closed

    # -- calling -------------------------------------------------------------------------------

    async def call(self, path: str, /, *args: Any, **kwargs: Any) -> Any:
        """Run the host's ``path`` (``"tasks"``, ``"chat.send"``) in the engine; its result."""
        if self._closed:
            raise LinkClosed(self.lost_reason or "the link is closed")
        call_id = next(self._calls)
        handles: list[int] = []

        def callback_id(fn: Callable[..., Any]) -> tuple[str, int, bool]:
            handle = next(self._handle_ids)
            self._handles[handle] = fn
            handles.append(handle)
            return ("cb", handle, wire.is_async_callable(fn))

        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = future
        try:
            self._writer.write(wire.dumps((wire.CALL, call_id, path, args, kwargs), callback_id))
            await self._writer.drain()
            return await future
        except ConnectionError as exc:
            raise LinkClosed(str(exc)) from exc
        finally:
            self._pending.pop(call_id, None)
            for handle in handles:
                self._handles.pop(handle, None)

    def _permanent_handle(self, fn: Callable[..., Any]) -> tuple[str, int, bool]:
        handle = next(self._handle_ids)
        self._handles[handle] = fn
        return ("cb", handle, wire.is_async_callable(fn))

    # -- receiving -----------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        reason = "the engine closed the link"
        clock = time.monotonic
        try:
            turn_ends = clock() + READ_TURN_S
            while True:
                payload = await wire.read_frame(self._reader)
                if payload is None:
                    break
                self._receive(wire.loads(payload))
                if clock() >= turn_ends:  # frames already read are taken without a pause
                    await asyncio.sleep(0)
                    turn_ends = clock() + READ_TURN_S
        except asyncio.CancelledError:
            reason = ""
            raise
        except Exception as exc:
            log.exception("the engine link broke")
            reason = f"the link broke: {exc}"
        finally:
            self._lost(reason)

    def _receive(self, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == wire.RESULT:
            _, call_id, ok, value = message
            future = self._pending.get(call_id)
            if future is None or future.done():
                return
            if ok:
                future.set_result(value)
            else:
                future.set_exception(
                    value if isinstance(value, BaseException) else wire.EngineBug(repr(value))
                )
        elif kind == wire.EVENT:
            self.events.emit(message[1])
        elif kind == wire.INVOKE:
            _, invoke_id, handle, args, kwargs, wants_reply = message
            self._invoked(invoke_id, handle, args, kwargs, wants_reply)
        else:
            log.warning("the engine sent an unknown message %r", kind)

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
            try:
                fn(*args, **kwargs)
            except Exception:
                log.exception("a callback from the engine failed")
            return
        task = asyncio.get_running_loop().create_task(self._answer(invoke_id, fn, args, kwargs))
        self._answering.add(task)
        task.add_done_callback(self._answering.discard)

    async def _answer(
        self,
        invoke_id: int,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> None:
        try:
            result = fn(*args, **kwargs)
            if inspect.isawaitable(result):
                result = await result
        except asyncio.CancelledError:
            self._reply(invoke_id, False, EOFError("the question was withdrawn"))
            raise
        except Exception as exc:  # noqa: BLE001  # the engine's question fails with it
            self._reply(invoke_id, False, exc)
        else:
            self._reply(invoke_id, True, result)

    def _reply(self, invoke_id: int, ok: bool, value: Any) -> None:
        if self._closed:
            return
        data, error = wire.reply_frame(invoke_id, ok, value)
        if error is not None:
            log.error("a callback's answer does not cross the link", exc_info=error)
        with contextlib.suppress(ConnectionError):
            self._writer.write(data)

    def _lost(self, reason: str) -> None:
        if self._closed:
            return
        self._closed = True
        self.lost_reason = reason
        for future in self._pending.values():
            if not future.done():
                future.set_exception(LinkClosed(reason))
        self._writer.close()
        if reason:
            log.warning("engine link lost: %s", reason)
            for callback in list(self.on_lost):
                try:
                    callback(reason)
                except Exception:
                    log.exception("a link-lost callback failed")

    async def aclose(self) -> None:
        """Close the link (the engine goes on)."""
        task, self._read_task = self._read_task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for answering in list(self._answering):
            answering.cancel()
        self._lost("")
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()


class Remote:
    """The engine's host (or one of its parts) through a link: every public attribute is a
    coroutine function that runs the host's method of that name in the engine.

    The link can be replaced (:meth:`rebind`, after the engine was started again): every
    proxy made from this one, its parts included, calls through the new link from then on,
    and the events of every link it was bound to are told on the one :attr:`events` bus.
    """

    __slots__ = ("_holder", "_parts", "_prefix")

    def __init__(
        self,
        link: EngineLink | list[EngineLink],
        prefix: str = "",
        parts: frozenset[str] = frozenset(),
    ) -> None:
        self._holder = link if isinstance(link, list) else [link]
        self._prefix = prefix
        self._parts = parts

    @property
    def link(self) -> EngineLink:
        """The link this proxy calls through."""
        return self._holder[0]

    def rebind(self, link: EngineLink) -> None:
        """Call through ``link`` from now on (it should tell its events on :attr:`events`)."""
        self._holder[0] = link

    @property
    def events(self) -> EventBus:
        """The engine's events (told on this face's loop)."""
        return self._holder[0].events

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self._parts:
            if name not in self.link.welcome.features:
                return None  # the engine's host has no such part (no model providers, say)
            return Remote(self._holder, f"{self._prefix}{name}.")
        return functools.partial(self._call, f"{self._prefix}{name}")

    async def _call(self, path: str, /, *args: Any, **kwargs: Any) -> Any:
        return await self._holder[0].call(path, *args, **kwargs)
