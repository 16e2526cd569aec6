"""``mooring call … --detach`` and ``mooring tasks answer`` with the data folder's engine
running, on a narrow client.

Such a command sends a few requests and prints: a detached call asks for the server, the
account, the call (its record stored, ``tools/call`` sent, the task created) and where the
record stands; an answer for the task, its question, and the answer's fate. The entry point
(:mod:`mooring.launch`) runs them here, over a blocking socket (:mod:`mooring.link.blocking`),
without asyncio, ssl, logging, typing or anything of the host: what they load is what the
engine's answers are made of (the task record, the server definition, a task's view) and the
lines they print (:mod:`mooring.cli.describe`, :mod:`mooring.cli.render`,
:mod:`mooring.cli.answering`). The output, the exit codes and the questions asked are those
of the handlers the full path runs (:func:`mooring.cli.tasks.call`,
:func:`mooring.cli.tasks.answer`); when no engine runs, the full path runs the command (it
starts the engine first).
"""

from __future__ import annotations

import json
import os

from mooring import __version__
from mooring.cli.describe import reads_result, view_state_line, with_tool_error
from mooring.cli.exit_codes import ExitCode
from mooring.cli.output import Terminal
from mooring.cli.render import progress_line, say_final, view_json
from mooring.core.errors import KnownError, Remedy
from mooring.core.faces import NOBODY, Askers
from mooring.core.ids import short_id
from mooring.link.address import socket_path
from mooring.link.blocking import BlockingLink
from mooring.link.wire import CONNECT_TIMEOUT_S, EngineStuck, Hello
from mooring.settings.paths import resolve_paths

TYPE_CHECKING = False  # not typing's: this path loads no typing (docs/architecture.md)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from mooring.core.tasks.record import TaskRecord
    from mooring.link.wire import Welcome


def call_arguments(text: str | None) -> dict[str, Any]:
    """The tool's arguments from ``--args`` (a JSON object), or a usage error."""
    try:
        arguments = json.loads(text) if text else {}
    except ValueError as exc:
        raise KnownError(f"--args is not valid JSON: {exc}", code="usage") from exc
    if not isinstance(arguments, dict):
        raise KnownError("--args must be a JSON object.", code="usage")
    return arguments


def engine_version_error(welcome: Welcome) -> KnownError | None:
    """The error of a command that reached an engine of another version (``None``: same)."""
    if welcome.version == __version__:
        return None
    return KnownError(
        f"The engine running on this data folder is Mooring {welcome.version}"
        f" (pid {welcome.pid}); this is {__version__}.",
        code="engine_version",
        remedy=Remedy.OLD_ENGINE,
        subject=(str(welcome.pid),),
    )


class _TerminalAsker:
    """One of this terminal's questions (:func:`mooring.cli.sampling.terminal_askers`), its
    module loaded when the engine first asks it."""

    __slots__ = ("_terminal", "_which")

    def __init__(self, terminal: Terminal, which: str) -> None:
        self._terminal = terminal
        self._which = which

    async def __call__(self, *args: Any) -> Any:
        from mooring.cli.sampling import terminal_askers

        return await getattr(terminal_askers(self._terminal), self._which)(*args)


def _askers(terminal: Terminal) -> Askers:
    if not terminal.interactive:
        return NOBODY
    return Askers(
        approval=_TerminalAsker(terminal, "approval"),
        sampling=_TerminalAsker(terminal, "sampling"),
        review=_TerminalAsker(terminal, "review"),
        form=_TerminalAsker(terminal, "form"),
    )


def run_here(args: argparse.Namespace) -> ExitCode | None:
    """Run the command (``call --detach`` or ``tasks answer``: :mod:`mooring.launch` picks
    them) in the data folder's running engine (``None``:
    none runs, or what listens is not one: the full path runs the command)."""
    paths = resolve_paths(args.data_dir)
    paths.check()
    path = socket_path(paths.data_dir)
    if not path.exists():
        return None
    terminal = Terminal()
    # The events it says anything about: a plain call's progress, the engine stopping. Others
    # (every record change the engine stores) would only be unpickled, loading their types.
    calling = args.command == "call"
    wanted = {"TaskDidChange:progress", "EngineDidStop"} if calling else {"EngineDidStop"}
    hello = Hello("cli", os.getpid(), __version__, _askers(terminal), events=frozenset(wanted))
    try:
        link = BlockingLink.connect(path, hello, timeout=CONNECT_TIMEOUT_S)
    except (FileNotFoundError, ConnectionRefusedError):
        return None  # a socket file left by an engine that died
    except TimeoutError as exc:
        raise EngineStuck(paths.data_dir) from exc
    try:
        error = engine_version_error(link.welcome)
        if error is not None:
            raise error
        return (_call if calling else _answer)(link, args, terminal)
    finally:
        link.close()


def _stopped(terminal: Terminal) -> Callable[[Any], None]:
    """Says so when the engine tells it stopped."""

    def heard(event: Any) -> None:
        from mooring.core.events import EngineDidStop, stopped_words  # loaded: it was unpickled

        if isinstance(event, EngineDidStop):
            terminal.warn(f"mooring: {stopped_words(event)}")

    return heard


def _answer(link: BlockingLink, args: argparse.Namespace, terminal: Terminal) -> ExitCode:
    """:func:`mooring.cli.tasks.answer`, over ``link``."""
    from mooring.cli.answering import given_answer, no_answer_given, open_question, say_settled
    from mooring.cli.lookup import ambiguous_task
    from mooring.core.views import AmbiguousId

    link.on_event = _stopped(terminal)
    try:
        found = link.call("find_task", args.id)
    except AmbiguousId as ambiguous:
        servers = {s.id: s.alias for s in link.call("list_servers")}
        raise ambiguous_task(args.id, ambiguous.matches, servers) from None
    view = link.call("task_view", found)
    record = view.record
    item = open_question(view, args.key)
    reply = given_answer(args, item)
    if reply is None:
        if not terminal.interactive:
            raise no_answer_given()
        from mooring.cli.tasks import _prompt  # the form: asked here, as the handler asks it

        reply = _prompt(terminal, item, f"{view.server_label} ({record.tool})")
    settled = link.call("answer", record.id, item.key, reply)
    return say_settled(terminal, bool(args.json), record.id, item.key, settled)


def _call(link: BlockingLink, args: argparse.Namespace, terminal: Terminal) -> ExitCode:
    """:func:`mooring.cli.tasks.call` with ``--detach``, over ``link``."""
    as_json = bool(args.json)
    calling: list[bool] = []

    stopped = _stopped(terminal)

    def heard(event: Any) -> None:
        from mooring.core.events import TaskDidChange  # loaded: the event was unpickled

        stopped(event)
        if (  # a plain call's progress, as it arrives (stored first)
            calling
            and isinstance(event, TaskDidChange)
            and event.note == "progress"
            and not as_json
        ):
            terminal.say(f"{short_id(event.record.id)}: {progress_line(event.record)}")

    link.on_event = heard
    server = link.call("server", args.server)
    arguments = call_arguments(args.args)
    started: list[str] = []

    def persisted(record: TaskRecord) -> None:
        started.append(record.id)
        if not as_json:
            terminal.say(f"operation {record.id}")

    profile_id = link.call("account_desk.account_id", server.alias, args.account)
    calling.append(True)
    call_id = link.send_call(
        "call", server, args.tool, arguments, profile_id=profile_id, on_persisted=persisted
    )
    while True:
        try:
            record: TaskRecord = link.result(call_id)
            break
        except KeyboardInterrupt:
            # Ctrl-C while the call runs stops it (the server is told), as the full path's
            # handler does; before it was stored, or once it cannot be stopped, the command
            # stops (the engine goes on).
            if not (started and link.call("stop_call", started[-1])):
                raise
            terminal.warn("Stopping the call; the server is told to stop.")
    calling.clear()
    if not as_json:
        if record.task_id:
            terminal.say(f"task {record.task_id}")
        line = (
            view_state_line(link.call("task_view", record))
            if reads_result(record)
            else with_tool_error(record, None)
        )
        terminal.say(f"{short_id(record.id)}: {line}")
    if not record.is_terminal:
        if as_json:
            shown = view_json(link.call("task_view", record))
            terminal.say(json.dumps(shown, indent=2), exact=True)
        return ExitCode.OK
    (view,) = link.call("task_views", [record])
    return say_final(terminal, as_json, record, view_json(view))
