"""The provider and server dialogs: every control named and reachable with the keyboard, in
reading order; what a user typed comes back as they typed it, names shown inert."""

from __future__ import annotations

from datetime import UTC, datetime

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractButton, QComboBox, QLineEdit, QPlainTextEdit, QWidget
from pytestqt.qtbot import QtBot

from mooring.core.chat import ProviderConfig, ProviderKind
from mooring.core.servers import ServerDefinition, Transport
from mooring.ui.dialogs.add_server import AddServerDialog
from mooring.ui.dialogs.preferences import AddProviderDialog


def controls(dialog: QWidget) -> list[QWidget]:
    return [
        w
        for w in dialog.findChildren(QWidget)
        if isinstance(w, QAbstractButton | QComboBox | QLineEdit | QPlainTextEdit)
        and not w.objectName().startswith("qt_")
    ]


def tab_order(dialog: QWidget, start: QWidget, count: int) -> list[QWidget | None]:
    """Where Tab goes from ``start``, ``count`` widgets long (as a user presses it)."""
    start.setFocus()
    order: list[QWidget | None] = [dialog.focusWidget()]
    while len(order) < count:
        current = dialog.focusWidget()
        assert current is not None
        QTest.keyClick(current, Qt.Key.Key_Tab)
        order.append(dialog.focusWidget())
    return order


def test_the_provider_dialog_edits_a_provider_with_named_controls(qtbot: QtBot) -> None:
    provider = ProviderConfig(
        id="p1",
        name="evil\u202e",
        kind=ProviderKind.ANTHROPIC,
        base_url="https://api.anthropic.com",
        model="claude",
        has_api_key=False,
        api_key_env="ANTHROPIC_API_KEY",
    )
    dialog = AddProviderDialog(None, provider)
    qtbot.addWidget(dialog)
    for widget in controls(dialog):
        assert widget.accessibleName() or widget.text(), widget  # type: ignore[attr-defined]
        assert widget.focusPolicy() & Qt.FocusPolicy.TabFocus, widget.accessibleName()
    assert dialog.name_edit.text() == "evil<U+202E>"
    assert dialog.kind() is ProviderKind.ANTHROPIC
    assert dialog.key_env_edit.text() == "ANTHROPIC_API_KEY"
    dialog.show()
    chain = tab_order(dialog, dialog.key_edit, 2)
    assert chain == [dialog.key_edit, dialog.key_env_edit]
    dialog.key_edit.setText("sk-x")
    dialog.add_button.click()
    assert dialog.error_label.text() == (
        "Type the key or the name of the variable that holds it, not both."
    )


def test_the_server_dialog_keeps_the_three_kinds_of_environment_apart(qtbot: QtBot) -> None:
    server = ServerDefinition(
        id="s1",
        alias="memory",
        transport=Transport.STDIO,
        command="memory-server",
        env={"API_KEY": "", "MEMORY_FILE_PATH": "/srv/notes/memory.json"},
        env_refs={"TOKEN": "MY_TOKEN"},
        created_at=datetime(2026, 12, 5, tzinfo=UTC),
    )
    dialog = AddServerDialog(None, server)
    qtbot.addWidget(dialog)
    for widget in controls(dialog):
        if widget is dialog.move_button:
            continue  # shown only when there is something to move
        assert widget.accessibleName(), widget
        assert widget.focusPolicy() & Qt.FocusPolicy.TabFocus, widget.accessibleName()
    spec = dialog.spec()
    assert spec.env == {"API_KEY": ""}  # a name without a value keeps the stored secret
    assert spec.plain_env == {"MEMORY_FILE_PATH": "/srv/notes/memory.json"}
    assert spec.env_refs == {"TOKEN": "MY_TOKEN"}
    dialog.show()
    chain = tab_order(dialog, dialog.env_edit, 3)
    assert chain == [dialog.env_edit, dialog.plain_env_edit, dialog.env_refs_edit]
