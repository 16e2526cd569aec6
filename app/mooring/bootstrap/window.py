"""The window face: one window per data folder, connected to the data folder's engine (started
when none runs)."""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mooring import __version__
from mooring.bootstrap.starting import agent_command, start_up
from mooring.cli.exit_codes import ExitCode
from mooring.core.errors import KnownError, Remedy
from mooring.settings.paths import Paths
from mooring.settings.store import Settings, load_settings

if TYPE_CHECKING:
    from mooring.core.events import EventBus
    from mooring.core.faces import Askers
    from mooring.engine.engine import EngineInfo
    from mooring.link.client import EngineLink, Remote
    from mooring.link.wire import Hello
    from mooring.services.host import Host
    from mooring.ui.lifecycle import Connected
    from mooring.ui.main_window import MainWindow, WindowInfo


def run_gui(
    args: argparse.Namespace, *, on_ready: Callable[[MainWindow], None] | None = None
) -> ExitCode:
    """Run the window: one per data folder, a face of the data folder's engine (started
    when none runs). A second launch brings the first window to the front and ends."""
    from mooring.ui.lifecycle import WindowLife
    from mooring.ui.probe import qt_status

    paths, settings = start_up(args)
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
    from mooring.link.client import Remote
    from mooring.link.wire import Hello
    from mooring.ui.lifecycle import Connected

    hello = Hello("window", os.getpid(), __version__, askers, hooks=hooks)
    on_lost: list[Callable[[str], None]] = []
    reach = functools.partial(_reach, paths, hello, EventBus(), on_lost)
    connection = WindowConnection(Remote(await reach(), parts=HOST_PARTS), reach)
    info: EngineInfo = await connection.engine("info")
    return Connected(
        host=cast("Host", connection.remote),
        info=_window_info(paths, settings, info, connection.engine),
        engine=connection.engine,
        close=connection.close,
        on_lost=on_lost,
        reconnect=connection.reconnect,
    )


async def _reach(
    paths: Paths, hello: Hello, events: EventBus, on_lost: list[Callable[[str], None]]
) -> EngineLink:
    """A link to the data folder's engine (started if none runs), of this window's version."""
    from mooring.link.spawn import reach_or_start

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


class WindowConnection:
    """The window's link to its engine: the host it calls (``remote``) stays the same when the
    engine is reached again after it went away."""

    def __init__(self, remote: Remote, reach: Callable[[], Awaitable[EngineLink]]) -> None:
        """``reach``: a link to the engine, anew (started if none runs)."""
        self.remote = remote
        self._reach = reach

    async def reconnect(self) -> None:
        """Reach the engine again; ``remote`` calls it from now on."""
        self.remote.rebind(await self._reach())

    async def engine(self, name: str, *args: Any) -> Any:
        """Call one of the engine's own methods by name (``"info"``, ``"face_active"``)."""
        return await self.remote.link.call(f"engine.{name}", *args)

    async def close(self) -> None:
        """Close the link to the engine (the engine goes on)."""
        await self.remote.link.aclose()


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


def remember_settings(paths: Paths, settings: Settings, changes: dict[str, object]) -> None:
    """Apply ``changes`` to ``settings`` and the settings file (read again first, so a change
    made meanwhile with ``mooring settings`` is kept)."""
    from mooring.settings.store import save_settings

    current = load_settings(paths.settings_file)
    for key, value in changes.items():
        settings.set(key, value)
        current.set(key, value)
    save_settings(paths.settings_file, current)


def smoke_run() -> Callable[[MainWindow], None] | None:
    """With ``MOORING_SMOKE=1`` the window reports its first paint and quits (packaging's
    smoke test of a built bundle); otherwise ``None``."""
    if os.environ.get("MOORING_SMOKE", "") in ("", "0"):
        return None
    from mooring.ui.smoke import report_and_quit

    return report_and_quit
