"""Approval before side effects, end to end: nothing reaches the server unless allowed."""

from __future__ import annotations

import json
import os
import select
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.e2e.conftest import SAMPLES, Cli, DemoServer, add_demo

CLEAN = str(SAMPLES / "suppliers_clean.csv")


def audit(cli: Cli) -> list[tuple[str, str, str]]:
    conn = sqlite3.connect(cli.data_dir / "mooring.sqlite3")
    try:
        rows = conn.execute(
            "SELECT tool, outcome, actor FROM approval_audit ORDER BY at"
        ).fetchall()
    finally:
        conn.close()
    return [(str(a), str(b), str(c)) for a, b, c in rows]


def run_on_terminal(cli: Cli, answers: list[str], *args: str) -> tuple[int, str]:
    """Run ``mooring ARGS`` on a pseudo-terminal, answering each approval prompt in turn."""
    import pty

    master, slave = pty.openpty()
    env = {**os.environ, "MOORING_DATA_DIR": str(cli.data_dir)}
    env.update({k: v for k, v in cli.env.items() if v is not None})
    child = subprocess.Popen(
        [sys.executable, "-m", "mooring", *args],
        stdin=slave,
        stdout=slave,
        stderr=subprocess.PIPE,
        env=env,
        close_fds=True,
    )
    os.close(slave)
    seen = b""
    pending = list(answers)
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 60)
            assert ready, f"no output for 60 s; so far: {seen!r}"
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
            if pending and seen.rstrip().endswith(b"[q] cancel:"):
                os.write(master, (pending.pop(0) + "\n").encode())
        code = child.wait(timeout=60)
    finally:
        os.close(master)
        if child.stderr is not None:
            child.stderr.close()
    return code, seen.decode(errors="replace")


def call_args(path: str = CLEAN) -> list[str]:
    return ["call", "demo", "import_suppliers", "--args", json.dumps({"path": path})]


def test_ask_and_deny_on_the_terminal_sends_nothing(cli: Cli, tmp_path: Path) -> None:
    demo = add_demo(cli, tmp_path, allow=False)
    code, screen = run_on_terminal(cli, ["n"], *call_args())
    assert code == 10, screen
    assert "demo wants to run import_suppliers" in screen
    assert '"path":' in screen  # the exact arguments were shown
    assert demo.count("tools/call") == 0
    assert audit(cli) == [("import_suppliers", "denied", "user")]


def test_approve_once_sends_once_and_the_next_call_asks_again(cli: Cli, tmp_path: Path) -> None:
    demo = add_demo(cli, tmp_path, allow=False)
    code, _ = run_on_terminal(cli, ["y"], *call_args())
    assert code == 0
    assert demo.count("tools/call") == 1
    # No terminal now: the same call needs approval again and is refused without asking.
    done = cli.run(*call_args())
    assert done.returncode == 3
    assert "needs your approval" in done.stderr
    assert demo.count("tools/call") == 1
    assert [o for _, o, _ in audit(cli)] == ["approved", "aborted"]


def test_always_for_this_tool_survives_a_restart(cli: Cli, tmp_path: Path) -> None:
    demo = add_demo(cli, tmp_path, allow=False)
    code, _ = run_on_terminal(cli, ["a"], *call_args())
    assert code == 0
    rules = cli.json("rules", "list")
    assert [(r["tool"], r["decision"], r["scope"]) for r in rules] == [
        ("import_suppliers", "allow", "always")
    ]
    done = cli.run(*call_args())  # a new process, no terminal
    assert done.returncode == 0, done.stderr
    assert demo.count("tools/call") == 2
    assert [o for _, o, _ in audit(cli)] == ["approved", "auto_allowed"]


def add_listing_server(cli: Cli, tmp_path: Path, name: str, *, trusted: bool) -> DemoServer:
    demo = add_demo(cli, tmp_path, name=name, allow=False)
    if trusted:
        # Trust is a property of the server definition: re-add it trusted.
        assert cli.run("servers", "remove", name).returncode == 0
        done = cli.run(
            "servers",
            "add",
            name,
            "--trusted",
            "--command",
            sys.executable,
            "--arg=-m",
            "--arg=mooring.demo_server",
            f"--arg=--store={demo.store}",
            f"--env=MOORING_DEMO_REQUEST_LOG={demo.request_log}",
        )
        assert done.returncode == 0, done.stderr
    return demo


def test_trusted_read_only_runs_while_untrusted_read_only_asks(cli: Cli, tmp_path: Path) -> None:
    trusted = add_listing_server(cli, tmp_path, "trusted", trusted=True)
    untrusted = add_listing_server(cli, tmp_path, "untrusted", trusted=False)
    ok = cli.run("call", "trusted", "list_suppliers")
    assert ok.returncode == 0, ok.stderr
    refused = cli.run("call", "untrusted", "list_suppliers")
    assert refused.returncode == 3
    assert trusted.count("tools/call") == 1
    assert untrusted.count("tools/call") == 0


def test_destructive_tool_asks_even_on_a_trusted_server(cli: Cli, tmp_path: Path) -> None:
    demo = add_listing_server(cli, tmp_path, "trusted", trusted=True)
    done = cli.run("call", "trusted", "delete_supplier", "--args", '{"supplier_id": "SUP-0001"}')
    assert done.returncode == 3
    assert demo.count("tools/call") == 0


def test_an_oversize_argument_is_refused_before_sending(cli: Cli, tmp_path: Path) -> None:
    demo = add_demo(cli, tmp_path)  # an allow-all rule: the size guard still wins
    assert cli.run("settings", "set", "approval.max_argument_bytes", "64").returncode == 0
    shown = cli.json(*call_args(str(tmp_path / ("x" * 100 + ".csv"))), expect=10)
    assert shown["state"] == "denied"
    assert "limit is 64" in shown["reason"]
    assert demo.count("tools/call") == 0
    assert audit(cli) == [("import_suppliers", "auto_denied", "policy")]


def test_a_deny_rule_cannot_be_bypassed(cli: Cli, tmp_path: Path) -> None:
    demo = add_demo(cli, tmp_path)
    assert cli.run("rules", "add", "demo", "import_suppliers", "deny").returncode == 0
    code, screen = run_on_terminal(cli, ["y"], *call_args())
    assert code == 10, screen
    assert "wants to run" not in screen  # never asked: the rule decides
    assert demo.count("tools/call") == 0


def test_hidden_tools_never_run(cli: Cli, tmp_path: Path) -> None:
    store = tmp_path / "h.sqlite3"
    done = cli.run(
        "servers",
        "add",
        "demo",
        "--command",
        sys.executable,
        "--arg=-m",
        "--arg=mooring.demo_server",
        f"--arg=--store={store}",
        "--hide-tool",
        "delete_*",
    )
    assert done.returncode == 0
    assert cli.run("rules", "add", "demo", "*", "allow").returncode == 0
    shown = cli.json("call", "demo", "delete_supplier", "--args", '{"supplier_id": "X"}', expect=10)
    assert "hidden" in shown["reason"]


def test_a_question_open_in_one_process_survives_reconciliation_by_another(
    cli: Cli, tmp_path: Path
) -> None:
    import pty

    demo = add_demo(cli, tmp_path, allow=False)
    master, slave = pty.openpty()
    env = {**os.environ, "MOORING_DATA_DIR": str(cli.data_dir)}
    env.update({k: v for k, v in cli.env.items() if v is not None})
    child = subprocess.Popen(
        [sys.executable, "-m", "mooring", *call_args()],
        stdin=slave,
        stdout=slave,
        stderr=subprocess.DEVNULL,
        env=env,
        close_fds=True,
    )
    os.close(slave)
    seen = b""
    try:
        while not seen.rstrip().endswith(b"[q] cancel:"):
            ready, _, _ = select.select([master], [], [], 60)
            assert ready, f"no prompt within 60 s: {seen!r}"
            seen += os.read(master, 4096)
        # Meanwhile the app starts (or `mooring reconcile` runs) in another process.
        report = cli.json("reconcile")
        assert len(report["in_progress_elsewhere"]) == 1
        [record] = cli.json("tasks", "list")
        assert record["state"] == "awaiting_approval"  # left alone: its owner is alive
        os.write(master, b"y\n")
        while True:
            ready, _, _ = select.select([master], [], [], 60)
            assert ready
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
        assert child.wait(timeout=60) == 0
    finally:
        os.close(master)
    assert demo.count("tools/call") == 1
    [final] = cli.json("tasks", "list")
    assert final["state"] == "completed"


def test_rules_are_listed_and_removed_by_a_short_id(cli: Cli, tmp_path: Path) -> None:
    add_demo(cli, tmp_path, allow=False)
    added = cli.json("rules", "add", "demo", "list_*", "allow")
    [rule] = cli.json("rules", "list")
    assert (rule["server"], rule["tool"], rule["decision"]) == ("demo", "list_*", "allow")
    assert cli.run("rules", "remove", added["id"][:8]).returncode == 0
    assert cli.json("rules", "list") == []
    missing = cli.run("rules", "remove", "nope")
    assert missing.returncode == 1
    assert "No rule 'nope'" in missing.stderr
