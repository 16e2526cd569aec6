"""The tasks list and card: live state words as text, and the buttons that fit each state."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from bench.seed import seed
from PySide6.QtCore import QModelIndex, Qt
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from mooring.bootstrap import build_host
from mooring.core.conversation import ToolRound
from mooring.core.elicitation import ELICITATION_METHOD
from mooring.core.events import TaskDidChange
from mooring.core.tasks.inputs import TaskInput
from mooring.core.tasks.reconcile import ServerTask, reconcile
from mooring.core.tasks.record import TaskRecord
from mooring.core.tasks.states import LocalState, TaskFlag
from mooring.core.tasks.words import state_words
from mooring.services.host import TaskView
from mooring.settings.paths import Paths
from mooring.settings.store import Settings
from mooring.storage.db import Database
from mooring.ui.models.tasks import TaskListModel, TaskRole
from mooring.ui.views.tasks_panel import TaskCard, TaskFeed, TasksPanel, times_of
from tests.core.tasks.factories import T0, make_record
from tests.ui.conftest import until


def view_of(record: TaskRecord, *, inputs: tuple[TaskInput, ...] = (), **round_: Any) -> TaskView:
    tool_round = (
        ToolRound(
            id="r1",
            server_id=record.server_id,
            tool=record.tool,
            arguments={},
            argument_digest="d",
            created_at=T0,
            **round_,
        )
        if round_
        else None
    )
    return TaskView(
        record=record,
        server_alias="demo",
        tool_round=tool_round,
        inputs=inputs,
        words=state_words(record, tool_round.result if tool_round else None),
    )


def check(tester: ModelTester, model: TaskListModel) -> None:
    tester.check(model, force_py=True)  # type: ignore[no-untyped-call]  # pytest-qt is untyped


QUESTION = TaskInput(
    record_id="op-1",
    key="k1",
    method=ELICITATION_METHOD,
    params={"message": "Which column?", "requestedSchema": {"type": "object", "properties": {}}},
    created_at=T0,
)


def test_the_model_passes_the_model_tester_through_inserts_updates_and_resets(
    qtmodeltester: ModelTester,
) -> None:
    model = TaskListModel()
    check(qtmodeltester, model)
    model.upsert(view_of(make_record(id="a")))
    model.upsert(view_of(make_record(id="b", tool="export_suppliers")))
    model.upsert(view_of(make_record(LocalState.COMPLETED, id="a", updated_at=T0 + timedelta(1))))
    model.reset_views([view_of(make_record(id="c"))])
    check(qtmodeltester, model)
    assert model.rowCount() == 1


def test_a_change_updates_only_its_row_and_newer_rows_come_first(qtbot: QtBot) -> None:
    model = TaskListModel()
    model.upsert(view_of(make_record(id="a")))
    model.upsert(view_of(make_record(id="b")))
    assert [model.index(r, 0).data(TaskRole.ID) for r in range(2)] == ["b", "a"]
    later = make_record(LocalState.COMPLETED, id="a", updated_at=T0 + timedelta(seconds=5))
    with qtbot.waitSignal(model.dataChanged, timeout=1000) as changed:
        model.upsert(view_of(later))
    top_left, bottom_right = changed.args[0], changed.args[1]
    assert (top_left.row(), bottom_right.row()) == (1, 1)
    assert model.index(1, 0).data(TaskRole.STATE_WORDS) == "completed"
    # A late event with an older record never rolls the row back.
    model.upsert(view_of(make_record(id="a")))
    assert model.index(1, 0).data(TaskRole.STATE_WORDS) == "completed"


def test_a_burst_of_changes_is_one_insertion_and_one_change_and_keeps_the_newest(
    qtbot: QtBot, qtmodeltester: ModelTester
) -> None:
    model = TaskListModel()
    check(qtmodeltester, model)
    model.reset_views([view_of(make_record(id=i)) for i in ("c", "b", "a")])
    inserted: list[tuple[int, int]] = []
    changed: list[tuple[int, int]] = []
    model.rowsInserted.connect(lambda _p, first, last: inserted.append((first, last)))
    model.dataChanged.connect(lambda tl, br, _r: changed.append((tl.row(), br.row())))
    later = T0 + timedelta(seconds=5)
    model.upsert_many(
        [
            view_of(make_record(LocalState.COMPLETED, id="a", updated_at=later)),
            view_of(make_record(id="d", created_at=later)),
            view_of(make_record(id="c", status_message="validated 10 rows", updated_at=later)),
            view_of(make_record(id="e", created_at=later + timedelta(seconds=1))),
            view_of(make_record(id="b", updated_at=T0 - timedelta(seconds=1))),  # late: ignored
        ]
    )
    assert inserted == [(0, 1)]
    assert len(changed) == 1
    rows = [model.index(r, 0).data(TaskRole.ID) for r in range(model.rowCount())]
    assert rows == ["e", "d", "c", "b", "a"]
    shown = {v: model.view(v) for v in ("a", "b", "c")}
    assert [s.record.state if s else None for s in shown.values()] == [LocalState.COMPLETED] + [
        LocalState.WORKING
    ] * 2
    assert [s.record.updated_at if s else None for s in shown.values()] == [later, T0, later]
    assert [model.row_of(i) for i in ("e", "a", "zz")] == [0, 4, -1]


@pytest.mark.parametrize(
    ("record", "words"),
    [
        (make_record(), "working"),
        (make_record(LocalState.INPUT_REQUIRED), "needs your input"),
        (make_record(cancel_requested=True), "cancel requested"),
        (make_record(LocalState.CANCELLED, cancel_requested=True), "cancelled"),
        (make_record(LocalState.UNKNOWN_OUTCOME), "outcome unknown"),
        (
            make_record(flags=frozenset({TaskFlag.STATUS_UNAVAILABLE})),
            "status temporarily unavailable — last known: working",
        ),
        (
            make_record(flags=frozenset({TaskFlag.AUTH_REQUIRED})),
            "sign-in needed — last known: working",
        ),
        (make_record(LocalState.EXPIRED), "expired"),
    ],
)
def test_the_accessible_text_is_the_state_words_the_delegate_paints(
    record: TaskRecord, words: str
) -> None:
    model = TaskListModel()
    model.upsert(view_of(record))
    index = model.index(0, 0)
    accessible = index.data(Qt.ItemDataRole.AccessibleTextRole)
    assert accessible.startswith("import_suppliers on demo: ")
    assert index.data(TaskRole.STATE_WORDS) == words
    assert words in accessible
    if record.cancel_requested and not record.is_terminal:
        assert "cancelled" not in accessible  # a request is not an outcome


def test_server_text_in_a_row_is_neutralised() -> None:
    model = TaskListModel()
    model.upsert(view_of(make_record(status_message="done\u202e<b>txt.exe</b>\x1b[31m")))
    shown = model.index(0, 0).data(Qt.ItemDataRole.AccessibleTextRole)
    assert "\u202e" not in shown
    assert "\x1b" not in shown
    assert "<U+202E><b>txt.exe</b>\\x1b[31m" in shown
    tip = model.index(0, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert "&lt;b&gt;txt.exe&lt;/b&gt;" in tip  # a tooltip never renders server text as HTML
    assert model.index(-1, 0).data() is None
    assert model.data(QModelIndex()) is None


@pytest.mark.parametrize(
    ("record", "inputs", "buttons"),
    [
        (make_record(), (), ["Cancel"]),
        (make_record(LocalState.INPUT_REQUIRED), (QUESTION,), ["Answer", "Cancel"]),
        (make_record(cancel_requested=True), (), []),
        (make_record(LocalState.UNKNOWN_OUTCOME), (), ["Retry", "Abandon"]),
        (make_record(flags=frozenset({TaskFlag.AUTH_REQUIRED})), (), ["Cancel", "Sign in"]),
        (make_record(LocalState.COMPLETED), (), []),
        (make_record(LocalState.FAILED), (), []),
    ],
)
def test_the_card_offers_the_buttons_that_fit_the_state(
    qtbot: QtBot, record: TaskRecord, inputs: tuple[TaskInput, ...], buttons: list[str]
) -> None:
    card = TaskCard(now=lambda: T0 + timedelta(seconds=90))
    qtbot.addWidget(card)
    card.show_view(view_of(record, inputs=inputs))
    assert card.visible_buttons() == buttons
    assert card.state_label.text() == state_words(record).label


def test_the_card_says_elapsed_last_checked_and_time_to_live_left(qtbot: QtBot) -> None:
    record = make_record(
        last_checked_at=T0 + timedelta(seconds=80),
        ttl_ms=600_000,
        status_message="row 40 of 120",
    )
    now = T0 + timedelta(seconds=90)
    card = TaskCard(now=lambda: now)
    qtbot.addWidget(card)
    card.show_view(view_of(record))
    assert card.elapsed_label.text() == "1 min 30 s"
    assert card.checked_label.text() == "10 s ago"
    assert card.ttl_label.text() == "8 min 30 s"
    assert card.message_label.text() == "row 40 of 120"
    assert (
        times_of(make_record(LocalState.COMPLETED, updated_at=T0 + timedelta(seconds=5)), now)[0]
        == "5 s"
    )


def test_a_completed_card_shows_the_tools_text_result(qtbot: QtBot) -> None:
    card = TaskCard(now=lambda: T0)
    qtbot.addWidget(card)
    card.show_view(
        view_of(
            make_record(LocalState.COMPLETED),
            result={"content": [{"type": "text", "text": "Imported 120 suppliers"}]},
        )
    )
    assert card.result_label.text() == "Imported 120 suppliers"


def test_the_card_is_drawn_again_for_its_own_news_not_for_tasks_arriving_above_it(
    qtbot: QtBot, tmp_path: Path
) -> None:
    paths = Paths(data_dir=tmp_path, config_dir=tmp_path, log_dir=tmp_path, overridden=True)
    db = Database.open(paths.database)
    try:
        panel = TasksPanel(build_host(paths, Settings({}), db))
        qtbot.addWidget(panel)
        panel.show()
        chosen = make_record(id="chosen", status_message="row 40 of 120")
        older = make_record(id="older", created_at=T0 - timedelta(days=1))
        panel.model.reset_views([view_of(chosen), view_of(older)])
        assert panel.select("chosen")
        drawn: list[str] = []
        panel.card.changed.connect(lambda: drawn.append(panel.card.message_label.text()))

        # Others' news: new tasks above it (Qt calls the moved row a new selection), then a
        # change spanning rows on both sides of it.
        panel.model.upsert_many([view_of(make_record(id=f"new-{n}")) for n in range(3)])
        panel.model.upsert_many(
            [
                view_of(make_record(id=i, status_message="moved", updated_at=T0 + timedelta(1)))
                for i in ("new-0", "older")
            ]
        )
        assert [panel.model.row_of(i) for i in ("new-0", "chosen", "older")] == [0, 3, 4]
        assert panel.card.message_label.text() == "row 40 of 120"
        assert drawn == []

        later = dataclasses.replace(
            chosen, status_message="row 80 of 120", updated_at=T0 + timedelta(seconds=5)
        )
        panel.model.upsert_many([view_of(later)])
        assert drawn == ["row 80 of 120"]
    finally:
        db.close()


def test_a_finished_tasks_card_and_row_no_longer_say_its_last_progress_line(
    qtbot: QtBot, tmp_path: Path
) -> None:
    paths = Paths(data_dir=tmp_path, config_dir=tmp_path, log_dir=tmp_path, overridden=True)
    db = Database.open(paths.database)
    try:
        panel = TasksPanel(build_host(paths, Settings({}), db))
        qtbot.addWidget(panel)
        panel.show()
        working = make_record(id="op-1", status_message="Generating report...")
        panel.model.reset_views([view_of(working)])
        assert panel.select("op-1")
        assert panel.card.message_label.text() == "Generating report..."

        # The end as the reference "everything" server reports it: its task store keeps the
        # last progress line beside the final status.
        result = {"content": [{"type": "text", "text": "# Research Report: tides"}]}
        ended = ServerTask(
            task_id="task-1",
            status="completed",
            status_message="Generating report...",
            result=result,
        )
        done = reconcile(working, ended, now=T0 + timedelta(seconds=5)).record
        panel.model.upsert_many([view_of(done, result=result)])

        card = panel.card
        assert card.state_label.text() == "completed"
        assert card.message_label.text() == "—"
        assert not card.detail_label.isVisibleTo(card)
        assert card.result_label.text() == "# Research Report: tides"
        row = panel.model.index(panel.model.row_of("op-1"), 0)
        assert row.data(TaskRole.STATE_WORDS) == "completed"
        assert "Generating report" not in row.data(Qt.ItemDataRole.AccessibleTextRole)
    finally:
        db.close()


@pytest.mark.anyio
async def test_news_of_one_task_at_a_time_reaches_the_list_in_a_few_updates_and_all_of_it(
    qtbot: QtBot, tmp_path: Path
) -> None:
    """Task news arriving one task at a time (a listen stream, a launch's polls: each saved,
    then told) is gathered into a few list updates, at most 20 a second, instead of a layout
    and paint of the list per task; every task still shows its latest state."""
    paths = Paths(data_dir=tmp_path, config_dir=tmp_path, log_dir=tmp_path, overridden=True)
    ids = seed(paths.database, messages=0, records=60, working=60)
    db = Database.open(paths.database)
    host = build_host(paths, Settings({}), db)
    try:
        panel = TasksPanel(host)
        qtbot.addWidget(panel)
        panel.show()
        await panel.feed.load()
        updates: list[tuple[float, int]] = []
        upsert = panel.model.upsert_many
        loop = asyncio.get_running_loop()

        def counted(views: list[TaskView]) -> None:
            updates.append((loop.time(), len(views)))
            upsert(views)

        panel.model.upsert_many = counted  # type: ignore[method-assign]  # counts, then shows
        for n, record_id in enumerate(ids):
            latest = await host.ledger.get(record_id)
            assert latest is not None
            changed = latest.evolve(at=host.clock.now(), status_message=f"validated {n} rows")
            await host.ledger.save(changed)
            host.events.emit(TaskDidChange(changed, previous_state=changed.state))

        def shown(record_id: str, n: int) -> bool:
            view = panel.model.view(record_id)
            return view is not None and view.record.status_message == f"validated {n} rows"

        await until(lambda: all(shown(i, n) for n, i in enumerate(ids)), panel.model.dataChanged)
        assert sum(count for _, count in updates) >= len(ids)
        # Spaced by the feed's interval (the loop's timers may fire a little early), however
        # slowly the machine saved the news: one update per task came back to back before.
        spacings = [b - a for (a, _), (b, _) in itertools.pairwise(updates)]
        assert min(spacings) >= 0.9 * TaskFeed.SPACING_S, spacings
    finally:
        await host.stop()
        db.close()
