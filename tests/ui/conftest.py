"""UI fixtures: a qasync loop for async tests, a real host over a real SQLite file with the
demo server as a subprocess, and a bounded wait on Qt signals (never a sleep)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from PySide6.QtCore import QEvent, SignalInstance
from PySide6.QtWidgets import QApplication

from mooring.bootstrap import build_host
from mooring.core.servers import ServerDefinition
from mooring.services.host import Host
from mooring.settings.paths import Paths
from mooring.settings.store import Settings
from mooring.storage.db import Database
from mooring.ui.dialogs.approval import ApprovalDialog, DialogAsker
from mooring.ui.loop import qt_event_loop
from tests.e2e.conftest import cli  # noqa: F401  # a fixture, used by name
from tests.helpers import zygote
from tests.services.conftest import demo_definition


def _qasync_loop() -> asyncio.AbstractEventLoop:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    # As in the app: closing a dialog or window must not end the loop.
    app.setQuitOnLastWindowClosed(False)
    return qt_event_loop(app)


@pytest.fixture(autouse=True)
def collect_between_tests(qapp: QApplication) -> Iterator[None]:
    """Delete what a test left behind before the next test's loop starts (a Qt object freed
    by the garbage collector in the middle of another test's event loop can crash Qt); fail
    the test that left a server process running.

    A stdio server still running here was left by this test (its loop is closed, so nothing
    will stop it): the garbage collector would report its pipes only in some later test."""
    yield
    left = running_children()
    gc.collect()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()
    assert not left, f"the test left child processes running: {left}"


def running_children() -> list[str]:
    """This process's children that have not ended (pid and command line): the zygote that
    forks ``mooring`` commands is not one, but a command it forked still running is."""
    me = str(os.getpid())
    parents = {me}
    forking = zygote.pid()
    if forking is not None:
        parents.add(str(forking))
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # ended meanwhile
            continue
        state, parent = stat.rsplit(")", 1)[1].split()[:2]
        if parent in parents and entry.name not in parents and state not in ("Z", "X"):
            found.append(f"{entry.name}: {command.strip()}")
    return found


@pytest.fixture
def anyio_backend() -> tuple[str, dict[str, Any]]:
    """Async UI tests run on qasync's loop, as the app does (Qt events keep flowing)."""
    return ("asyncio", {"loop_factory": _qasync_loop})


async def until(check: Callable[[], bool], *signals: SignalInstance, limit: float = 60) -> None:
    """Wait until ``check()`` holds, re-checking whenever one of ``signals`` fires."""
    reached = asyncio.Event()

    def test(*_args: object) -> None:
        if check():
            reached.set()

    for signal in signals:
        signal.connect(test)
    try:
        test()
        async with asyncio.timeout(limit):
            await reached.wait()
    finally:
        for signal in signals:
            with contextlib.suppress(RuntimeError):  # its source may be gone (a closed dialog)
                signal.disconnect(test)


async def next_dialog(asker: DialogAsker, limit: float = 60) -> ApprovalDialog:
    """The next approval dialog the asker opens."""
    if asker.open_dialogs:
        return asker.open_dialogs[0]
    future: asyncio.Future[ApprovalDialog] = asyncio.get_running_loop().create_future()

    def opened(dialog: ApprovalDialog) -> None:
        if not future.done():
            future.set_result(dialog)

    asker.on_open.append(opened)
    try:
        async with asyncio.timeout(limit):
            return await future
    finally:
        asker.on_open.remove(opened)


@dataclass
class UiHost:
    """A real host with the window's approval dialog as its ``ask``, and the demo server."""

    host: Host
    db: Database
    asker: DialogAsker
    demo: ServerDefinition
    request_log: Path
    data_dir: Path


@contextlib.asynccontextmanager
async def open_ui_host(tmp_path: Path) -> AsyncIterator[UiHost]:
    """A running host for one test, stopped before the test returns.

    Not a fixture on purpose: pytest-qt processes Qt events between a test and its fixtures'
    teardown, which would run qasync's timers outside the loop; everything async must end
    inside the test.
    """
    data = tmp_path / "data"
    data.mkdir()
    paths = Paths(data_dir=data, config_dir=data / "config", log_dir=data / "logs", overridden=True)
    settings = Settings({"mcp.request_timeout_ms": 10_000, "mcp.call_timeout_ms": 30_000})
    db = Database.open(paths.database)
    asker = DialogAsker()
    host = build_host(paths, settings, db, ask=asker)
    demo = demo_definition(tmp_path / "demo-store.sqlite3", tmp_path / "requests.log")
    await host.catalog.add_server(demo)
    host.start_monitoring()
    try:
        yield UiHost(host, db, asker, demo, tmp_path / "requests.log", data)
    finally:
        for dialog in list(asker.open_dialogs):
            dialog.reject()
        with anyio.fail_after(30):
            await host.stop()
        db.close()
