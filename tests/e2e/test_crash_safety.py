"""Crash safety, proven with real SIGKILLs at every step of the flows.

A failpoint (``MOORING_FAILPOINT``) kills the host process at a named step: the data folder's
engine, which the command starts (and which inherits the command's environment). The command
is told its engine stopped; the next command starts a new engine, which reconciles and follows
the task. Asserted every time: the server received exactly one ``tools/call`` (never a
duplicate), no task id or answer was lost, the record ends in the state the server reports,
and SQLite's integrity check is ok.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.e2e.conftest import SAMPLES, Cli, DemoServer, add_demo
from tests.helpers.processes import engine_pid, stop_engine

CLEAN = str(SAMPLES / "suppliers_clean.csv")
AMBIGUOUS = str(SAMPLES / "suppliers_ambiguous_id.csv")


def integrity(cli: Cli) -> str:
    conn = sqlite3.connect(cli.data_dir / "mooring.sqlite3")
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def server_task_ids(demo: DemoServer) -> set[str]:
    conn = sqlite3.connect(demo.store)
    try:
        return {row[0] for row in conn.execute("SELECT task_id FROM tasks")}
    finally:
        conn.close()


def killed_at(cli: Cli, point: str, *args: str) -> None:
    """Run a command whose engine is killed at ``point``: a new engine, started by it."""
    stop_engine(cli.data_dir)
    done = cli.run(*args, env={"MOORING_FAILPOINT": point})
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    assert "Mooring's engine stopped" in done.stderr
    assert engine_pid(cli.data_dir) is None  # it was killed at the point, not ended


def relaunch(cli: Cli) -> list[dict[str, object]]:
    reconciled = cli.json("reconcile")
    assert isinstance(reconciled, dict)
    cli.run("tasks", "watch", "--timeout", "30")
    records: list[dict[str, object]] = cli.json("tasks", "list")
    return records


def test_killed_before_sending_fails_honestly_and_nothing_ran(cli: Cli, tmp_path: Path) -> None:
    demo = add_demo(cli, tmp_path)
    killed_at(
        cli,
        "call.after-intent",
        "call",
        "demo",
        "import_suppliers",
        "--args",
        f'{{"path": "{CLEAN}"}}',
    )
    [record] = relaunch(cli)
    assert record["state"] == "failed"
    assert "nothing was run" in str(record["reason"])
    assert demo.count("tools/call") == 0
    assert integrity(cli) == "ok"


def test_killed_after_sending_is_an_unknown_outcome_never_replayed(
    cli: Cli, tmp_path: Path
) -> None:
    demo = add_demo(cli, tmp_path)
    killed_at(
        cli,
        "call.after-send",
        "call",
        "demo",
        "import_suppliers",
        "--args",
        f'{{"path": "{CLEAN}"}}',
    )
    [record] = relaunch(cli)
    assert record["state"] == "unknown_outcome"
    issues = cli.json("issues")
    assert [i["subject"] for i in issues] == [record["id"]]
    assert demo.count("tools/call") == 1
    abandoned = cli.json("tasks", "abandon", str(record["id"]))
    assert abandoned["state"] == "abandoned"
    assert cli.json("issues") == []
    assert demo.count("tools/call") == 1
    assert integrity(cli) == "ok"


@pytest.mark.parametrize("point", ["call.after-task-id", "poll.before-persist"])
def test_killed_while_the_task_runs_a_new_process_finishes_it(
    cli: Cli, tmp_path: Path, point: str
) -> None:
    demo = add_demo(cli, tmp_path, checkpoint_delay_ms=50, rows_per_checkpoint=3)
    killed_at(cli, point, "call", "demo", "import_suppliers", "--args", f'{{"path": "{CLEAN}"}}')
    [record] = relaunch(cli)
    assert record["state"] == "completed"
    assert record["task_id"] in server_task_ids(demo)
    assert record["result"]
    assert demo.count("tools/call") == 1
    assert integrity(cli) == "ok"


def test_an_answer_saved_before_a_crash_is_resent(cli: Cli, tmp_path: Path) -> None:
    demo = add_demo(cli, tmp_path)
    started = cli.run("call", "demo", "import_suppliers", "--args", f'{{"path": "{AMBIGUOUS}"}}')
    assert started.returncode == 9, started.stderr
    [waiting] = cli.json("tasks", "list", "--active")
    killed_at(
        cli,
        "answer.before-update",
        "tasks",
        "answer",
        str(waiting["id"]),
        "--value",
        '{"column": "vendor_code"}',
    )
    assert demo.count("tasks/update") == 0
    [record] = relaunch(cli)
    assert record["state"] == "completed"
    inputs = record["inputs"]
    assert isinstance(inputs, list)
    [answer] = inputs
    assert answer["answered"] is True
    assert answer["delivered"] is True
    assert demo.count("tasks/update") == 1
    assert demo.count("tools/call") == 1
    assert integrity(cli) == "ok"


def test_a_cancel_requested_before_a_crash_is_sent_after_it(cli: Cli, tmp_path: Path) -> None:
    big = tmp_path / "big.csv"
    rows = ["supplier_id,name,country,email,phone"]
    rows += [f"S-{i:05d},Supplier {i},DE,s{i}@example.org,+49 1" for i in range(300)]
    big.write_text("\n".join(rows) + "\n")
    demo = add_demo(cli, tmp_path, checkpoint_delay_ms=200, rows_per_checkpoint=10)
    shown = cli.json(
        "call", "demo", "import_suppliers", "--detach", "--args", f'{{"path": "{big}"}}'
    )
    killed_at(cli, "cancel.before-send", "tasks", "cancel", str(shown["id"]))
    assert demo.count("tasks/cancel") == 0
    [record] = relaunch(cli)
    assert record["cancel_requested"] is True
    assert record["state"] == "cancelled"
    assert demo.count("tasks/cancel") >= 1
    assert demo.count("tools/call") == 1
    assert integrity(cli) == "ok"
