"""The engine link's wire: length-prefixed pickle frames over a local stream socket.

Both ends are the same user on the same machine (the socket is private to its owner and each
peer's uid is checked), so frames are pickles: the host's frozen values (records, views,
events) cross as they are, with no second schema to keep in step. Three things are reduced on
the way:

* an exception crosses as its class, arguments and attributes (a :class:`KnownError` keeps its
  hint and code); one whose class a face could not import light (it lives outside
  ``mooring.core``) crosses as a plain :class:`KnownError` with the same words, and a bug
  crosses as :class:`EngineBug` (its traceback stays in the engine's log);
* a function or bound method a face passes (``on_persisted=``, ``confirm=``, an asker) crosses
  as a *callback handle*: calling it in the engine calls it back in the face (see
  :mod:`mooring.link.client`);
* nothing else: a value that does not pickle is a bug, reported as such.
"""

from __future__ import annotations

import functools
import inspect
import io
import pickle
import struct
import types
from dataclasses import dataclass, field
from datetime import datetime

from mooring.core.errors import KnownError, Remedy
from mooring.core.faces import NOBODY, Askers

# Annotation-only names, not typing's TYPE_CHECKING: a command's narrow client
# (:mod:`mooring.link.blocking`) loads neither asyncio nor typing (docs/architecture.md).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable, Mapping
    from typing import Any

HEADER = struct.Struct(">I")
MAX_FRAME = 512 * 1024 * 1024
"""The largest frame either end accepts (a tool result of hundreds of megabytes still fits)."""
PROTOCOL = pickle.HIGHEST_PROTOCOL

# Message kinds (the first item of every frame's tuple).
HELLO = "hello"
"""face → engine: ``(HELLO, Hello)``, the first frame."""
WELCOME = "welcome"
"""engine → face: ``(WELCOME, Welcome)``, the answer to it."""
CALL = "call"
"""face → engine: ``(CALL, call_id, path, args, kwargs)``."""
RESULT = "result"
"""engine → face: ``(RESULT, call_id, ok, value_or_exception)``."""
EVENT = "event"
"""engine → face: ``(EVENT, event)``, every host event, in the order the engine told them."""
INVOKE = "invoke"
"""engine → face: ``(INVOKE, invoke_id, handle, args, kwargs, wants_reply)``: a callback."""
REPLY = "reply"
"""face → engine: ``(REPLY, invoke_id, ok, value_or_exception)``."""


@dataclass(frozen=True, slots=True)
class Hello:
    """What a face says first: who it is, and what it can ask a person."""

    face: str
    """``"cli"``, ``"window"`` or another face's name (logs, routing)."""
    pid: int
    version: str
    askers: Askers = NOBODY
    events: bool | frozenset[str] = True
    """Which of the engine's events it wants: all (``True``), none (``False``), or those of
    these kinds (:func:`event_kinds`: ``"EngineDidStop"``, ``"TaskDidChange:progress"``). A
    face that hears few loads less: an event's types load as it is unpickled."""
    hooks: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    """What else the face offers the engine, by name: ``"notice"`` (show a notice, whether it
    was shown), ``"open"`` (show what a clicked notification was about), ``"consent"`` (may
    Mooring notify?)."""


@dataclass(frozen=True, slots=True)
class Welcome:
    """What the engine answers: who it is, and which of the host's parts it has."""

    pid: int
    version: str
    data_dir: str
    features: frozenset[str] = field(default_factory=frozenset)


def event_kinds(event: object) -> tuple[str, ...]:
    """The kinds a face may ask for ``event`` by (:attr:`Hello.events`): its class's name, and
    ``name:note`` when it carries a note (``TaskDidChange:progress``)."""
    name = type(event).__name__
    note = getattr(event, "note", None)
    return (name, f"{name}:{note}") if isinstance(note, str) else (name,)


def wants_event(wanted: bool | frozenset[str], event: object) -> bool:
    """Whether a face that said ``wanted`` (:attr:`Hello.events`) hears ``event``."""
    if isinstance(wanted, bool):
        return wanted
    return any(kind in wanted for kind in event_kinds(event))


class LinkClosed(KnownError):
    """The other end of the engine link went away."""

    def __init__(self, detail: str = "") -> None:
        super().__init__(
            "Mooring's engine stopped" + (f" ({detail})" if detail else "") + ".",
            code="engine_gone",
            remedy=Remedy.ENGINE_GONE,
        )


class EngineBug(KnownError):
    """Something failed inside the engine that is not the user's to fix (a bug)."""

    def __init__(self, detail: str) -> None:
        super().__init__(
            f"Mooring's engine hit an internal error: {detail}",
            code="engine_bug",
            remedy=Remedy.ENGINE_LOG,
        )


class EngineStuck(KnownError):
    """The data folder's engine took the connection but does not answer."""

    def __init__(self, data_dir: object) -> None:
        super().__init__(
            f"Mooring's engine for {data_dir} does not answer.",
            code="engine_stuck",
            remedy=Remedy.ENGINE_STUCK,
        )


CONNECT_TIMEOUT_S = 10.0
"""How long a running engine may take to answer a face's hello."""


class FrameTooLarge(KnownError):
    def __init__(self, size: int) -> None:
        super().__init__(
            f"A message of {size} bytes is more than the engine link carries.", code="too_large"
        )


def _light(cls: type) -> bool:
    """Whether a face can rebuild ``cls`` without importing anything heavy."""
    module = cls.__module__ or ""
    return module == "builtins" or module.startswith(("mooring.core.", "mooring.link."))


def _rebuild_error(cls: type[BaseException], args: tuple[Any, ...], state: dict[str, Any]) -> Any:
    error = cls.__new__(cls)
    BaseException.__init__(error, *args)
    error.__dict__.update(state)
    return error


def transferable_error(error: BaseException) -> BaseException:
    """What of ``error`` crosses the link: itself when a face can rebuild it, else a
    :class:`KnownError` with the same words, else :class:`EngineBug`."""
    if _light(type(error)):
        return error
    if isinstance(error, KnownError):
        return KnownError(
            error.message,
            hint=error.hint,
            code=error.code,
            remedy=error.remedy,
            subject=error.subject,
        )
    return EngineBug(f"{type(error).__name__}: {error}")


class _Pickler(pickle.Pickler):
    def __init__(
        self, file: io.BytesIO, callback_id: Callable[[Callable[..., Any]], Any] | None
    ) -> None:
        super().__init__(file, PROTOCOL)
        self._callback_id = callback_id

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, BaseException):
            error = transferable_error(obj)
            state = {k: v for k, v in vars(error).items() if not k.startswith("__")}
            return _rebuild_error, (type(error), error.args, state)
        return NotImplemented

    def persistent_id(self, obj: Any) -> Any:
        # Asked of every object pickled (each field of each record in a list of 200): the
        # plain kinds are let through before the fuller check.
        if self._callback_id is None or type(obj) in _NEVER_CALLED or obj is _rebuild_error:
            return None
        if is_callback(obj):
            return self._callback_id(obj)
        return None


_NEVER_CALLED: frozenset[type] = frozenset(
    {str, int, float, bool, type(None), bytes, tuple, list, dict, set, frozenset, datetime}
)
"""Kinds of value that never cross as a callback handle (:func:`is_callback` says no to each)."""


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, load_callback: Callable[[Any], Any] | None) -> None:
        super().__init__(file)
        self._load_callback = load_callback

    def persistent_load(self, pid: Any) -> Any:
        if self._load_callback is None:
            raise pickle.UnpicklingError("a callback where none is expected")
        return self._load_callback(pid)


def is_callback(obj: Any) -> bool:
    """Whether ``obj`` crosses as a callback handle: a function, a bound method, a partial,
    or an object of a class of Mooring's made to be called (an asker)."""
    if isinstance(
        obj, types.FunctionType | types.MethodType | functools.partial | types.BuiltinMethodType
    ):
        return True
    kind = type(obj)
    return (
        not isinstance(obj, type)
        and "__call__" in vars(kind)
        and (kind.__module__ or "").startswith("mooring.")
    )


def is_async_callable(fn: Callable[..., Any]) -> bool:
    """Whether calling ``fn`` gives something to await."""
    target = fn.func if isinstance(fn, functools.partial) else fn
    return inspect.iscoroutinefunction(target) or inspect.iscoroutinefunction(
        getattr(target, "__call__", None)  # noqa: B004  # an object whose __call__ is async
    )


def dumps(message: Any, callback_id: Callable[[Callable[..., Any]], Any] | None = None) -> bytes:
    """One frame (header and pickle) for ``message``."""
    buffer = io.BytesIO()
    buffer.write(b"\0\0\0\0")
    _Pickler(buffer, callback_id).dump(message)
    size = buffer.tell() - HEADER.size
    if size > MAX_FRAME:
        raise FrameTooLarge(size)
    view = buffer.getbuffer()
    HEADER.pack_into(view, 0, size)
    del view
    return buffer.getvalue()


def loads(payload: bytes, load_callback: Callable[[Any], Any] | None = None) -> Any:
    """The message in one frame's payload (no header)."""
    return _Unpickler(io.BytesIO(payload), load_callback).load()


def frame_size(header: bytes) -> int:
    """The payload size a frame's header announces (:class:`FrameTooLarge` past the limit)."""
    (size,) = HEADER.unpack(header)
    if size > MAX_FRAME:
        raise FrameTooLarge(size)
    return int(size)


async def read_frame(reader: asyncio.StreamReader) -> bytes | None:
    """The next frame's payload, or ``None`` when the other end closed."""
    # asyncio.IncompleteReadError is an EOFError: caught as such, asyncio need not load here.
    try:
        header = await reader.readexactly(HEADER.size)
    except (EOFError, ConnectionError):
        return None
    size = frame_size(header)
    try:
        return await reader.readexactly(size)
    except (EOFError, ConnectionError):
        return None


class FrameBuffer:
    """Frames out of bytes as a blocking socket gives them (:mod:`mooring.link.blocking`): what
    arrived is kept across reads, so a read cut short (Ctrl-C) loses nothing."""

    __slots__ = ("_data",)

    def __init__(self) -> None:
        self._data = bytearray()

    def feed(self, chunk: bytes) -> None:
        self._data += chunk

    def next_frame(self) -> bytes | None:
        """The next whole frame's payload, or ``None`` until more has arrived."""
        if len(self._data) < HEADER.size:
            return None
        size = frame_size(bytes(self._data[: HEADER.size]))
        end = HEADER.size + size
        if len(self._data) < end:
            return None
        payload = bytes(self._data[HEADER.size : end])
        del self._data[:end]
        return payload


def reply_frame(invoke_id: int, ok: bool, value: Any) -> tuple[bytes, Exception | None]:
    """A face's answer to the engine's callback ``invoke_id``, as a frame; an answer that does
    not cross the link (it cannot be pickled) goes as an :class:`EngineBug` instead, and the
    error is returned beside it for the face to log."""
    try:
        return dumps((REPLY, invoke_id, ok, value)), None
    except Exception as exc:  # noqa: BLE001  # the engine hears it as a bug; the face goes on
        return dumps((REPLY, invoke_id, False, EngineBug(repr(exc)))), exc
