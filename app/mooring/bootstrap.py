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
from mooring.adapters.process import current_owner, owner_alive
from mooring.adapters.secrets import KeyringSecrets
from mooring.adapters.telemetry import TelemetryConfig, setup_tracing
from mooring.cli.commands import HEADLESS
from mooring.cli.exit_codes import ExitCode
from mooring.cli.parser import build_parser
from mooring.core.clock import SystemClock
from mooring.core.errors import KnownError
from mooring.core.ports import Gateway
from mooring.core.servers import ServerDefinition
from mooring.core.tasks.polling import PollPolicy
from mooring.mcp.lazy import LazyGateway
from mooring.services.approvals import AskUser
from mooring.services.diagnostics import Check, Level
from mooring.services.host import HEADER_SCOPE, Host, HostConfig
from mooring.settings.paths import Paths, resolve_paths
from mooring.settings.store import Settings, load_settings
from mooring.storage.db import Database
from mooring.storage.store import SqlStore

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

    from mooring.cli.accounts import SignInActions
    from mooring.ui.main_window import MainWindow, WindowInfo

log = logging.getLogger("mooring.bootstrap")

USAGE_CODES = frozenset({"usage", "invalid_answer"})
"""Known errors that mean the command line was wrong (exit 2, as argparse's own)."""


def demo_server_command(paths: Paths) -> tuple[str, tuple[str, ...]]:
    """How to start the bundled demo server with this Python, on a store in the data folder."""
    return sys.executable, ("-m", "mooring.demo_server", "--store", str(paths.demo_store))


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
    """Open the database, set up first-run defaults and run the window.

    One window per data folder: when one runs already, it is brought to the front and this
    launch ends (no second poller on the same database).
    """
    from mooring.ui.app import ensure_app, run_app, show_fatal
    from mooring.ui.dialogs.approval import DialogAsker
    from mooring.ui.probe import qt_status
    from mooring.ui.single_instance import claim

    paths, settings = _start(args)
    qt = qt_status()
    if not qt.importable or not qt.display:
        sys.stderr.write(f"mooring: the window cannot open: {qt.detail}\n")
        sys.stderr.write("mooring: `mooring doctor` checks this machine; the CLI works headless.\n")
        return ExitCode.PROBLEM
    ensure_app()
    instance = claim(paths.data_dir)
    if instance is None:
        log.info("a window runs already on %s; brought it to the front", paths.data_dir)
        sys.stderr.write("mooring: already running on this data folder; switched to its window.\n")
        return ExitCode.OK
    try:
        db = Database.open(paths.database)
    except KnownError as exc:
        log.error("cannot open the database: %s", exc.message)
        sys.stderr.write(f"mooring: {exc.message}\n  {exc.hint}\n")
        show_fatal(exc.message, exc.hint)
        return ExitCode.PROBLEM
    # The approval dialog is the broker's `ask`: calls that need approval can run.
    asker = DialogAsker()
    host = build_host(paths, settings, db, ask=asker)

    async def export_traces(target: Path) -> int:
        from mooring.adapters.telemetry import export_to

        provider.force_flush()
        return await asyncio.to_thread(export_to, paths.traces_dir, target)

    provider = _tracing(paths, settings, synchronous=False)
    try:
        return ExitCode(
            run_app(
                host,
                _window_info(paths, settings, db),
                asker=asker,
                instance=instance,
                layout_file=paths.config_dir / "window.ini",
                on_ready=on_ready,
                export_traces=export_traces,
            )
        )
    finally:
        provider.shutdown()
        db.close()


def _window_info(paths: Paths, settings: Settings, db: Database) -> WindowInfo:
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
    )


@dataclass(frozen=True, slots=True)
class Wiring:
    """A wired host and the OAuth providers behind its gateway (for sign-in actions)."""

    host: Host
    oauth: Callable[[], Any]
    """The OAuth providers (loads the MCP SDK on first use)."""


def build_host(
    paths: Paths, settings: Settings, db: Database, *, ask: AskUser | None = None
) -> Host:
    """Wire one host over one database (the GUI, the CLI and the service tests share this).

    ``ask`` is the face's approval prompt (a terminal question, a dialog); without one, a call
    that needs approval is refused, never sent.
    """
    return wire(paths, settings, db, ask=ask).host


def wire(paths: Paths, settings: Settings, db: Database, *, ask: AskUser | None = None) -> Wiring:
    """:func:`build_host`, also handing out the OAuth providers."""
    from mooring.adapters.preview import preview_arguments

    clock = SystemClock()
    store = SqlStore(db, clock)
    secrets = KeyringSecrets()

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
    max_ms = int(settings.get("polling.max_interval_ms"))
    config = HostConfig(
        poll_policy=PollPolicy(max_interval_ms=max(max_ms, PollPolicy().default_interval_ms)),
        per_server=int(settings.get("polling.per_server_concurrency")),
        max_argument_bytes=int(settings.get("approval.max_argument_bytes")),
        capture_content=bool(settings.get("telemetry.capture_content")),
        demo_server=demo_server_command(paths) if settings.get("demo_server.enabled") else None,
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
    )

    def oauth() -> Any:
        if not oauth_holder:
            gateway.load()
        return oauth_holder[0]

    return Wiring(host, oauth)


def _tracing(paths: Paths, settings: Settings, *, synchronous: bool) -> TracerProvider:
    return setup_tracing(
        TelemetryConfig(
            folder=paths.traces_dir,
            file_export=bool(settings.get("telemetry.file_export")),
            otlp_endpoint=str(settings.get("telemetry.otlp_endpoint")),
            synchronous=synchronous,
        )
    )


def _sign_in_actions(oauth: Callable[[], Any]) -> SignInActions:
    from mooring.cli.accounts import SignInActions

    async def sign_in(server: ServerDefinition, profile_id: str | None) -> bool:
        from mooring.mcp.oauth import LoopbackSignIn

        result: bool = await oauth().sign_in_now(
            server, profile_id, LoopbackSignIn.printing(sys.stderr)
        )
        return result

    def sign_out(server: ServerDefinition, profile_id: str | None) -> None:
        oauth().forget(server.id, profile_id)

    def signed_in(server: ServerDefinition, profile_id: str | None) -> bool:
        return bool(oauth().signed_in(server.id, profile_id))

    return SignInActions(sign_in=sign_in, sign_out=sign_out, signed_in=signed_in)


def run_headless(args: argparse.Namespace) -> ExitCode:
    """Run one CLI command with the host's services (no Qt)."""
    from mooring.cli.approval import terminal_asker
    from mooring.cli.commands import handler_for
    from mooring.cli.context import CliContext, Terminal

    paths, settings = _start(args)
    db = Database.open(paths.database)
    terminal = Terminal()
    wiring = wire(
        paths, settings, db, ask=terminal_asker(terminal) if terminal.interactive else None
    )
    host = wiring.host

    async def run() -> ExitCode:
        try:
            await host.prepare()
            ctx = CliContext(
                host=host,
                sign_in=_sign_in_actions(wiring.oauth),
                as_json=args.json,
                terminal=terminal,
            )
            return await handler_for(args, traces_dir=paths.traces_dir)(ctx, args)
        finally:
            await host.stop()

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
        if args.command in HEADLESS:
            return int(run_headless(args))
        return int(run_gui(args))
    except KnownError as exc:
        sys.stderr.write(f"mooring: {exc.message}\n")
        if exc.hint:
            sys.stderr.write(f"  {exc.hint}\n")
        return int(ExitCode.USAGE if exc.code in USAGE_CODES else ExitCode.PROBLEM)
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
