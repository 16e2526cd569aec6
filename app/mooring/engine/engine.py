"""One data folder's engine: its host, served to the faces over the link.

The engine owns what MCP keeps per connection: every server connection (a stdio server's
process, an HTTP session), the task monitor that polls them, and the event stream. The window
and every command are its faces (:mod:`mooring.link`): each call a face makes runs here, in
this process, on this loop, so a task started by one command is answered, cancelled or
watched by another through the very connection that created it.

Questions go back to the face they are for (:meth:`Engine.askers_now`): the face whose call
is running, or, for the engine's own background work (a server's question during a poll), a
connected window, else a face with a call running that can ask; with none, nobody is asked
(and the policy says what that means: an approval is refused as "no one to ask").

:meth:`Engine.run` returns when the engine may end: asked to stop, or idle for
``idle_after`` seconds — no face connected, no call running, no task to follow, no turn of
a conversation running. Before that, while no window is open, each server connection that
nothing has needed for ``idle_after`` seconds is ended on its own (a stdio server stopped, an
HTTP session ended with ``DELETE``): no request in it, no unfinished task or question of its
server and account, no turn running. One that the window shows stays while the window is open.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mooring.core.approval.request import ApprovalAnswer, ApprovalRequest
from mooring.core.errors import KnownError
from mooring.core.events import EngineDidStop
from mooring.core.faces import CURRENT_FACE, NOBODY, Askers
from mooring.core.host_api import HOST_CALLS, PART_CALLS
from mooring.core.notifications import Notice, OpenTarget
from mooring.link.address import socket_path
from mooring.link.server import Face, LinkServer
from mooring.link.wire import LinkClosed, Welcome

if TYPE_CHECKING:
    from mooring.core.faces import AskUser
    from mooring.services.host import Host
    from mooring.services.notifier import Notifier

log = logging.getLogger("mooring.engine")

ENGINE_CALLS = frozenset(
    {
        "status",
        "stop",
        "info",
        "export_traces",
        "flush_traces",
        "reload_settings",
        "face_active",
        "deliver_notices",
    }
)
"""The engine's own methods a face may call (``"engine.status"``)."""

CONNECTION_CHECK_S = 30.0
"""How often, at most, the engine looks for connections nothing needs any more."""
IDLE_CHECK_S = 2.0
"""How often the engine looks whether it may end (it is also told at once when a face comes
or goes) and whether its database file is still the one it writes to."""


@dataclass(frozen=True, slots=True)
class EngineStatus:
    """What an engine is doing."""

    pid: int
    data_dir: str
    faces: tuple[str, ...]
    """The faces connected now (the asking one among them)."""
    followed: int
    """Tasks it follows."""
    conversing: bool
    """Whether a conversation's turn is running."""
    connections: tuple[str, ...]
    """Its server connections and their states."""


@dataclass(frozen=True, slots=True)
class EngineInfo:
    """Where an engine keeps what it keeps (the window's Settings view shows it)."""

    data_dir: str
    database: str
    schema: str
    """The database's schema version, in words."""
    log_file: str


@dataclass(frozen=True, slots=True)
class EngineServices:
    """What the composition root gives an engine beside its host."""

    info: EngineInfo
    reload_settings: Callable[[], None] = lambda: None
    """Read the settings file again (a face changed it)."""
    export_traces: Callable[[Path], Awaitable[int]] | None = None
    """Write the traces kept so far to a file; how many spans."""
    flush_traces: Callable[[], Awaitable[None]] | None = None
    """Write the spans kept so far to the trace files."""
    notifications_asked: Callable[[], bool] = lambda: True
    """Whether the user already answered "may Mooring notify?"."""
    open_window: Callable[[], None] | None = None
    """Start the window (a notification was clicked while none is connected)."""
    database_lost: Callable[[], str | None] = lambda: None
    """Why the database file is no longer the one the engine writes to (``None``: it is)."""
    save_database: Callable[[], Awaitable[str | None]] | None = None
    """Copy what the database holds to a new file beside it; where (``None``: not saved)."""


class Refused(LookupError):
    """A face asked for something the engine does not offer."""


class Engine:
    """The host of one data folder, served on its socket until it may end."""

    def __init__(
        self,
        host: Host,
        *,
        data_dir: Path,
        version: str,
        idle_after: float,
        idle_check: float = IDLE_CHECK_S,
        services: EngineServices | None = None,
    ) -> None:
        self.host = host
        self.data_dir = data_dir
        self.services = services or EngineServices(
            EngineInfo(str(data_dir), "", "", ""),
        )
        self._idle_after = idle_after
        self._idle_check = idle_check
        self._next_connection_check = 0.0
        features = frozenset(part for part in PART_CALLS if getattr(host, part, None) is not None)
        self.server = LinkServer(
            self.resolve,
            Welcome(os.getpid(), version, str(data_dir), features),
            on_change=self._poke,
        )
        self._changed = asyncio.Event()
        self._stopping = asyncio.Event()
        self._unsubscribe: Callable[[], None] | None = None
        self._notifier: Notifier | None = None
        host.broker.ask_for = self._approval_asker
        host.inputs.askers_for = self.askers_now

    # -- serving -------------------------------------------------------------------------------

    def resolve(self, path: str) -> Callable[..., Any]:
        """The host's method a face's call names, or :class:`Refused`."""
        name, _, rest = path.partition(".")
        if name == "engine":
            if rest not in ENGINE_CALLS:
                raise Refused(path)
            return getattr(self, rest)  # type: ignore[no-any-return]
        if rest:
            if rest not in PART_CALLS.get(name, ()):
                raise Refused(path)
            part = getattr(self.host, name, None)
            target = getattr(part, rest, None)
        elif name in HOST_CALLS:
            target = getattr(self.host, name, None)
        else:
            raise Refused(path)
        if not callable(target):
            raise Refused(path)
        return target  # type: ignore[no-any-return]

    async def start(self) -> None:
        """Listen on the data folder's socket; the host's events go to every face."""
        self._unsubscribe = self.host.events.subscribe(self.server.publish)
        await self.server.start(socket_path(self.data_dir))

    def stop(self) -> None:
        """Make :meth:`run` return (SIGTERM, ``mooring agent stop``)."""
        self._stopping.set()
        self._poke()

    def info(self) -> EngineInfo:
        """Where this engine keeps what it keeps."""
        return self.services.info

    def reload_settings(self) -> None:
        """Read the settings file again: a face changed it (what the engine does by them
        follows at once: notifications, polling limits)."""
        self.services.reload_settings()

    async def export_traces(self, target: str) -> int:
        """Write the traces kept so far to ``target``; how many spans."""
        if self.services.export_traces is None:
            raise KnownError("This engine keeps no traces.", code="no_traces")
        return await self.services.export_traces(Path(target))

    async def flush_traces(self) -> None:
        """Write the spans kept so far to the trace files (``mooring traces export`` reads
        them next)."""
        if self.services.flush_traces is not None:
            await self.services.flush_traces()

    def face_active(self, active: bool) -> None:
        """The asking face (a window) became the active window, or stopped being it."""
        face = CURRENT_FACE.get()
        if isinstance(face, Face):
            face.active = active

    async def status(self) -> EngineStatus:
        """What this engine is doing (``mooring agent status``)."""
        chat = self.host.chat
        aliases = {s.id: s.alias for s in await self.host.list_servers()}
        return EngineStatus(
            pid=os.getpid(),
            data_dir=str(self.data_dir),
            faces=tuple(f"{f.kind} (pid {f.pid})" for f in self.server.faces if f.connected),
            followed=self.host.monitor.scheduled,
            conversing=chat is not None and chat.working,
            connections=tuple(
                f"{aliases.get(s.server_id, s.server_id)}: {s.state.value}"
                for s in self.host.gateway.statuses()
            ),
        )

    async def run(self) -> None:
        """Serve until asked to stop or idle for the idle period."""
        loop = asyncio.get_running_loop()
        idle_since: float | None = None
        while not self._stopping.is_set():
            self._changed.clear()
            lost = self.services.database_lost()
            if lost is not None:
                await self._database_lost(lost)
                return
            await self._end_unneeded_connections(loop.time())
            if self.busy():
                idle_since = None
            elif idle_since is None:
                idle_since = loop.time()
            elif loop.time() - idle_since >= self._idle_after:
                log.info("nothing to do for %.0f s: the engine ends", self._idle_after)
                return
            wait = self._idle_check
            if idle_since is not None:
                wait = min(wait, max(self._idle_after - (loop.time() - idle_since), 0.0))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), wait)

    async def _database_lost(self, reason: str) -> None:
        """Stop at once: nothing more may be written where nobody can read it. What the
        database held is copied out first, and every face is told where."""
        log.error("%s: the engine stops", reason)
        saved: str | None = None
        if self.services.save_database is not None:
            try:
                saved = await self.services.save_database()
            except Exception:
                log.exception("could not save a copy of the lost database")
        if saved is not None:
            log.error("what the engine held is saved in %s", saved)
        self.host.events.emit(EngineDidStop(reason, saved))
        for face in list(self.server.faces):
            await face.drain()

    async def _end_unneeded_connections(self, now: float) -> None:
        """End the connections nothing needs (see the module's docstring): looked at every
        idle check, the ledger read only when one has been unused for the idle period."""
        if now < self._next_connection_check:
            return
        self._next_connection_check = now + min(self._idle_after / 4, CONNECTION_CHECK_S)
        gateway = self.host.gateway
        idle = gateway.idle_connections(self._idle_after)
        chat = self.host.chat
        if (
            not idle
            or any(face.kind == "window" for face in self.server.faces)
            or (chat is not None and chat.working)
        ):
            return
        try:
            needed = {
                (r.server_id, r.credential_profile_id) for r in await self.host.ledger.unfinished()
            }
        except KnownError as exc:  # the database cannot be read now: end nothing
            log.warning("could not tell which connections are needed: %s", exc.message)
            return
        for server_id, profile_id in idle:
            if (server_id, profile_id) in needed:
                continue
            if await gateway.end_if_idle(server_id, profile_id, self._idle_after):
                server = await self.host.server_by_id(server_id, removed_too=True)
                log.info(
                    "connection to %s ended: nothing needed it for %.0f s",
                    server.alias if server is not None else server_id,
                    self._idle_after,
                )

    def busy(self) -> bool:
        """Whether something needs this engine's connections: a face, a running call, a task
        to follow, a conversation's turn."""
        chat = self.host.chat
        return (
            self.server.busy
            or self.host.monitor.scheduled > 0
            or (chat is not None and chat.working)
        )

    async def aclose(self) -> None:
        """Stop serving (faces are disconnected), then stop the host (every connection is
        closed: stdio servers end, HTTP sessions are ended)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        await self.server.aclose()
        await self.host.stop()

    def _poke(self) -> None:
        self._changed.set()

    # -- who is asked --------------------------------------------------------------------------

    def askers_now(self) -> Askers:
        """The askers of the face this work is for (see the module's docstring)."""
        face = CURRENT_FACE.get()
        if isinstance(face, Face):
            return face.askers if face.connected else NOBODY
        faces = [f for f in reversed(self.server.faces) if f.connected]
        for candidate in faces:
            if candidate.kind == "window":
                return candidate.askers
        for candidate in faces:
            if candidate.calls and candidate.askers is not NOBODY:
                return candidate.askers
        return NOBODY

    # -- notifications -------------------------------------------------------------------------

    def attach_notifier(self, notifier: Notifier) -> None:
        """Tell the user through ``notifier``: it asks this engine's faces for consent, and
        :meth:`deliver_notices` delivers what it holds."""
        notifier.consent = self.consent
        notifier.window_active = self.window_active
        self._notifier = notifier

    async def deliver_notices(self) -> None:
        """A face that takes notices (``tasks watch --notify``) came, or is about to go: the
        notices held back meanwhile, and a burst's merged one, are delivered now."""
        if self._notifier is not None:
            await self._notifier.deliver_held()

    def window_active(self) -> bool:
        """Whether one of the connected windows is the active one."""
        return any(f.active for f in self.server.faces if f.connected and f.kind == "window")

    def _windows(self) -> list[Face]:
        return [f for f in reversed(self.server.faces) if f.connected and f.kind == "window"]

    def open_target(self, target: OpenTarget | None) -> None:
        """A notification was clicked: the window shows what it was about (started first
        when none is connected)."""
        for face in self._windows():
            show = face.hooks.get("open")
            if show is not None:
                show(target)
                return
        if self.services.open_window is not None:
            self.services.open_window()

    async def consent(self) -> bool | None:
        """May notices be shown (the notifier asks before the first)? Yes once the user said
        so, asked by a window (the window remembers the answer); until then ``None`` (this
        one is held back, the next one asks again) unless a command that asked for notices
        is connected (``tasks watch --notify``: this one is shown)."""
        if self.services.notifications_asked():
            return True
        for face in self._windows():
            ask = face.hooks.get("consent")
            if ask is not None:
                try:
                    allowed = bool(await ask())
                except LinkClosed:
                    return None
                self.services.reload_settings()  # the window remembered the answer
                return allowed
        return True if any("notice" in f.hooks for f in self.server.faces if f.connected) else None

    def _approval_asker(self) -> AskUser | None:
        ask = self.askers_now().approval
        if ask is None:
            return None

        async def asked(request: ApprovalRequest) -> ApprovalAnswer:
            try:
                return await ask(request)
            except LinkClosed as exc:  # the face went away while asked: withdrawn
                raise EOFError(exc.message) from exc

        return asked


async def serve_until_idle(engine: Engine, ready: Callable[[], Awaitable[None] | None]) -> None:
    """Start ``engine``, call ``ready`` once it listens, run it, and close it."""
    await engine.start()
    try:
        done = ready()
        if done is not None:
            await done
        await engine.run()
    finally:
        await engine.aclose()


class FacesLink:
    """The notification link through the connected faces: a window's tray or in-app toast
    first, then a command that asked for notices (``tasks watch --notify``) on its terminal."""

    name = "the window or a terminal"

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    async def deliver(self, notice: Notice) -> bool:
        faces = [f for f in reversed(self._engine.server.faces) if f.connected]
        faces.sort(key=lambda f: f.kind != "window")
        for face in faces:
            show = face.hooks.get("notice")
            if show is None:
                continue
            try:
                if await show(notice):
                    return True
            except LinkClosed:
                continue
        return False
