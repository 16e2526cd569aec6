"""The npm "everything" server (TypeScript SDK 1.x) over Streamable HTTP: its tasks are kept
per HTTP session, so only the engine's one session can follow a task from one command to
the next. A question answered from a second command, a detached task followed and another
cancelled from other commands, a task followed after the engine was killed, and the session
ended (DELETE) when Mooring is done with it; each with exactly the ``tools/call`` requests
made, never replayed.

Its transport listens on every interface; ``tests/peers_node/loopback.cjs`` holds it to
127.0.0.1 (and logs its HTTP DELETEs and the ``tools/call`` requests it parses)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Cli
from tests.helpers.node_peers import start_everything_http
from tests.helpers.processes import engine_pid
from tests.mcp.servers import stop_processes


@pytest.fixture
def everything(cli: Cli, tmp_path: Path) -> Iterator[Path]:
    """server-everything over HTTP, configured as "everything"; the log of its DELETEs."""
    log = tmp_path / "everything-deletes.jsonl"
    process, url = start_everything_http(log)
    try:
        assert cli.run("servers", "add", "everything", "--url", url).returncode == 0
        assert cli.run("rules", "add", "everything", "*", "allow").returncode == 0
        yield log
    finally:
        cli.run("agent", "stop")
        stop_processes([process])


def logged(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def deletes(log: Path) -> list[dict[str, Any]]:
    """The sessions ended (HTTP DELETE), as the server received them."""
    return [e for e in logged(log) if e["method"] == "http:DELETE"]


def calls(log: Path) -> int:
    """How many ``tools/call`` requests the server received."""
    return sum(1 for e in logged(log) if e["method"] == "tools/call")


def test_a_question_is_answered_from_a_second_command_and_the_session_ends_after(
    cli: Cli, everything: Path
) -> None:
    args = '{"topic": "tides", "ambiguous": true}'
    asked = cli.run("call", "everything", "simulate-research-query", "--args", args)
    assert asked.returncode == 9, (asked.returncode, asked.stdout, asked.stderr)
    [waiting] = cli.json("tasks", "list", "--active")
    assert waiting["state"] == "input_required", waiting
    answer = '{"interpretation": "historical"}'
    answered = cli.json("tasks", "answer", waiting["id"], "--value", answer)
    assert answered["delivered"] is True, answered  # the session that made the task
    final = cli.json("tasks", "watch", waiting["id"], "--timeout", "60")
    assert final["state"] == "completed", final
    assert "historical" in json.dumps(final["result"])
    assert len(cli.json("tasks", "list")) == 1
    assert calls(everything) == 1  # one call, never replayed
    assert deletes(everything) == []  # the session lives as long as the engine needs it
    assert cli.run("agent", "stop").returncode == 0
    [ended] = deletes(everything)  # ended by Mooring, not left to the server's timeout
    assert ended["session"]


def test_detached_tasks_are_followed_and_cancelled_from_other_commands(
    cli: Cli, everything: Path
) -> None:
    research = '{"topic": "reefs"}'
    followed = cli.json(
        "call", "everything", "simulate-research-query", "--detach", "--args", research
    )
    doomed = cli.json(
        "call", "everything", "simulate-research-query", "--detach", "--args", research
    )
    assert followed["state"] == doomed["state"] == "working", (followed, doomed)
    engine = engine_pid(cli.data_dir)
    cancelled = cli.json("tasks", "cancel", doomed["id"], "--timeout", "30")  # exit 0
    assert cancelled["state"] == "cancelled", cancelled  # the server's word
    final = cli.json("tasks", "watch", followed["id"], "--timeout", "60")
    assert final["state"] == "completed", final  # not "expired": the session still knew it
    assert "Research Report: reefs" in json.dumps(final["result"])
    assert engine_pid(cli.data_dir) == engine  # one engine, one session throughout
    assert calls(everything) == 2  # one each


def test_a_task_outlives_a_killed_engine_in_the_session_it_left_open(
    cli: Cli, everything: Path
) -> None:
    killed = cli.run(
        "call",
        "everything",
        "simulate-research-query",
        "--args",
        '{"topic": "kelp"}',
        env={"MOORING_FAILPOINT": "call.after-task-id"},
    )
    assert killed.returncode == 1, (killed.returncode, killed.stdout, killed.stderr)
    [(left_open, greeting)] = remembered(cli)  # and the server's answer that began it
    assert json.loads(greeting)["capabilities"]["tasks"], greeting
    # The server refuses a second initialize in the session it still holds ("Server already
    # initialized"): the next engine adopts the session as it was begun, and reaches the task.
    cli.json("reconcile")
    [record] = cli.json("tasks", "list")
    final = cli.json("tasks", "watch", record["id"], "--timeout", "60")
    assert final["state"] == "completed", final
    assert "Research Report: kelp" in json.dumps(final["result"])
    assert calls(everything) == 1  # never replayed
    assert cli.run("agent", "stop").returncode == 0
    assert [d["session"] for d in deletes(everything)] == [left_open]  # no second session
    assert remembered(cli) == []


def remembered(cli: Cli) -> list[tuple[str, str]]:
    """The sessions the engine remembers (``http_sessions``), with their ``initialize`` answer."""
    conn = sqlite3.connect(cli.data_dir / "mooring.sqlite3")
    try:
        return [
            (str(a), str(b))
            for a, b in conn.execute("SELECT session_id, initialized FROM http_sessions")
        ]
    finally:
        conn.close()
