"""The composition root: builds everything in a fixed, logged order and passes it along.

paths → logging → settings → database (migrate) → services → (GUI: QApplication + qasync loop)
→ window. No global singletons: collaborators are constructor arguments. The GUI and the CLI
share this file; nothing else wires concrete classes together.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mooring import __version__
from mooring.adapters import launcher
from mooring.cli.errors import end_command
from mooring.cli.exit_codes import ExitCode
from mooring.cli.parser import build_parser
from mooring.core.errors import KnownError, Remedy
from mooring.settings.paths import APP_NAME, Paths, resolve_paths
from mooring.settings.store import Settings, load_settings

# The rest loads where it is used: the window's shell paints before SQLAlchemy, the services
# and the notification stack are imported (see "How a command runs" in docs/cli.md).
if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

    from mooring.adapters.lazy_tracing import LazyTracerProvider
    from mooring.core.chat import ProviderFactory
    from mooring.core.diagnostics import Check
    from mooring.core.faces import Askers, AskUser
    from mooring.core.notifications import Notice, NotifyPrefs
    from mooring.core.ports import Gateway
    from mooring.core.servers import ServerDefinition
    from mooring.engine.engine import EngineInfo, EngineServices
    from mooring.mcp.transport import TransportOpener
    from mooring.services.chat import ProviderResolver
    from mooring.services.host import Host
    from mooring.storage.db import Database
    from mooring.ui.lifecycle import Connected
    from mooring.ui.main_window import MainWindow, WindowInfo

log = logging.getLogger("mooring.bootstrap")


def demo_server_command(paths: Paths) -> tuple[str, tuple[str, ...]]:
    """How to start the bundled demo server (with this Python, or through this bundle's own
    executable when frozen), on a store in the data folder."""
    return launcher.demo_server_command(paths.demo_store)


def _start(args: argparse.Namespace) -> tuple[Paths, Settings]:
    from mooring.adapters.logging import setup_logging

    paths = resolve_paths(args.data_dir)
    paths.check()
    setup_logging(paths.log_file, json_lines=args.log_json)
    log.info("mooring %s starting; data folder %s", __version__, paths.data_dir)
    settings = load_settings(paths.settings_file)
    return paths, settings


def run_doctor(args: argparse.Namespace) -> ExitCode:
    """Check every part of the environment and print what to fix."""
    from mooring.adapters.notify.probe import notifier_status
    from mooring.adapters.secrets import keyring_status
    from mooring.cli.doctor import diagnose, print_report
    from mooring.ui.probe import qt_status

    paths, settings = _start(args)
    report = diagnose(
        paths,
        settings,
        database=lambda: _database_checks(paths),
        keyring=keyring_status,
        notifier=notifier_status,
        qt=lambda: qt_status().as_probe(),
    )
    return print_report(report, as_json=args.json)


def _database_checks(paths: Paths) -> list[Check]:
    """Can the database be opened, and at which schema version?"""
    import asyncio

    from mooring.core.clock import SystemClock
    from mooring.core.diagnostics import Check, Level
    from mooring.storage.db import Database
    from mooring.storage.store import SqlStore

    try:
        db = Database.open(paths.database)
    except KnownError as exc:
        return [
            Check("database", Level.FAIL, exc.message, exc.hint),
            Check("schema version", Level.FAIL, "unknown (the database could not be opened)"),
        ]
    try:
        counts = asyncio.run(SqlStore(db, SystemClock()).counts())
        return [
            Check("database", Level.OK, f"{paths.database} ({sum(counts.values())} task records)"),
            Check("schema version", Level.OK, f"{db.schema.current} (newest known)"),
        ]
    finally:
        db.close()


def run_gui(
    args: argparse.Namespace, *, on_ready: Callable[[MainWindow], None] | None = None
) -> ExitCode:
    """Run the window: one per data folder, a face of the data folder's engine (started
    when none runs). A second launch brings the first window to the front and ends."""
    from mooring.ui.lifecycle import WindowLife
    from mooring.ui.probe import qt_status

    paths, settings = _start(args)
    qt = qt_status()
    if not qt.importable or not qt.display:
        sys.stderr.write(f"mooring: the window cannot open: {qt.detail}\n")
        sys.stderr.write("mooring: `mooring doctor` checks this machine; the CLI works headless.\n")
        return ExitCode.PROBLEM
    life = WindowLife(
        data_dir=paths.data_dir,
        log_file=paths.log_file,
        layout_file=paths.config_dir / "window.ini",
        settings=settings,
        remember=functools.partial(remember_settings, paths, settings),
        connect=functools.partial(_connect_window, paths, settings),
        on_ready=on_ready,
    )
    return ExitCode(life.run())


async def _connect_window(
    paths: Paths, settings: Settings, askers: Askers, hooks: dict[str, Callable[..., Any]]
) -> Connected:
    """Reach (or start) the engine as the window face; what the window needs of it."""
    from typing import cast

    from mooring.core.events import EventBus
    from mooring.core.faces import HOST_PARTS
    from mooring.link.client import EngineLink, Remote
    from mooring.link.spawn import reach_or_start
    from mooring.link.wire import Hello
    from mooring.ui.lifecycle import Connected

    hello = Hello("window", os.getpid(), __version__, askers, hooks=hooks)
    events = EventBus()
    on_lost: list[Callable[[str], None]] = []

    async def reach() -> EngineLink:
        link = await reach_or_start(paths.data_dir, hello, agent_command(paths), events=events)
        if link.welcome.version != __version__:
            await link.aclose()
            raise KnownError(
                f"The engine running on this data folder is Mooring {link.welcome.version} "
                f"(pid {link.welcome.pid}); this window is {__version__}.",
                code="engine_version",
                remedy=Remedy.OLD_ENGINE,
                subject=(str(link.welcome.pid),),
            )
        link.on_lost.extend(on_lost)
        return link

    link = await reach()
    remote = Remote(link, parts=HOST_PARTS)

    async def reconnect() -> None:
        remote.rebind(await reach())

    async def engine(name: str, *args: Any) -> Any:
        return await remote.link.call(f"engine.{name}", *args)

    info: EngineInfo = await engine("info")
    return Connected(
        host=cast("Host", remote),
        info=_window_info(paths, settings, info, engine),
        engine=engine,
        close=lambda: remote.link.aclose(),
        on_lost=on_lost,
        reconnect=reconnect,
    )


def _window_info(
    paths: Paths,
    settings: Settings,
    info: EngineInfo,
    engine: Callable[..., Awaitable[Any]],
) -> WindowInfo:
    from mooring.settings.editor import SettingsEditor
    from mooring.settings.schema import SETTINGS
    from mooring.ui.main_window import SettingRow, WindowInfo

    return WindowInfo(
        data_dir=info.data_dir,
        database=info.database,
        schema=info.schema,
        settings_file=str(paths.settings_file),
        log_file=info.log_file,
        settings=tuple(
            SettingRow(s.key, str(settings.get(s.key)), s.description) for s in SETTINGS
        ),
        editor=SettingsEditor(
            paths.settings_file, settings, then=lambda: engine("reload_settings")
        ),
    )


@dataclass(frozen=True, slots=True)
class Wiring:
    """A wired host and the OAuth providers behind its gateway (for sign-in actions)."""

    host: Host
    oauth: Callable[[], Any]
    """The OAuth providers (loads the MCP SDK on first use)."""


def build_host(
    paths: Paths,
    settings: Settings,
    db: Database,
    *,
    ask: AskUser | None = None,
    models: tuple[ProviderResolver | None, ProviderFactory] | None = None,
    open_transport: TransportOpener | None = None,
) -> Host:
    """Wire one host over one database (the GUI, the CLI and the service tests share this).

    ``ask`` is the face's approval prompt (a terminal question, a dialog); without one, a call
    that needs approval is refused, never sent. ``open_transport`` replaces the real MCP
    transports (the in-process test tier serves servers over memory streams).
    """
    return wire(paths, settings, db, ask=ask, models=models, open_transport=open_transport).host


def wire(
    paths: Paths,
    settings: Settings,
    db: Database,
    *,
    ask: AskUser | None = None,
    models: tuple[ProviderResolver | None, ProviderFactory] | None = None,
    open_transport: TransportOpener | None = None,
) -> Wiring:
    """:func:`build_host`, also handing out the OAuth providers.

    ``models`` replaces how the chat finds (``None``: in the provider book, as the product
    does) and builds its model provider (tests and benchmarks give a scripted model here; the
    product reads the provider book and the keyring)."""
    from mooring.adapters.preview import preview_arguments
    from mooring.adapters.process import current_owner, owner_alive
    from mooring.adapters.secrets import KeyringSecrets
    from mooring.core.clock import SystemClock
    from mooring.core.tasks.polling import PollPolicy
    from mooring.mcp.lazy import LazyGateway
    from mooring.services.host import ENV_SCOPE, HEADER_SCOPE, Host, HostConfig
    from mooring.services.sampling import InputBroker
    from mooring.storage.store import SqlStore

    clock = SystemClock()
    store = SqlStore(db, clock)
    secrets = KeyringSecrets()

    def headers_for(server: ServerDefinition, _profile_id: str | None) -> dict[str, str]:
        found: dict[str, str] = {}
        for name, value in server.headers.items():
            secret = secrets.get(HEADER_SCOPE, f"{server.id}:{name}") or value
            if secret:
                found[name] = secret
            else:  # never send an empty secret: the server's own refusal says the rest
                log.warning(
                    "%s: header %s has no value in the keyring; not sent", server.alias, name
                )
        return found

    def env_for(server: ServerDefinition) -> dict[str, str]:
        # Environment values kept as secrets (imported API keys) are stored empty; values
        # read from an environment variable are read now, in this process (the engine).
        env = {
            name: value or secrets.get(ENV_SCOPE, f"{server.id}:{name}") or ""
            for name, value in server.env.items()
        }
        for name, variable in server.env_refs.items():
            value = os.environ.get(variable)
            if value is None:
                log.warning(
                    "%s: $%s is not set here; %s is not passed", server.alias, variable, name
                )
                continue
            env[name] = value
        return env

    inputs = InputBroker(rules=store, clock=clock)

    def make_gateway() -> Gateway:
        from mooring.mcp.connection import ConnectionSettings, parse_call_limits
        from mooring.mcp.gateway import McpGateway
        from mooring.mcp.oauth import OAuthProviders

        # Polling and reconciliation never open a browser: sign-in is an explicit action
        # (`mooring accounts login`); until then such tasks show "sign-in needed".
        oauth = OAuthProviders(secrets, sign_in=None, headers_for=headers_for)
        oauth_holder.append(oauth)
        return McpGateway(
            auth_for=oauth,
            settings=ConnectionSettings(
                request_timeout=int(settings.get("mcp.request_timeout_ms")) / 1000,
                call_timeout=int(settings.get("mcp.call_timeout_ms")) / 1000,
                call_idle_timeout=int(settings.get("mcp.call_idle_timeout_ms")) / 1000,
                server_call_limits=parse_call_limits(
                    str(settings.get("mcp.server_call_limits")),
                    idle_default=int(settings.get("mcp.call_idle_timeout_ms")) / 1000,
                    max_default=int(settings.get("mcp.call_timeout_ms")) / 1000,
                ),
                stderr_dir=paths.log_dir / "servers",
            ),
            headers_for=headers_for,
            input_handler=inputs.handle,
            env_for=env_for,
            open_transport=open_transport,
        )

    oauth_holder: list[Any] = []
    gateway = LazyGateway(
        make_gateway,
        # anyio's asyncio backend last: anyio loads it on its first primitive (~70 ms), which
        # would otherwise be on the event loop's thread, in the window the one that paints.
        modules=(
            "mooring.mcp.connection",
            "mooring.mcp.gateway",
            "mooring.mcp.oauth",
            "anyio._backends._asyncio",
        ),
    )

    def oauth() -> Any:
        if not oauth_holder:
            gateway.load()
        return oauth_holder[0]

    max_ms = int(settings.get("polling.max_interval_ms"))
    covered_ms = int(settings.get("polling.covered_interval_ms"))
    config = HostConfig(
        poll_policy=PollPolicy(
            max_interval_ms=max(max_ms, PollPolicy().default_interval_ms),
            covered_interval_ms=max(covered_ms, PollPolicy().min_interval_ms),
        ),
        per_server=int(settings.get("polling.per_server_concurrency")),
        max_argument_bytes=int(settings.get("approval.max_argument_bytes")),
        capture_content=bool(settings.get("telemetry.capture_content")),
        demo_server=demo_server_command(paths) if settings.get("demo_server.enabled") else None,
    )
    # Model providers: configurations in SQLite, secrets only in the keyring; the SDKs load
    # only when a provider is first built.
    from mooring.adapters.providers.common import ProviderOptions
    from mooring.adapters.providers.factory import SdkProviderFactory
    from mooring.adapters.providers.local import LocalModelRuntime
    from mooring.adapters.server_configs import LocalConfigFiles
    from mooring.mcp.sign_in import OAuthSignIn
    from mooring.storage.conversations import SqlConversations
    from mooring.storage.providers import SqlProviderBook

    provider_factory = SdkProviderFactory(
        secrets,
        ProviderOptions(
            connect_timeout=int(settings.get("providers.connect_timeout_ms")) / 1000,
            read_timeout=int(settings.get("providers.read_timeout_ms")) / 1000,
        ),
        local=LocalModelRuntime(
            idle_stop_s=int(settings.get("local_models.idle_stop_s")),
            context_tokens=int(settings.get("local_models.context_tokens")),
            threads=int(settings.get("local_models.threads")),
            log_file=paths.log_dir / "local-model.log",
        ),
    )
    host = Host(
        catalog=store,
        ledger=store,
        issues=store,
        rules=store,
        accounts=store,
        secrets=secrets,
        gateway=gateway,
        clock=clock,
        config=config,
        ask=ask,
        preview=preview_arguments,
        owner=current_owner(),
        owner_alive=owner_alive,
        providers=SqlProviderBook(db, clock),
        provider_factory=models[1] if models else provider_factory,
        resolve_provider=models[0] if models else None,
        conversations=SqlConversations(db, clock),
        auto_continue=bool(settings.get("chat.continue_automatically")),
        inputs=inputs,
        config_files=LocalConfigFiles(),
        sign_in=OAuthSignIn(oauth),
    )
    return Wiring(host, oauth)


def _tracing(paths: Paths, settings: Settings, *, synchronous: bool) -> LazyTracerProvider:
    # The SDK, its exporters and protobuf load only when the first span starts.
    from mooring.adapters.lazy_tracing import LazyTracerProvider

    def build() -> TracerProvider:
        from mooring.adapters.telemetry import TelemetryConfig, setup_tracing

        config = TelemetryConfig(
            folder=paths.traces_dir,
            file_export=bool(settings.get("telemetry.file_export")),
            otlp_endpoint=str(settings.get("telemetry.otlp_endpoint")),
            synchronous=synchronous,
            each_poll=bool(settings.get("telemetry.trace_each_poll")),
        )
        return setup_tracing(config, install=False)

    return LazyTracerProvider.install(build)


# -- Notifications ------------------------------------------------------------------------------


def notification_prefs(settings: Settings) -> Callable[[], NotifyPrefs]:
    """The notification settings in force, read from ``settings`` at each notice."""
    from mooring.core.notifications import prefs_from

    def prefs() -> NotifyPrefs:
        return prefs_from(
            when=str(settings.get("notifications.when")),
            show_names=bool(settings.get("notifications.show_names")),
            muted=settings.get("notifications.muted_conversations"),
        )

    return prefs


def _log_notice(notice: Notice) -> bool:
    log.info("notice (no desktop, window or terminal to show it on): %s", notice.summary)
    return True


def remember_settings(paths: Paths, settings: Settings, changes: dict[str, object]) -> None:
    """Apply ``changes`` to ``settings`` and the settings file (read again first, so a change
    made meanwhile with ``mooring settings`` is kept)."""
    from mooring.settings.store import save_settings

    current = load_settings(paths.settings_file)
    for key, value in changes.items():
        settings.set(key, value)
        current.set(key, value)
    save_settings(paths.settings_file, current)


YOUNG_OBJECTS_PER_COLLECTION = 5_000
"""The garbage collector's first threshold (CPython's default: 700). Every poll and request
allocates hundreds of objects: at 700, a 1,000-task reconciliation ran ~570 collections
(~0.36 s, 13 % of its CPU); at 5,000, with start-up frozen, ~190 (~0.09 s). Young garbage
waits a little longer."""


def settle_collector(*, young: int = YOUNG_OBJECTS_PER_COLLECTION) -> None:
    """Take what is loaded now (modules, classes, the MCP SDK's models: up to ~200,000
    objects, there for the life of the process) out of the collector's sight, and collect
    young objects less often. A full collection then walks only what was made since: one
    that walked everything took 40-110 ms, a stall in the window. Called after start-up and
    again once the SDK is loaded.

    No collection first: what is garbage by then stays frozen, ~800 objects for a CLI command
    (measured), while a full collection there cost 11-21 ms, a third of the command's start."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(young, middle, old)


def run_headless(args: argparse.Namespace) -> ExitCode:
    """Run one CLI command: in the data folder's engine when it runs (or when the command
    needs one: it starts it), else with a host of its own in this process."""
    from mooring.cli.commands import EngineUse, engine_use

    use = engine_use(args)
    if use is not EngineUse.NEVER:
        done = _through_engine(args, start=use is EngineUse.NEEDED)
        if done is not None:
            return done
    return _run_here(args)


def _through_engine(args: argparse.Namespace, *, start: bool) -> ExitCode | None:
    """Run the command with the engine's host (``None``: no engine runs, and ``start`` is
    off)."""
    from mooring.link.address import socket_path

    paths = resolve_paths(args.data_dir)
    paths.check()
    if not start and not socket_path(paths.data_dir).exists():
        return None  # no engine: nothing of it loads
    import asyncio
    from typing import cast

    from mooring.cli.calling import engine_version_error
    from mooring.cli.commands import handler_for
    from mooring.cli.context import CliContext, Terminal
    from mooring.cli.sampling import terminal_askers
    from mooring.core.events import EngineDidStop, stopped_words
    from mooring.core.faces import HOST_PARTS, NOBODY
    from mooring.link.client import Remote
    from mooring.link.spawn import reach, reach_or_start
    from mooring.link.wire import Hello, LinkClosed

    terminal = Terminal()
    hooks: dict[str, Callable[..., Any]] = {}
    if getattr(args, "notify", False):  # `tasks watch --notify`: notices on this terminal too

        async def notice(shown: Notice) -> bool:
            terminal.warn(f"[{shown.summary}] {shown.body}".replace("\n", "; "))
            return True

        hooks["notice"] = notice
    hello = Hello(
        "cli",
        os.getpid(),
        __version__,
        terminal_askers(terminal) if terminal.interactive else NOBODY,
        hooks=hooks,
    )

    async def run() -> ExitCode | None:
        link = (
            await reach_or_start(paths.data_dir, hello, agent_command(paths))
            if start
            else await reach(paths.data_dir, hello)
        )
        if link is None:
            return None
        try:
            error = engine_version_error(link.welcome)
            if error is not None:
                raise error
            ctx = CliContext(
                host=cast("Host", Remote(link, parts=HOST_PARTS)),
                as_json=args.json,
                terminal=terminal,
            )
            link.events.on(EngineDidStop, lambda e: terminal.warn(f"mooring: {stopped_words(e)}"))
            if args.command == "traces":
                await link.call("engine.flush_traces")  # what it traced so far, on file
            if "notice" in hooks:  # what was held back until a face took notices
                await link.call("engine.deliver_notices")
            # A command that waits on the engine (following a task, say) stops when the engine
            # goes away, rather than wait for what nobody will tell it any more.
            handler = asyncio.ensure_future(
                handler_for(args, traces_dir=paths.traces_dir)(ctx, args)
            )
            lost: list[str] = []

            def on_lost(reason: str) -> None:
                lost.append(reason)
                handler.cancel()

            link.on_lost.append(on_lost)
            try:
                return await handler
            except asyncio.CancelledError:
                if lost:
                    raise LinkClosed(lost[0]) from None
                raise
            finally:
                if "notice" in hooks and link.connected:  # a burst's merged notice, now
                    with contextlib.suppress(KnownError, LinkClosed):
                        await link.call("engine.deliver_notices")
        finally:
            await link.aclose()

    return asyncio.run(run())


def agent_command(paths: Paths) -> list[str]:
    """How a face starts the engine of this data folder (in the background)."""
    return launcher.mooring_command("agent", "run", "--data-dir", str(paths.data_dir))


def _run_here(args: argparse.Namespace) -> ExitCode:
    """Run one CLI command with a host of its own (no engine runs; the command needs no
    connection that outlives it)."""
    import asyncio

    from mooring.cli.commands import handler_for
    from mooring.cli.context import CliContext, Terminal
    from mooring.cli.sampling import terminal_askers
    from mooring.mcp.lazy import LazyGateway
    from mooring.storage.db import Database

    paths, settings = _start(args)
    db = Database.open(paths.database)
    terminal = Terminal()
    wiring = wire(paths, settings, db)
    host = wiring.host
    if terminal.interactive:
        askers = terminal_askers(terminal)  # this process's host asks this terminal
        host.broker.ask = askers.approval
        host.inputs.ask_sampling = askers.sampling
        host.inputs.review_reply = askers.review
        host.inputs.ask_form = askers.form
    # Process-wide: only a process's own entry point settles the collector (never a host
    # built in-process, as tests build them).
    settle_collector()
    if isinstance(host.gateway, LazyGateway):
        host.gateway.when_loaded(settle_collector)  # the SDK's classes, there for good too

    async def run() -> ExitCode:
        try:
            await host.prepare()
            ctx = CliContext(host=host, as_json=args.json, terminal=terminal)
            return await handler_for(args, traces_dir=paths.traces_dir)(ctx, args)
        finally:
            await host.stop()

    provider = _tracing(paths, settings, synchronous=True)
    try:
        return asyncio.run(run())
    finally:
        provider.shutdown()
        db.close()


def run_agent(args: argparse.Namespace) -> ExitCode:
    """``mooring agent [run|start|status|stop]``."""
    action = getattr(args, "agent_command", None) or "run"
    if action == "run":
        return _run_engine(args)
    import asyncio

    from mooring.cli.agent import agent_action
    from mooring.cli.context import Terminal

    paths = resolve_paths(args.data_dir)
    paths.check()
    return asyncio.run(agent_action(action, paths.data_dir, agent_command(paths), Terminal()))


def _run_engine(args: argparse.Namespace) -> ExitCode:
    """The data folder's engine, in this process, until it has nothing to do (or SIGTERM)."""
    import asyncio
    import signal

    from mooring.adapters.instance_lock import InstanceLock
    from mooring.adapters.notify.chain import HookLink, NotificationChain
    from mooring.adapters.notify.desktop import DesktopLink
    from mooring.adapters.process import current_owner
    from mooring.engine.engine import Engine, FacesLink
    from mooring.link.address import lock_path
    from mooring.link.spawn import ALREADY_RUNNING, HANDSHAKE_ENV, detach_from_starter, say_busy
    from mooring.mcp.lazy import LazyGateway
    from mooring.services.notifier import Notifier
    from mooring.storage.db import Database

    handshake = os.environ.pop(HANDSHAKE_ENV, "") == "1"  # started by a face, which waits
    paths, settings = _start(args)
    paths.ensure()
    lock = InstanceLock(lock_path(paths.data_dir), current_owner())
    if not lock.try_acquire():
        if handshake:
            say_busy()
        sys.stderr.write(
            f"mooring: an engine runs already on {paths.data_dir} ({lock.holder()}).\n"
        )
        return ExitCode(ALREADY_RUNNING)
    try:
        db = Database.open(paths.database)
        host = wire(paths, settings, db).host
        settle_collector()
        if isinstance(host.gateway, LazyGateway):
            host.gateway.when_loaded(settle_collector)
        provider = _tracing(paths, settings, synchronous=False)
        engine = Engine(
            host,
            data_dir=paths.data_dir,
            version=__version__,
            idle_after=float(settings.get("engine.idle_exit_s")),
            services=_engine_services(paths, settings, db, provider),
        )

        async def run() -> None:
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(signum, engine.stop)
            desktop = DesktopLink(app_name=APP_NAME)
            desktop.on_open = engine.open_target
            notifier = Notifier(
                events=host.events,
                catalog=host.catalog,
                sink=NotificationChain([desktop, FacesLink(engine), HookLink("log", _log_notice)]),
                clock=host.clock,
                prefs=notification_prefs(settings),
            )
            engine.attach_notifier(notifier)
            await host.prepare()
            await engine.start()
            if handshake:
                detach_from_starter()
            log.info("engine %s serving %s", os.getpid(), paths.data_dir)
            notifier.start()
            delivering = asyncio.ensure_future(notifier.run())
            host.start_monitoring()
            reconciling = asyncio.ensure_future(_reconcile_at_start(host))
            try:
                await engine.run()
            finally:
                reconciling.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await reconciling
                await notifier.aclose(delivering)
                await engine.aclose()
                await desktop.aclose()

        try:
            asyncio.run(run())
        finally:
            provider.shutdown()
            db.close()
        log.info("engine %s ended", os.getpid())
        return ExitCode.OK
    finally:
        lock.release()


def _engine_services(
    paths: Paths, settings: Settings, db: Database, provider: LazyTracerProvider
) -> EngineServices:
    """What the engine needs beside its host: where it keeps things, the settings file read
    again, trace export, and how to open the window."""
    from mooring.adapters.telemetry import export_to
    from mooring.engine.engine import EngineInfo, EngineServices

    def reload_settings() -> None:
        fresh = load_settings(paths.settings_file)
        for key, value in fresh.as_dict().items():
            settings.set(key, value)

    async def flush_traces() -> None:
        import asyncio

        await asyncio.to_thread(provider.force_flush)

    async def export_traces(target: Path) -> int:
        import asyncio

        await flush_traces()
        return await asyncio.to_thread(export_to, paths.traces_dir, target)

    def open_window() -> None:
        from mooring.link.spawn import start_detached

        start_detached(launcher.mooring_command("--data-dir", str(paths.data_dir)))

    async def save_database() -> str:
        from datetime import UTC, datetime

        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        target = paths.data_dir / f"mooring-recovered-{stamp}.sqlite3"
        await db.save_copy(target)
        return str(target)

    return EngineServices(
        info=EngineInfo(
            data_dir=str(paths.data_dir),
            database=str(paths.database),
            schema=f"{db.schema.current} (newest known: {db.schema.head})",
            log_file=str(paths.log_file),
        ),
        reload_settings=reload_settings,
        export_traces=export_traces,
        flush_traces=flush_traces,
        notifications_asked=lambda: bool(settings.get("notifications.asked")),
        open_window=open_window,
        database_lost=db.lost,
        save_database=save_database,
    )


async def _reconcile_at_start(host: Host) -> None:
    try:
        await host.reconcile()
    except KnownError as exc:
        log.warning("launch reconciliation stopped: %s", exc.message)


def _smoke_run() -> Callable[[MainWindow], None] | None:
    """With ``MOORING_SMOKE=1`` the window reports its first paint and quits (packaging's
    smoke test of a built bundle); otherwise ``None``."""
    if os.environ.get("MOORING_SMOKE", "") in ("", "0"):
        return None
    from mooring.ui.smoke import report_and_quit

    return report_and_quit


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mooring`` command and ``python -m mooring``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == [launcher.DEMO_SERVER_ENTRY]:
        # A separate program behind an entry of this one, so a frozen bundle (which cannot
        # run `python -m`) can start it: `mooring demo-server --help` lists its flags.
        from mooring.demo_server.cli import main as demo_server_main

        return demo_server_main(argv[1:])
    args = build_parser().parse_args(argv)
    return end_command(
        lambda: _run(args), lambda: resolve_paths(args.data_dir).log_file, lambda: log
    )


def _run(args: argparse.Namespace) -> int:
    """Run the command ``args`` names (the window without one)."""
    if args.command == "doctor":
        return int(run_doctor(args))
    if args.command == "settings":
        from mooring.cli.settings_cmd import run_settings

        settings_paths = resolve_paths(args.data_dir)
        settings_paths.check()
        return int(run_settings(args, settings_paths.settings_file))
    if args.command == "agent":
        return int(run_agent(args))
    if args.command == "models":
        from mooring.cli.models_cmd import run_models

        model_paths = resolve_paths(args.data_dir)
        model_paths.check()
        return int(run_models(args, model_paths))
    if args.command == "autostart":
        from mooring.cli.autostart_cmd import run_autostart

        return int(run_autostart(args, resolve_paths(args.data_dir)))
    from mooring.cli.commands import HEADLESS

    if args.command in HEADLESS:
        return int(run_headless(args))
    return int(run_gui(args, on_ready=_smoke_run()))
