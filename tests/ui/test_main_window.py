"""The main window over a real host: its views, keyboard paths, names and remembered layout."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PySide6.QtWidgets import QAbstractButton, QLineEdit, QMenu, QPlainTextEdit, QWidget
from pytestqt.qtbot import QtBot

from mooring.ui.dialogs.palette import ToolPalette
from mooring.ui.main_window import MainWindow, SettingRow, WindowInfo
from tests.ui.conftest import UiHost, open_ui_host, until

pytestmark = pytest.mark.anyio


def window_for(ui: UiHost, qtbot: QtBot, **changes: object) -> MainWindow:
    info = WindowInfo(
        data_dir=str(ui.data_dir),
        database=str(ui.data_dir / "mooring.sqlite3"),
        schema="0007 (newest known: 0007)",
        settings=(SettingRow("notifications.enabled", "True", "Tell me when work needs me."),),
    )
    window = MainWindow(ui.host, info, layout_file=ui.data_dir / "window.ini", **changes)  # type: ignore[arg-type]
    qtbot.addWidget(window)
    return window


def unnamed(root: QWidget) -> list[str]:
    """Interactive widgets a screen reader could not name."""
    missing = []
    for widget in root.findChildren(QWidget):
        if not widget.isVisibleTo(root):
            continue
        if isinstance(widget, QAbstractButton):
            if not (widget.text().strip("&") or widget.accessibleName()):
                missing.append(widget.objectName() or type(widget).__name__)
        elif isinstance(widget, QLineEdit | QPlainTextEdit) and not widget.accessibleName():
            if widget.parent() is not None and type(widget.parent()).__name__ == "QComboBox":
                continue
            missing.append(widget.objectName() or type(widget).__name__)
    return missing


async def test_the_window_shows_its_views_and_where_the_data_lives(
    tmp_path: Path, qtbot: QtBot
) -> None:
    async with open_ui_host(tmp_path) as ui:
        window = window_for(ui, qtbot)
        window.show()
        await window.start()
        names = [window.tabs.widget(i).accessibleName() for i in range(window.tabs.count())]  # type: ignore[union-attr]
        assert names == ["Conversations", "Tasks", "Servers", "Issues", "Settings"]
        assert window.statusBar().currentMessage() == "Ready"
        assert window.settings.data_dir_label.text() == str(ui.data_dir)
        first_setting = window.settings.table.item(0, 0)
        assert first_setting is not None
        assert first_setting.text() == "notifications.enabled"
        assert [v.server.alias for v in window.servers.model.views()] == ["demo"]
        assert window.tasks.model.rowCount() == 0
        assert window.issues.empty_label.isVisibleTo(window.issues)
        for index in range(window.tabs.count()):
            window.tabs.setCurrentIndex(index)
            assert unnamed(window) == [], window.tabs.tabText(index)
        keys = {
            action.text(): action.shortcut().toString()
            for menu in window.menuBar().findChildren(QMenu)
            for action in menu.actions()
        }
        assert keys["Conversations"] == "Ctrl+0"
        assert keys["Tasks"] == "Ctrl+1"
        assert keys["Servers"] == "Ctrl+2"
        assert keys["Issues"] == "Ctrl+3"
        assert keys["Settings"] == "Ctrl+,"
        assert keys["&Run a tool…"] == "Ctrl+K"
        assert keys["&New conversation"] == "Ctrl+N"
        for text in ("Servers", "Tasks"):
            next(
                a
                for m in window.menuBar().findChildren(QMenu)
                for a in m.actions()
                if a.text() == text
            ).trigger()
            assert window.tabs.currentWidget().accessibleName() == text
        window.close()
        await window.stop_jobs()


async def test_ctrl_k_opens_the_tool_palette_with_the_servers_tools(
    tmp_path: Path, qtbot: QtBot
) -> None:
    async with open_ui_host(tmp_path) as ui:
        window = window_for(ui, qtbot)
        window.show()
        await window.start()
        assert window.palette_action.shortcut().toString() == "Ctrl+K"
        opened: list[object] = []
        window.palette_opened.connect(opened.append)
        window.palette_action.trigger()
        [palette] = opened
        assert isinstance(palette, ToolPalette)
        assert palette.windowTitle() == "Run a tool"
        await until(lambda: palette.tool_list.count() > 0, palette.tools_shown)
        tools = {palette.tool_list.item(i).text() for i in range(palette.tool_list.count())}
        assert {"import_suppliers", "list_suppliers"} <= tools
        palette.filter_edit.setText("list_sup")
        assert palette.tool() is not None
        assert palette.tool().name == "list_suppliers"  # type: ignore[union-attr]
        assert unnamed(palette) == []
        palette.reject()
        window.close()
        await window.stop_jobs()


async def test_the_layout_is_restored_on_the_next_launch(tmp_path: Path, qtbot: QtBot) -> None:
    async with open_ui_host(tmp_path) as ui:
        first = window_for(ui, qtbot)
        first.show()
        first.resize(761, 502)
        first.show_view(first.servers)
        first.close()
        await first.stop_jobs()
        again = window_for(ui, qtbot)
        assert again.tabs.currentWidget() is again.servers
        assert (again.width(), again.height()) == (761, 502)
        again.close()
        await again.stop_jobs()


async def test_export_traces_writes_the_file_and_says_how_many_spans(
    tmp_path: Path, qtbot: QtBot
) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from mooring.adapters.telemetry import OtlpJsonLinesExporter, export_to

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonLinesExporter(tmp_path / "traces")))
    with provider.get_tracer("t").start_as_current_span("mooring.tool_round demo"):
        pass
    provider.shutdown()

    async def export(target: Path) -> int:
        return await asyncio.to_thread(export_to, tmp_path / "traces", target)

    async with open_ui_host(tmp_path) as ui:
        window = window_for(ui, qtbot, export_traces=export)
        assert window.export_action.isEnabled()
        assert window.settings.export_button.isEnabled()
        target = tmp_path / "bug-report.jsonl"
        await window.export_traces_to(target)
        assert "mooring.tool_round demo" in target.read_text()
        assert window.statusBar().currentMessage() == f"Wrote 1 span(s) to {target}"
        window.close()
        await window.stop_jobs()
