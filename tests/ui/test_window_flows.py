"""The window over a real host, a real SQLite file and the demo server as a subprocess: the
palette runs a tool, the approval dialog decides, the card follows, the form answers."""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QComboBox, QMessageBox
from pytestqt.qtbot import QtBot

from mooring.core.issues import IssueAction, IssueKind
from mooring.core.tasks.states import LocalState
from mooring.ui.dialogs.add_server import AddServerDialog
from mooring.ui.dialogs.input_form import InputFormDialog
from mooring.ui.dialogs.palette import ToolPalette
from mooring.ui.main_window import MainWindow, WindowInfo
from tests.services.conftest import SAMPLES, demo_definition
from tests.ui.conftest import UiHost, next_dialog, open_ui_host, until

pytestmark = pytest.mark.anyio


def requests(log: Path, method: str) -> int:
    if not log.exists():
        return 0
    return sum(1 for line in log.read_text().splitlines() if json.loads(line)["method"] == method)


@contextlib.asynccontextmanager
async def open_window(tmp_path: Path, qtbot: QtBot) -> AsyncIterator[tuple[MainWindow, UiHost]]:
    """The main window over a running host; both closed before the test returns."""
    async with open_ui_host(tmp_path) as ui_host:
        info = WindowInfo(data_dir=str(ui_host.data_dir), database="db", schema="head")
        shown = MainWindow(ui_host.host, info, layout_file=ui_host.data_dir / "window.ini")
        qtbot.addWidget(shown)
        ui_host.asker.set_parent(lambda: shown)
        shown.show()
        await shown.start()
        try:
            yield shown, ui_host
        finally:
            shown.close()
            await shown.stop_jobs()


async def run_from_palette(window: MainWindow, server: str, tool: str, **arguments: str) -> None:
    palette = window.open_palette()
    assert isinstance(palette, ToolPalette)
    assert palette.windowTitle() == "Run a tool"
    await until(
        lambda: palette.server_combo.count() > 0 and palette.tool_list.count() > 0,
        palette.tools_shown,
    )
    if palette.server() is None or palette.server().alias != server:  # type: ignore[union-attr]
        palette.choose_server(server)
        await until(lambda: palette.choose_tool(tool), palette.tools_shown)
    assert palette.choose_tool(tool)
    assert palette.form is not None
    for name, value in arguments.items():
        palette.form.inputs[name].setText(value)  # type: ignore[attr-defined]
    palette.run_button.click()


def current_words(window: MainWindow) -> str:
    return window.tasks.card.state_label.text()


async def test_a_tool_from_the_palette_is_approved_answered_and_completes(
    tmp_path: Path, qtbot: QtBot
) -> None:
    async with open_window(tmp_path, qtbot) as (window, ui_host):
        await palette_approve_answer_complete(window, ui_host)


async def palette_approve_answer_complete(window: MainWindow, ui_host: UiHost) -> None:
    await run_from_palette(
        window, "demo", "import_suppliers", path=str(SAMPLES / "suppliers_ambiguous_id.csv")
    )
    dialog = await next_dialog(ui_host.asker)
    assert dialog.windowTitle() == "Approve tool call"
    assert "suppliers_ambiguous_id.csv" in dialog.arguments_view.toPlainText()
    assert requests(ui_host.request_log, "tools/call") == 0  # nothing goes out before approval
    dialog.buttons["Allow once"].click()

    card = window.tasks.card
    await until(
        lambda: current_words(window) == "needs your input",
        window.tasks.card.changed,
    )
    assert card.visible_buttons() == ["Answer", "Cancel"]
    assert window.tabs.currentWidget() is window.tasks
    card.buttons["Answer"].click()
    form = window.tasks.forms[card.view.id]  # type: ignore[union-attr]
    assert isinstance(form, InputFormDialog)
    assert form.windowTitle() == "demo asks for your input"
    assert "Which column is the supplier identifier?" in form.message_label.text()
    assert form.form is not None

    form.send_button.click()  # nothing chosen: the form says so and sends nothing
    error = form.form.errors["column"]
    assert not error.isHidden()
    assert error.text() == "This is required."
    assert requests(ui_host.request_log, "tasks/update") == 0

    combo = form.form.inputs["column"]
    assert isinstance(combo, QComboBox)
    assert combo.findData("vendor_code") > 0
    combo.setCurrentIndex(combo.findData("vendor_code"))
    answered: list[bool] = []
    form.answered.connect(lambda: answered.append(True))
    form.send_button.click()
    await until(lambda: bool(answered), form.answered)
    await until(lambda: current_words(window) == "completed", window.tasks.card.changed)
    assert requests(ui_host.request_log, "tasks/update") == 1
    assert card.visible_buttons() == []
    assert card.result_label.text() != "—"


async def test_a_denied_call_is_never_sent_and_its_card_says_so(
    tmp_path: Path, qtbot: QtBot
) -> None:
    async with open_window(tmp_path, qtbot) as (window, ui_host):
        await deny(window, ui_host)


async def deny(window: MainWindow, ui_host: UiHost) -> None:
    await run_from_palette(
        window, "demo", "import_suppliers", path=str(SAMPLES / "suppliers_clean.csv")
    )
    dialog = await next_dialog(ui_host.asker)
    dialog.buttons["Deny"].click()
    await until(
        lambda: current_words(window) == "not run — denied",
        window.tasks.card.changed,
    )
    assert requests(ui_host.request_log, "tools/call") == 0


async def test_cancel_is_shown_as_requested_until_the_server_confirms(
    tmp_path: Path, qtbot: QtBot
) -> None:
    async with open_window(tmp_path, qtbot) as (window, ui_host):
        await cancel(window, ui_host, tmp_path)


async def cancel(window: MainWindow, ui_host: UiHost, tmp_path: Path) -> None:
    slow = dataclasses.replace(
        demo_definition(
            tmp_path / "slow.sqlite3",
            tmp_path / "slow.log",
            checkpoint_delay_ms=300,
            rows_per_checkpoint=1,
        ),
        alias="slow",
        trusted=False,
    )
    await ui_host.host.catalog.add_server(slow)
    await run_from_palette(
        window, "slow", "import_suppliers", path=str(SAMPLES / "suppliers_clean.csv")
    )
    (await next_dialog(ui_host.asker)).buttons["Allow once"].click()
    await until(lambda: current_words(window) == "working", window.tasks.card.changed)
    seen: list[str] = []
    window.tasks.card.changed.connect(lambda: seen.append(current_words(window)))
    window.tasks.card.buttons["Cancel"].click()
    await until(lambda: current_words(window) == "cancelled", window.tasks.card.changed)
    assert "cancel requested" in seen
    assert seen.index("cancel requested") < seen.index("cancelled")
    record = window.tasks.card.view
    assert record is not None
    assert record.record.state is LocalState.CANCELLED


async def test_servers_are_added_trusted_and_removed_from_the_panel(
    tmp_path: Path, qtbot: QtBot
) -> None:
    async with open_window(tmp_path, qtbot) as (window, ui_host):
        await add_trust_remove(window, ui_host)


async def add_trust_remove(window: MainWindow, ui_host: UiHost) -> None:
    panel = window.servers
    window.show_view(panel)
    opened: list[object] = []
    panel.dialog_opened.connect(opened.append)
    adding = window.jobs.start(panel.add_interactively())
    await until(lambda: bool(opened), panel.dialog_opened)
    dialog = opened.pop()
    assert isinstance(dialog, AddServerDialog)
    assert dialog.windowTitle() == "Add server"
    dialog.alias_edit.setText("web")
    dialog.http_radio.setChecked(True)
    dialog.url_edit.setText("not a url")
    dialog.add_button.click()
    assert dialog.isVisible()
    assert "http://" in dialog.error_label.text()
    dialog.url_edit.setText("http://127.0.0.1:9/mcp")
    dialog.add_button.click()
    await adding
    aliases = [v.server.alias for v in panel.model.views()]
    assert aliases == ["demo", "web"]
    chosen = panel.selected()
    assert chosen is not None
    assert chosen.server.alias == "web"

    panel.trusted_check.click()
    await until(
        lambda: bool(panel.selected() and panel.selected().server.trusted),  # type: ignore[union-attr]
        panel.loaded,
    )
    assert (await ui_host.host.server("web")).trusted

    removing = window.jobs.start(panel.remove_selected())
    await until(lambda: bool(opened), panel.dialog_opened)
    box = opened.pop()
    assert isinstance(box, QMessageBox)
    assert box.windowTitle() == "Remove server"
    next(b for b in box.buttons() if b.text() == "Remove").click()
    await removing
    assert [v.server.alias for v in panel.model.views()] == ["demo"]
    assert await ui_host.host.catalog.find_server("web") is None


async def test_an_issue_appears_when_raised_and_its_fix_is_a_button(
    tmp_path: Path, qtbot: QtBot
) -> None:
    async with open_window(tmp_path, qtbot) as (window, ui_host):
        panel = window.issues
        await ui_host.host.issues.raise_issue(
            IssueKind.SERVER_UNAVAILABLE,
            ui_host.demo.id,
            "demo could not be reached",
            "connection refused",
        )
        await until(lambda: panel.model.rowCount() == 1, panel.count_changed)
        assert window.tabs.tabText(window.tabs.indexOf(panel)) == "&Issues (1)"
        offered = [b.text() for b in panel.buttons.values() if not b.isHidden()]
        assert offered == ["Show server", "Dismiss"]
        panel.buttons[IssueAction.CHECK_SERVER].click()
        await until(lambda: window.tabs.currentWidget() is window.servers, panel.count_changed)
        panel.buttons[IssueAction.DISMISS].click()
        await until(lambda: panel.model.rowCount() == 0, panel.count_changed)
        assert await ui_host.host.open_issues() == []
