"""The status window shows the real state it is given."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from mooring.core.issues import Issue, IssueKind
from mooring.core.servers import ServerDefinition, Transport
from mooring.core.tasks.states import LocalState
from mooring.ui.main_window import HostOverview, MainWindow
from tests.core.tasks.factories import T0


async def _never() -> HostOverview:
    raise AssertionError("not loaded in this test")


def test_overview_lists_servers_tasks_and_issues(qtbot: QtBot) -> None:
    window = MainWindow(_never)
    qtbot.addWidget(window)
    servers = [
        ServerDefinition(
            id="1",
            alias="demo",
            transport=Transport.STDIO,
            command="python",
            args=("-m", "mooring.demo_server"),
            builtin=True,
            created_at=T0,
        ),
        ServerDefinition(
            id="2",
            alias="crm",
            transport=Transport.HTTP,
            url="http://127.0.0.1:8931/mcp",
            trusted=True,
            created_at=T0,
        ),
    ]
    window.show_overview(
        HostOverview(
            data_dir="/data",
            database="/data/mooring.sqlite3",
            schema="0001",
            servers=servers,
            task_counts={LocalState.WORKING: 2, LocalState.COMPLETED: 5},
            issues=[
                Issue(
                    id="i",
                    kind=IssueKind.UNKNOWN_OUTCOME,
                    subject="op",
                    title="export_suppliers may or may not have run",
                    detail="",
                    created_at=T0,
                )
            ],
        )
    )
    table = window.servers_table
    rows = [
        [item.text() if (item := table.item(r, c)) else "" for c in range(table.columnCount())]
        for r in range(table.rowCount())
    ]
    assert rows == [
        ["demo (bundled)", "stdio", "python -m mooring.demo_server", "no"],
        ["crm", "Streamable HTTP", "http://127.0.0.1:8931/mcp", "yes"],
    ]
    assert window.tasks_label.text() == "2 active, 7 in total"
    assert "may or may not have run" in window.issues_label.text()
    assert window.data_dir_label.text() == "/data"


def test_export_traces_writes_the_file_and_says_how_many_spans(
    qtbot: QtBot, tmp_path: Path
) -> None:
    import asyncio

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

    window = MainWindow(_never, export_traces=export)
    qtbot.addWidget(window)
    assert window.export_action.isEnabled()
    target = tmp_path / "bug-report.jsonl"
    asyncio.run(window.export_traces_to(target))
    assert "mooring.tool_round demo" in target.read_text()
    assert window.statusBar().currentMessage() == f"Wrote 1 span(s) to {target}"


def test_server_text_is_shown_inert_in_the_tables_tooltips_and_issues(qtbot: QtBot) -> None:
    from mooring.ui.main_window import TaskRow

    window = MainWindow(_never)
    qtbot.addWidget(window)
    hostile = "<b>bold</b>\x1b[2J \u202etxt.exe"
    window.show_overview(
        HostOverview(
            data_dir="/data",
            database="/data/mooring.sqlite3",
            schema="0001",
            servers=[],
            task_counts={LocalState.COMPLETED: 1},
            issues=[
                Issue(
                    id="i",
                    kind=IssueKind.UNKNOWN_OUTCOME,
                    subject="op",
                    title=f"{hostile} may or may not have run",
                    detail="",
                    created_at=T0,
                )
            ],
            tasks=[
                TaskRow(
                    operation="12345678",
                    tool=hostile,
                    server="demo",
                    state="completed",
                    detail=f"the tool reported an error: {hostile}",
                )
            ],
        )
    )
    tool = window.tasks_table.item(0, 1)
    assert tool is not None
    assert tool.text() == "<b>bold</b>\\x1b[2J <U+202E>txt.exe"
    assert tool.toolTip() == "<p>&lt;b&gt;bold&lt;/b&gt;\\x1b[2J &lt;U+202E&gt;txt.exe</p>"
    detail = window.tasks_table.item(0, 4)
    assert detail is not None
    assert detail.text().startswith("the tool reported an error: <b>bold</b>\\x1b")
    assert window.issues_label.textFormat() == Qt.TextFormat.PlainText
    assert "\u202e" not in window.issues_label.text()
    assert "<U+202E>txt.exe may or may not have run" in window.issues_label.text()
