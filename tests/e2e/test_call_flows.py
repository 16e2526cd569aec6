"""Durable task flows end to end: the real CLI, the real demo server, a real SQLite ledger.

Every test asserts the final database state (through ``tasks show --json``) and how many
``tools/call`` requests the server received.
"""

from __future__ import annotations

import os
import pty
import selectors
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.e2e.conftest import SAMPLES, Cli, add_demo
from tests.helpers.processes import stop_engine

CLEAN = str(SAMPLES / "suppliers_clean.csv")
AMBIGUOUS = str(SAMPLES / "suppliers_ambiguous_id.csv")


def test_import_completes_and_the_result_is_stored(cli: Cli, tmp_path: Path) -> None:
    demo = add_demo(cli, tmp_path)
    shown = cli.json("call", "demo", "import_suppliers", "--args", f'{{"path": "{CLEAN}"}}')
    assert shown["state"] == "completed"
    assert shown["task_id"]
    assert shown["result"]["isError"] is False
    # Followed to its end: by polls or by notifications/tasks (which are not polls).
    assert shown["last_checked_at"] is not None
    assert demo.count("tools/call", "import_suppliers") == 1
    # What the user sees later comes from the ledger, not from the server.
    again = cli.json("tasks", "show", shown["id"])
    assert again["result"] == shown["result"]
    assert again["state"] == "completed"


def test_detach_returns_with_the_task_id_persisted(cli: Cli, tmp_path: Path) -> None:
    demo = add_demo(cli, tmp_path, checkpoint_delay_ms=100, rows_per_checkpoint=2)
    shown = cli.json(
        "call", "demo", "import_suppliers", "--detach", "--args", f'{{"path": "{CLEAN}"}}'
    )
    assert shown["state"] in ("working", "input_required")
    assert shown["task_id"]
    finished = cli.json("tasks", "watch", shown["id"])
    assert finished["state"] == "completed"
    assert demo.count("tools/call") == 1


def test_watch_that_gives_up_exits_waiting_with_the_task_as_stored(
    cli: Cli, tmp_path: Path
) -> None:
    demo = add_demo(cli, tmp_path, checkpoint_delay_ms=60_000, rows_per_checkpoint=1)
    shown = cli.json(
        "call", "demo", "import_suppliers", "--detach", "--args", f'{{"path": "{CLEAN}"}}'
    )
    # Gives up long before the task ends: it says where the task stands, and exits "waiting".
    left = cli.json("tasks", "watch", shown["id"], "--timeout", "2", expect=9)
    assert left["id"] == shown["id"]
    assert left["state"] in ("working", "input_required")
    assert left["task_id"] == shown["task_id"]
    assert demo.count("tools/call") == 1


def test_host_killed_mid_task_and_a_new_process_finishes_it(cli: Cli, tmp_path: Path) -> None:
    demo = add_demo(cli, tmp_path, checkpoint_delay_ms=150, rows_per_checkpoint=2)
    follower = cli.start("call", "demo", "import_suppliers", "--args", f'{{"path": "{CLEAN}"}}')
    assert follower.stdout is not None
    operation = task = None
    for line in follower.stdout:  # bounded by the test's own timeout on the child
        if line.startswith("operation "):
            operation = line.split()[1]
        if line.startswith("task "):
            task = line.split()[1]
            break
    assert operation
    assert task
    follower.send_signal(signal.SIGKILL)
    follower.wait(timeout=30)

    shown = cli.json("tasks", "watch", operation)
    assert shown["state"] == "completed"
    assert shown["task_id"] == task
    assert demo.count("tools/call") == 1


def test_input_required_is_answered_and_the_import_finishes(cli: Cli, tmp_path: Path) -> None:
    demo = add_demo(cli, tmp_path)
    started = cli.run("call", "demo", "import_suppliers", "--args", f'{{"path": "{AMBIGUOUS}"}}')
    assert started.returncode == 9, started.stderr  # waits for an answer; no terminal here
    assert "input required: demo (import_suppliers) asks" in started.stdout
    [record] = cli.json("tasks", "list", "--active")
    assert record["state"] == "input_required"
    [question] = record["inputs"]
    assert "Which column is the supplier identifier?" in question["message"]

    answered = cli.json("tasks", "answer", record["id"], "--value", '{"column": "vendor_code"}')
    assert answered["delivered"] is True
    finished = cli.json("tasks", "watch", record["id"])
    assert finished["state"] == "completed"
    assert finished["inputs"][0]["delivered"] is True
    assert demo.count("tools/call") == 1
    assert demo.count("tasks/update") == 1


def test_cancel_is_a_request_and_the_server_decides(cli: Cli, tmp_path: Path) -> None:
    big = tmp_path / "big.csv"
    rows = ["supplier_id,name,country,email,phone"]
    rows += [f"S-{i:05d},Supplier {i},DE,s{i}@example.org,+49 1" for i in range(400)]
    big.write_text("\n".join(rows) + "\n")
    demo = add_demo(cli, tmp_path, checkpoint_delay_ms=200, rows_per_checkpoint=10)
    shown = cli.json(
        "call", "demo", "import_suppliers", "--detach", "--args", f'{{"path": "{big}"}}'
    )
    cancelled = cli.json("tasks", "cancel", shown["id"])  # delivered: exit 0
    assert cancelled["state"] == "cancelled"
    assert cancelled["cancel_requested"] is True
    assert demo.count("tasks/cancel") >= 1
    assert demo.count("tools/call") == 1
    # The cancel took effect before the end: not every row was imported.
    conn = sqlite3.connect(demo.store)
    try:
        saved = conn.execute("SELECT count(*) FROM suppliers").fetchone()[0]
    finally:
        conn.close()
    assert saved < 400


def test_a_failed_task_keeps_the_json_rpc_error(cli: Cli, tmp_path: Path) -> None:
    demo = add_demo(cli, tmp_path, fault_db_write_fail_at_checkpoint=1)
    shown = cli.json(
        "call", "demo", "import_suppliers", "--args", f'{{"path": "{CLEAN}"}}', expect=5
    )
    assert shown["state"] == "failed"
    assert shown["error"]["code"]
    assert shown["error"]["message"]
    assert demo.count("tools/call") == 1


def test_a_dropped_create_reply_is_an_unknown_outcome_never_retried(
    cli: Cli, tmp_path: Path
) -> None:
    demo = add_demo(cli, tmp_path, fault_drop_create_reply=1)
    shown = cli.json(
        "call", "demo", "import_suppliers", "--args", f'{{"path": "{CLEAN}"}}', expect=8
    )
    assert shown["state"] == "unknown_outcome"
    assert shown["task_id"] is None
    assert "may or may not have run" in shown["reason"]
    assert demo.count("tools/call") == 1
    # Reconciling it later (as a relaunch does) does not re-send it either.
    report = cli.json("reconcile")
    assert report["unknown_outcome"] == [shown["id"]]
    assert demo.count("tools/call") == 1


def test_a_task_the_server_forgot_is_expired_with_the_reason(cli: Cli, tmp_path: Path) -> None:
    # A server that reports nothing on a listen stream, so the task is polled at its interval.
    # (One that covered the task would be asked only as a safety net, minutes apart: a server
    # forgetting a task before its TTL without a word is noticed then.)
    demo = add_demo(
        cli,
        tmp_path,
        fault_forget_after_ms=300,
        fault_no_task_notifications=1,
        checkpoint_delay_ms=300,
        rows_per_checkpoint=1,
    )
    shown = cli.json(
        "call", "demo", "import_suppliers", "--args", f'{{"path": "{CLEAN}"}}', expect=7
    )
    assert shown["state"] == "expired"
    assert "no longer knows" in shown["reason"]
    assert demo.count("tools/call") == 1


def test_a_malformed_status_keeps_the_last_valid_state(cli: Cli, tmp_path: Path) -> None:
    demo = add_demo(
        cli,
        tmp_path,
        fault_malformed_status="unknown-status",
        checkpoint_delay_ms=60_000,
        rows_per_checkpoint=1,
    )
    started = cli.json(
        "call", "demo", "import_suppliers", "--detach", "--args", f'{{"path": "{CLEAN}"}}'
    )
    # The engine that followed it stops; the next one reads its status once, as on launch:
    # `reconcile` ends once the server has answered.
    assert stop_engine(cli.data_dir)
    report = cli.json("reconcile")
    [shown] = [r for r in report["refreshed"] if r["id"] == started["id"]]
    assert shown["state"] in ("working", "input_required")
    assert shown["anomaly_count"] >= 1
    assert "Malformed reply" in shown["reason"]
    assert demo.count("tools/call") == 1


def test_a_slow_status_request_is_status_unavailable_not_failure(cli: Cli, tmp_path: Path) -> None:
    demo = add_demo(
        cli, tmp_path, fault_slow_get_ms=60_000, checkpoint_delay_ms=60_000, rows_per_checkpoint=1
    )
    assert cli.run("settings", "set", "mcp.request_timeout_ms", "500").returncode == 0
    cli.json("call", "demo", "import_suppliers", "--detach", "--args", f'{{"path": "{CLEAN}"}}')
    # The engine that followed it stops; the next one reads its status once, as on launch:
    # `reconcile` ends when the request's own deadline passes.
    assert stop_engine(cli.data_dir)
    done = cli.run("reconcile")
    assert done.returncode == 0, done.stderr
    assert "status temporarily unavailable — last known: working" in done.stdout
    [record] = cli.json("tasks", "list", "--active")
    assert "status_unavailable" in record["flags"]
    assert record["state"] == "working"
    assert demo.count("tools/call") == 1


def test_an_answer_the_question_does_not_allow_is_refused_then_answered_elsewhere(
    cli: Cli, tmp_path: Path
) -> None:
    demo = add_demo(cli, tmp_path)
    started = cli.run("call", "demo", "import_suppliers", "--args", f'{{"path": "{AMBIGUOUS}"}}')
    assert started.returncode == 9, started.stderr
    [record] = cli.json("tasks", "list", "--active")
    # Not one of the question's choices: refused before anything is saved or sent.
    refused = cli.run("tasks", "answer", record["id"], "--value", '{"column": "no_such_column"}')
    assert refused.returncode == 2, refused.stderr
    assert "must be one of vendor_code" in refused.stderr
    assert demo.count("tasks/update") == 0
    shown = cli.json("tasks", "show", record["id"])
    assert shown["state"] == "input_required"
    assert [i["answered"] for i in shown["inputs"]] == [False]
    # Answered properly by another process, followed to the end by yet another.
    answered = cli.json("tasks", "answer", record["id"], "--value", '{"column": "vendor_code"}')
    assert answered["delivered"] is True
    final = cli.json("tasks", "watch", record["id"])
    assert final["state"] == "completed"
    assert all(i["delivered"] for i in final["inputs"])
    assert demo.count("tools/call") == 1
    assert demo.count("tasks/update") == 1


def _read_until(fd: int, marker: str, limit: float = 60) -> str:
    """What a terminal's screen (the pty's other end) shows until ``marker``, or its end."""
    seen = b""
    deadline = time.monotonic() + limit
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while marker.encode() not in seen:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"no {marker!r} in time; seen: {seen!r}"
            if not selector.select(remaining):
                continue
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the command ended: the terminal closed
                break
            if not chunk:
                break
            seen += chunk
    return seen.decode(errors="replace")


def test_a_detached_call_on_a_running_engine_asks_for_approval_at_the_terminal(
    cli: Cli, tmp_path: Path
) -> None:
    # At a terminal, with the engine running, `call --detach` goes the narrow client's way
    # (mooring.cli.calling): the engine asks it the approval question, answered here.
    demo = add_demo(cli, tmp_path, allow=False)
    assert cli.run("agent", "start").returncode == 0
    screen, terminal = pty.openpty()
    env = {**os.environ, "MOORING_DATA_DIR": str(cli.data_dir)}
    env.update({k: v for k, v in cli.env.items() if v is not None})
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    args = ["call", "demo", "import_suppliers", "--detach", "--args", f'{{"path": "{CLEAN}"}}']
    child = subprocess.Popen(
        [sys.executable, "-m", "mooring", *args],
        stdin=terminal,
        stdout=terminal,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(terminal)
    try:
        asked = _read_until(screen, "[q] cancel: ")
        assert "demo wants to run import_suppliers" in asked
        os.write(screen, b"y\n")
        said = _read_until(screen, "working")
        _, err = child.communicate(timeout=60)
        assert child.returncode == 0, err
    finally:
        os.close(screen)
    lines = (asked + said).splitlines()
    assert [line.split()[0] for line in lines if line.startswith(("operation ", "task "))] == [
        "operation",
        "task",
    ]
    assert demo.count("tools/call") == 1
