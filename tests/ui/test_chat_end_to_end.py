"""The real window as its own process, driven from a chat message: a scripted
OpenAI-compatible endpoint on 127.0.0.1 (the official SDK speaks to it) and the demo server as
a subprocess. Message → tool call → "Approve tool call" → "Allow once" → the task card → the
window is closed mid-task and opened again → the card catches up → the input form →
completion → "Continue with result" → the model's final reply in the transcript."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.e2e.conftest import SAMPLES, Cli, add_demo
from tests.e2e.test_chat_e2e import add_provider, said, text_of
from tests.helpers.model_endpoints import ModelEndpoint, Text, ToolCall, ToolCalls
from tests.ui.test_window_end_to_end import PROBE, env_for

FINAL = "The import is done: the ambiguous column was read as vendor codes."


def probe(cli: Cli, *args: str) -> dict[str, object]:
    try:
        done = subprocess.run(
            [sys.executable, str(PROBE), *args],
            capture_output=True,
            text=True,
            env=env_for(cli),
            timeout=180,
        )
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"the window probe hung: {exc.stderr!r:.4000}") from None
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    report: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def test_a_chat_message_runs_a_task_through_approval_a_restart_and_input_then_continues(
    cli: Cli, tmp_path: Path, model_endpoint: ModelEndpoint
) -> None:
    demo = add_demo(cli, tmp_path, allow=False)  # no rule: the window must ask
    add_provider(cli, model_endpoint, "openai")
    ambiguous = str(SAMPLES / "suppliers_ambiguous_id.csv")
    model_endpoint.script(
        ToolCalls([ToolCall("demo__import_suppliers", {"path": ambiguous})]),
        Text("I started the import; it will ask you about a column."),
        Text(FINAL),
    )

    first = probe(cli, "chat", "Import the ambiguous supplier file")
    assert first["left"] == "needs your input"
    shown = first["transcript"]
    assert isinstance(shown, list)
    assert shown[0] == "You: Import the ambiguous supplier file"
    [card] = [line for line in shown if line.startswith("Tool round: ")]
    assert "demo · import_suppliers" in card
    assert "Approval: Allowed once by you" in card
    assert "Background task: " in card

    second = probe(cli, "resume", FINAL)
    seen = second["seen"]
    assert isinstance(seen, list)
    assert seen[0] == "needs your input"  # the last known state, at once
    assert seen[-1] == "completed"
    lines = second["transcript"]
    assert isinstance(lines, list)
    assert lines[-1] == f"Assistant: {FINAL}"
    assert any(line.startswith("Task result: ") for line in lines)
    [card] = [line for line in lines if line.startswith("Tool round: ")]
    assert "Background task: completed" in card  # the transcript's card caught up too
    assert demo.count("tasks/update") == 1  # answered once
    last = said(model_endpoint.model_requests[-1])[-1]
    assert last["role"] == "user"
    assert "completed" in text_of(last)
