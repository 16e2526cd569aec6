"""The composition root: builds everything in a fixed, logged order and passes it along.

paths → logging → settings → database (migrate) → services → (GUI: QApplication + qasync loop)
→ window. No global singletons: collaborators are constructor arguments. The GUI and the CLI
share this file; nothing else wires concrete classes together.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mooring import __version__
from mooring.adapters import launcher
from mooring.cli.errors import end_command
from mooring.cli.exit_codes import ExitCode
from mooring.cli.parser import build_parser
from mooring.core.errors import KnownError
from mooring.settings.paths import APP_NAME, Paths, resolve_paths
from mooring.settings.store import Settings, load_settings

# The rest loads where it is used: the window's shell paints before SQLAlchemy, the services
# and the notification stack are imported (see "Start-up order" in docs/architecture.md).
if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

    from mooring.adapters.lazy_tracing import LazyTracerProvider
    from mooring.adapters.notify.chain import HookLink, NotificationChain
    from mooring.adapters.notify.desktop import DesktopLink
    from mooring.adapters.poller_lock import FilePollerLock
    from mooring.core.chat import ProviderFactory
    from mooring.core.notifications import Notice
    from mooring.core.ports import Gateway
    from mooring.core.servers import ServerDefinition
    from mooring.mcp.transport import TransportOpener
    from mooring.services.approvals import AskUser
    from mooring.services.chat import ProviderResolver
    from mooring.services.diagnostics import Check
    from mooring.services.follower import DatabaseFollower
    from mooring.services.host import Host
    from mooring.services.notifier import Notifier
    from mooring.storage.db import Database
    from mooring.ui.app import Loaded
    from mooring.ui.collector import FullPassesBetweenBursts
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
    from mooring.services.diagnostics import Check, Level
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


GUI_SWITCH_INTERVAL_S = 0.001
"""How long another thread may hold the GIL while the window's thread waits for it."""


def run_gui(
    args: argparse.Namespace, *, on_ready: Callable[[MainWindow], None] | None = None
) -> ExitCode:
    """Open the database, set up first-run defaults and run the window.

    One window per data folder: when one runs already, it is brought to the front and this
    launch ends (no second poller on the same database). The window's shell is painted before
    the host is built: a database that needs nothing done to it is opened, and the host and
    the notification stack are wired, on a worker thread afterwards; one to create or migrate,
    or one that cannot be opened, is dealt with first, as before (the fatal-error dialog).
    """
    from mooring.ui.app import ensure_app, run_window, show_fatal, show_shell
    from mooring.ui.probe import qt_status
    from mooring.ui.single_instance import claim

    paths, settings = _start(args)
    qt = qt_status()
    if not qt.importable or not qt.display:
        sys.stderr.write(f"mooring: the window cannot open: {qt.detail}\n")
        sys.stderr.write("mooring: `mooring doctor` checks this machine; the CLI works headless.\n")
        return ExitCode.PROBLEM
    ensure_app()
    # The window's worker threads (the writer, span export) hold the GIL for up to the switch
    # interval whenever the GUI thread comes back from Qt: at CPython's 5 ms, a 1,000-task
    # launch reconciliation left dozens of ~5 ms waits in one heartbeat gap (median worst
    # gap of 8 runs: 52 ms; at 1 ms: 39 ms, the reconciliation as fast).
    sys.setswitchinterval(GUI_SWITCH_INTERVAL_S)
    instance = claim(paths.data_dir)
    if instance is None:
        log.info("a window runs already on %s; brought it to the front", paths.data_dir)
        sys.stderr.write("mooring: already running on this data folder; switched to its window.\n")
        return ExitCode.OK

    def cannot_start(exc: KnownError) -> ExitCode:
        log.error("cannot open the database: %s", exc.message)
        sys.stderr.write(f"mooring: {exc.message}\n  {exc.hint}\n")
        show_fatal(exc.message, exc.hint)
        return ExitCode.PROBLEM

    from mooring.storage.schema_file import opens_as_is

    opened: list[Database] = []
    # A database that needs nothing done is opened after the first paint (a read-only
    # `sqlite3` look now, no SQLAlchemy); any other is dealt with first, as before.
    if not opens_as_is(paths.database):
        from mooring.storage.db import Database

        try:
            opened.append(Database.open(paths.database))
        except KnownError as exc:
            instance.close()
            return cannot_start(exc)
    # The window's shell is on screen before anything heavy loads (asyncio included).
    shell = show_shell(layout_file=paths.config_dir / "window.ini", instance=instance)
    import asyncio

    parts: list[_GuiParts] = []

    def build() -> Loaded:
        # On a worker thread, while the shell is on screen: nothing here touches Qt widgets.
        from mooring.adapters.secrets import KeyringSecrets
        from mooring.mcp.lazy import LazyGateway
        from mooring.storage.db import Database
        from mooring.ui import QT_IMPORTS
        from mooring.ui.app import Loaded

        with QT_IMPORTS:  # the panels' modules load on another thread meanwhile
            from mooring.ui.dialogs.approval import DialogAsker

        if not opened:
            opened.append(Database.open(paths.database))
        db = opened[0]
        provider = _tracing(paths, settings, synchronous=False)
        # The approval dialog is the broker's `ask`: calls that need approval can run.
        asker = DialogAsker()
        host = build_host(paths, settings, db, ask=asker)
        # The MCP SDK (anyio's backend with it) loads on its worker thread now, while the
        # shell says "Loading": left to the first connection, with the window up, part of it
        # (anyio's backend, ~70 ms) loaded on the GUI thread and froze the window.
        if isinstance(host.gateway, LazyGateway):
            host.gateway.warm(then=lambda: _warm_http(db))
        if isinstance(host.secrets, KeyringSecrets):
            host.secrets.warm()  # likewise the keyring's probe (~40 ms) of the first secret
        bg = build_background(paths, settings, host, headless=False)
        if isinstance(host.gateway, LazyGateway):
            # ...and the window waits for it: an import (~1 s of CPU) beside a live window
            # holds the GIL between the GUI thread's every call into Qt, which stalled
            # painting and timers by 80-200 ms at a time. Beside the shell it costs nothing.
            host.gateway.wait_warm()
        settle_collector(young=WINDOW_YOUNG_OBJECTS_PER_COLLECTION)
        parts.append(_GuiParts(host, bg, provider))
        return Loaded(host, _window_info(paths, settings, db), asker, export_traces)

    async def load() -> Loaded:
        return await asyncio.to_thread(build)

    delivering: list[asyncio.Future[None]] = []
    pending: set[asyncio.Future[None]] = set()

    windows: list[MainWindow] = []
    collectors: list[FullPassesBetweenBursts] = []

    def attach(window: MainWindow) -> None:
        from mooring.ui.collector import FullPassesBetweenBursts
        from mooring.ui.notifiers import STILL_RUNNING, TrayNotifier, tray_icon

        # Process-wide, so here (the window's entry point) and not where tests build windows.
        collector = FullPassesBetweenBursts(parent=window)
        collector.start()
        collectors.append(collector)
        bg = parts[0].bg
        windows.append(window)
        tray = TrayNotifier(tray_icon(window), window)
        tray.opened.connect(window.open_target)
        tray.quit_requested.connect(window.quit)
        window.keep_running = lambda: bool(settings.get("window.close_to_tray")) and tray.available
        if window.keep_running():
            tray.ensure_icon()  # Quit is one click away from the start

        def hidden_to_tray() -> None:
            if settings.get("window.close_to_tray_explained") or not tray.explain(STILL_RUNNING):
                return
            changes: dict[str, object] = {"window.close_to_tray_explained": True}
            saving = asyncio.ensure_future(
                asyncio.to_thread(remember_settings, paths, settings, changes)
            )
            pending.add(saving)
            saving.add_done_callback(pending.discard)

        window.hidden_to_tray.connect(hidden_to_tray)
        if not settings.get("window.welcome_shown"):
            window.shown.connect(lambda: welcome_once(window))
        bg.fallbacks[0].show = tray.show_notice  # system tray
        bg.fallbacks[1].show = window.toast.show_notice  # in-app toast and badge
        bg.desktop.on_open = window.open_target
        bg.notifier.window_active = window.isActiveWindow
        if not settings.get("notifications.asked"):
            bg.notifier.consent = lambda: _ask_consent_once(window, paths, settings)

    def welcome_once(window: MainWindow) -> None:
        # The first launch on this data folder: the welcome, once (remembered at once).
        if settings.get("window.welcome_shown"):
            return
        window.show_welcome()
        changes: dict[str, object] = {"window.welcome_shown": True}
        saving = asyncio.ensure_future(
            asyncio.to_thread(remember_settings, paths, settings, changes)
        )
        pending.add(saving)
        saving.add_done_callback(pending.discard)

    async def background() -> None:
        # The window is up. One process per data folder polls: if a watcher (or another
        # window) holds the lock, follow its results from the database until it is gone.
        from mooring.services.follower import Adopter

        host, bg = parts[0].host, parts[0].bg
        delivering.append(asyncio.ensure_future(bg.notifier.run()))
        adopter = Adopter(
            ledger=host.ledger, catalog=host.catalog, accounts=host.accounts, monitor=host.monitor
        )
        if not bg.lock.try_acquire():
            log.info("%s polls this data folder; following it", bg.lock.holder())
            bg.follower.discover = True  # every task of the data folder, as the window shows
            adopting: list[asyncio.Future[None]] = []

            def took_over() -> None:
                bg.notifier.start()
                adopting.append(asyncio.ensure_future(adopter.run()))

            bg.follower.on_takeover = took_over
            try:
                # The rows were painted before this look: a task the poller finished meanwhile is
                # no longer unfinished, so the follower would never follow it. Follow what is
                # unfinished now, then read the rows again (a change after that, it reports).
                await bg.follower.discover_new()
                reread_unfinished_rows()
                await bg.follower.run()
            finally:
                for task in adopting:
                    task.cancel()
            return
        # Reconcile what earlier runs started, then keep watching (tasks other processes start
        # included: this window polls for the whole data folder).
        bg.notifier.start()
        host.start_monitoring()
        try:
            report = await host.reconcile()
            adopter.knows({r.id for r in report.refreshed})
        except KnownError as exc:
            log.warning("launch reconciliation stopped: %s", exc.message)
        # Another process may have finished work between the first paint and this one taking
        # the lock (reconciliation reads only unfinished tasks): read those rows again.
        reread_unfinished_rows()
        await adopter.run()

    def reread_unfinished_rows() -> None:
        for window in windows:
            window.tasks.feed.refresh_many(v.record for v in window.tasks.feed.model.unfinished())

    async def shutdown() -> None:
        for collector in collectors:  # the window is gone: CPython's own rule from here on
            collector.stop()
        if not parts:
            return  # closed before the host was built
        host, bg = parts[0].host, parts[0].bg
        await bg.follower.stop()
        await bg.notifier.aclose(delivering[0] if delivering else None)
        await bg.aclose()
        await host.stop()

    async def export_traces(target: Path) -> int:
        from mooring.adapters.telemetry import export_to

        parts[0].provider.force_flush()
        return await asyncio.to_thread(export_to, paths.traces_dir, target)

    try:
        return ExitCode(
            run_window(
                shell,
                load,
                instance=instance,
                on_ready=on_ready,
                attach=attach,
                background=background,
                shutdown=shutdown,
            )
        )
    except KnownError as exc:  # the database could not be opened after all
        return cannot_start(exc)
    finally:
        for part in parts:
            part.provider.shutdown()
        for db in opened:
            db.close()


@dataclass(frozen=True, slots=True)
class _GuiParts:
    """What the window's ``load`` built off the GUI thread."""

    host: Host
    bg: Background
    provider: LazyTracerProvider


def _warm_http(db: Database) -> None:
    """With an HTTP server configured, load what the first HTTP connection loads now, behind
    the window's shell: httpx2's connection layer (httpcore2, h11) and truststore, which it
    imports only when its first client is built or connects (~30 ms of CPU), and the TLS
    context every HTTP connection shares (~50 ms). The launch reconciliation's first
    connection did both beside the live window, whose worst stall that was. With stdio
    servers only, none of it is ever needed."""
    from mooring.core.servers import Transport
    from mooring.mcp.transport import warm_http
    from mooring.storage.repositories.servers import list_servers

    if any(server.transport is Transport.HTTP for server in db.call_sync(list_servers)):
        warm_http()


def _window_info(paths: Paths, settings: Settings, db: Database) -> WindowInfo:
    from mooring.services.preferences import SettingsEditor
    from mooring.settings.schema import SETTINGS
    from mooring.ui.main_window import SettingRow, WindowInfo

    return WindowInfo(
        data_dir=str(paths.data_dir),
        database=str(paths.database),
        schema=f"{db.schema.current} (newest known: {db.schema.head})",
        settings_file=str(paths.settings_file),
        log_file=str(paths.log_file),
        settings=tuple(
            SettingRow(s.key, str(settings.get(s.key)), s.description) for s in SETTINGS
        ),
        editor=SettingsEditor(paths.settings_file, settings),
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
        # Environment values kept as secrets (imported API keys) are stored empty.
        return {
            name: value or secrets.get(ENV_SCOPE, f"{server.id}:{name}") or ""
            for name, value in server.env.items()
        }

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


# -- Notifications and the one-poller rule ------------------------------------------------------


@dataclass
class Background:
    """Private notifications and the one-poller-per-data-folder rule, wired once."""

    lock: FilePollerLock
    follower: DatabaseFollower
    notifier: Notifier
    chain: NotificationChain
    desktop: DesktopLink
    fallbacks: list[HookLink]
    """The links after the desktop one: system tray and in-app toast (the window registers
    them), or the terminal (headless)."""

    async def aclose(self) -> None:
        """Deliver what is held, close the notification service connection, let go of the
        lock."""
        await self.notifier.aclose()
        await self.desktop.aclose()
        self.lock.release()


def _terminal_notice(notice: Notice) -> bool:
    from mooring.core.text import neutralize

    sys.stderr.write(neutralize(f"[{notice.summary}] {notice.body}".replace("\n", "; ")) + "\n")
    sys.stderr.flush()
    return True


def build_background(paths: Paths, settings: Settings, host: Host, *, headless: bool) -> Background:
    """The notifier over the delivery chain (desktop → tray → in-app, or desktop → terminal),
    the poller lock of this data folder, and the follower used while another process polls."""
    from mooring.adapters.notify.chain import HookLink, NotificationChain
    from mooring.adapters.notify.desktop import DesktopLink
    from mooring.adapters.poller_lock import FilePollerLock
    from mooring.adapters.process import current_owner
    from mooring.core.notifications import NotifyPrefs, prefs_from
    from mooring.services.follower import DatabaseFollower
    from mooring.services.notifier import Notifier

    def prefs() -> NotifyPrefs:
        return prefs_from(
            when=str(settings.get("notifications.when")),
            show_names=bool(settings.get("notifications.show_names")),
            muted=settings.get("notifications.muted_conversations"),
        )

    desktop = DesktopLink(app_name=APP_NAME)
    fallbacks = (
        [HookLink("terminal", _terminal_notice)]
        if headless
        else [HookLink("system tray"), HookLink("in-app toast")]
    )
    chain = NotificationChain([desktop, *fallbacks])
    notifier = Notifier(
        events=host.events, catalog=host.catalog, sink=chain, clock=host.clock, prefs=prefs
    )
    lock = FilePollerLock(paths.poller_lock, current_owner())
    follower = DatabaseFollower(
        ledger=host.ledger, events=host.events, clock=host.clock, lock=lock, monitor=host.monitor
    )
    return Background(lock, follower, notifier, chain, desktop, fallbacks)


async def _ask_consent_once(window: MainWindow, paths: Paths, settings: Settings) -> bool:
    """The window's first-time question; the answer is remembered."""
    import asyncio

    from mooring.ui.notifiers import ask_notification_consent

    allowed = await ask_notification_consent(window)
    try:
        await asyncio.to_thread(remember_consent, paths, settings, allowed)
    except OSError as exc:
        log.warning("could not save the notification choice: %s", exc)
    return allowed


def remember_consent(paths: Paths, settings: Settings, allowed: bool) -> None:
    """Remember the answer to "may Mooring notify?" (``never`` for "not now")."""
    changes: dict[str, object] = {"notifications.asked": True}
    if not allowed:
        changes["notifications.when"] = "never"
    remember_settings(paths, settings, changes)


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

WINDOW_YOUNG_OBJECTS_PER_COLLECTION = 1_000
"""The window's first threshold: a pass over young objects stops the GUI thread, and its
length grows with their number. During a 1,000-task launch reconciliation the heartbeat's
worst gaps were collector passes (traced by gc callbacks: young passes of 20,000-25,000
objects took 10-24 ms of CPU, 60-120 ms with the host's preemption, at 5,000); at 1,000, two
runs each, alternating: worst gap 98-106 ms against 171-206, gaps over 33 ms 17-31 against
18-49, the reconciliation no slower. Batch commands keep the larger threshold (throughput)."""


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
    """Run one CLI command with the host's services (no Qt)."""
    import asyncio

    from mooring.cli.approval import terminal_asker
    from mooring.cli.commands import handler_for
    from mooring.cli.context import CliContext, Terminal
    from mooring.cli.sampling import install_terminal_askers
    from mooring.mcp.lazy import LazyGateway
    from mooring.storage.db import Database

    paths, settings = _start(args)
    db = Database.open(paths.database)
    terminal = Terminal()
    wiring = wire(
        paths, settings, db, ask=terminal_asker(terminal) if terminal.interactive else None
    )
    host = wiring.host
    # Process-wide: only a process's own entry point settles the collector (never a host
    # built in-process, as tests build them).
    settle_collector()
    if isinstance(host.gateway, LazyGateway):
        host.gateway.when_loaded(settle_collector)  # the SDK's classes, there for good too

    async def run() -> ExitCode:
        background = build_background(paths, settings, host, headless=True)
        try:
            await host.prepare()
            ctx = CliContext(
                host=host,
                as_json=args.json,
                terminal=terminal,
                poller_lock=background.lock,
                follower=background.follower,
                notifier=background.notifier,
            )
            if terminal.interactive:
                install_terminal_askers(ctx, host.inputs)
            return await handler_for(args, traces_dir=paths.traces_dir)(ctx, args)
        finally:
            await background.aclose()
            await host.stop()

    provider = _tracing(paths, settings, synchronous=True)
    try:
        return asyncio.run(run())
    finally:
        provider.shutdown()
        db.close()


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
    if args.command == "autostart":
        from mooring.cli.autostart_cmd import run_autostart

        return int(run_autostart(args, resolve_paths(args.data_dir)))
    from mooring.cli.commands import HEADLESS

    if args.command in HEADLESS:
        return int(run_headless(args))
    return int(run_gui(args, on_ready=_smoke_run()))
