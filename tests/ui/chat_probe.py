"""Drive the real window's chat controls, launched through the composition root.

The data folder (``MOORING_DATA_DIR``) holds a conversation whose last reply was regenerated
(two versions, each with a code block): see :func:`tests.ui.chat_seed.seed_versions`.

- ``chat_probe.py hold``: show that conversation with its last reply chosen and say
  ``{"version": "2 of 2", ...}``; then leave the window to someone else (an AT-SPI client). Each
  time the shown version changes, say it again; end once version 1 of 2 is shown, with the
  transcript as the screen reader reads it.
- ``chat_probe.py shots DIR ATTACHED``: the same conversation saved as
  ``14-chat-code-and-versions.png``; then ``/`` typed in the empty composer, and the prompt
  picker saved as ``15-prompt-picker.png``; then conversation ATTACHED (a message with files,
  :func:`tests.ui.chat_seed.seed_attachments`) saved as ``16-chat-attachments.png``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QDialog, QWidget

from mooring.bootstrap import run_gui
from mooring.cli.parser import build_parser
from mooring.ui.main_window import MainWindow
from mooring.ui.views.conversations_view import ConversationsView


def say(report: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()


def save(widget: QWidget, shots: Path, name: str) -> None:
    shots.mkdir(parents=True, exist_ok=True)
    QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
    widget.grab().save(str(shots / f"{name}.png"))


def lines(view: ConversationsView) -> list[str]:
    model = view.messages
    return [
        str(model.index(r, 0).data(Qt.ItemDataRole.AccessibleTextRole))
        for r in range(model.rowCount())
    ]


def choose_last(view: ConversationsView) -> str:
    """Choose the transcript's last message; the version label it then shows."""
    rows = view.messages.rowCount()
    if rows:
        view.transcript.setCurrentIndex(view.messages.index(rows - 1, 0))
    return view.pane.version_label.text()


def hold(window: MainWindow) -> None:
    view = window.conversations
    said: list[str] = []

    def look() -> None:
        version = choose_last(view)
        if not version or (said and said[-1] == version):
            return
        said.append(version)
        say({"version": version, "transcript": lines(view)})
        if version == "1 of 2" and len(said) > 1:
            window.close()

    view.transcript_loaded.connect(lambda _id: QTimer.singleShot(0, look))
    view.messages.modelReset.connect(lambda: QTimer.singleShot(0, look))
    window.show_view(view)
    look()


def shots(window: MainWindow, folder: Path, attached: str) -> None:
    view = window.conversations
    done: set[str] = set()

    def on_attached(conversation_id: str) -> None:
        if conversation_id == attached and "attachments" not in done:
            done.add("attachments")

            def shoot() -> None:
                view.composer.clear()  # the "/" the picker left, when closed without a choice
                save(window, folder, "16-chat-attachments")
                say({"shots": sorted(done)})
                window.close()

            QTimer.singleShot(300, shoot)  # the thumbnails decoded and drawn: a picture only

    def on_picker(dialog: object) -> None:
        if isinstance(dialog, QDialog) and "picker" not in done:
            done.add("picker")

            def shoot() -> None:
                # The screen, not the window: the picker is a window of its own above it.
                at = window.frameGeometry()
                shot = window.screen().grabWindow(0, at.x(), at.y(), at.width(), at.height())
                shot.save(str(folder / "15-prompt-picker.png"))
                dialog.reject()
                view.transcript_loaded.connect(on_attached)
                view.select(attached)

            # Once it is drawn on the screen (a picture, not a test: no one waits on it).
            QTimer.singleShot(500, shoot)

    def look() -> None:
        if choose_last(view) and "versions" not in done:
            done.add("versions")
            save(window, folder, "14-chat-code-and-versions")
            view.composer.setFocus()
            QTest.keyClicks(view.composer, "/")

    view.picker.dialog_opened.connect(on_picker)
    view.transcript_loaded.connect(lambda _id: QTimer.singleShot(0, look))
    window.show_view(view)
    look()


def main() -> int:
    mode = sys.argv[1]

    def on_ready(window: MainWindow) -> None:
        if mode == "hold":
            QTimer.singleShot(0, lambda: hold(window))
        else:
            QTimer.singleShot(0, lambda: shots(window, Path(sys.argv[2]), sys.argv[3]))

    return int(run_gui(build_parser().parse_args(["gui"]), on_ready=on_ready))


if __name__ == "__main__":
    raise SystemExit(main())
