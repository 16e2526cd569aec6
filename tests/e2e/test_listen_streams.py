"""Who holds a ``subscriptions/listen`` stream for tasks: the data folder's engine, one per
connection while it follows tasks, whatever the commands that ask about them (counted by the
demo server, which logs every request and its filters)."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.conftest import SAMPLES, Cli, DemoServer, add_demo

AMBIGUOUS = str(SAMPLES / "suppliers_ambiguous_id.csv")


def listens(demo: DemoServer) -> list[list[str]]:
    """The filters of every ``subscriptions/listen`` (tasks or tool list changes)."""
    return [r.get("filters", []) for r in demo.requests() if r["method"] == "subscriptions/listen"]


def task_listens(demo: DemoServer) -> list[list[str]]:
    """The filters of every ``subscriptions/listen`` that asked for task ids."""
    return [
        r["filters"]
        for r in demo.requests()
        if r["method"] == "subscriptions/listen" and "taskIds" in r.get("filters", [])
    ]


def test_the_engine_holds_one_task_stream_whatever_the_commands_that_ask(
    cli: Cli, tmp_path: Path
) -> None:
    demo = add_demo(cli, tmp_path, checkpoint_delay_ms=300, rows_per_checkpoint=1)
    # A task that waits for an answer: still unfinished whenever the next command comes.
    shown = cli.json(
        "call", "demo", "import_suppliers", "--detach", "--args", f'{{"path": "{AMBIGUOUS}"}}'
    )
    report = cli.json("reconcile")
    assert [r["id"] for r in report["refreshed"]] == [shown["id"]], report
    assert cli.json("tasks", "show", shown["id"])["task_id"] == shown["task_id"]
    assert demo.count("tasks/get") >= 1
    answered = cli.json("tasks", "answer", shown["id"], "--value", '{"column": "vendor_code"}')
    assert answered["delivered"] is True

    finished = cli.json("tasks", "watch", shown["id"])

    assert finished["state"] == "completed"
    # The engine's one connection: one stream for this task (a second would mean a command
    # opened a connection of its own to follow it).
    assert task_listens(demo) == [["taskIds"]]
