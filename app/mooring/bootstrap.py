"""The composition root: builds everything in a fixed, logged order and passes it along.

paths → logging → settings → database (migrate) → services → (GUI: QApplication + qasync loop)
→ window. No global singletons: collaborators are constructor arguments. The GUI and the CLI
share this file; nothing else wires concrete classes together.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mooring import __version__
from mooring.adapters.notify.chain import HookLink, NotificationChain
from mooring.adapters.notify.desktop import DesktopLink
from mooring.adapters.poller_lock import FilePollerLock
from mooring.adapters.process import current_owner, owner_alive
from mooring.adapters.secrets import KeyringSecrets
from mooring.adapters.telemetry import TelemetryConfig, setup_tracing
from mooring.cli.commands import HEADLESS
from mooring.cli.doctor import print_report
from mooring.cli.exit_codes import ExitCode
from mooring.cli.parser import build_parser
from mooring.core.approval.policy import Guards
from mooring.core.clock import SystemClock
from mooring.core.errors import KnownError
from mooring.core.events import EventBus
from mooring.core.notifications import Notice, NotifyPrefs, prefs_from
from mooring.core.ports import ConnectionStatus, Gateway, ServerConnection
from mooring.core.servers import ServerDefinition
from mooring.core.tasks.polling import PollPolicy
from mooring.services.approvals import ApprovalBroker
from mooring.services.diagnostics import Level, Report
from mooring.services.first_run import ensure_demo_server
from mooring.services.follower import Adopter, DatabaseFollower
from mooring.services.notifier import Notifier
from mooring.services.reconciler import Reconciler, UnknownOutcomes
from mooring.services.task_monitor import TaskMonitor
from mooring.services.tool_runner import ToolRunner
from mooring.settings.paths import APP_NAME, Paths, resolve_paths
from mooring.settings.store import Settings, load_settings
from mooring.storage.db import Database
from mooring.storage.store import SqlStore

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

    from mooring.cli.accounts import SignInActions
    from mooring.ui.main_window import MainWindow

log = logging.getLogger("mooring.bootstrap")


def demo_server_command(paths: Paths) -> tuple[str, list[str]]:
    """How to start the bundled demo server with this Python, on a store in the data folder."""
    return sys.executable, ["-m", "mooring.demo_server", "--store", str(paths.demo_store)]


def _start(args: argparse.Namespace) -> tuple[Paths, Settings]:
    from mooring.adapters.logging import setup_logging

    paths = resolve_paths(args.data_dir)
    setup_logging(paths.log_file, json_lines=args.log_json)
    log.info("mooring %s starting; data folder %s", __version__, paths.data_dir)
    settings = load_settings(paths.settings_file)
    return paths, settings


def run_doctor(args: argparse.Namespace) -> ExitCode:
    """Check every part of the environment and print what to fix."""
    from mooring.adapters.notify.probe import notifier_status
    from mooring.adapters.secrets import keyring_status
    from mooring.ui.probe import qt_status

    paths, settings = _start(args)
    report = Report()
    try:
        paths.ensure()
    except OSError as exc:
        report.add(
            "data directory",
            Level.FAIL,
            f"{paths.data_dir} cannot be created: {exc.strerror}",
            "Choose a writable folder with --data-dir or MOORING_DATA_DIR.",
        )
    else:
        source = "--data-dir / MOORING_DATA_DIR" if paths.overridden else "platform default"
        report.add("data directory", Level.OK, f"{paths.data_dir} ({source})")

    try:
        db = Database.open(paths.database)
    except KnownError as exc:
        report.add("database", Level.FAIL, exc.message, exc.hint)
        report.add("schema version", Level.FAIL, "unknown (the database could not be opened)")
    else:
        try:
            store = SqlStore(db, SystemClock())
            counts = asyncio.run(store.counts())
            report.add(
                "database", Level.OK, f"{paths.database} ({sum(counts.values())} task records)"
            )
            report.add("schema version", Level.OK, f"{db.schema.current} (newest known)")
        finally:
            db.close()

    keyring = keyring_status()
    report.add(
        "keyring",
        Level.OK if keyring.usable else Level.WARN,
        f"{keyring.backend}: {keyring.detail}",
        ""
        if keyring.usable
        else "Secrets will be kept for this session only. Unlock or "
        "install a Secret Service keyring (e.g. gnome-keyring) to keep them.",
    )
    notifier = notifier_status()
    report.add(
        "notifications",
        Level.OK if notifier.usable else Level.WARN,
        f"via {notifier.link}: {notifier.backend}: {notifier.detail}",
        ""
        if notifier.usable
        else "Start a notification daemon to be told about finished work outside the window.",
    )
    qt = qt_status()
    if not qt.importable:
        report.add(
            "qt platform",
            Level.FAIL,
            qt.detail,
            "Install Qt's system libraries: run `bash packaging/system-deps.sh gui`.",
        )
    else:
        report.add(
            "qt platform",
            Level.OK if qt.display else Level.WARN,
            qt.detail,
            "" if qt.display else "The CLI works without a display; the window needs one.",
        )
    if settings.problems:
        report.add("settings", Level.WARN, "; ".join(settings.problems))
    return print_report(report, as_json=args.json)


def run_gui(
    args: argparse.Namespace, *, on_ready: Callable[[MainWindow], None] | None = None
) -> ExitCode:
    """Open the database, set up first-run defaults and run the window."""
    from mooring.ui.app import run_app, show_fatal
    from mooring.ui.main_window import HostOverview, TaskRow
    from mooring.ui.probe import qt_status

    paths, settings = _start(args)
    qt = qt_status()
    if not qt.importable or not qt.display:
        sys.stderr.write(f"mooring: the window cannot open: {qt.detail}\n")
        sys.stderr.write("mooring: `mooring doctor` checks this machine; the CLI works headless.\n")
        return ExitCode.PROBLEM
    try:
        db = Database.open(paths.database)
    except KnownError as exc:
        log.error("cannot open the database: %s", exc.message)
        sys.stderr.write(f"mooring: {exc.message}\n  {exc.hint}\n")
        show_fatal(exc.message, exc.hint)
        return ExitCode.PROBLEM
    services = build_services(paths, settings, db)
    store, clock = services.store, services.clock

    async def load() -> HostOverview:
        servers = await store.list_servers()
        aliases = {s.id: s.alias for s in servers}
        rows = [
            TaskRow(
                operation=r.id[:8],
                tool=r.tool,
                server=aliases.get(r.server_id, "(removed)"),
                record_id=r.id,
                state=r.state.value.replace("_", " ")
                + (" (cancel requested)" if r.cancel_requested and not r.is_terminal else ""),
                detail=" — ".join(
                    text
                    for text in (
                        "status temporarily unavailable" if r.flags else "",
                        r.status_message or "",
                        r.reason or "",
                    )
                    if text
                ),
            )
            for r in await store.list_records(limit=50)
        ]
        return HostOverview(
            data_dir=str(paths.data_dir),
            database=str(paths.database),
            schema=f"{db.schema.current} (newest known: {db.schema.head})",
            servers=servers,
            task_counts=await store.counts(),
            issues=await store.open_issues(),
            tasks=rows,
        )

    async def first_run() -> None:
        if settings.get("demo_server.enabled"):
            command, demo_args = demo_server_command(paths)
            await ensure_demo_server(store, clock, command=command, args=demo_args)

    bg = build_background(paths, settings, services, headless=False)
    delivering: list[asyncio.Future[None]] = []
    pending: set[asyncio.Future[None]] = set()

    def attach(window: MainWindow) -> None:
        from mooring.ui.notifiers import STILL_RUNNING, TrayNotifier, tray_icon

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
        bg.fallbacks[0].show = tray.show_notice  # system tray
        bg.fallbacks[1].show = window.toast.show_notice  # in-app toast and badge
        bg.desktop.on_open = window.open_target
        bg.notifier.window_active = window.isActiveWindow
        if not settings.get("notifications.asked"):
            bg.notifier.consent = lambda: _ask_consent_once(window, paths, settings)

    async def background() -> None:
        # The window is up. One process per data folder polls: if a watcher (or another
        # window) holds the lock, follow its results from the database until it is gone.
        delivering.append(asyncio.ensure_future(bg.notifier.run()))
        if not bg.lock.try_acquire():
            log.info("%s polls this data folder; following it", bg.lock.holder())
            bg.follower.discover = True  # every task of the data folder, as the window shows
            adopter = Adopter(ledger=store, catalog=store, accounts=store, monitor=services.monitor)

            def took_over() -> None:
                bg.notifier.start()
                adopting.append(asyncio.ensure_future(adopter.run()))

            adopting: list[asyncio.Future[None]] = []
            bg.follower.on_takeover = took_over
            try:
                await bg.follower.run()
            finally:
                for task in adopting:
                    task.cancel()
            return
        # Reconcile what earlier runs started, then keep watching (tasks other processes start
        # included: this window polls for the whole data folder).
        bg.notifier.start()
        monitor = asyncio.ensure_future(services.monitor.run())
        adopter = Adopter(ledger=store, catalog=store, accounts=store, monitor=services.monitor)
        try:
            report = await services.reconciler.run()
            adopter.knows({r.id for r in report.refreshed})
        except KnownError as exc:
            log.warning("launch reconciliation stopped: %s", exc.message)
        adoption = asyncio.ensure_future(adopter.run())
        try:
            await monitor
        finally:
            adoption.cancel()

    async def shutdown() -> None:
        await services.monitor.stop()
        await bg.follower.stop()
        await bg.notifier.aclose(delivering[0] if delivering else None)
        await bg.aclose()
        await services.gateway.aclose()

    def subscribe(callback: Callable[[], None]) -> Callable[[], None]:
        return services.events.subscribe(lambda _event: callback())

    async def export_traces(target: Path) -> int:
        from mooring.adapters.telemetry import export_to

        provider.force_flush()
        return await asyncio.to_thread(export_to, paths.traces_dir, target)

    provider = _tracing(paths, settings, synchronous=False)
    try:
        asyncio.run(first_run())
        return ExitCode(
            run_app(
                load,
                on_ready=on_ready,
                background=background,
                shutdown=shutdown,
                subscribe=subscribe,
                export_traces=export_traces,
                attach=attach,
            )
        )
    finally:
        provider.shutdown()
        db.close()


async def _ask_consent_once(window: MainWindow, paths: Paths, settings: Settings) -> bool:
    """The window's first-time question; the answer is remembered."""
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


class LazyGateway:
    """A ``Gateway`` that loads the MCP SDK only when a command first talks to a server, so
    commands that only read the ledger start quickly."""

    def __init__(self, factory: Callable[[], Gateway]) -> None:
        self._factory = factory
        self._real: Gateway | None = None
        self._listeners: list[Callable[[str, str], None]] = []

    def load(self) -> None:
        """Build the real gateway now."""
        self._gateway()

    def _gateway(self) -> Gateway:
        if self._real is None:
            self._real = self._factory()
            for listener in self._listeners:
                self._real.add_task_listener(listener)
        return self._real

    async def connect(
        self, server: ServerDefinition, profile_id: str | None = None
    ) -> ServerConnection:
        return await self._gateway().connect(server, profile_id)

    def statuses(self) -> list[ConnectionStatus]:
        return self._real.statuses() if self._real is not None else []

    def add_task_listener(self, listener: Callable[[str, str], None]) -> None:
        if self._real is not None:
            self._real.add_task_listener(listener)
        else:
            self._listeners.append(listener)

    async def aclose(self) -> None:
        if self._real is not None:
            await self._real.aclose()


@dataclass
class Services:
    """Every service and port of one running host, wired once."""

    store: SqlStore
    secrets: KeyringSecrets
    gateway: LazyGateway
    events: EventBus
    monitor: TaskMonitor
    broker: ApprovalBroker
    runner: ToolRunner
    reconciler: Reconciler
    unknown: UnknownOutcomes
    clock: SystemClock
    oauth: Callable[[], Any]
    """The OAuth providers (loads the MCP SDK on first use)."""


def build_services(paths: Paths, settings: Settings, db: Database) -> Services:
    """Wire the services over one database (the GUI and the CLI share this)."""
    from mooring.adapters.preview import preview_arguments
    from mooring.cli.servers import HEADER_SCOPE

    clock = SystemClock()
    store = SqlStore(db, clock)
    secrets = KeyringSecrets()
    events = EventBus()

    def headers_for(server: ServerDefinition, _profile_id: str | None) -> dict[str, str]:
        return {
            name: secrets.get(HEADER_SCOPE, f"{server.id}:{name}") or value
            for name, value in server.headers.items()
        }

    def make_gateway() -> Gateway:
        from mooring.mcp.connection import ConnectionSettings
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
                stderr_dir=paths.log_dir / "servers",
            ),
            headers_for=headers_for,
        )

    oauth_holder: list[Any] = []
    gateway = LazyGateway(make_gateway)

    def oauth() -> Any:
        if not oauth_holder:
            gateway.load()
        return oauth_holder[0]

    max_ms = int(settings.get("polling.max_interval_ms"))
    monitor = TaskMonitor(
        ledger=store,
        catalog=store,
        gateway=gateway,
        events=events,
        clock=clock,
        policy=PollPolicy(max_interval_ms=max(max_ms, PollPolicy().default_interval_ms)),
        per_server=int(settings.get("polling.per_server_concurrency")),
    )
    max_bytes = int(settings.get("approval.max_argument_bytes"))

    def guards_for(server: ServerDefinition) -> Guards:
        return Guards(
            max_argument_bytes=max_bytes,
            allowed_tools=None if server.allowed_tools is None else frozenset(server.allowed_tools),
            hidden_tools=frozenset(server.hidden_tools),
        )

    broker = ApprovalBroker(
        rules=store, clock=clock, guards_for=guards_for, preview=preview_arguments, events=events
    )
    runner = ToolRunner(
        ledger=store,
        gateway=gateway,
        monitor=monitor,
        broker=broker,
        events=events,
        clock=clock,
        capture_content=bool(settings.get("telemetry.capture_content")),
        owner=current_owner(),
    )
    reconciler = Reconciler(
        ledger=store,
        catalog=store,
        issues=store,
        rules=store,
        gateway=gateway,
        monitor=monitor,
        events=events,
        clock=clock,
        accounts=store,
        owner=current_owner(),
        owner_alive=owner_alive,
    )
    unknown = UnknownOutcomes(
        ledger=store, catalog=store, issues=store, gateway=gateway, events=events, clock=clock
    )
    return Services(
        store, secrets, gateway, events, monitor, broker, runner, reconciler, unknown, clock, oauth
    )


def _tracing(paths: Paths, settings: Settings, *, synchronous: bool) -> TracerProvider:
    return setup_tracing(
        TelemetryConfig(
            folder=paths.traces_dir,
            file_export=bool(settings.get("telemetry.file_export")),
            otlp_endpoint=str(settings.get("telemetry.otlp_endpoint")),
            synchronous=synchronous,
        )
    )


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
    sys.stderr.write(f"[{notice.summary}] {notice.body.replace(chr(10), '; ')}\n")
    sys.stderr.flush()
    return True


def build_background(
    paths: Paths, settings: Settings, services: Services, *, headless: bool
) -> Background:
    """The notifier over the delivery chain (desktop → tray → in-app, or desktop → terminal),
    the poller lock of this data folder, and the follower used while another process polls."""

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
        events=services.events,
        catalog=services.store,
        sink=chain,
        clock=services.clock,
        prefs=prefs,
    )
    lock = FilePollerLock(paths.poller_lock, current_owner())
    follower = DatabaseFollower(
        ledger=services.store,
        events=services.events,
        clock=services.clock,
        lock=lock,
        monitor=services.monitor,
    )
    return Background(lock, follower, notifier, chain, desktop, fallbacks)


def _sign_in_actions(services: Services) -> SignInActions:
    from mooring.cli.accounts import SignInActions

    async def sign_in(server: ServerDefinition, profile_id: str | None) -> bool:
        from mooring.mcp.oauth import LoopbackSignIn

        result: bool = await services.oauth().sign_in_now(
            server, profile_id, LoopbackSignIn.printing(sys.stderr)
        )
        return result

    def sign_out(server: ServerDefinition, profile_id: str | None) -> None:
        services.oauth().forget(server.id, profile_id)

    def signed_in(server: ServerDefinition, profile_id: str | None) -> bool:
        return bool(services.oauth().signed_in(server.id, profile_id))

    return SignInActions(sign_in=sign_in, sign_out=sign_out, signed_in=signed_in)


def run_headless(args: argparse.Namespace) -> ExitCode:
    """Run one CLI command with the host's services (no Qt)."""
    from mooring.cli.approval import terminal_asker
    from mooring.cli.commands import handler_for
    from mooring.cli.context import CliContext

    paths, settings = _start(args)
    db = Database.open(paths.database)
    services = build_services(paths, settings, db)

    async def run() -> ExitCode:
        background = build_background(paths, settings, services, headless=True)
        try:
            ctx = CliContext(
                catalog=services.store,
                ledger=services.store,
                issues=services.store,
                secrets=services.secrets,
                gateway=services.gateway,
                monitor=services.monitor,
                runner=services.runner,
                broker=services.broker,
                reconciler=services.reconciler,
                unknown=services.unknown,
                rules=services.store,
                accounts=services.store,
                sign_in=_sign_in_actions(services),
                events=services.events,
                clock=services.clock,
                as_json=args.json,
                poller_lock=background.lock,
                follower=background.follower,
                notifier=background.notifier,
            )
            if ctx.interactive:
                services.broker.ask = terminal_asker(ctx)
            return await handler_for(args, traces_dir=paths.traces_dir)(ctx, args)
        finally:
            await background.aclose()
            await services.gateway.aclose()

    provider = _tracing(paths, settings, synchronous=True)
    try:
        return asyncio.run(run())
    finally:
        provider.shutdown()
        db.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mooring`` command and ``python -m mooring``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "doctor":
            return int(run_doctor(args))
        if args.command == "settings":
            from mooring.cli.settings_cmd import run_settings

            return int(run_settings(args, resolve_paths(args.data_dir).settings_file))
        if args.command == "autostart":
            from mooring.cli.autostart_cmd import run_autostart

            return int(run_autostart(args, resolve_paths(args.data_dir)))
        if args.command in HEADLESS:
            return int(run_headless(args))
        return int(run_gui(args))
    except KnownError as exc:
        sys.stderr.write(f"mooring: {exc.message}\n")
        if exc.hint:
            sys.stderr.write(f"  {exc.hint}\n")
        return int(ExitCode.PROBLEM)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `mooring ... | head`: the reader left, nothing to report
        return int(ExitCode.OK)
    except Exception:
        log.exception("internal error")
        sys.stderr.write(
            "mooring: internal error; this is a bug. Details are in the log file "
            f"({resolve_paths(args.data_dir).log_file}).\n"
        )
        return int(ExitCode.INTERNAL)
