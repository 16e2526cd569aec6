"""Who holds a ``subscriptions/listen`` stream for tasks: only a long-lived watcher, never a
one-shot command (counted by the demo server, which logs every request and its filters)."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.conftest import SAMPLES, Cli, DemoServer, add_demo

CLEAN = str(SAMPLES / "suppliers_clean.csv")


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


def test_one_shot_commands_open_no_listen_stream_and_a_watcher_opens_one(
    cli: Cli, tmp_path: Path
) -> None:
    demo = add_demo(cli, tmp_path, checkpoint_delay_ms=300, rows_per_checkpoint=1)
    shown = cli.json(
        "call", "demo", "import_suppliers", "--detach", "--args", f'{{"path": "{CLEAN}"}}'
    )
    report = cli.json("reconcile")
    assert report["refreshed"]
    assert cli.json("tasks", "show", shown["id"])["task_id"] == shown["task_id"]
    assert demo.count("tasks/get") >= 1
    assert listens(demo) == []  # neither for tasks nor for tool list changes

    finished = cli.json("tasks", "watch", shown["id"])

    assert finished["state"] == "completed"
    assert task_listens(demo) == [["taskIds"]]
