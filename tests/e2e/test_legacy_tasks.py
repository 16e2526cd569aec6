"""The 2025-11-25 Tasks wire end to end: the real ``mooring`` CLI as processes, real servers.

Two servers: the reference "everything" server from npm (TypeScript SDK 1.x, tasks kept in
memory, so it ends with the host's stdio child) and a durable 2025-11-25 peer
(``tests/mcp/peers/legacy_tasks_server.py``) whose tasks survive a host killed with SIGKILL.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Cli
from tests.helpers.node_peers import everything_server, node
from tests.helpers.processes import engine_pid

PEER = Path(__file__).resolve().parents[1] / "mcp" / "peers" / "legacy_tasks_server.py"


class LegacyPeer:
    """The durable 2025-11-25 peer configured in Mooring, and the requests it received."""

    def __init__(self, cli: Cli, tmp_path: Path) -> None:
        self.store = tmp_path / "legacy-store.json"
        self.log = tmp_path / "legacy-requests.jsonl"
        args = ["servers", "add", "legacy", "--command", sys.executable, f"--arg={PEER}"]
        args += [f"--arg=--store={self.store}", f"--arg=--requests={self.log}"]
        assert cli.run(*args).returncode == 0
        assert cli.run("rules", "add", "legacy", "*", "allow").returncode == 0

    def count(self, method: str) -> int:
        if not self.log.exists():
            return 0
        lines = [json.loads(line) for line in self.log.read_text().splitlines() if line]
        return sum(1 for line in lines if line["method"] == method)


def add_everything(cli: Cli) -> None:
    args = ["servers", "add", "everything", "--command", node()]
    args += [f"--arg={everything_server()}", "--arg=stdio"]
    assert cli.run(*args).returncode == 0
    assert cli.run("rules", "add", "everything", "*", "allow").returncode == 0


def only_record(cli: Cli) -> dict[str, Any]:
    [record] = cli.json("tasks", "list")
    assert isinstance(record, dict)
    return record


def test_an_everything_server_task_completes_through_the_cli(cli: Cli) -> None:
    add_everything(cli)
    done = cli.json("call", "everything", "simulate-research-query", "--args", '{"topic": "tides"}')
    assert done["state"] == "completed", done
    assert done["wire"] == "2025-11-25"
    record = only_record(cli)
    assert "Research Report: tides" in json.dumps(record["result"])


def test_a_durable_legacy_task_is_polled_after_the_host_was_killed(
    cli: Cli, tmp_path: Path
) -> None:
    peer = LegacyPeer(cli, tmp_path)
    killed = cli.run(
        "call",
        "legacy",
        "slow_job",
        "--args",
        '{"seconds": 1.5}',
        env={"MOORING_FAILPOINT": "call.after-task-id"},
    )
    # The engine running the call was killed at the point; its face is told so.
    assert killed.returncode == 1, (killed.returncode, killed.stderr)
    assert "Mooring's engine stopped" in killed.stderr
    assert engine_pid(cli.data_dir) is None
    cli.json("reconcile")
    cli.run("tasks", "watch", "--timeout", "30")
    record = only_record(cli)
    assert record["state"] == "completed", record
    assert "slow_job finished" in json.dumps(record["result"])
    assert peer.count("tools/call") == 1
    assert peer.count("tasks/result") >= 1


def test_a_legacy_question_is_answered_after_a_host_restart(cli: Cli, tmp_path: Path) -> None:
    peer = LegacyPeer(cli, tmp_path)
    started = cli.run("call", "legacy", "ask_job", "--args", "{}")
    assert started.returncode == 9, (started.returncode, started.stdout, started.stderr)
    [waiting] = cli.json("tasks", "list", "--active")
    assert waiting["state"] == "input_required"
    # A new process (the relaunched host) answers the question the first one was asked.
    answered = cli.run("tasks", "answer", str(waiting["id"]), "--value", '{"colour": "teal"}')
    assert answered.returncode == 0, (answered.stdout, answered.stderr)
    cli.run("tasks", "watch", "--timeout", "30")
    record = only_record(cli)
    assert record["state"] == "completed", record
    assert "teal" in json.dumps(record["result"])
    assert peer.count("tools/call") == 1


def test_a_legacy_cancel_ends_cancelled_and_says_so(cli: Cli, tmp_path: Path) -> None:
    peer = LegacyPeer(cli, tmp_path)
    shown = cli.json("call", "legacy", "slow_job", "--detach", "--args", '{"seconds": 60}')
    cancelled = cli.json(
        "tasks", "cancel", str(shown["id"]), "--timeout", "30", expect=0
    )  # delivered: exit 0, the outcome in words
    assert cancelled["state"] == "cancelled", cancelled
    assert cancelled["cancel_requested"] is True
    assert peer.count("tasks/cancel") == 1
    assert peer.count("tools/call") == 1


def test_a_plain_call_shows_its_progress_live(cli: Cli, tmp_path: Path) -> None:
    LegacyPeer(cli, tmp_path)
    done = cli.run("call", "legacy", "progress_job", "--args", '{"seconds": 1, "every": 0.2}')
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert "working: 1 of 5 - step 1" in done.stdout
    assert "progress_job finished" in done.stdout
    record = only_record(cli)
    assert record["state"] == "completed"
    assert record["progress"]["message"].startswith("step ")
    # Once it has ended, its last progress line is not shown as where it stands.
    shown = cli.run("tasks", "show", str(record["id"]))
    assert "state      completed" in shown.stdout
    assert "working: " not in shown.stdout
    assert "step " not in cli.run("tasks", "list").stdout


def test_a_plain_call_cut_short_by_a_host_crash_is_an_unknown_outcome(
    cli: Cli, tmp_path: Path
) -> None:
    peer = LegacyPeer(cli, tmp_path)
    child = cli.start("call", "legacy", "progress_job", "--args", '{"seconds": 60, "every": 0.2}')
    assert child.stdout is not None
    for line in child.stdout:  # the call is in flight once progress shows
        if "working:" in line:
            break
    # The host is the engine that runs the call (the command is only its face).
    engine = engine_pid(cli.data_dir)
    assert engine is not None
    os.kill(engine, signal.SIGKILL)
    assert child.wait(timeout=30) == 1  # told its engine stopped
    cli.json("reconcile")
    record = only_record(cli)
    assert record["state"] == "unknown_outcome", record
    assert "may or may not have run" in record["reason"]
    assert record["progress"]["message"].startswith("step ")  # the last sign of life is kept
    shown = cli.run("tasks", "show", str(record["id"]))
    assert "progress   working: " in shown.stdout
    assert "s ago)" in shown.stdout
    assert peer.count("tools/call") == 1


def test_plain_call_limits_come_from_settings_per_server(cli: Cli, tmp_path: Path) -> None:
    peer = LegacyPeer(cli, tmp_path)
    limits = '{"legacy": {"idle_timeout_ms": 600, "max_ms": 60000}}'
    assert cli.run("settings", "set", "mcp.server_call_limits", limits).returncode == 0
    # Three times the idle timeout, with progress every 0.15 s: it completes.
    lively = cli.run("call", "legacy", "progress_job", "--args", '{"seconds": 1.8, "every": 0.15}')
    assert lively.returncode == 0, (lively.stdout, lively.stderr)
    assert "progress_job finished" in lively.stdout
    # The same length without a word: stopped, the server told, the outcome unknown.
    silent = cli.run("call", "legacy", "silent_job", "--args", '{"seconds": 1.8}')
    assert silent.returncode == 8, (silent.stdout, silent.stderr)
    assert "no sign of life from the server for 0.6 s" in silent.stdout
    assert "may or may not have run" in silent.stdout
    assert peer.count("notifications/cancelled") == 1


def test_ctrl_c_stops_a_plain_call_and_the_server_hears_it(cli: Cli, tmp_path: Path) -> None:
    peer = LegacyPeer(cli, tmp_path)
    child = cli.start("call", "legacy", "progress_job", "--args", '{"seconds": 60, "every": 0.2}')
    assert child.stdout is not None
    for line in child.stdout:
        if "working:" in line:
            break
    child.send_signal(signal.SIGINT)
    out, _err = child.communicate(timeout=30)
    assert child.returncode == 6, out
    assert "Stopped by you" in out
    record = only_record(cli)
    assert record["state"] == "cancelled"
    assert record["reason"].startswith("Stopped by you")
    assert peer.count("notifications/cancelled") == 1


def test_a_call_started_with_ctrl_c_ignored_is_not_stopped_by_it(cli: Cli, tmp_path: Path) -> None:
    # A script's background job (or nohup) starts with SIGINT ignored: the Ctrl-C typed at the
    # terminal is meant for the job in the foreground, and Mooring leaves the call alone.
    peer = LegacyPeer(cli, tmp_path)
    child = cli.start(
        "call",
        "legacy",
        "progress_job",
        "--args",
        '{"seconds": 1.5, "every": 0.2}',
        sigint_ignored=True,
    )
    assert child.stdout is not None
    seen = []
    for line in child.stdout:
        seen.append(line)
        if "working:" in line:
            break
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, (out, err)
    assert "progress_job finished" in "".join(seen) + out
    assert "Stopped by you" not in out
    assert only_record(cli)["state"] == "completed"
    assert peer.count("notifications/cancelled") == 0


def test_an_everything_task_detached_in_one_command_is_followed_to_its_end_by_another(
    cli: Cli,
) -> None:
    # server-everything keeps its tasks in the memory of its stdio process: only the engine's
    # one connection (one server process for both commands) can follow it to its end.
    add_everything(cli)
    started = cli.json(
        "call", "everything", "simulate-research-query", "--detach", "--args", '{"topic": "reefs"}'
    )
    assert started["state"] == "working", started
    engine = engine_pid(cli.data_dir)
    watched = cli.run("tasks", "watch", str(started["id"]), "--timeout", "60")
    assert watched.returncode == 0, (watched.stdout, watched.stderr)
    record = only_record(cli)
    assert record["state"] == "completed", record  # not "expired": the server still knew it
    assert "Research Report: reefs" in json.dumps(record["result"])
    assert engine_pid(cli.data_dir) == engine  # one engine, one connection throughout


# -- `call --detach` with the engine running: the narrow client (mooring.cli.calling) ----------


def _engine_running(cli: Cli) -> None:
    assert cli.run("agent", "start").returncode == 0
    assert engine_pid(cli.data_dir) is not None


def test_a_detached_plain_call_to_a_running_engine_shows_its_progress_and_result(
    cli: Cli, tmp_path: Path
) -> None:
    # A plain call (no task) runs to its end even with --detach: its progress is told live,
    # its result printed, as the full path's handler does.
    peer = LegacyPeer(cli, tmp_path)
    _engine_running(cli)
    args = '{"seconds": 1, "every": 0.2}'
    done = cli.run("call", "legacy", "progress_job", "--detach", "--args", args)
    assert done.returncode == 0, (done.stdout, done.stderr)
    lines = done.stdout.splitlines()
    assert lines[0].startswith("operation ")
    short = lines[0].split()[1][:8]
    assert f"{short}: working: 1 of 5 - step 1" in lines
    assert "progress_job finished" in done.stdout
    assert only_record(cli)["state"] == "completed"
    assert peer.count("tools/call") == 1


def test_ctrl_c_stops_a_detached_plain_call_on_a_running_engine(cli: Cli, tmp_path: Path) -> None:
    peer = LegacyPeer(cli, tmp_path)
    _engine_running(cli)
    args = '{"seconds": 60, "every": 0.2}'
    child = cli.start("call", "legacy", "progress_job", "--detach", "--args", args)
    assert child.stdout is not None
    for line in child.stdout:  # the call is in flight once progress shows
        if "working:" in line:
            break
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=30)
    assert child.returncode == 6, (out, err)
    assert "Stopped by you" in out
    assert "Stopping the call; the server is told to stop." in err
    record = only_record(cli)
    assert record["state"] == "cancelled"
    assert peer.count("notifications/cancelled") == 1


def test_a_detached_call_whose_engine_is_killed_says_so(cli: Cli, tmp_path: Path) -> None:
    LegacyPeer(cli, tmp_path)
    _engine_running(cli)
    args = '{"seconds": 60, "every": 0.2}'
    child = cli.start("call", "legacy", "progress_job", "--detach", "--args", args)
    assert child.stdout is not None
    for line in child.stdout:
        if "working:" in line:
            break
    engine = engine_pid(cli.data_dir)
    assert engine is not None
    os.kill(engine, signal.SIGKILL)
    out, err = child.communicate(timeout=30)
    assert child.returncode == 1, (out, err)
    assert "mooring: Mooring's engine stopped (the engine closed the link)." in err
    assert "Traceback" not in err
