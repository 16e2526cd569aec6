"""The window's notification links: the in-app toast with its badge, the system tray, and
click-to-open (also from a real D-Bus notification service)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from mooring.adapters.notify.chain import HookLink, NotificationChain
from mooring.adapters.notify.desktop import DesktopLink
from mooring.bootstrap import build_host
from mooring.core.approval.request import ApprovalOutcome, ApprovalRequest
from mooring.core.notifications import Notice, NotifyKind, Occurrence, notice_for
from mooring.core.tasks.states import LocalState
from mooring.core.tasks.words import state_words
from mooring.services.host import TaskView
from mooring.settings.paths import Paths
from mooring.settings.store import Settings
from mooring.storage.db import Database
from mooring.ui.dialogs.approval import ApprovalDialog, DialogAsker
from mooring.ui.dialogs.input_form import InputFormDialog
from mooring.ui.main_window import MainWindow, WindowInfo
from mooring.ui.notifiers import (
    ConsentQuestion,
    TrayNotifier,
    ask_notification_consent,
    tray_icon,
)
from tests.core.tasks.factories import make_record
from tests.helpers.notifyd import private_bus, start_service
from tests.ui.conftest import next_dialog
from tests.ui.test_tasks_panel import QUESTION

WindowFactory = Callable[[], MainWindow]


def _view(record_id: str, state: LocalState) -> TaskView:
    record = make_record(state, id=record_id)
    return TaskView(record, "demo", None, (), state_words(record))


@pytest.fixture
def make_window(qtbot: QtBot, tmp_path: Path) -> Iterator[WindowFactory]:
    """A window over a real host (nothing started) listing two tasks."""
    paths = Paths(
        data_dir=tmp_path / "w",
        config_dir=tmp_path / "w" / "config",
        log_dir=tmp_path / "w",
        overridden=True,
    )
    paths.data_dir.mkdir()
    db = Database.open(paths.database)

    def make() -> MainWindow:
        host = build_host(paths, Settings({}), db)
        window = MainWindow(host, WindowInfo(data_dir="/d", database="/d/m.sqlite3", schema="0005"))
        qtbot.addWidget(window)
        window.tasks.model.reset_views(
            [
                _view("aaaa1111-full", LocalState.COMPLETED),
                _view("bbbb2222-full", LocalState.WORKING),
            ]
        )
        return window

    yield make
    db.close()


def selected_rows(window: MainWindow) -> list[int]:
    return [i.row() for i in window.tasks.list_view.selectionModel().selectedRows()]


def done(record: str, key: int = 1) -> Notice:
    return notice_for(key, [Occurrence(NotifyKind.COMPLETED, record, "conv-1")])


def test_the_toast_shows_generic_words_and_open_selects_the_task(
    make_window: WindowFactory, qtbot: QtBot
) -> None:
    window = make_window()
    window.show()
    assert window.toast.show_notice(done("bbbb2222-full"))
    assert window.toast.isVisible()
    assert window.toast.message.text() == "Mooring: A background task completed"
    assert window.tabs.tabText(window.tabs.indexOf(window.tasks)) == "&Tasks (1 new)"
    with qtbot.waitSignal(window.target_opened) as opened:
        window.toast.open_button.click()
    assert opened.args == ["conv-1", "bbbb2222-full"]
    assert selected_rows(window) == [1]
    assert not window.toast.isVisible()
    assert (
        window.tabs.tabText(window.tabs.indexOf(window.tasks)) == "&Tasks"
    )  # looked at: the badge is gone


def test_a_burst_replaces_its_toast_and_the_badge_counts_what_it_tells(
    make_window: WindowFactory, qtbot: QtBot
) -> None:
    window = make_window()
    window.toast.show_notice(done("aaaa1111-full"))
    merged = notice_for(
        1,
        [
            Occurrence(NotifyKind.COMPLETED, "aaaa1111-full"),
            Occurrence(NotifyKind.FAILED, "bbbb2222-full"),
        ],
    )
    window.toast.show_notice(merged)
    window.toast.show_notice(done("cccc", key=2))
    assert window.tabs.tabText(window.tabs.indexOf(window.tasks)) == "&Tasks (3 new)"
    assert window.toast.message.text() == "Mooring: A background task completed"
    window.toast.dismiss_button.click()
    assert not window.toast.isVisible()
    assert (
        window.tabs.tabText(window.tabs.indexOf(window.tasks)) == "&Tasks (3 new)"
    )  # dismissed is not looked at


def test_without_a_system_tray_the_tray_link_does_not_deliver(
    make_window: WindowFactory, qtbot: QtBot
) -> None:
    window = make_window()
    tray = TrayNotifier(tray_icon(window), window, available=lambda: False)
    assert tray.show_notice(done("aaaa1111-full")) is False
    assert tray.tray is None


def test_clicking_a_tray_message_opens_its_task(make_window: WindowFactory, qtbot: QtBot) -> None:
    window = make_window()
    tray = TrayNotifier(tray_icon(window), window, available=lambda: True)
    tray.opened.connect(window.open_target)
    assert tray.show_notice(done("aaaa1111-full"))
    assert tray.tray is not None
    with qtbot.waitSignal(window.target_opened) as opened:
        tray.tray.messageClicked.emit()
    assert opened.args == ["conv-1", "aaaa1111-full"]
    assert selected_rows(window) == [0]


@pytest.fixture
def bus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with private_bus(tmp_path / "bus") as address:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
        yield address


@pytest.mark.anyio
async def test_clicking_a_desktop_notification_raises_the_window_on_its_task(
    make_window: WindowFactory, qtbot: QtBot, bus: str
) -> None:
    window = make_window()
    service_bus, service = await start_service(bus)
    desktop = DesktopLink()
    desktop.on_open = window.open_target
    chain = NotificationChain([desktop, HookLink("in-app toast", window.toast.show_notice)])
    opened: list[tuple[object, object]] = []
    clicked = anyio.Event()

    def record(conversation: object, record_id: object) -> None:
        opened.append((conversation, record_id))
        clicked.set()

    window.target_opened.connect(record)
    try:
        assert await chain.show(done("bbbb2222-full")) == "desktop notifications"
        assert not window.toast.isVisible()  # shown once, on the desktop
        service.ActionInvoked(service.received[0]["id"], "default")
        with anyio.fail_after(10):
            await clicked.wait()
        assert opened == [("conv-1", "bbbb2222-full")]
        assert window.isVisible()
        assert selected_rows(window) == [1]
    finally:
        await desktop.aclose()
        service_bus.disconnect()


@pytest.mark.anyio
@pytest.mark.parametrize(("press", "allowed"), [("allow", True), ("decline", False)])
async def test_the_first_time_question_is_asked_in_the_window_and_answered(
    make_window: WindowFactory, qtbot: QtBot, press: str, allowed: bool
) -> None:
    window = make_window()
    question = ConsentQuestion(window)
    question.open()
    assert question.box.isVisible()
    assert question.box.windowTitle() == "Notifications"
    assert "never what it was about" in question.box.text()
    button = question.allow_button if press == "allow" else question.decline_button
    button.click()
    with anyio.fail_after(10):
        assert await question.answer() is allowed
    assert not question.box.isVisible()


def test_closing_keeps_mooring_in_the_tray_and_quit_really_quits(
    make_window: WindowFactory, qtbot: QtBot
) -> None:
    window = make_window()
    tray = TrayNotifier(tray_icon(window), window, available=lambda: True)
    tray.quit_requested.connect(window.quit)
    tray.opened.connect(window.open_target)
    window.keep_running = lambda: tray.available
    icon = tray.ensure_icon()
    assert icon is not None
    assert [a.text() for a in tray.menu.actions()] == ["Open Mooring", "Quit Mooring"]
    window.show()

    with qtbot.waitSignal(window.hidden_to_tray):
        window.close()
    assert not window.isVisible()
    tray.open_action.trigger()  # back from the tray
    assert window.isVisible()

    hidden: list[bool] = []
    window.hidden_to_tray.connect(lambda: hidden.append(True))
    tray.quit_action.trigger()
    assert not window.isVisible()
    assert hidden == []  # closed for real, not hidden


def test_without_a_tray_closing_closes(make_window: WindowFactory, qtbot: QtBot) -> None:
    window = make_window()
    tray = TrayNotifier(tray_icon(window), window, available=lambda: False)
    window.keep_running = lambda: tray.available
    window.show()
    hidden: list[bool] = []
    window.hidden_to_tray.connect(lambda: hidden.append(True))
    window.close()
    assert not window.isVisible()
    assert hidden == []
    assert tray.explain("x") is False


async def _never_sent(_reply: Mapping[str, Any]) -> object:
    raise AssertionError("the form is not answered here")


def _consent_boxes(window: MainWindow) -> list[QMessageBox]:
    return [
        box
        for box in window.findChildren(QMessageBox)
        if box.windowTitle() == ConsentQuestion.TITLE and box.isVisible()
    ]


@pytest.mark.anyio
async def test_the_first_time_question_waits_until_the_approval_is_answered(
    make_window: WindowFactory, qtbot: QtBot
) -> None:
    """The consent question never opens over a pending approval (it would take the focus
    from "Allow once"): it is asked once the approval is answered."""
    window = make_window()
    window.show()
    asker = DialogAsker(lambda: window)
    request = ApprovalRequest(
        id="req-1",
        server_id="srv-1",
        server_alias="demo",
        tool="import_suppliers",
        arguments={"path": "suppliers_ambiguous_id.csv"},
        reason="The tool may change data.",
    )
    asked = asyncio.ensure_future(asker(request))
    approval = await next_dialog(asker, limit=10)
    assert approval.isVisible()

    opened: asyncio.Future[ConsentQuestion] = asyncio.get_running_loop().create_future()
    waits: asyncio.Queue[list[QWidget]] = asyncio.Queue()
    consent = asyncio.ensure_future(
        ask_notification_consent(window, on_open=opened.set_result, on_wait=waits.put_nowait)
    )
    assert await asyncio.wait_for(waits.get(), 10) == [approval]  # it waits for the approval
    assert not opened.done()
    assert _consent_boxes(window) == []
    assert QApplication.activeModalWidget() is approval
    assert approval.buttons["Allow once"].isEnabled()

    approval.buttons["Allow once"].click()
    assert (await asyncio.wait_for(asked, 10)).outcome is ApprovalOutcome.APPROVED
    question = await asyncio.wait_for(opened, 10)
    assert _consent_boxes(window) == [question.box]
    question.allow_button.click()
    assert await asyncio.wait_for(consent, 10) is True


@pytest.mark.anyio
async def test_the_first_time_question_waits_for_every_approval_and_input_form(
    make_window: WindowFactory, qtbot: QtBot
) -> None:
    """Two approvals open, and an input form opened before the last closes: the question
    comes after all of them."""
    window = make_window()
    window.show()
    asker = DialogAsker(lambda: window)
    dialogs: list[ApprovalDialog] = []
    asker.on_open.append(dialogs.append)
    answers = [
        asyncio.ensure_future(
            asker(
                ApprovalRequest(
                    id=f"req-{n}",
                    server_id="srv-1",
                    server_alias="demo",
                    tool="import_suppliers",
                    arguments={},
                    reason="asked",
                )
            )
        )
        for n in (1, 2)
    ]
    await next_dialog(asker, limit=10)
    qtbot.waitUntil(lambda: len(dialogs) == 2, timeout=10_000)  # the second opens too
    opened: asyncio.Future[ConsentQuestion] = asyncio.get_running_loop().create_future()
    waits: asyncio.Queue[list[QWidget]] = asyncio.Queue()
    consent = asyncio.ensure_future(
        ask_notification_consent(window, on_open=opened.set_result, on_wait=waits.put_nowait)
    )
    assert set(await asyncio.wait_for(waits.get(), 10)) == set(dialogs)
    dialogs[0].buttons["Deny"].click()
    await asyncio.wait_for(answers[0], 10)
    form = InputFormDialog(
        server="demo",
        tool="import_suppliers",
        question=QUESTION,
        submit=_never_sent,
        parent=window,
    )
    form.open()
    dialogs[1].buttons["Allow once"].click()
    await asyncio.wait_for(answers[1], 10)
    # Each wait names what is still open: the form is what it waits for last.
    while (waiting := await asyncio.wait_for(waits.get(), 10)) != [form]:
        assert form in waiting or dialogs[1] in waiting
    assert not opened.done()
    form.reject()
    question = await asyncio.wait_for(opened, 10)
    question.decline_button.click()
    assert await asyncio.wait_for(consent, 10) is False
