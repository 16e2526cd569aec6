"""Forms from schemas check before anything is sent; the servers and issues models are sound."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit, QListWidget
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from mooring.core.elicitation import InvalidAnswer, fields_of
from mooring.core.issues import Issue, IssueAction, IssueKind
from mooring.core.ports import ConnectionState, ConnectionStatus
from mooring.core.servers import ServerDefinition, Transport
from mooring.services.host import IssueView, ServerView
from mooring.ui.models.issues import IssueListModel
from mooring.ui.models.servers import ServerListModel
from mooring.ui.widgets.schema_form import SchemaForm

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2},
        "count": {"type": "integer", "title": "How many", "minimum": 1, "default": 3},
        "ratio": {"type": "number", "title": "Ratio"},
        "dry_run": {"type": "boolean", "title": "Dry run", "default": True},
        "mode": {"type": "string", "title": "Mode", "enum": ["fast", "safe"]},
        "tags": {"type": "array", "title": "Tags", "items": {"enum": ["a", "b", "c"]}},
    },
    "required": ["name", "mode"],
}


def form(qtbot: QtBot) -> SchemaForm:
    built = SchemaForm(fields_of(SCHEMA))
    qtbot.addWidget(built)
    return built


def test_defaults_are_filled_in_and_each_kind_gets_its_input(qtbot: QtBot) -> None:
    built = form(qtbot)
    assert isinstance(built.inputs["name"], QLineEdit)
    assert isinstance(built.inputs["mode"], QComboBox)
    assert isinstance(built.inputs["dry_run"], QCheckBox)
    assert isinstance(built.inputs["tags"], QListWidget)
    assert built.inputs["count"].text() == "3"  # type: ignore[attr-defined]
    assert built.inputs["dry_run"].isChecked()
    assert built.inputs["mode"].currentData() is None  # nothing chosen for the user


def test_every_problem_is_shown_beside_its_field_and_nothing_is_returned(qtbot: QtBot) -> None:
    built = form(qtbot)
    built.inputs["name"].setText("x")  # type: ignore[attr-defined]
    built.inputs["count"].setText("zero")  # type: ignore[attr-defined]
    with pytest.raises(InvalidAnswer) as caught:
        built.checked_content()
    assert {p.field for p in caught.value.problems} == {"name", "count", "mode"}
    assert built.errors["mode"].text() == "This is required."
    assert built.errors["name"].text() == "Must be at least 2 characters."
    assert "whole number" in built.errors["count"].text()
    assert built.errors["ratio"].isHidden()


def test_a_valid_form_gives_values_of_the_schemas_types(qtbot: QtBot) -> None:
    built = form(qtbot)
    built.inputs["name"].setText("Ada")  # type: ignore[attr-defined]
    built.inputs["ratio"].setText("0.5")  # type: ignore[attr-defined]
    mode = built.inputs["mode"]
    assert isinstance(mode, QComboBox)
    mode.setCurrentIndex(mode.findData("safe"))
    tags = built.inputs["tags"]
    assert isinstance(tags, QListWidget)
    tags.item(1).setCheckState(Qt.CheckState.Checked)
    assert built.checked_content() == {
        "name": "Ada",
        "count": 3,
        "ratio": 0.5,
        "dry_run": True,
        "mode": "safe",
        "tags": ["b"],
    }
    assert all(label.isHidden() for label in built.errors.values())


def test_hostile_field_titles_are_inert(qtbot: QtBot) -> None:
    built = SchemaForm(
        fields_of(
            {"type": "object", "properties": {"x": {"type": "string", "title": "<b>\u202eX"}}}
        )
    )
    qtbot.addWidget(built)
    assert built.inputs["x"].accessibleName() == "<b><U+202E>X"


def server(alias: str, **changes: object) -> ServerDefinition:
    values: dict[str, object] = {
        "id": alias,
        "alias": alias,
        "transport": Transport.STDIO,
        "command": "python",
        "created_at": T0,
    }
    values.update(changes)
    return ServerDefinition(**values)  # type: ignore[arg-type]


def test_the_servers_model_shows_state_and_reason_and_passes_the_tester(
    qtmodeltester: ModelTester,
) -> None:
    model = ServerListModel()
    model.set_views([ServerView(server("a"), None), ServerView(server("b", trusted=True), None)])
    qtmodeltester.check(model, force_py=True)  # type: ignore[no-untyped-call]  # untyped plugin
    failed = ConnectionStatus("b", ConnectionState.FAILED, "connection refused")
    changed: list[int] = []
    model.dataChanged.connect(lambda top, _bottom, _roles: changed.append(top.row()))
    model.set_views([ServerView(server("a"), None), ServerView(server("b", trusted=True), failed)])
    assert changed == [1]
    assert model.index(1, 4).data() == "failed: connection refused"
    assert model.index(1, 3).data() == "yes"
    assert model.index(0, 4).data() == "not connected"
    model.set_views([ServerView(server("c"), None)])
    qtmodeltester.check(model, force_py=True)  # type: ignore[no-untyped-call]
    assert model.rowCount() == 1


def test_the_issues_model_passes_the_tester_and_reads_titles_and_details(
    qtmodeltester: ModelTester,
) -> None:
    issue = Issue(
        id="i1",
        kind=IssueKind.UNKNOWN_OUTCOME,
        subject="op",
        title="import_suppliers may or may not have run",
        detail="The connection dropped after the call was sent.",
        created_at=T0,
    )
    model = IssueListModel()
    model.set_views([IssueView(issue, (IssueAction.RETRY, IssueAction.ABANDON))])
    qtmodeltester.check(model, force_py=True)  # type: ignore[no-untyped-call]
    index = model.index(0, 0)
    assert index.data() == "import_suppliers may or may not have run"
    assert "connection dropped" in index.data(Qt.ItemDataRole.AccessibleTextRole)
    model.set_views([])
    qtmodeltester.check(model, force_py=True)  # type: ignore[no-untyped-call]
