"""Issue 37's acceptance matrix on Tasks servers nobody here wrote, through the real CLI.

Every command is a face of the one engine of its data folder, which owns the connection; so a
task keeps living in its server (the stdio process, the HTTP session) from one command to the
next. For each peer and transport:

* a question a task asks is answered from a second command (``call`` exits 9, then
  ``tasks answer``);
* ``call --detach``, then ``tasks watch`` from another command follows it to its end, and
  ``tasks cancel`` from another command: exit 0, "cancelled" because the server said so;
* the engine SIGKILLed right after the server named the task, then ``reconcile``.

Each call is exactly one ``tools/call`` in the server's own request log. The peers:

* ``mcp`` 1.30, the official Python SDK 1.x, low-level ``Server`` with its experimental tasks:
  kept in the server's memory, and bound to the session that created them (ids
  ``<session>:<uuid>``);
* FastMCP 3.4 (``task=True`` tools on an in-process Docket);
* fastmcp-tasks 4.1.4 (FastMCP 4 and its Tasks extension, the 2026 wire).

The first two need ``mcp<2`` and run in an interpreter of their own (``tests/helpers/py_peers.py``).
A task in a stdio server's memory ends with the killed engine's server process: after a crash it
is honestly "expired" (the server says it does not know it), never replayed. An ``mcp`` 1.30
task is served only to the session that created it, which a crashed engine never ended: the
next engine resumes that session (remembered in SQLite) and follows the task to its end; only
a server that forgot the session (restarted) leaves it "expired".
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Cli
from tests.helpers import py_peers
from tests.helpers.processes import appended_line, engine_pid
from tests.mcp.servers import start_peer, stop_processes

FASTMCP_TASKS = Path(__file__).resolve().parents[1] / "mcp" / "peers" / "fastmcp_tasks_server.py"


@dataclass(frozen=True)
class Kind:
    """A peer server, its tools, and how a task of it fares when the engine is killed."""

    script: Path
    python: Callable[[], str]
    slow: str  # takes {"seconds": ...}
    slow_done: str  # in its result
    ask: str  # asks one question
    ask_args: str
    answer: str
    answered: str  # in its result once answered
    http: bool
    kept_after_crash: bool  # the new engine's connection still reaches the task


def _mcp1(script: Path, http: bool, kept: bool) -> Kind:
    """A peer on the ``mcp`` 1.x stack (the SDK's low-level server, or FastMCP 3.4): the same
    tools in both scripts."""
    return Kind(
        script,
        py_peers.python,
        "slow_job",
        "slow_job finished",
        "ask_job",
        "{}",
        '{"colour": "teal"}',
        "colour: teal",
        http,
        kept,
    )


def _fastmcp_tasks(http: bool, kept: bool) -> Kind:
    return Kind(
        FASTMCP_TASKS,
        lambda: sys.executable,
        "linger",
        "lingered",
        "confirm",
        '{"item": "SUP-1"}',
        '{"ok": true}',
        "deleted SUP-1",
        http,
        kept,
    )


KINDS = {
    # stdio: the task lives in the server process that ends with the killed engine.
    "mcp1.30-stdio": _mcp1(py_peers.SDK1_TASKS, http=False, kept=False),
    # HTTP: the task lives on, seen only by the session that created it: the next engine
    # resumes the session the killed one left open.
    "mcp1.30-http": _mcp1(py_peers.SDK1_TASKS, http=True, kept=True),
    "fastmcp3.4-stdio": _mcp1(py_peers.FASTMCP3_TASKS, http=False, kept=False),
    "fastmcp3.4-http": _mcp1(py_peers.FASTMCP3_TASKS, http=True, kept=True),
    "fastmcp-tasks-stdio": _fastmcp_tasks(http=False, kept=False),
    "fastmcp-tasks-http": _fastmcp_tasks(http=True, kept=True),
}


@dataclass
class Peer:
    """A peer configured in Mooring as server "peer", and what it received."""

    kind: Kind
    log: Path

    def count(self, method: str) -> int:
        if not self.log.exists():
            return 0
        lines = [json.loads(line) for line in self.log.read_text().splitlines() if line]
        return sum(1 for line in lines if line["method"] == method)


def add_peer(cli: Cli, kind: Kind, log: Path) -> subprocess.Popen[bytes] | None:
    """Configure ``kind`` as server "peer" (started first when it serves HTTP)."""
    python = kind.python()
    process = None
    if kind.http:
        process, url = start_peer(kind.script, f"--requests={log}", python=python)
        added = cli.run("servers", "add", "peer", "--url", url)
    else:
        args = ["--command", python, f"--arg={kind.script}", f"--arg=--requests={log}"]
        added = cli.run("servers", "add", "peer", *args)
    assert added.returncode == 0, added.stderr
    assert cli.run("rules", "add", "peer", "*", "allow").returncode == 0
    return process


@pytest.fixture(params=list(KINDS))
def peer(request: pytest.FixtureRequest, cli: Cli, tmp_path: Path) -> Iterator[Peer]:
    kind = KINDS[request.param]
    log = tmp_path / "peer-requests.jsonl"
    process = add_peer(cli, kind, log)
    try:
        yield Peer(kind, log)
    finally:
        if process is not None:
            cli.run("agent", "stop")  # its HTTP session ends first (DELETE), then the server
            stop_processes([process])


def result_of(record: dict[str, Any]) -> str:
    return json.dumps(record["result"])


def test_a_question_is_answered_from_a_second_command(cli: Cli, peer: Peer) -> None:
    # FastMCP 3.4 asks with a plain elicitation/create (no related-task _meta) after saying
    # input_required in a status notification: the question is still the task's, kept for
    # whoever answers it, not declined because no one was there to be asked.
    asked = cli.run("call", "peer", peer.kind.ask, "--args", peer.kind.ask_args)
    assert asked.returncode == 9, (asked.returncode, asked.stdout, asked.stderr)
    [waiting] = cli.json("tasks", "list", "--active")
    assert waiting["state"] == "input_required", waiting
    answered = cli.json("tasks", "answer", waiting["id"], "--value", peer.kind.answer)
    assert answered["delivered"] is True, answered
    final = cli.json("tasks", "watch", waiting["id"], "--timeout", "60")
    assert final["state"] == "completed", final
    assert peer.kind.answered in result_of(final)
    assert peer.count("tools/call") == 1


def test_detached_tasks_are_followed_and_cancelled_from_other_commands(
    cli: Cli, peer: Peer
) -> None:
    slow = peer.kind.slow
    followed = cli.json("call", "peer", slow, "--detach", "--args", '{"seconds": 1}')
    doomed = cli.json("call", "peer", slow, "--detach", "--args", '{"seconds": 60}')
    assert followed["state"] == doomed["state"] == "working", (followed, doomed)
    engine = engine_pid(cli.data_dir)
    cancelled = cli.json("tasks", "cancel", doomed["id"], "--timeout", "30")  # exit 0
    assert cancelled["state"] == "cancelled", cancelled  # the server's word
    final = cli.json("tasks", "watch", followed["id"], "--timeout", "60")
    assert final["state"] == "completed", final  # not "expired": the server still knew it
    assert peer.kind.slow_done in result_of(final)
    assert engine_pid(cli.data_dir) == engine  # one engine, one connection throughout
    assert peer.count("tasks/cancel") == 1
    assert peer.count("tools/call") == 2  # one each


def test_a_task_outlives_a_killed_engine_only_where_the_server_keeps_it(
    cli: Cli, peer: Peer
) -> None:
    killed = cli.run(
        "call",
        "peer",
        peer.kind.slow,
        "--args",
        '{"seconds": 2}',
        env={"MOORING_FAILPOINT": "call.after-task-id"},
    )
    assert killed.returncode == 1, (killed.returncode, killed.stdout, killed.stderr)
    assert "Mooring's engine stopped" in killed.stderr
    cli.json("reconcile")
    [record] = cli.json("tasks", "list")
    if peer.kind.kept_after_crash:
        final = cli.json("tasks", "watch", record["id"], "--timeout", "60")
        assert final["state"] == "completed", final
        assert peer.kind.slow_done in result_of(final)
    else:
        assert record["state"] == "expired", record
        assert "The server no longer knows this task" in record["reason"]
    assert peer.count("tools/call") == 1  # never replayed


def remembered_sessions(cli: Cli) -> dict[str, str]:
    """The HTTP session the engine remembers for each server, by alias (``http_sessions``)."""
    conn = sqlite3.connect(cli.data_dir / "mooring.sqlite3")
    try:
        rows = conn.execute(
            "SELECT alias, session_id FROM http_sessions JOIN servers ON servers.id = server_id"
        ).fetchall()
    finally:
        conn.close()
    return {str(alias): str(session) for alias, session in rows}


def remembered_session(cli: Cli) -> str | None:
    """The HTTP session the engine remembers for server "peer"."""
    return remembered_sessions(cli).get("peer")


def test_a_session_its_server_forgot_after_a_crash_leaves_the_task_expired(
    cli: Cli, tmp_path: Path
) -> None:
    # The killed engine's session is remembered, but the restarted server (same address)
    # answers 404 for it: the next engine begins a new session, and the task it cannot see
    # there is honestly expired, its tools/call never sent again.
    kind = KINDS["mcp1.30-http"]
    log = tmp_path / "peer-requests.jsonl"
    first, url = start_peer(kind.script, f"--requests={log}", python=kind.python())
    started = [first]
    try:
        assert cli.run("servers", "add", "peer", "--url", url).returncode == 0
        assert cli.run("rules", "add", "peer", "*", "allow").returncode == 0
        killed = cli.run(
            "call",
            "peer",
            kind.slow,
            "--args",
            '{"seconds": 60}',
            env={"MOORING_FAILPOINT": "call.after-task-id"},
        )
        assert killed.returncode == 1, (killed.returncode, killed.stdout, killed.stderr)
        crashed_session = remembered_session(cli)
        assert crashed_session is not None  # written before the call was sent
        stop_processes([first])
        port = url.split(":")[2].split("/")[0]
        again, same_url = start_peer(
            kind.script, f"--requests={log}", f"--port={port}", python=kind.python()
        )
        started.append(again)
        assert same_url == url
        report = cli.json("reconcile")
        assert report["unreachable"] == {}, report  # the new session answers at once
        [refreshed] = report["refreshed"]
        assert refreshed["state"] == "expired", refreshed
        [record] = cli.json("tasks", "list")
        assert record["state"] == "expired", record
        assert "The server no longer knows this task" in record["reason"]
        peer = Peer(kind, log)
        assert peer.count("tools/call") == 1  # never replayed
        lines = [json.loads(line) for line in log.read_text().splitlines() if line]
        assert any(
            line["method"] == "initialize" and line["pid"] == again.pid for line in lines
        )  # a fresh session on the restarted server
        assert remembered_session(cli) != crashed_session
    finally:
        cli.run("agent", "stop")
        stop_processes(started)


def test_a_plain_call_question_is_not_taken_for_a_running_task_question(
    cli: Cli, tmp_path: Path
) -> None:
    # FastMCP 3.4's running task sends status notifications; a question asked meanwhile by a
    # plain call (no input_required announced) is the call's own: with no one to ask it here,
    # declined at once, and the task asks nothing.
    add_peer(cli, KINDS["fastmcp3.4-stdio"], tmp_path / "peer-requests.jsonl")
    running = cli.json("call", "peer", "slow_job", "--detach", "--args", '{"seconds": 60}')
    plain = cli.json("call", "peer", "ask_now", "--args", "{}")
    assert "no colour (decline)" in result_of(plain), plain
    [record] = cli.json("tasks", "list", "--active")
    assert record["id"] == running["id"], record
    assert record["state"] == "working", record
    assert not record["inputs"], record


def test_a_session_nothing_needs_is_deleted_while_a_question_keeps_its_own(
    cli: Cli, tmp_path: Path
) -> None:
    # mcp 1.30 keeps tasks per Streamable HTTP session: the engine keeps a session while a
    # task or a question of it is unfinished, and ends (DELETEs) one nothing needs any more.
    assert cli.run("settings", "set", "engine.idle_exit_s", "2").returncode == 0
    kind = KINDS["mcp1.30-http"]
    keeper_log, done_log = tmp_path / "keeper.jsonl", tmp_path / "done.jsonl"
    started = []
    try:
        for name, log in (("keeper", keeper_log), ("done", done_log)):
            process, url = start_peer(kind.script, f"--requests={log}", python=kind.python())
            started.append(process)
            assert cli.run("servers", "add", name, "--url", url).returncode == 0
            assert cli.run("rules", "add", name, "*", "allow").returncode == 0
        asked = cli.run("call", "keeper", "ask_job", "--args", "{}")
        assert asked.returncode == 9, (asked.stdout, asked.stderr)
        engine = engine_pid(cli.data_dir)
        done = cli.json("call", "done", "slow_job", "--args", '{"seconds": 0.2}')
        assert done["state"] == "completed", done
        # Nothing needs that session any more: the engine ends it on its own.
        appended_line(done_log, lambda line: "http:DELETE" in line, timeout=60)
        assert engine_pid(cli.data_dir) == engine  # it goes on: the question keeps it
        keeper = Peer(kind, keeper_log)
        assert keeper.count("http:DELETE") == 0
        assert "keeper" in remembered_sessions(cli)  # its session, kept for a crash
        [waiting] = cli.json("tasks", "list", "--active")
        answered = cli.json("tasks", "answer", waiting["id"], "--value", kind.answer)
        assert answered["delivered"] is True  # through the session that made the task
        final = cli.json("tasks", "watch", waiting["id"], "--timeout", "60")
        assert final["state"] == "completed", final
        assert keeper.count("tools/call") == Peer(kind, done_log).count("tools/call") == 1
        assert cli.run("agent", "stop").returncode == 0
        assert remembered_sessions(cli) == {}  # every session ended: none to resume
    finally:
        cli.run("agent", "stop")
        stop_processes(started)
