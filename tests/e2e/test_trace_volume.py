"""Polling does not fill the trace files: a task polled many times keeps its lifecycle spans,
with the polls counted on its run span instead of a span each."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.conftest import SAMPLES, Cli, add_demo

CLEAN = str(SAMPLES / "suppliers_clean.csv")


def spans_in(lines: str) -> list[dict[str, Any]]:
    return [
        span
        for line in lines.splitlines()
        if line
        for resource in json.loads(line)["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]


def attribute(span: dict[str, Any], key: str) -> Any:
    for item in span.get("attributes", []):
        if item["key"] == key:
            value = item["value"]
            return int(value["intValue"]) if "intValue" in value else value.get("stringValue")
    return None


def test_many_polls_leave_the_lifecycle_spans_and_a_poll_count_not_a_span_each(
    cli: Cli, tmp_path: Path
) -> None:
    # The server asks to be polled every 50 ms while the import takes a few seconds, and sends
    # no notifications/tasks, so everything Mooring learns comes from polls.
    add_demo(
        cli, tmp_path, checkpoint_delay_ms=300, rows_per_checkpoint=1, fault_no_task_notifications=1
    )
    shown = cli.json("call", "demo", "import_suppliers", "--args", f'{{"path": "{CLEAN}"}}')
    assert shown["state"] == "completed"
    polls = shown["poll_count"]
    assert polls >= 20

    export = cli.run("traces", "export", "--task", shown["id"])
    assert export.returncode == 0, export.stderr
    spans = spans_in(export.stdout)
    names = [s["name"] for s in spans]
    for lifecycle in ("mooring.approval", "mooring.queue", "mooring.create", "mooring.task.run"):
        assert lifecycle in names
    assert any(n.startswith("mooring.tool_round") for n in names)
    assert "mooring.result.persist" in names
    [run] = [s for s in spans if s["name"] == "mooring.task.run"]
    assert attribute(run, "poll.count") == polls
    assert attribute(run, "poll.last_at")

    # Everything written to the files, this task's trace or not: far fewer spans than polls.
    written = "".join(
        p.read_text() for p in sorted((cli.data_dir / "traces").glob("traces.jsonl*"))
    )
    assert not any(s["name"].startswith("MCP send tasks/get") for s in spans_in(written))
    assert len(spans_in(written)) < polls // 2, (len(spans_in(written)), polls)


def test_each_poll_can_be_traced_when_asked(cli: Cli, tmp_path: Path) -> None:
    add_demo(cli, tmp_path, checkpoint_delay_ms=100, rows_per_checkpoint=2)
    assert cli.run("settings", "set", "telemetry.trace_each_poll", "true").returncode == 0
    shown = cli.json("call", "demo", "import_suppliers", "--args", f'{{"path": "{CLEAN}"}}')
    written = "".join(
        p.read_text() for p in sorted((cli.data_dir / "traces").glob("traces.jsonl*"))
    )
    polls = [s for s in spans_in(written) if s["name"].startswith("MCP send tasks/get")]
    assert len(polls) == shown["poll_count"]
