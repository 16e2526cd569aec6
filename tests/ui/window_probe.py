"""Drive the real app, launched through the composition root, the way a user would.

Run as a separate process by the end-to-end tests and ``make screenshots``:

- ``window_probe.py flow CSV [SHOTS_DIR]``: Ctrl+K, run ``import_suppliers`` on ``demo`` with
  ``CSV``, press "Allow once", answer the input form, wait for completion; print the state
  words the card showed, in order, as JSON (and save screenshots of each step to SHOTS_DIR).
- ``window_probe.py call CSV``: start the same call, then leave the approval dialog to someone
  else (an AT-SPI client); print the card's words once the task ended.
- ``window_probe.py wait -``: say ``{"ready": true}`` once the window is up, and stay.
- ``window_probe.py shot OUT.png``: save the window as it first appears, and close.
- ``window_probe.py chat MESSAGE [SHOTS_DIR]``: send MESSAGE from the composer, press "Allow
  once", and leave the window (print ``{"left": state}``) once the task needs input.
- ``window_probe.py resume FINAL [SHOTS_DIR]``: after a restart, follow the task card as it
  catches up, answer its input form, wait for completion, press "Continue with result" and
  print the card's words and the transcript once the model's reply FINAL is shown.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QApplication, QComboBox, QWidget

from mooring.bootstrap import run_gui
from mooring.cli.parser import build_parser
from mooring.core.events import MessageDidAppend, TaskDidChange
from mooring.core.tasks.words import state_words
from mooring.ui.dialogs.approval import ApprovalDialog
from mooring.ui.dialogs.input_form import InputFormDialog
from mooring.ui.dialogs.palette import ToolPalette
from mooring.ui.main_window import MainWindow
from mooring.ui.models.tasks import TaskRole

TERMINAL = {"completed", "failed", "cancelled", "expired", "not run — denied", "abandoned"}


def save(widget: QWidget, shots: Path | None, name: str) -> None:
    if shots is not None:
        shots.mkdir(parents=True, exist_ok=True)
        # Lay out what just changed (posted layout requests only; no nested event loop).
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        widget.grab().save(str(shots / f"{name}.png"))


def finish(window: MainWindow, report: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()
    window.close()


def drive(window: MainWindow, csv: str, shots: Path | None, *, press: bool) -> None:
    seen: list[str] = []
    done: set[str] = set()
    card = window.tasks.card
    save(window, shots, "01-first-run")
    welcome = window.welcome
    if welcome is not None:  # a fresh data folder: the first-run welcome is up

        def shoot_welcome() -> None:
            save(welcome, shots, "00-welcome")
            welcome.close()

        if welcome.is_filled:
            shoot_welcome()
        else:
            welcome.filled.connect(shoot_welcome)

    def on_palette(palette: object) -> None:
        assert isinstance(palette, ToolPalette)

        def tools_listed() -> None:
            if "run" in done or not palette.choose_tool("import_suppliers"):
                return
            done.add("run")
            assert palette.form is not None
            palette.form.inputs["path"].setText(csv)  # type: ignore[attr-defined]
            save(palette, shots, "02-tool-palette")
            palette.run_button.click()

        palette.tools_shown.connect(tools_listed)

    def on_card() -> None:
        words = card.state_label.text() if card.view else ""
        if not seen or seen[-1] != words:
            seen.append(words)
        if words == "waiting for your approval" and "approve" not in done:
            dialogs = [d for d in window.findChildren(ApprovalDialog) if d.isVisible()]
            if dialogs:
                done.add("approve")
                save(dialogs[0], shots, "03-approval-dialog")
                if press:
                    dialogs[0].buttons["Allow once"].click()
        elif words == "working" and "working" not in done:
            done.add("working")
            save(window, shots, "04-task-running")
        elif words == "needs your input" and "answer" not in done:
            done.add("answer")
            save(window, shots, "05-task-needs-input")
            card.buttons["Answer"].click()
            form = window.tasks.forms[card.view.id]  # type: ignore[union-attr]
            fill(form, shots)
        elif words in TERMINAL and "end" not in done:
            done.add("end")
            save(window, shots, "07-tasks-panel")
            window.show_view(window.servers)
            window.servers.tools_shown.connect(lambda _alias: servers_then_settings())
            QTimer.singleShot(5000, servers_then_settings)

    def servers_then_settings() -> None:
        if "servers" in done:
            return
        done.add("servers")
        save(window, shots, "08-servers-panel")
        window.show_view(window.settings)
        save(window, shots, "09-settings")
        window.show_view(window.tasks)
        finish(window, {"seen": seen, "result": window.tasks.card.result_label.text()})

    class Watch(QObject):
        def eventFilter(self, _watched: QObject, event: QEvent) -> bool:
            # The approval dialog may open after the card first says it waits for approval.
            if event.type() == QEvent.Type.ChildAdded and card.view is not None:
                QTimer.singleShot(0, on_card)
            return False

    watch = Watch(window)
    window.installEventFilter(watch)
    card.changed.connect(on_card)
    window.palette_opened.connect(on_palette)
    window.palette_action.trigger()


def transcript(window: MainWindow) -> list[str]:
    model = window.conversations.messages
    return [
        str(model.index(r, 0).data(Qt.ItemDataRole.AccessibleTextRole))
        for r in range(model.rowCount())
    ]


def chat(window: MainWindow, text: str, shots: Path | None) -> None:
    """Send ``text``, allow the call once, and leave once the task asks for input."""
    view = window.conversations
    done: set[str] = set()

    def check(label: str) -> None:
        for dialog in window.findChildren(ApprovalDialog):
            if dialog.isVisible() and "approve" not in done:
                done.add("approve")
                save(dialog, shots, "11-chat-approval")
                dialog.buttons["Allow once"].click()
        if label == "needs your input":
            done.add("asked")
        # The task may ask (told over its listen stream) before the turn stored the tool
        # round's card: leave once both are shown.
        lines = transcript(window)
        card = any(line.startswith("Tool round: ") for line in lines)
        if "asked" in done and card and "left" not in done:
            done.add("left")
            save(window, shots, "12-chat-running-task-card")
            finish(window, {"left": "needs your input", "transcript": lines})

    def on_task(event: TaskDidChange) -> None:
        label = state_words(event.record).label
        QTimer.singleShot(0, lambda: check(label))

    def on_message(_event: MessageDidAppend) -> None:
        QTimer.singleShot(0, lambda: check(""))

    class Watch(QObject):
        def eventFilter(self, _watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.ChildAdded:  # the approval dialog, opening
                QTimer.singleShot(0, lambda: check(""))
            return False

    watch = Watch(window)
    window.installEventFilter(watch)
    window.host.events.on(TaskDidChange, on_task)
    window.host.events.on(MessageDidAppend, on_message)
    # The card may be drawn after the last event (the view reads the round from the engine):
    # look again whenever the transcript changes.
    view.messages.rowsInserted.connect(lambda *_: QTimer.singleShot(0, lambda: check("")))
    view.messages.dataChanged.connect(lambda *_: QTimer.singleShot(0, lambda: check("")))
    view.messages.modelReset.connect(lambda: QTimer.singleShot(0, lambda: check("")))
    window.show_view(view)
    view.composer.setPlainText(text)
    view.send_button.click()


def resume(window: MainWindow, final: str, shots: Path | None) -> None:
    """Follow the card after a restart: answer, complete, continue with the result."""
    view = window.conversations
    card = window.tasks.card
    seen: list[str] = []
    done: set[str] = set()

    def on_card() -> None:
        words = card.state_label.text() if card.view else ""
        if not seen or seen[-1] != words:
            seen.append(words)
        if words == "needs your input" and "answer" not in done:
            done.add("answer")
            card.buttons["Answer"].click()
            form = window.tasks.forms[card.view.id]  # type: ignore[union-attr]
            fill(form, None)
        elif words in TERMINAL and "end" not in done:
            done.add("end")
            window.show_view(view)
            view.continue_changed.connect(lambda _can: press())
            press()

    def press() -> None:
        if view.continue_button.isEnabled() and "continue" not in done:
            done.add("continue")
            view.continue_button.click()

    def on_turn(_conversation_id: str) -> None:
        lines = transcript(window)
        if lines and lines[-1] == f"Assistant: {final}" and "finish" not in done:
            done.add("finish")
            save(window, shots, "13-chat-continued")
            finish(window, {"seen": seen, "transcript": lines})

    card.changed.connect(on_card)
    view.turn_ended.connect(on_turn)

    def choose() -> None:
        # The card of the conversation's task: the newest task in the list.
        if window.tasks.model.rowCount():
            window.show_task(str(window.tasks.model.index(0, 0).data(TaskRole.ID)))
            on_card()

    window.shown.connect(choose)
    choose()


def fill(form: InputFormDialog, shots: Path | None) -> None:
    assert form.form is not None
    combo = form.form.inputs["column"]
    assert isinstance(combo, QComboBox)
    combo.setCurrentIndex(combo.findData("vendor_code"))
    save(form, shots, "06-input-form")
    form.send_button.click()


def main() -> int:
    mode, target = sys.argv[1], sys.argv[2]
    shots = Path(sys.argv[3]) if len(sys.argv) > 3 else None

    def on_ready(window: MainWindow) -> None:
        if mode == "wait":
            sys.stdout.write(json.dumps({"ready": True}) + "\n")
            sys.stdout.flush()
            return
        # Later, from the event loop: not inside the task that starts the window.
        if mode == "shot":

            def shoot() -> None:
                window.grab().save(target)
                finish(window, {"title": window.windowTitle()})

            QTimer.singleShot(500, shoot)
        elif mode == "chat":
            QTimer.singleShot(0, lambda: chat(window, target, shots))
        elif mode == "resume":
            QTimer.singleShot(0, lambda: resume(window, target, shots))
        else:
            QTimer.singleShot(0, lambda: drive(window, target, shots, press=mode == "flow"))

    return int(run_gui(build_parser().parse_args(["gui"]), on_ready=on_ready))


if __name__ == "__main__":
    raise SystemExit(main())
