"""Start-up of the real window: the shell is painted, named and visibly loading before the
engine is reached (started by the window when none runs); then the panels fill in. The
window's process never loads the database, the host or the MCP SDK: the engine, another
process, does all of that. Asserted by the order of events in the launched process, never by
time."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QMenu
from pytestqt.qtbot import QtBot

from mooring.settings.store import Settings, save_settings
from mooring.storage.db import Database
from mooring.ui.loading import LoadingPage
from mooring.ui.main_window import MainWindow, SettingRow, WindowInfo
from tests.ui.conftest import open_ui_host

PROBE = Path(__file__).with_name("start_up_probe.py")
VIEWS = ["Conversations", "Tasks", "Servers", "Issues", "Settings"]


def launch(data_dir: Path, *args: str) -> dict[str, Any]:
    env = {**os.environ, "MOORING_DATA_DIR": str(data_dir), "QT_QPA_PLATFORM": "offscreen"}
    env["PYTHONPATH"] = os.pathsep.join([str(Path.cwd()), env.get("PYTHONPATH", "")])
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    done = subprocess.run(
        [sys.executable, str(PROBE), *args], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def lived_in(data_dir: Path) -> Path:
    """A data folder with a database at the newest schema (a launch after the first)."""
    data_dir.mkdir(parents=True)
    save_settings(data_dir / "config" / "settings.json", Settings({"demo_server.enabled": False}))
    Database.open(data_dir / "mooring.sqlite3").close()
    return data_dir


def test_the_shell_paints_named_and_loading_before_the_engine_is_reached(tmp_path: Path) -> None:
    report = launch(lived_in(tmp_path / "data"))
    assert report["code"] == 0
    assert [e["event"] for e in report["events"]] == ["painted", "engine reached", "ready"]
    painted, _reached, ready = report["events"]
    assert painted["title"] == "Mooring"
    assert painted["name"] == "Mooring"
    assert painted["visible"] is True
    assert painted["attached"] is False
    assert painted["status"] == "Loading…"
    assert painted["sqlalchemy_loaded"] is False
    assert painted["host_loaded"] is False
    assert [p["tab"] for p in painted["pages"]] == VIEWS
    assert [p["name"] for p in painted["pages"]] == [f"{v} (loading)" for v in VIEWS]
    assert all(p["loading"] for p in painted["pages"])
    assert painted["pages"][1]["words"] == "Loading tasks…"
    assert ready["attached"] is True
    assert ready["status"] == "Ready"
    assert ready["run_a_tool"] is True
    assert [p["name"] for p in ready["pages"]] == VIEWS
    assert not any(p["loading"] for p in ready["pages"])
    # Everything that parses servers' replies and writes the ledger runs in the engine's
    # process: none of it beside the GUI thread.
    assert ready["sdk_loaded"] is False
    assert ready["sqlalchemy_loaded"] is False
    assert ready["host_loaded"] is False


def test_a_window_closed_while_the_engine_is_reached_ends_cleanly(tmp_path: Path) -> None:
    data_dir = lived_in(tmp_path / "data")
    report = launch(data_dir, "close")
    assert report["code"] == 0
    # The window went before it was ready: on_ready was not called.
    assert [e["event"] for e in report["events"]][:1] == ["painted"]
    assert "ready" not in [e["event"] for e in report["events"]]
    log = (data_dir / "logs" / "mooring.log").read_text()
    assert "window closed" in log
    assert "Traceback" not in log


def test_a_database_the_engine_cannot_open_is_told_in_a_dialog(tmp_path: Path) -> None:
    data_dir = lived_in(tmp_path / "data")
    (data_dir / "mooring.sqlite3").unlink()
    foreign = sqlite3.connect(data_dir / "mooring.sqlite3")
    foreign.execute("CREATE TABLE recipes (name TEXT)")
    foreign.commit()
    foreign.close()
    report = launch(data_dir)
    assert report["code"] != 0
    painted, fatal = report["events"]  # the shell, then the engine's refusal, in words
    assert painted["event"] == "painted"
    assert fatal["event"] == "fatal"
    assert "not one of Mooring's" in fatal["title"]
    assert "Traceback" not in fatal["title"]


@pytest.mark.anyio
async def test_the_shell_takes_its_host_in_place_of_the_loading_pages(
    tmp_path: Path, qtbot: QtBot
) -> None:
    shell = MainWindow(layout_file=tmp_path / "window.ini")
    qtbot.addWidget(shell)
    assert not shell.attached
    assert [type(shell.tabs.widget(i)) for i in range(shell.tabs.count())] == [LoadingPage] * 5
    assert not shell.palette_action.isEnabled()
    assert not shell.menu_actions.add_server.isEnabled()
    shell.tabs.setCurrentIndex(2)  # the user looks at Servers while it loads
    async with open_ui_host(tmp_path) as ui:
        info = WindowInfo(
            data_dir=str(ui.data_dir),
            database=str(ui.data_dir / "mooring.sqlite3"),
            schema="head",
            settings=(SettingRow("window.close_to_tray", "True", "Keep running."),),
        )
        shell.attach_host(ui.host, info)
        await shell.start()
        names = [shell.tabs.widget(i).accessibleName() for i in range(shell.tabs.count())]  # type: ignore[union-attr]
        assert names == VIEWS
        assert shell.tabs.currentWidget() is shell.servers  # still where the user was
        assert shell.palette_action.isEnabled()
        assert shell.statusBar().currentMessage() == "Ready"
        with pytest.raises(RuntimeError):
            shell.attach_host(ui.host, info)
        shell.close()
        await shell.stop_jobs()


def test_the_shells_keys_are_bound_once_it_is_painted(tmp_path: Path, qtbot: QtBot) -> None:
    shell = MainWindow(layout_file=tmp_path / "window.ini")
    qtbot.addWidget(shell)
    with qtbot.waitSignal(shell.first_painted, timeout=10_000):
        shell.show()
    menus = {m.title(): m for m in shell.menuBar().findChildren(QMenu)}
    keys = {a.text(): a.shortcut().toString() for a in menus["&View"].actions()}
    assert keys == {
        "Conversations": "Ctrl+0",
        "Tasks": "Ctrl+1",
        "Servers": "Ctrl+2",
        "Issues": "Ctrl+3",
        "Settings": "Ctrl+,",
    }
    assert shell.palette_action.shortcut().toString() == "Ctrl+K"
    assert shell.new_conversation_action.shortcut().toString() == "Ctrl+N"
    assert not shell.new_conversation_action.isEnabled()  # until the host is attached
